"""The oracle: transformers' own template loader, and how to read its answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from transformers.utils.chat_parsing.content_parsers import CONTENT_PARSERS
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler.template.load import TEMPLATE_KEYS, child_path

REFERENCE_CONTENT_PARSERS = frozenset(CONTENT_PARSERS)


@dataclass
class Outcome:
    """What the reference did with a spec: ``accept``, ``reject`` (ValueError) or ``crash``."""

    verdict: str
    error: BaseException | None = None
    template: Any = None


def reference_outcome(spec: Any) -> Outcome:
    try:
        return Outcome("accept", template=load_response_template(spec))
    except ValueError as e:
        return Outcome("reject", error=e)
    except Exception as e:  # TypeError, RecursionError: the reference's own crashes
        return Outcome("crash", error=e)


def path_agrees(message: str, path: str, spec: Any) -> bool:
    """Does our error ``path`` point where the reference's ``message`` says the problem is?

    The reference scopes its messages as ``Field 'name': ...`` or by a top-level key;
    our path must lie inside that scope. That is how the tests check that we report
    the same first broken rule as the reference when a spec breaks several.
    """
    if message.startswith("response_template must be a dict"):
        return path == ""
    fields = spec.get("fields")
    for name in fields if isinstance(fields, dict) else {}:
        if message.startswith(f"Field '{name}'"):
            scope = child_path("fields", name)
            return path == scope or path.startswith((scope + ".", scope + "["))
    if message.startswith("Unsupported response_template version"):
        return path == "version"
    if message.startswith("Unknown keys in response_template"):
        return path not in TEMPLATE_KEYS and path in spec
    if message.startswith("response_template.defaults"):
        return path == "defaults"
    if message.startswith(("response_template.fields", "At most one field")):
        return path == "fields"
    if message.startswith(("response_template:", "response_template must define")):
        return path in ("", "start_anchor", "start_anchor_pattern") or path.startswith(
            "start_anchor"
        )
    raise AssertionError(f"unrecognised reference message: {message!r}")


def json_copy(value: Any) -> Any:
    """A fresh copy, so that neither loader can see what the other did to a spec."""
    return json.loads(json.dumps(value))
