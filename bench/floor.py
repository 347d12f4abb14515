"""The floor: what parsing costs at C speed, below which no Python parser can go.

One pass of stdlib ``re`` over the text looking for every delimiter the template
declares, plus ``json.loads`` of the JSON the message carries (each tool call's
arguments, serialised canonically, since not every template's arguments are plain
JSON in the text: xml-inline, or Gemma's unquoted keys and string delimiters). The
payloads are prepared outside the clock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_]\w*>")


def _alternatives(value: str | list | None, literal: bool) -> list[str]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [re.escape(v) if literal else _NAMED_GROUP.sub("(?:", v) for v in values]


def delimiter_regex(template: dict) -> re.Pattern:
    """Every open and close delimiter of the template as one stdlib alternation.

    Named groups become plain groups: a pattern may name the same group in two
    alternatives (Harmony's ``name``), which stdlib ``re`` refuses, and the scan does
    not need captures.
    """
    parts: list[str] = []
    for spec in template.get("fields", {}).values():
        for key in ("open", "close"):
            parts += _alternatives(spec.get(key), literal=True)
            parts += _alternatives(spec.get(f"{key}_pattern"), literal=False)
    unique = list(dict.fromkeys(p for p in parts if p))
    return re.compile("|".join(f"(?:{p})" for p in unique), re.DOTALL)


def json_payloads(message: dict) -> list[str]:
    payloads = []
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            arguments = call.get("function", call).get("arguments", call)
            payloads.append(json.dumps(arguments, ensure_ascii=False))
    return payloads


def floor_run(template: dict, text: str, message: dict,
              conversion: Callable[[], object] | None = None) -> Callable[[], int]:
    """A callable doing the floor's work on ``text``; returns how many delimiters it saw.

    ``conversion``, for a format that does not write JSON (Gemma 4), converts each tool
    call's text alone the cheapest way known (our ``parse_json``, see by_hand.py): the
    floor then counts it too, as issue 18 decided.
    """
    pattern = delimiter_regex(template)
    payloads = json_payloads(message)
    loads = json.loads

    def run() -> int:
        found = len(pattern.findall(text))
        for payload in payloads:
            loads(payload)
        return found

    if conversion is None:
        return run

    def converted() -> int:
        found = run()
        conversion()
        return found

    return converted
