"""The conformance corpus: real model outputs and the message each must give.

``cases/<family>.jsonl`` holds one case per line (schema in ``README.md``). Each case
runs through its grammar's compiled parser whole, one character at a time and in
seeded random chunkings; :func:`result` says whether the streams agree with the whole
parse and whether the message is the expected one with no marker leaking.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
import re
import zlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rtcompiler import compile_template
from rtcompiler.grammars import grammar
from rtcompiler.roundtrip.check import normalisation
from rtcompiler.template import Delimiter, Template

CASES_DIR = Path(__file__).resolve().parent / "cases"

CATEGORIES = (
    "format", "both-sides", "in-reasoning", "malformed", "truncated", "marker-at-end",
    "stray-marker", "delimiter-in-string",
)
# The categories the robustness extensions (issue 21, section 3) are for.
RECOVERY_CATEGORIES = ("malformed", "truncated", "marker-at-end", "stray-marker",
                       "delimiter-in-string")
# What a failing case waits for. ``recover``: the opt-in robustness extensions (issue 21,
# section 3: malformed and truncated calls, delimiters inside strings, markers at the end,
# stray markers). ``grammar-gap``: a limit of the bundled grammar that the standard format
# cannot express (the case's note says which); it needs an extension or a grammar of its own.
NEEDS = {
    "recover": "the opt-in robustness extensions (issue 21, section 3)",
    "grammar-gap": "a limit of the bundled grammar the standard format cannot express",
}
REQUIRED_KEYS = ("id", "family", "grammar", "category", "source", "prefix", "output", "tools",
                 "expected", "note")
OPTIONAL_KEYS = ("judgement", "alt_expected", "needs")
CHUNKINGS = 3  # random chunkings per case, besides one character at a time

# Special-token shapes (a tokenizer keeps them whole): <|x|>, <｜x｜>, [X], [/X], <x|>, <|x>.
_SPECIAL = re.compile(
    r"<\|[^|<>\s]{1,40}\|>|<｜[^｜]{1,40}｜>|\[/?[A-Z_]{2,20}\]|<[/a-z_]{1,20}\|>|<\|[a-z_\"]{1,20}>"
)
# Plain tags written in a delimiter pattern: <tool_call>, </think>, </function>.
_TAG = re.compile(r"</?[a-z_]{2,20}>")
# The head of a tag that carries its name: <parameter=, <function=.
_TAG_HEAD = re.compile(r"<[a-z_]{2,20}=")
_GROUP_NAME = re.compile(r"\(\?P<\w+>")


@dataclass(frozen=True)
class Case:
    data: dict[str, Any]

    def __getattr__(self, key: str) -> Any:
        try:
            return self.data[key]
        except KeyError:
            raise AttributeError(key) from None

    @property
    def needs(self) -> str | None:
        return self.data.get("needs")

    def __repr__(self) -> str:
        return f"Case({self.data['id']})"


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                data = json.loads(line)
                data.setdefault("_file", f"{path.name}:{number}")
                cases.append(Case(data))
    return cases


# -- what a grammar calls a marker ----------------------------------------------------------


def _delimiter_markers(delimiter: Delimiter | None) -> set[str]:
    if delimiter is None:
        return set()
    if delimiter.is_literal:
        found = {s.strip() for s in delimiter.literals or () if s.strip()}
        for literal in delimiter.literals or ():
            found.update(_SPECIAL.findall(literal))
        return found
    text = _pattern_text(delimiter.pattern or "")
    return set(_SPECIAL.findall(text)) | set(_TAG.findall(text)) | set(_TAG_HEAD.findall(text))


def _pattern_text(pattern: str) -> str:
    """A pattern without escapes and without its group names (``(?P<name>`` is no tag)."""
    return _GROUP_NAME.sub("(", pattern).replace("\\", "")


def template_markers(template: Template, end_of_turn: list[str] | None) -> tuple[str, ...]:
    """The strings no field of a parsed message may gain: the delimiters' literals, the
    special tokens and tags written in delimiter patterns and in the start anchor, the
    JSON string delimiters, the tags of an xml-inline tag pattern, and the grammar's
    end-of-turn tokens."""
    found: set[str] = set(end_of_turn or ())
    for f in template.fields:
        found |= _delimiter_markers(f.open) | _delimiter_markers(f.close)
        args = f.content_args if isinstance(f.content_args, dict) else {}
        for pair in args.get("string_delims") or ():
            found.update(s for s in pair if isinstance(s, str) and len(s) > 1)
        tag_pattern = args.get("tag_pattern")
        if isinstance(tag_pattern, str):
            text = _pattern_text(tag_pattern)
            found.update(_TAG.findall(text))
            found.update(_TAG_HEAD.findall(text))
    anchor = template.start_anchor
    texts = anchor.literals if anchor.is_literal else (_pattern_text(anchor.pattern),)
    for text in texts or ():
        found.update(_SPECIAL.findall(text))
    return tuple(sorted(found))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def leaks(message: dict, expected: dict, markers: tuple[str, ...]) -> list[str]:
    """Markers that occur more often in ``message`` than in ``expected``."""
    got, want = _strings(message), _strings(expected)
    return [m for m in markers
            if sum(s.count(m) for s in got) > sum(s.count(m) for s in want)]


# -- normalisation ----------------------------------------------------------------------------


def normalised(message: dict, norm: dict, defaults: dict) -> dict:
    """``message`` under the grammar's documented normalisation (meta.json ``normalise``):
    text stripped, empty fields absent, tool-call ids dropped when the format carries them."""
    out: dict[str, Any] = {}
    for key, value in message.items():
        if key == "content" and norm["strip_content"] and isinstance(value, str):
            value = value.strip()
        if key == "reasoning_content" and norm["strip_reasoning"] and isinstance(value, str):
            value = value.strip()
        if key == "tool_calls" and norm["tool_call_id"] and isinstance(value, list):
            value = [{k: v for k, v in c.items() if k != "id"} if isinstance(c, dict) else c
                     for c in value]
        if norm["drop_empty"] and key not in defaults and value in ("", [], None, {}):
            continue
        out[key] = value
    return out


# -- running a case ----------------------------------------------------------------------------


@dataclass
class Result:
    case: Case
    whole: tuple[str, Any]
    streams: dict[str, tuple[str, Any]]
    stream_problems: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def stream_ok(self) -> bool:
        return not self.stream_problems

    @property
    def expected_ok(self) -> bool:
        return not self.problems and not self.stream_problems

    @property
    def status(self) -> str:
        """``pass``, ``needs NAME`` (a case waiting for NAME, failing as it must while its
        streams agree) or ``fail``."""
        if self.case.needs:
            return f"needs {self.case.needs}" if not self.expected_ok and self.stream_ok else "fail"
        return "pass" if self.expected_ok else "fail"


@cache
def _grammar(name: str) -> tuple[Any, dict, tuple[str, ...], dict]:
    g = grammar(name)
    norm = normalisation((g.meta or {}).get("normalise"))
    template = g.template
    return (compile_template(template), norm, template_markers(template, norm["end_of_turn"]),
            dict(template.defaults))


def chunkings(case: Case) -> dict[str, list[str]]:
    """One character at a time, then seeded random chunkings (the seed is the case id's)."""
    text = case.output
    out = {"1 char": list(text)}
    rng = random.Random(zlib.crc32(case.id.encode()))
    for n in range(CHUNKINGS):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 12))))
        bounds = [0, *cuts, len(text)]
        out[f"chunking {n}"] = [text[a:b] for a, b in itertools.pairwise(bounds)]
    return out


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        return ("message", run())
    except Exception as e:  # the type and text are what is compared
        return ("error", f"{type(e).__name__}: {e}")


def _streamed(parser: Any, chunks: list[str]) -> dict:
    for chunk in chunks:
        parser.feed(chunk)
    message, _ = parser.finalize()
    return message


def _same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return a[1].split(":", 1)[0] == b[1].split(":", 1)[0]
    return json.dumps(a[1], ensure_ascii=False) == json.dumps(b[1], ensure_ascii=False)


def _show(outcome: tuple[str, Any]) -> str:
    kind, value = outcome
    return value if kind == "error" else json.dumps(value, ensure_ascii=False)


@cache
def _result(case_id: str) -> Result:
    case = _BY_ID[case_id]
    parser, norm, markers, defaults = _grammar(case.grammar)

    def tools() -> Any:
        return copy.deepcopy(case.tools)

    whole = _outcome(lambda: parser.parse_response(case.output, prefix=case.prefix, tools=tools()))
    streams = {
        name: _outcome(lambda chunks=chunks: _streamed(
            parser.response_parser(case.prefix, tools=tools()), chunks))
        for name, chunks in chunkings(case).items()
    }
    result = Result(case, whole, streams)
    for name, outcome in streams.items():
        if not _same(outcome, whole):
            result.stream_problems.append(
                f"{name} gives {_show(outcome)}\n  whole gives {_show(whole)}")
    if whole[0] == "error":
        result.problems.append(f"raises {whole[1]}")
        return result
    expected = normalised(case.expected, norm, defaults)
    got = normalised(whole[1], norm, defaults)
    # A message's keys are compared as a dict's are, in any order; the values as JSON
    # writes them (1, 1.0 and true differ).
    if json.dumps(got, sort_keys=True) != json.dumps(expected, sort_keys=True):
        result.problems.append(
            f"message {json.dumps(got, ensure_ascii=False)}\n"
            f"  expected {json.dumps(expected, ensure_ascii=False)}")
    leaked = leaks(got, expected, markers)
    if leaked:
        result.problems.append(f"markers leak into the message: {leaked}")
    return result


CASES = load_cases()
_BY_ID = {case.id: case for case in CASES}


def result(case: Case) -> Result:
    return _result(case.id)


def summary(cases: list[Case]) -> str:
    """Per-family and per-category counts of pass / needs NAME / fail."""
    statuses = ("pass", *(f"needs {name}" for name in NEEDS), "fail")
    lines = []
    for title, key in (("family", "family"), ("category", "category")):
        counts: dict[str, dict[str, int]] = {}
        for case in cases:
            row = counts.setdefault(case.data[key], dict.fromkeys(statuses, 0))
            row[result(case).status] += 1
        width = max(len(title), *(len(k) for k in counts))
        lines.append(f"{title.ljust(width)}  {'  '.join(statuses)}  total")
        for name in sorted(counts):
            row = counts[name]
            cells = "  ".join(str(row[s]).rjust(len(s)) for s in statuses)
            lines.append(f"{name.ljust(width)}  {cells}  {str(sum(row.values())).rjust(5)}")
        lines.append("")
    total = {s: sum(1 for c in cases if result(c).status == s) for s in statuses}
    lines.append("conformance: " + ", ".join(f"{total[s]} {s}" for s in statuses)
                 + f" of {len(cases)} cases")
    return "\n".join(lines)


README = CASES_DIR.parent / "README.md"
_COUNTS = ("<!-- counts -->\n```\n", "\n```\n<!-- /counts -->")


def readme_counts(text: str) -> str:
    return text.split(_COUNTS[0], 1)[1].split(_COUNTS[1], 1)[0]


if __name__ == "__main__":
    # python -m tests.conformance.corpus: rewrite the README's copy of the counts.
    text = README.read_text(encoding="utf-8")
    head, rest = text.split(_COUNTS[0], 1)
    tail = rest.split(_COUNTS[1], 1)[1]
    README.write_text(head + _COUNTS[0] + summary(CASES) + _COUNTS[1] + tail, encoding="utf-8")
    print(summary(CASES))
