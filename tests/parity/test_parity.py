"""Differential property: generated parsers against transformers' ``chat_parsing``.

For each drawn template (``strategies.templates``), both loaders run: when the
reference refuses a spec (``ValueError``), ours must refuse it too (``TemplateError``);
a spec the reference accepts must compile. Then, for several drawn cases (model
output, prompt prefix, chunking, tools), the reference and the generated module must
agree on

* the whole-text ``parse_response`` message, or the type of the exception raised and
  its message: ours starts with the reference's (``same_message``; code written against
  transformers matches on it), our detail may follow;
* streaming with the drawn chunking: every event in order (``initial_events``, the
  events of each ``feed``, those of ``finalize``), the final message, and, when one
  side raises, where (constructor, which ``feed``, ``finalize``), the exception type and
  the start of its message.

Values are compared by type as well as by value and with dict key order
(``True``/``1``/``1.0`` differ, NaN equals NaN). Two differences are accepted, each
documented: a known deviation of docs/deviations.md (``KNOWN_DEVIATIONS``), and the
hold-back difference of lazy-loop delimiters (``hold_back_only``; such delimiters are
drawn only with ``RTC_PARITY_LAZY=1``, and then a *message* difference, which
docs/deviations.md also lists, still fails: that mode is for exploring). The tests at
the end pin the mismatches found.

The default run is 4 tests (so ``-n 2`` uses both cores) x 1,050 examples, 3 cases each:
Hypothesis re-uses a template across several examples while it varies the cases, so
that is about 1,100 distinct templates. ``RTC_PARITY_EXAMPLES=N`` changes the
per-test count; ``RTC_PARITY_STATS=FILE`` appends one line per drawn template (its
hash) to FILE, to count distinct templates.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import ResponseParser as RefParser
from transformers.utils.chat_parsing import parse_response as ref_parse_response
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler import grammars
from rtcompiler.codegen import load_parser
from rtcompiler.template import TemplateError, load_template

from .strategies import chunkings, outputs, prefixes, templates, tools

CASES_PER_TEMPLATE = 3
SHARDS = 4
EXAMPLES_PER_SHARD = int(os.environ.get("RTC_PARITY_EXAMPLES", "1050"))

PARITY = settings(
    max_examples=EXAMPLES_PER_SHARD,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
)


# -- comparing values -----------------------------------------------------------------


def _canon_leaf(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, str):
        return value
    return ("other", type(value).__name__, repr(value))


def canon(value: Any) -> Any:
    """A comparable snapshot that tells bool/int/float apart and keeps dict key order.

    Iterative: a prompt may hold JSON nested hundreds deep, which both parsers read and
    a recursive snapshot could not (Python's recursion limit)."""
    results: list = []
    stack: list = [(value, None)]
    while stack:
        item, built = stack.pop()
        if built is not None:  # every child is in results: build the container
            kind, n = built
            children = results[len(results) - n :]
            del results[len(results) - n :]
            if kind == "dict":
                results.append(["dict", *zip(children[::2], children[1::2], strict=True)])
            else:
                results.append([kind, *children])
        elif isinstance(item, (list, tuple)):
            stack.append((None, ("list" if isinstance(item, list) else "tuple", len(item))))
            stack.extend((child, None) for child in reversed(item))
        elif isinstance(item, dict):
            stack.append((None, ("dict", 2 * len(item))))
            for k, v in reversed(list(item.items())):
                stack.append((v, None))
                stack.append((k, None))
        else:
            results.append(_canon_leaf(item))
    return results[0]


def show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


# -- running one side -----------------------------------------------------------------


@dataclass
class Run:
    """What one parser did with one case."""

    events: list[Any] = field(default_factory=list)  # canon(event) per event, in order
    raw_events: list[Any] = field(default_factory=list)
    message: Any = None  # canon(message) when it finished
    raw_message: Any = None
    error: tuple[str, str] | None = None  # (stage, exception type name)
    error_text: str = ""

    def outcome(self) -> tuple[Any, ...]:
        return (self.events, self.message, self.error)

    def describe(self) -> str:
        lines = [f"      event {show(e)}" for e in self.raw_events]
        if self.error is not None:
            lines.append(
                f"      raised {self.error[1]} at {self.error[0]}: {self.error_text[:300]}"
            )
        else:
            lines.append(f"      message {show(self.raw_message)}")
        return "\n".join(lines)


def _take(run: Run, events: list[dict]) -> None:
    for e in events:
        run.events.append(canon(e))
        run.raw_events.append(copy.deepcopy(e))


def run_stream(make: Any, prefix: str, chunks: list[str], tool_list: Any) -> Run:
    run = Run()
    stage = "constructor"
    try:
        parser = make(prefix, copy.deepcopy(tool_list))
        _take(run, parser.initial_events)
        for i, chunk in enumerate(chunks):
            stage = f"feed #{i}"
            _take(run, parser.feed(chunk))
        stage = "finalize"
        message, final = parser.finalize()
        _take(run, final)
        run.message, run.raw_message = canon(message), copy.deepcopy(message)
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        run.error, run.error_text = (stage, type(e).__name__), str(e)
    return run


def run_whole(parse: Any, text: str, prefix: str, tool_list: Any) -> Run:
    run = Run()
    try:
        message = parse(text, prefix, copy.deepcopy(tool_list))
        run.message, run.raw_message = canon(message), copy.deepcopy(message)
    except Exception as e:  # noqa: BLE001
        run.error, run.error_text = ("parse_response", type(e).__name__), str(e)
    return run


# -- the property ---------------------------------------------------------------------


def report(
    what: str, spec: Any, text: str, prefix: str, chunks: Any, tool_list: Any, ref: Run, ours: Run
) -> str:
    return "\n".join(
        [
            f"PARITY MISMATCH ({what})",
            f"  template = {json.dumps(spec, ensure_ascii=False)}",
            f"  text     = {text!r}",
            f"  prefix   = {prefix!r}",
            f"  chunks   = {chunks!r}",
            f"  tools    = {json.dumps(tool_list, ensure_ascii=False)}",
            "  reference:",
            ref.describe(),
            "  ours:",
            ours.describe(),
        ]
    )


def load_both(spec: dict[str, Any]) -> tuple[Any, Any] | None:
    """Both loaders; ``None`` when both refuse (checked), else (reference, our module)."""
    try:
        ref_template = load_response_template(json.loads(json.dumps(spec)))
    except ValueError as ref_error:
        with pytest.raises(TemplateError):
            load_template(json.loads(json.dumps(spec)))
        event("template refused by both loaders")
        del ref_error
        return None
    try:
        ours_template = load_template(json.loads(json.dumps(spec)))
    except TemplateError as e:
        pytest.fail(
            "our loader refuses a template the reference accepts "
            f"({type(e).__name__}: {e})\n  template = {json.dumps(spec, ensure_ascii=False)}"
        )
    module = load_parser(ours_template)
    return ref_template, module


# Known deviations (docs/deviations.md): where the reference crashes on its own bug we
# raise a clear error at the same point instead. Only these are exempt from
# same_message. Each entry: (name, reference type, text in its message, our type, text
# in our message).
KNOWN_DEVIATIONS = [
    (
        # A repeated field whose ``defaults`` value is not a list: the reference calls
        # ``.append`` on it (AttributeError).
        "repeats-field default is not a list",
        "AttributeError",
        "object has no attribute 'append'",
        "ValueError",
        "repeats, but its default value",
    ),
]


def deviating_error(ref: Run, ours: Run, same_stage: bool = True) -> str | None:
    """The name of the known deviation that explains the two errors, if any."""
    if ref.error is None or ours.error is None:
        return None
    if same_stage and ref.error[0] != ours.error[0]:
        return None
    for name, ref_type, ref_text, our_type, our_text in KNOWN_DEVIATIONS:
        if (ref.error[1], ours.error[1]) == (ref_type, our_type) and (
            ref_text in ref.error_text and our_text in ours.error_text
        ):
            return name
    return None


def _stage(run: Run) -> float:
    stage = run.error[0] if run.error else "finalize"
    if stage.startswith("feed #"):
        return int(stage[6:])
    return {"constructor": -1, "finalize": float("inf")}.get(stage, 0)


# A lazy loop other than ``.*?`` in a delimiter pattern (``\s*?<tool_call>``).
_LAZY_LOOP = re.compile(r"(?<!\.)(?<!\\)[*+?}]\?")


def _lazy_delimiters(spec: Any) -> bool:
    patterns = [spec.get("start_anchor_pattern")]
    for f in (spec.get("fields") or {}).values():
        if isinstance(f, dict):
            patterns += [f.get("open_pattern"), f.get("close_pattern")]
    return any(isinstance(p, str) and _LAZY_LOOP.search(p) for p in patterns)


def merged_chunks(events: list[Any]) -> list[dict]:
    """Events with consecutive ``region_chunk``s of one field joined into one."""
    out: list[dict] = []
    for e in events:
        if (
            out
            and e.get("type") == "region_chunk"
            and out[-1].get("type") == "region_chunk"
            and (out[-1]["field"], out[-1]["dirty"]) == (e["field"], e["dirty"])
        ):
            out[-1] = {**out[-1], "text": out[-1]["text"] + e["text"]}
        else:
            out.append(dict(e))
    return out


def hold_back_only(spec: Any, ref: Run, ours: Run) -> bool:
    r"""KNOWN DIFFERENCE (docs/regex-dialect.md, "Known differences from regex").

    For a lazy loop over a class (``\s*?</a>``), ``regex``'s partial search reports a
    partial match from positions where none can start (``\s*?<tool_call>`` on
    ``"< "`` is partial from 0), so the reference holds text back longer than needed;
    our automaton holds back only what can still become the delimiter. Accepted here:
    the same message and the same events once consecutive chunks are joined; or, when
    both raise, the same exception type with ours raising no later than the reference
    (holding less, we reach the failing region sooner; the events of the call that
    raises are lost, so events are not compared then). A different message is NOT
    accepted: see ``test_deviation_lazy_loop_hold_back_changes_the_message``.
    """
    if not _lazy_delimiters(spec) or ref.message != ours.message:
        return False
    if ref.error is None and ours.error is None:
        a, b = merged_chunks(ref.raw_events), merged_chunks(ours.raw_events)
        return [canon(e) for e in a] == [canon(e) for e in b]
    if ref.error is None or ours.error is None:
        return False
    same_error = (ref.error[1] == ours.error[1] and same_message(ref, ours)) or deviating_error(
        ref, ours, same_stage=False
    )
    return bool(same_error) and _stage(ours) <= _stage(ref)


def same_message(ref: Run, ours: Run) -> bool:
    """Ours starts with the reference's message (code written against transformers
    matches on it); our detail may follow."""
    return ref.error is None or ours.error_text.startswith(ref.error_text)


def _agree(ref: Run, ours: Run, spec: Any) -> bool:
    if ref.outcome() == ours.outcome() and same_message(ref, ours):
        return True
    if ref.events == ours.events and ref.message == ours.message:
        name = deviating_error(ref, ours)
        if name is not None:
            event(f"known deviation: {name}")
            return True
    if hold_back_only(spec, ref, ours):
        event("known difference: lazy-loop hold-back (event chunking only)")
        return True
    return False


def check_case(
    spec: Any,
    ref_template: Any,
    module: Any,
    text: str,
    prefix: str,
    chunks: list[str],
    tool_list: Any,
) -> None:
    ref_whole = run_whole(
        lambda t, p, tl: ref_parse_response(t, ref_template, prefix=p, tools=tl),
        text,
        prefix,
        tool_list,
    )
    ours_whole = run_whole(
        lambda t, p, tl: module.parse_response(t, prefix=p, tools=tl), text, prefix, tool_list
    )
    if not _agree(ref_whole, ours_whole, spec):
        raise AssertionError(
            report("parse_response", spec, text, prefix, [text], tool_list, ref_whole, ours_whole)
        )
    ref_stream = run_stream(
        lambda p, tl: RefParser(ref_template, prefix=p, tools=tl), prefix, chunks, tool_list
    )
    ours_stream = run_stream(
        lambda p, tl: module.ResponseParser(p, tools=tl), prefix, chunks, tool_list
    )
    if not _agree(ref_stream, ours_stream, spec):
        raise AssertionError(
            report("streaming", spec, text, prefix, chunks, tool_list, ref_stream, ours_stream)
        )
    event("reference raised" if ref_stream.error else "reference parsed")


@st.composite
def cases(draw: Any, spec: dict[str, Any]) -> tuple[str, str, list[str], Any]:
    text = draw(outputs(spec), label="text")
    prefix = draw(prefixes(spec), label="prefix")
    chunks = draw(chunkings(text), label="chunks")
    tool_list = draw(tools(), label="tools")
    return text, prefix, chunks, tool_list


def _record(spec: dict[str, Any]) -> None:
    path = os.environ.get("RTC_PARITY_STATS")
    if path:
        digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
        with open(path, "a", encoding="utf-8") as f:
            f.write(digest + "\n")


@pytest.mark.parametrize("shard", range(SHARDS))
@PARITY
@given(data=st.data())
def test_generated_parser_matches_reference(shard: int, data: Any) -> None:
    # The last shard also draws specs with one loader rule broken (~10%).
    spec = data.draw(templates(invalid=shard == SHARDS - 1), label="template")
    _record(spec)
    loaded = load_both(spec)
    if loaded is None:
        return
    ref_template, module = loaded
    for _ in range(CASES_PER_TEMPLATE):
        text, prefix, chunks, tool_list = data.draw(cases(spec))
        check_case(spec, ref_template, module, text, prefix, chunks, tool_list)


# -- findings, pinned -------------------------------------------------------------------
#
# Mismatches (or shared reference bugs) the property above turned up, reduced to minimal
# examples. Each says which side is wrong; the differences are documented deviations
# (docs/deviations.md) with both sides pinned.


def _run_both(spec: dict[str, Any], chunks: list[str], prefix: str = "") -> tuple[Run, Run]:
    module = load_parser(load_template(json.loads(json.dumps(spec))))
    ref_template = load_response_template(json.loads(json.dumps(spec)))
    ref = run_stream(
        lambda p, tl: RefParser(ref_template, prefix=p, tools=tl), prefix, chunks, None
    )
    ours = run_stream(lambda p, tl: module.ResponseParser(p, tools=tl), prefix, chunks, None)
    return ref, ours


def test_finding_lazy_loop_hold_back_changes_only_chunking_here() -> None:
    """Known difference (docs/regex-dialect.md): ``regex`` says ``\\s*?</a>`` is partial
    on ``"=<<"`` from 1, where no match can start; the reference holds ``"<"`` back
    one call longer than we do. Same message, same text; only the chunk cut differs."""
    spec = {"start_anchor": "x", "fields": {"content": {"close_pattern": r"\s*?</a>"}}}
    ref, ours = _run_both(spec, ["=<<", "/a>"])
    texts = [[e["text"] for e in r.raw_events if e["type"] == "region_chunk"] for r in (ref, ours)]
    assert texts == [["=", "<"], ["=<"]]
    assert ref.outcome() != ours.outcome()
    assert hold_back_only(spec, ref, ours)


# DEVIATION (docs/deviations.md): with a lazy loop over a character class before a
# literal (``\s*?<x>``), regex reports a partial match from any start whose character
# could begin the literal, even where the loop's class rules a match out; the
# reference therefore holds text back that we emit, and can commit another delimiter
# later. Both sides are pinned: (spec, prefix, chunks, reference's message, ours).
LAZY_HOLD_BACK_CHANGES_THE_MESSAGE = [
    # The reference holds "<ab" back (regex: \s*?<x> is partial on "<ab" from 0), and
    # once "c>hi" comes the longer literal "<abc>" wins; we commit "<a" at once.
    (
        {
            "start_anchor": "x",
            "fields": {"r": {"open": ["<a", "<abc>"]}, "c": {"open_pattern": r"\s*?<x>"}},
        },
        "",
        ["<ab", "c>hi"],
        {"r": "hi"},
        {"r": "bc>hi"},
    ),
    # Held back, "<|im_" opens "a.b" only once ">" has come, and "$" no longer matches
    # before the "\n"; we open it on "\n" and "$" closes it there, empty.
    (
        {
            "start_anchor": "<|start|>assistant",
            "fields": {
                "a.b": {"open": ["<|im_start|>x", "<|im_"], "close_pattern": "$"},
                "t": {"open_pattern": r"\s*?<think>", "close": "</think>"},
            },
        },
        "<|im_",
        ["\n", ">"],
        {"a.b": ">"},
        {},
    ),
]


@pytest.mark.parametrize(
    ("spec", "prefix", "chunks", "reference_says", "we_say"), LAZY_HOLD_BACK_CHANGES_THE_MESSAGE
)
def test_deviation_lazy_loop_hold_back_changes_the_message(
    spec: dict[str, Any],
    prefix: str,
    chunks: list[str],
    reference_says: dict[str, Any],
    we_say: dict[str, Any],
) -> None:
    """DEVIATION (docs/deviations.md, lazy loop over a class before a literal): with a
    lazy-loop delimiter (``\\s*?<x>``) the reference holds text back longer (``regex``'s
    partial-match heuristic) and so can commit a different delimiter later. Both sides
    are pinned, so that a change on either is noticed. In one piece they agree."""
    ref, ours = _run_both(spec, chunks, prefix)
    assert ref.raw_message == reference_says
    assert ours.raw_message == we_say
    whole_ref, whole_ours = _run_both(spec, ["".join(chunks)], prefix)
    assert whole_ref.outcome() == whole_ours.outcome()


def test_finding_reference_commits_a_shorter_literal_mid_stream() -> None:
    """Reference bug, shared by rtcompiler (candidate deviation): with literals where one
    is a prefix of another, a complete match of the shorter one that does not end at the
    buffer's edge is committed even though the longer one is still a partial match. So
    the message depends on the chunking: ``"<abc>hi"`` in one piece gives ``"hi"``,
    fed as ``["<ab", "c>hi"]`` it gives ``"bc>hi"``. The same holds for a regex with an
    optional tail (``<a>(?:\\s*<b>)?`` on ``["<a> <", "b>hi"]``)."""
    for spec, chunks, streamed in [
        (
            {"start_anchor": "x", "fields": {"r": {"open": ["<a", "<abc>"]}}},
            ["<ab", "c>hi"],
            "bc>hi",
        ),
        (
            {"start_anchor": "x", "fields": {"r": {"open_pattern": r"<a>(?:\s*<b>)?"}}},
            ["<a> <", "b>hi"],
            "<b>hi",
        ),
    ]:
        whole_ref, whole_ours = _run_both(spec, ["".join(chunks)])
        ref, ours = _run_both(spec, chunks)
        assert whole_ref.raw_message == whole_ours.raw_message == {"r": "hi"}
        assert ref.outcome() == ours.outcome()
        assert ours.raw_message == {"r": streamed}


def test_finding_zero_width_implicit_close_drops_all_text() -> None:
    """Reference bug, shared by rtcompiler (candidate deviation): an implicit field whose
    close pattern matches the empty string where the text starts (``(?:x)?``, ``\\b``)
    never receives anything -- the reference stops at the empty close before the
    region has content, at every step including the end -- so all text is dropped
    silently, even with no explicit field in play."""
    for pattern in (r"(?:x)?", r"\b"):
        spec = {"start_anchor": "x", "fields": {"content": {"close_pattern": pattern}}}
        for chunks in (["hello world"], list("hello world")):
            ref, ours = _run_both(spec, chunks)
            assert ref.outcome() == ours.outcome()
            assert ours.raw_message == {} and ours.raw_events == []


def test_finding_llama3_json_commits_its_later_close_alternative_mid_stream() -> None:
    """The same reference bug in a bundled grammar: llama3_json's call close prefers
    ``}\\s*`` before ``<|eot_id|>`` or ``;`` and a call (first alternative) to a lone ``}``
    before a new line of prose (second). Fed up to ``}\\n<`` or ``}\\n;``, the first is
    still partial and the second complete, so the stream commits ``}`` and the new line
    becomes an empty content piece, which the join keeps."""
    spec = grammars.grammar("llama3_json:strict").spec
    f = {"type": "function", "function": {"name": "f", "arguments": {}}}
    g = {"type": "function", "function": {"name": "g", "arguments": {}}}
    for text, calls, content, mark, streamed in [
        ('{"name": "f", "parameters": {}}\n<|eot_id|>\n', [f], None, "<", "\n\n"),
        ('{"name": "f", "parameters": {}}\n;{"name": "g", "parameters": {}}\nDone.',
         [f, g], "Done.", ";", "\n\nDone."),
    ]:
        want = {"role": "assistant", "tool_calls": calls}
        if content is not None:
            want["content"] = content
        whole_ref, whole_ours = _run_both(spec, [text])
        assert whole_ref.raw_message == whole_ours.raw_message == want
        cut = text.index(mark) + 1
        for chunks, message in (([text[: cut - 1], text[cut - 1 :]], want),
                                ([text[:cut], text[cut:]], {**want, "content": streamed})):
            ref, ours = _run_both(spec, chunks)
            assert ref.outcome() == ours.outcome()
            assert ours.raw_message == message
