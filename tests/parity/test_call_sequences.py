"""Differential property: any sequence of ``feed`` / ``finalize`` calls, against transformers.

``test_parity`` feeds the chunks and finalizes once. A caller may do more: finalize
again after a finalize that raised (a region's parser refused its text, or a required
field is missing), feed more text after that, feed ``None`` (an OpenAI delta with
``content: null``), ``""`` or something that is not text, or call either after the
end. For each drawn template (``strategies.templates``), output, chunking and
sequence of such calls, the reference and the generated module must answer every
call alike: the same events (or the same ``initial_events``), the same message and
final events from a ``finalize`` that succeeds, or the same exception type with a message
that starts with the reference's (a known deviation excepted). After an
exception both go on with the next call, so what a region keeps when its parser
raises (its text, once) shows in every later answer.

The default run is 2 tests x 300 examples; ``RTC_SEQUENCE_EXAMPLES=N`` changes that.
"""

from __future__ import annotations

import copy
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import ResponseParser as RefParser
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler import compile_template

from .strategies import chunkings, outputs, prefixes, templates, tools
from .test_parity import KNOWN_DEVIATIONS, canon, load_both, show

EXAMPLES = int(os.environ.get("RTC_SEQUENCE_EXAMPLES", "300"))

SEQUENCES = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
)

# What a feed may be given besides model text. The false ones are no text for the
# reference (``if text:``); the others it refuses when fed (``str += ...``: TypeError).
ODD_PIECES = [None, "", None, "", 0, False, b"", [], ["a"], b"x", 5, ("a",)]
FINALIZE = ("finalize",)


@st.composite
def calls(draw: Any, spec: dict[str, Any], text: str) -> list[tuple[Any, ...]]:
    """The calls a caller makes: the chunks of ``text`` with odd feeds and early
    finalizes between them, then finalizes, some retried, with more output (more
    regions, closes for a region left open) fed between them, and calls after the end."""
    extra = st.one_of(st.just(FINALIZE), st.tuples(st.just("feed"), st.sampled_from(ODD_PIECES)))
    out: list[tuple[Any, ...]] = []
    for chunk in draw(chunkings(text), label="chunks"):
        while draw(st.integers(0, 11)) == 0:
            out.append(draw(extra))
        out.append(("feed", chunk))
    for _ in range(draw(st.integers(1, 3))):
        out.append(FINALIZE)
        for _ in range(draw(st.integers(0, 2))):
            out.append(draw(extra))
        if draw(st.booleans()):
            more = draw(outputs(spec), label="more")
            out += [("feed", chunk) for chunk in draw(chunkings(more), label="more chunks")]
    out += [FINALIZE, draw(extra), ("feed", "x")]
    return out


def _deviation(ref_type: str, ref_text: str, our_type: str, our_text: str) -> str | None:
    for name, ref_kind, ref_says, our_kind, we_say in KNOWN_DEVIATIONS:
        if (ref_type, our_type) == (ref_kind, our_kind) and (
            ref_says in ref_text and we_say in our_text
        ):
            return name
    return None


def run_calls(make: Any, prefix: str, tool_list: Any, ops: list[tuple[Any, ...]]) -> list[Any]:
    """One answer per step: the constructor's ``initial_events``, then each call's."""
    try:
        parser = make(prefix, copy.deepcopy(tool_list))
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return [("raised", type(e).__name__, str(e))]
    answers: list[Any] = [("events", canon(parser.initial_events), None)]
    for op in ops:
        try:
            if op[0] == "feed":
                events = parser.feed(op[1])
                answers.append(("events", canon(events), events))
            else:
                message, events = parser.finalize()
                answers.append(("message", canon([message, events]), [message, events]))
        except Exception as e:  # noqa: BLE001
            answers.append(("raised", type(e).__name__, str(e)))
    return answers


def _same(ref: Any, ours: Any) -> bool:
    if ref[0] == "raised" and ours[0] == "raised":
        # The reference's message first, then our detail, if any.
        same_error = ref[1] == ours[1] and ours[2].startswith(ref[2])
        return same_error or _deviation(ref[1], ref[2], ours[1], ours[2]) is not None
    return ref[:2] == ours[:2]


def _describe(answer: Any) -> str:
    if answer[0] == "raised":
        return f"raised {answer[1]}: {answer[2][:200]}"
    return f"{answer[0]} {show(answer[2])}"


def check_calls(spec: Any, loaded: Any, prefix: str, tool_list: Any, ops: list[Any]) -> None:
    ref_template, module = loaded
    ref = run_calls(
        lambda p, tl: RefParser(ref_template, prefix=p, tools=tl), prefix, tool_list, ops
    )
    ours = run_calls(lambda p, tl: module.ResponseParser(p, tools=tl), prefix, tool_list, ops)
    steps = ["constructor", *(repr(op) for op in ops)]
    for i, (a, b) in enumerate(zip(ref, ours, strict=False)):
        if not _same(a, b):
            lines = [
                "CALL SEQUENCE MISMATCH",
                f"  template = {show(spec)}",
                f"  prefix   = {prefix!r}",
                f"  tools    = {show(tool_list)}",
                "  calls (reference | ours):",
            ]
            for j in range(i + 1):
                mark = ">>" if j == i else "  "
                lines.append(f"  {mark} {steps[j]}")
                lines.append(f"       ref:  {_describe(ref[j])}")
                lines.append(f"       ours: {_describe(ours[j])}")
            raise AssertionError("\n".join(lines))
    assert len(ref) == len(ours), (ref[-1], ours[-1])
    raised = [i for i, a in enumerate(ref) if a[0] == "raised"]
    if any(ref[i][1] == "ValueError" for i in raised):
        event("a call raised ValueError")
        if any(a[0] == "message" for a in ref[raised[0] + 1 :]):
            event("a finalize succeeded after a call raised")
        if any(a[0] == "events" and a[1] for a in ref[raised[0] + 1 :]):
            event("a feed made events after a call raised")


@pytest.mark.parametrize("shard", range(2))
@SEQUENCES
@given(data=st.data())
def test_call_sequences_match_reference(shard: int, data: Any) -> None:
    spec = data.draw(templates(), label="template")
    loaded = load_both(spec)
    if loaded is None:
        return
    text = data.draw(outputs(spec), label="text")
    prefix = data.draw(prefixes(spec), label="prefix")
    tool_list = data.draw(tools(), label="tools")
    ops = data.draw(calls(spec, text), label="calls")
    check_calls(spec, loaded, prefix, tool_list, ops)


# -- the cases of issue 20, item 8, pinned ------------------------------------------------

QWEN = compile_template("qwen3:strict")  # the reference's semantics: a broken call raises
PROMPT = "<|im_start|>assistant\n"
JSON_CALLS = compile_template({"start_anchor": "x", "fields": {"tool_calls": {
    "open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": True}}})


def test_a_failed_close_keeps_the_region_text_once() -> None:
    """A tool call whose JSON is broken: every finalize raises on the same text, and
    text fed after that joins it once (the reference keeps ``'bad'``; the body used to
    be appended again on each retry, ``'badbad'``)."""
    parser = QWEN.response_parser(PROMPT)
    parser.feed("<tool_call>bad")
    for _ in range(3):
        with pytest.raises(ValueError, match="'bad'"):
            parser.finalize()
    assert parser.feed(' {"name": "f", "arguments": {}}') == [
        {"type": "region_chunk", "field": "tool_calls",
         "text": ' {"name": "f", "arguments": {}}', "dirty": True}
    ]
    with pytest.raises(ValueError, match=r"""'bad \{"name\""""):
        parser.finalize()


def test_a_close_that_raised_mid_stream_is_retried_on_the_next_close() -> None:
    """The close delimiter came and the region's parser raised: the region stays open
    with its text and the next close parses that text and what followed, once."""
    parser = JSON_CALLS.response_parser("")
    with pytest.raises(ValueError):
        parser.feed('<tool_call>{"name": "f", "arguments": </tool_call>')
    assert parser.feed('{}}</tool_call>') == [
        {"type": "region_chunk", "field": "tool_calls", "text": "{}}", "dirty": True},
        {"type": "region_close", "field": "tool_calls",
         "value": {"name": "f", "arguments": {}}},
    ]
    # The region's text is what both feeds gave it; the first close tag stayed out,
    # consumed by the close that raised, as in the reference.
    assert parser.finalize()[0] == {"tool_calls": [{"name": "f", "arguments": {}}]}


def test_a_replayed_feed_whose_close_raises_leaves_the_state_it_reached() -> None:
    """A feed met before in the same state is replayed (the table remembers what it
    did); when a close it replays raises, the stream is where the close left it, not
    in the state the replayed feed ended in then (the text after the close held back,
    outside the region). Otherwise the next feed is taken for one met in that state,
    and ``</t>`` goes into the region as text where the reference closes it again."""
    spec = {"start_anchor": "x", "fields": {
        "content": {}, "t": {"open": "<t>", "close": "</t>", "content": "json"}}}
    module = compile_template(spec).module
    ref_template = load_response_template(copy.deepcopy(spec))
    run_calls(lambda p, tl: module.ResponseParser(p), "", None,
              [("feed", c) for c in ["<t>", "{}", "</", "t><", "/t>", "hi"]] + [FINALIZE])
    ops = [("feed", c) for c in ["<t>", "bad", "</", "t><", "/t>", "hi"]] + [FINALIZE]
    ref = run_calls(lambda p, tl: RefParser(ref_template, prefix=p), "", None, ops)
    ours = run_calls(lambda p, tl: module.ResponseParser(p), "", None, ops)
    assert [a[:2] for a in ours] == [a[:2] for a in ref]
    assert [a[0] for a in ours] == ["events"] * 4 + ["raised", "raised", "events", "raised"]


@pytest.mark.parametrize("piece", [None, "", 0, False, b"", []])
def test_feeding_no_text_returns_no_events(piece: Any) -> None:
    parser = QWEN.response_parser(PROMPT)
    assert parser.feed("Hi") == [{"type": "region_open", "field": "content"},
                                 {"type": "region_chunk", "field": "content", "text": "Hi",
                                  "dirty": False}]
    assert parser.feed(piece) == []
    assert parser.finalize()[0] == {"role": "assistant", "content": "Hi"}
    assert QWEN.parse_response(piece, prefix=PROMPT) == {"role": "assistant"}


@pytest.mark.parametrize("piece", [["a"], b"x", 5, ("a",)])
def test_feeding_something_else_than_text_is_a_type_error_when_fed(piece: Any) -> None:
    parser = QWEN.response_parser(PROMPT)
    parser.feed("Hi")
    with pytest.raises(TypeError, match=type(piece).__name__):
        parser.feed(piece)
    # Refused whole: the stream goes on as if it had not been offered.
    assert parser.finalize()[0] == {"role": "assistant", "content": "Hi"}
    with pytest.raises(TypeError, match=type(piece).__name__):
        QWEN.parse_response(piece, prefix=PROMPT)


def test_after_the_end_every_call_is_a_runtime_error() -> None:
    parser = QWEN.response_parser(PROMPT)
    parser.finalize()
    for piece in ("x", "", None, ["a"]):
        with pytest.raises(RuntimeError):
            parser.feed(piece)
    with pytest.raises(RuntimeError):
        parser.finalize()


def test_a_str_subclass_is_fed_as_its_text() -> None:
    class Token(str):
        pass

    parser = QWEN.response_parser(PROMPT)
    for piece in ("Hel", "lo<|im_", "end|>"):
        parser.feed(Token(piece))
    message, _ = parser.finalize()
    assert message == {"role": "assistant", "content": "Hello"}
    assert type(message["content"]) is str
