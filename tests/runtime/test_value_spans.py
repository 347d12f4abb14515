"""``close-outside-strings`` with value delimiters (docs/extensions.md): an XML call body
whose values are raw text, where the call's close counts only outside every value.

* ValueSpans, the tracker, against a position-by-position reading of its rule (the last
  delimiter ending at or before a position says whether it is inside a value), over
  random stretches, so that delimiters fall across their edges.
* A template that names its value delimiters, streamed at random chunkings, gives what
  it gives whole; where no value holds a close, what the same template without them
  gives; where one does, the value as written.
* Work counted (never timed) for bodies full of closes inside values, whole and streamed.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rtcompiler.codegen import load_parser
from rtcompiler.runtime.strings import ValueSpans
from rtcompiler.template import load_template

from ..parity.strategies import chunkings

OPENS = ("<p=",)
CLOSES = ("</p>", "</f>")
PLAN = ValueSpans.prepare(OPENS, CLOSES)


def inside_at(text: str) -> list[bool]:
    """Whether each position 0..len(text) is inside a value: the last delimiter that
    ends at or before it is an opening one (an opening one wins a tie)."""
    ends = {}
    for kind, literals in ((False, CLOSES), (True, OPENS)):
        for literal in literals:
            at = text.find(literal)
            while at >= 0:
                ends[at + len(literal)] = kind or ends.get(at + len(literal), False)
                at = text.find(literal, at + 1)
    out, inside = [], False
    for x in range(len(text) + 1):
        inside = ends.get(x, inside)
        out.append(inside)
    return out


bodies = st.lists(st.sampled_from(["<p=", "</p>", "</f>", "<", "/", "p", ">", "=", "f", "a"]),
                  max_size=30).map("".join)


@settings(max_examples=600, deadline=None)
@given(text=bodies, cuts=st.lists(st.integers(0, 90), max_size=10), base=st.integers(0, 4))
@example(text="<p=a</p", cuts=[6], base=0)  # a close cut after its '</p'
@example(text="</p><p=", cuts=[2, 5], base=1)
def test_advance_over_any_stretches_gives_the_state_at_every_stop(text, cuts, base):
    want = inside_at(text)
    spans = ValueSpans(base, PLAN)
    for stop in sorted({min(c, len(text)) for c in cuts} | {len(text)}):
        assert spans.advance(text, base, base + stop) >= 0
        assert spans.inside == want[stop], (text, stop)


@settings(max_examples=600, deadline=None)
@given(text=bodies, cuts=st.lists(st.integers(0, 90), max_size=8), base=st.integers(0, 4))
@example(text="<p=a</", cuts=[5], base=0)  # the close that ends it falls across the cut
@example(text="<p=a</p", cuts=[6], base=2)
def test_skip_finds_the_end_of_the_value_it_starts_in(text, cuts, base):
    want = inside_at(text)
    spans = ValueSpans(base, PLAN)
    for stop in sorted({min(c, len(text)) for c in cuts} | {len(text)}):
        if spans.at - base > stop:
            continue
        spans.advance(text, base, base + stop)
        if spans.inside:
            end, read = spans.skip(text, base, base + len(text))
            assert read >= 0
            leaving = next(
                (x for x in range(stop + 1, len(text) + 1)
                 if not want[x] and text[: x].endswith(CLOSES)), None)
            if leaving is None:
                assert end is None, (text, stop)
                assert spans.at == base + len(text)
                return
            assert end == base + leaving, (text, stop)
            assert not spans.inside
        assert spans.inside == want[spans.at - base], (text, stop)


def test_a_copy_reads_on_without_moving_the_tracker():
    spans = ValueSpans(0, PLAN)
    spans.advance("x<p=ab</", 0, 8)
    # What is pending is the end of the text that begins a delimiter, and no more.
    probe = spans.copy()
    probe.advance("x<p=ab</p>", 0, 10)
    assert (spans.at, spans.inside, spans.pending) == (8, True, "</")
    assert (probe.at, probe.inside) == (10, False)


def test_the_value_open_at_the_end_begins_after_the_last_opening_delimiter():
    spans = ValueSpans(0, ValueSpans.prepare(("<p=", "<v>"), CLOSES))
    assert spans.value_start("<p=a>x</p><v>tail") == len("<p=a>x</p><v>")


# -- a template that names its value delimiters ------------------------------------------

SPEC = {
    "extensions": ["close-outside-strings", "recover"],
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool_call>\n<function=(?P<name>[^>\n]+)>\n",
            "close_pattern": r"</tool_call>\s*|(?=<\|im_end\|>)",
            "content": "xml-inline",
            "content_args": {"tag_pattern":
                             r"<parameter=(?P<key>[^>\n]+)>\n(?P<value>.*?)\n</parameter>\n"
                             r"(?:</function>\n)?"},
            "repeats": True, "recover": True, "tags_only": True,
            "close_outside_strings": {"open": ["<parameter="],
                                      "close": ["</parameter>", "</function>"]},
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {"close": ["<|im_end|>", "<tool_call>", "</tool_call>"], "repeats": True,
                    "join": "\n\n"},
    },
}
MODULE = load_parser(load_template(SPEC))
PLAIN = copy.deepcopy(SPEC)
del PLAIN["fields"]["tool_calls"]["close_outside_strings"]
PLAIN["extensions"] = ["recover"]
PLAIN_MODULE = load_parser(load_template(PLAIN))


def run(module: Any, chunks: list[str]) -> Any:
    parser = module.ResponseParser("")
    try:
        for chunk in chunks:
            parser.feed(chunk)
        return parser.finalize()[0]
    except Exception as e:  # noqa: BLE001 -- the type is what is compared
        return type(e).__name__


def whole(module: Any, text: str) -> Any:
    try:
        return module.parse_response(text, prefix="")
    except Exception as e:  # noqa: BLE001
        return type(e).__name__


def call_text(name: str, arguments: dict[str, str]) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in arguments.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def test_a_close_written_in_a_value_is_value_text():
    text = "Saving.\n" + call_text("write", {"path": "a.md", "text": "ends with </tool_call>."})
    text += "<|im_end|>"
    want = {"content": "Saving.", "tool_calls": [
        {"name": "write", "arguments": {"path": "a.md", "text": "ends with </tool_call>."}}]}
    for chunks in ([text], list(text), [text[i : i + 5] for i in range(0, len(text), 5)]):
        assert run(MODULE, chunks) == want
    assert whole(MODULE, text) == want
    # Without the delimiters, the call closes in the value and is lost.
    assert "tool_calls" not in whole(PLAIN_MODULE, text)


def test_a_value_that_never_ends_lets_the_close_in_it_count():
    # No </parameter> and no </function>: at the end of the output the first close in the
    # open value counts after all, and the text after it is parsed as usual.
    text = "<tool_call>\n<function=f>\n<parameter=a>\nx</tool_call>after<|im_end|>"
    got = whole(MODULE, text)
    assert got == whole(PLAIN_MODULE, text)
    assert got["content"].endswith("after")
    assert run(MODULE, list(text)) == got


values = st.lists(
    st.sampled_from(["a", " ", "\n", "x<y", "</tool_call>", "<tool_call>", "</parameter>",
                     "<parameter=", "</function>", "<|im_end|>", "</", "<"]),
    max_size=6,
).map("".join)


@st.composite
def outputs(draw: Any) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        parts.append(draw(st.sampled_from(["", "Text. ", "</tool_call>", "<tool_call>"])))
        arguments = draw(st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3))
        text = call_text(draw(st.sampled_from(["f", "g"])), arguments)
        cut = draw(st.integers(0, len(text)))
        parts.append(text if draw(st.integers(0, 4)) else text[:cut])
    parts.append(draw(st.sampled_from(["", "<|im_end|>", "done<|im_end|>"])))
    return "".join(parts)


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_streamed_at_any_chunking_the_message_is_the_whole_parse(data):
    text = data.draw(outputs())
    chunks = data.draw(chunkings(text))
    if "".join(chunks) != text:
        chunks = [text]
    assert run(MODULE, chunks) == whole(MODULE, text)


CLEAN = st.lists(st.sampled_from(["a", " ", "\n", "x<y", "</", "<"]), max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(arguments=st.lists(st.dictionaries(st.sampled_from(["a", "b"]), CLEAN, max_size=2),
                          max_size=3),
       closes=st.lists(st.booleans(), min_size=3, max_size=3))
def test_where_no_value_holds_a_close_the_delimiters_change_nothing(arguments, closes):
    text = "".join(
        call_text("f", a) if whole_call else call_text("f", a)[: -len("</tool_call>")]
        for a, whole_call in zip(arguments, closes, strict=False)
    ) + "<|im_end|>"
    assert whole(MODULE, text) == whole(PLAIN_MODULE, text)


@settings(max_examples=200, deadline=None)
@given(arguments=st.lists(st.dictionaries(st.sampled_from(["a", "b"]), CLEAN, max_size=2),
                          min_size=1, max_size=3),
       which=st.integers(0, 5))
def test_a_close_in_any_value_is_kept_in_it(arguments, which):
    arguments = [dict(a) for a in arguments]
    target = arguments[which % len(arguments)]
    target["z"] = "before </tool_call> after"
    text = "".join(call_text("f", a) for a in arguments) + "<|im_end|>"
    got = whole(MODULE, text)
    assert [c["arguments"] for c in got["tool_calls"]] == arguments, json.dumps(got)


# -- work, counted ------------------------------------------------------------------------

SIZES = (2_000, 8_000, 32_000)


def _work(text: str, step: int) -> float:
    parser = MODULE.ResponseParser("")
    stream = parser._stream
    if step:
        for i in range(0, len(text), step):
            parser.feed(text[i : i + step])
        parser.finalize()
    else:
        stream.parse_whole(text)
    return stream.work / len(text)


@pytest.mark.parametrize("unit", ["</tool_call>", "a </tool_call>\n", "</tool_cal"])
@pytest.mark.parametrize("step", [0, 1, 7, 64])
def test_closes_inside_values_cost_linear_work(unit, step):
    per = []
    for n in SIZES:
        value = unit * (n // len(unit))
        text = call_text("f", {"a": value}) + "<|im_end|>"
        per.append(_work(text, step))
    assert max(per) <= 40, per
    assert per[2] <= per[0] * 1.1 + 0.5, per


@pytest.mark.parametrize("step", [0, 1, 16])
def test_an_unfinished_value_full_of_closes_costs_linear_work(step):
    # The value never ends: each close in it is passed over, then at the end the first
    # counts (close_in_open_string reads the region's text once).
    per = []
    for n in SIZES:
        text = "<tool_call>\n<function=f>\n<parameter=a>\n" + "x </tool_call>" * (n // 14)
        per.append(_work(text, step))
    assert max(per) <= 40, per
    assert per[2] <= per[0] * 1.1 + 0.5, per


def test_the_whole_walk_reads_a_value_region_with_landmarks_that_do_not_close_it():
    # qwen3_coder's close looks ahead at '<tool_call>\n<function=': a '<tool_call>' not
    # followed by a call is a landmark that does not close the call. Outside a value the
    # walk reads on with a tracker (each landmark after the first), inside one the loop
    # does; either way the message is the streamed one, and the work grows linearly.
    from rtcompiler import compile_template

    module = compile_template("qwen3_coder").module
    prefix = "<|im_start|>assistant\n<think>\n"

    def output(n: int, where: str) -> str:
        stray = "<tool_call>x\n" * n
        value = f"a {stray}b" if where == "value" else "a"
        between = stray if where == "between" else ""
        return (
            "</think>\n\n<tool_call>\n<function=f>\n<parameter=p>\n" + value
            + "\n</parameter>\n" + between + "<parameter=q>\nz\n</parameter>\n</function>\n"
            "</tool_call><|im_end|>"
        )

    for where in ("value", "between"):
        per = []
        for n in (50, 200, 800):
            text = output(n, where)
            parser = module.ResponseParser(prefix)
            stream = parser._stream
            whole = stream.parse_whole(text)
            per.append(stream.work / len(text))
            streamed = module.ResponseParser(prefix)
            for i in range(0, len(text), 7):
                streamed.feed(text[i : i + 7])
            assert streamed.finalize()[0] == whole, where
        if where == "value":
            assert whole["tool_calls"][0]["function"]["arguments"]["p"].count("<tool_call>") == n
        assert max(per) <= 40, (where, per)
        assert per[2] <= per[0] * 1.1 + 0.5, (where, per)


def test_a_long_piece_holding_a_close_in_a_value_region_is_replayed_the_second_time():
    # A piece of up to 96 characters holding a whole close is named by the state it met
    # (value delimiters are read with one match, as cheap as the name), so a stream fed
    # the same output cut alike replays it without processing it again.
    module = load_parser(load_template(SPEC))
    text = call_text("f", {"a": "one", "b": "two"}) + "Done.<|im_end|>"
    pieces = [text[i : i + 40] for i in range(0, len(text), 40)]
    assert any("</tool_call>" in p for p in pieces)
    calls = []
    process = module.ResponseStream.process
    module.ResponseStream.process = (
        lambda self, events, eos, key=None: calls.append(eos) or process(self, events, eos, key)
    )
    try:
        first = run(module, pieces)
        assert False in calls
        calls.clear()
        second = run(module, pieces)
    finally:
        module.ResponseStream.process = process
    assert second == first == {"tool_calls": [{"name": "f", "arguments": {"a": "one",
                                                                           "b": "two"}}],
                               "content": "Done."}
    assert False not in calls  # every feed replayed; only finalize's pass processed
