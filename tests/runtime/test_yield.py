"""The ``yield`` extension (docs/extensions.md): a call written inside the reasoning.

* Its semantics, whole and streamed at every split: the call is a call, the reasoning
  around it is joined, a failed call's text stays in the reasoning, the implicit field's
  close ends a piece, the reasoning's close ends a call opened in it.
* A model of it (hypothesis): outputs built from reasoning pieces, calls and prose, at
  random chunkings, give the message the pieces say.
* Against transformers (hypothesis): on random templates opting in, where no watched
  delimiter a yielding region adds occurs in the output, the message is the reference's.
* The template stage: what it refuses; transformers refuses such a template.
* Work counted (never timed) for a long reasoning full of calls.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler import grammars
from rtcompiler.codegen import load_parser
from rtcompiler.openai import DeltaStream
from rtcompiler.template import TemplateError, load_template

from ..parity.strategies import chunkings, outputs, prefixes, templates, tools
from ..parity.test_parity import _lazy_delimiters
from ..template.reference import reference_outcome
from .test_recover import FORM_MODULES, reference_run, robust_run, run, whole

CALL = {"type": "function",
        "function": {"name": "{content.name}", "arguments": "{content.arguments}"}}
SPEC = {
    "extensions": ["recover", "yield"],
    "start_anchor": "<s>",
    "fields": {
        "reasoning_content": {
            "open": "<think>", "close": "</think>",
            "yield_to": {"fields": ["tool_calls"], "join": "\n\n"},
        },
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>", "close_pattern": r"</tool_call>\s*",
            "content": "json", "repeats": True, "recover": True, "transform": CALL,
        },
        "content": {"close": "<|im_end|>", "repeats": True, "join": "\n\n"},
    },
}
MODULE = load_parser(load_template(SPEC))
STRICT = grammars.strict_spec(SPEC)
STRICT_MODULE = load_parser(load_template(STRICT))


def call(name: str, **arguments: Any) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def body(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def assert_everywhere(text: str, want: Any, module: Any = MODULE) -> None:
    """``want`` whole, streamed a character at a time, and split at every position."""
    assert whole(module, text) == want
    assert run(module, text, list(text))[0] == want
    for i in range(len(text) + 1):
        assert run(module, text, [text[:i], text[i:]])[0] == want, i


# -- semantics ------------------------------------------------------------------------


def test_a_call_inside_the_reasoning_is_a_call_and_the_reasoning_around_it_is_joined():
    text = (f"<think>I will call <tool_call>{body('f', x=1)}</tool_call> then think."
            f"</think>Answer.<tool_call>{body('g')}</tool_call><|im_end|>")
    assert_everywhere(text, {
        "reasoning_content": "I will call\n\nthen think.",
        "tool_calls": [call("f", x=1), call("g")],
        "content": "Answer.",
    })
    # The strict form reads the reasoning first, as the reference does: one call.
    strict = {"reasoning_content": f"I will call <tool_call>{body('f', x=1)}</tool_call> "
              "then think.", "tool_calls": [call("g")], "content": "Answer."}
    assert whole(STRICT_MODULE, text) == strict
    assert ref_parse_response(text, STRICT, prefix="") == strict


def test_events_give_each_piece_of_the_reasoning_its_own_value():
    text = f"<think>a<tool_call>{body('f')}</tool_call>b</think>"
    _, events = run(MODULE, text, list(text))
    assert [(e["type"], e["field"], e.get("value")) for e in events
            if e["type"] != "region_chunk"] == [
        ("region_open", "reasoning_content", None),
        ("region_close", "reasoning_content", "a"),
        ("region_open", "tool_calls", None),
        ("region_close", "tool_calls", call("f")),
        ("region_open", "reasoning_content", None),
        ("region_close", "reasoning_content", "b"),
    ]


def test_empty_pieces_add_no_separator():
    assert_everywhere(f"<think><tool_call>{body('f')}</tool_call></think>x",
                      {"tool_calls": [call("f")], "content": "x"})
    assert_everywhere(f"<think>a\n<tool_call>{body('f')}</tool_call>\n</think>x",
                      {"reasoning_content": "a", "tool_calls": [call("f")], "content": "x"})
    assert_everywhere(f"<think>  <tool_call>{body('f')}</tool_call>b</think>",
                      {"reasoning_content": "b", "tool_calls": [call("f")]})


def test_a_failed_call_inside_the_reasoning_stays_in_the_reasoning():
    assert_everywhere("<think>a<tool_call>{bad</tool_call>b</think>c", {
        "reasoning_content": "a\n\n{bad\n\nb", "content": "c"})
    # Cut inside the call: never a call, its text is reasoning.
    assert_everywhere('<think>a<tool_call>{"name": "f", "argu', {
        "reasoning_content": 'a\n\n{"name": "f", "argu'})


def test_the_implicit_fields_close_ends_a_piece_of_the_reasoning():
    assert_everywhere("<think>a<|im_end|>b</think>c<|im_end|>", {
        "reasoning_content": "a\n\nb", "content": "c"})


STRAY_CLOSE = copy.deepcopy(SPEC)
STRAY_CLOSE["fields"]["content"]["close"] = ["<|im_end|>", "</think>"]
STRAY_CLOSE_MODULE = load_parser(load_template(STRAY_CLOSE))


def test_the_reasonings_own_close_wins_over_the_implicit_close_written_the_same():
    # qwen3 drops a stray </think> met in content, so </think> is the implicit field's
    # close too: in the reasoning it closes the reasoning, not only a piece of it.
    assert_everywhere("<think>a</think>b</think>c<|im_end|>", {
        "reasoning_content": "a", "content": "b\n\nc"}, STRAY_CLOSE_MODULE)
    assert_everywhere("<think>a<|im_end|>b</think>c", {
        "reasoning_content": "a\n\nb", "content": "c"}, STRAY_CLOSE_MODULE)
    assert_everywhere("<think>a<tool_call>" + body("f") + "</tool_call>b</think>c</think>d", {
        "reasoning_content": "a\n\nb", "tool_calls": [call("f")], "content": "c\n\nd"},
        STRAY_CLOSE_MODULE)


@pytest.mark.parametrize("text, reasoning", [
    ('<think>s<|tool_call|>{"n<|end_of_text|>y<response>z', 's\n\n{"n\n\ny\n\nz'),
    ('<think>s<|tool_call|>{"n<|end_of_text|>y</response>z<|end_of_text|>w',
     's\n\n{"n\n\ny\n\nz\n\nw'),
    ('<think>s<|tool_call|>{"a": "b<|end_of_text|>y<|end_of_text|>z</think>w',
     's\n\n{"a": "b\n\ny\n\nz'),
])
def test_after_a_call_whose_string_never_ends_the_implicit_close_still_ends_a_piece(
    text, reasoning,
):
    # granite3: the call's close inside its string that never ends closes it at the end
    # (close-outside-strings), its text goes back to the reasoning, and the implicit
    # field's closes after it still end pieces, whole as streamed (the whole-text pass
    # once looked them up at positions of the text before that close rebased it).
    module = FORM_MODULES["granite3"]
    want = {"role": "assistant", "reasoning_content": reasoning}
    if text.endswith("</think>w"):
        want["content"] = "w"
    assert run(module, text, [text])[0] == want
    assert_everywhere(text, want, module)


def test_the_reasonings_close_ends_a_call_opened_in_it():
    # The call's own close is missing: the reasoning's close ends both.
    assert_everywhere(f"<think>a<tool_call>{body('f')}</think>c", {
        "reasoning_content": "a", "tool_calls": [call("f")], "content": "c"})


def test_a_later_reasoning_region_replaces_the_first_as_without_the_extension():
    assert_everywhere(f"<think>a<tool_call>{body('f')}</tool_call>b</think><think>c</think>", {
        "reasoning_content": "c", "tool_calls": [call("f")]})


REPEATING = copy.deepcopy(SPEC)
REPEATING["fields"]["reasoning_content"].update(repeats=True, join="\n\n")
REPEATING_MODULE = load_parser(load_template(REPEATING))


def test_a_repeating_yielding_field_joins_a_later_regions_pieces():
    # (Magistral thinking again after a call: both thoughts are the reasoning.)
    text = f"<think>a<tool_call>{body('f')}</tool_call>b</think>x<think> </think><think>c</think>y"
    want = {"reasoning_content": "a\n\nb\n\nc", "tool_calls": [call("f")], "content": "x\n\ny"}
    assert_everywhere(text, want, REPEATING_MODULE)
    # The strict form keeps repeats and join: the reference's join of the regions' values.
    strict = grammars.strict_spec(REPEATING)
    assert strict["fields"]["reasoning_content"] == {
        "open": "<think>", "close": "</think>", "repeats": True, "join": "\n\n"}
    # OpenAI deltas: the reasoning a client accumulates is the message's.
    stream = DeltaStream(REPEATING, "<s>")
    deltas = list(stream.initial_deltas)
    for ch in text:
        deltas += stream.feed(ch)
    deltas += stream.finish()
    assert "".join(d.get("reasoning_content", "") for d in deltas) == want["reasoning_content"]
    assert stream.message["reasoning_content"] == want["reasoning_content"]


def test_the_prompt_may_leave_the_call_open_inside_the_reasoning():
    prefix = "<s><think>a<tool_call>"
    text = '{"name": "f", "arguments": {}}</tool_call>b</think>'
    want = {"reasoning_content": "a\n\nb", "tool_calls": [call("f")]}
    assert MODULE.parse_response(text, prefix=prefix) == want
    for i in range(len(text) + 1):
        assert run(MODULE, text, [text[:i], text[i:]], prefix)[0] == want, i


# -- a model of it -------------------------------------------------------------------


WORDS = st.sampled_from(["ok", "a b", " x ", "\n", "think", "call", "<", "tool"])


@st.composite
def pieces(draw: Any) -> tuple[str, dict]:
    """An output of thoughts (text and calls), calls and prose, and the message it
    stands for."""
    text, thought, calls, prose = "", [], [], []

    def a_call() -> str:
        n = len(calls)
        calls.append(call(f"f{n}", n=n))
        return f"<tool_call>{body(f'f{n}', n=n)}</tool_call>"

    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["think", "call", "prose"]))
        if kind == "think":
            thought, piece = [], ""  # a later thought replaces an earlier one
            text += "<think>"
            for _ in range(draw(st.integers(0, 4))):
                if draw(st.booleans()):
                    words = "".join(draw(st.lists(WORDS, max_size=3)))
                    text += words
                    piece += words
                else:
                    text += a_call()
                    if piece.strip():
                        thought.append(piece.strip())
                    piece = ""
            if piece.strip():
                thought.append(piece.strip())
            text += "</think>"
        elif kind == "call":
            text += "\n" + a_call()
        else:
            words = draw(st.sampled_from(["ok", "a b", "x <y"]))
            text += words + "<|im_end|>"
            prose.append(words.strip())
    want: dict = {}
    if thought:
        want["reasoning_content"] = "\n\n".join(thought)
    if calls:
        want["tool_calls"] = calls
    if prose:
        want["content"] = "\n\n".join(prose)
    return text, want


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_model_of_thoughts_calls_and_prose(data):
    text, want = data.draw(pieces())
    assert whole(MODULE, text) == want, text
    chunks = data.draw(chunkings(text))
    assert run(MODULE, text, chunks if "".join(chunks) == text else [text])[0] == want, chunks


# -- against the reference --------------------------------------------------------------


def yielding(spec: dict) -> tuple[dict, list] | None:
    """``spec`` with one text field that has an open and a close yielding to every other
    explicit field, and the delimiters that adds to what it watches (None when it has
    no such field)."""
    if not isinstance(spec, dict) or "extensions" in spec:
        return None
    fields = spec.get("fields") or {}
    explicit = [n for n, f in fields.items() if "open" in f or "open_pattern" in f]
    for name in explicit:
        f = fields[name]
        if (
            f.get("content", "text") != "text" or f.get("repeats")
            or not ("close" in f or "close_pattern" in f) or len(explicit) < 2
        ):
            continue
        out = copy.deepcopy(spec)
        out["extensions"] = ["yield"]
        targets = [n for n in explicit if n != name]
        out["fields"][name]["yield_to"] = {"fields": targets, "join": "\n\n"}
        added = [(fields[n], "open") for n in targets] + [
            (g, "close") for g in fields.values()
            if "open" not in g and "open_pattern" not in g]
        return out, added
    return None


def _patterns(added: list) -> list:
    out = []
    for f, key in added:
        if f.get(f"{key}_pattern") is not None:
            out.append(regex.compile(f[f"{key}_pattern"], regex.DOTALL))
        elif f.get(key) is not None:
            literals = [f[key]] if isinstance(f[key], str) else f[key]
            out.append(regex.compile("|".join(regex.escape(s) for s in literals)))
    return out


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(data=st.data())
def test_where_no_added_delimiter_occurs_the_message_is_the_references(data):
    spec = data.draw(templates())
    assume(not _lazy_delimiters(spec))
    found = yielding(spec)
    assume(found is not None)
    opted, added = found
    try:
        load_template(opted)
        reference_outcome(json.loads(json.dumps(spec)))
    except (TemplateError, ValueError):
        assume(False)
    assume(reference_outcome(json.loads(json.dumps(spec))).verdict == "accept")
    module = load_parser(load_template(opted))
    text = data.draw(outputs(spec))
    prefix = data.draw(prefixes(spec))
    tool_list = data.draw(tools())
    # Conservative: none of the delimiters the yielding region adds occurs anywhere in
    # the prompt or the output, so it can never have seen one.
    quiet = not any(p.search(prefix + text) for p in _patterns(added))
    event(f"no added delimiter: {quiet}")
    chunks = data.draw(chunkings(text))
    if "".join(chunks) != text:
        chunks = [text]
    for pieces in ([text], chunks):
        got, _ = robust_run(module, pieces, prefix, tool_list)
        if quiet:
            want = reference_run(spec, pieces, prefix, tool_list)
            assert json.dumps(got) == json.dumps(want), pieces
    # Streamed == whole, wherever the delimiters are; unless the reference's own stream and
    # whole parse differ on the template without the extension (a `$` close matches
    # before a chunk's final newline, and a later chunk moves it to the end): the
    # extension keeps that reading of the standard format.
    try:
        whole_message = module.parse_response(text, prefix=prefix, tools=copy.deepcopy(tool_list))
    except Exception:  # noqa: BLE001
        whole_message = None
    differs = json.dumps(reference_run(spec, [text], prefix, tool_list)) != json.dumps(
        reference_run(spec, chunks, prefix, tool_list))
    event(f"the reference's stream differs from its whole parse: {differs}")
    if not differs:
        assert json.dumps(whole_message) == json.dumps(
            robust_run(module, chunks, prefix, tool_list)[0])


# -- the template stage -----------------------------------------------------------------


def _with(**changes: Any) -> dict:
    spec = copy.deepcopy(SPEC)
    for key, value in changes.items():
        if value is None:
            spec["fields"]["reasoning_content"].pop(key, None)
        else:
            spec["fields"]["reasoning_content"][key] = value
    return spec


def test_yield_to_loads_into_the_field():
    field = load_template(SPEC).field("reasoning_content")
    assert (field.yields, field.yield_join) == (("tool_calls",), "\n\n")
    assert "yield_to" not in grammars.strict_spec(SPEC)["fields"]["reasoning_content"]
    assert "extensions" not in grammars.strict_spec(SPEC)  # both are robustness extensions


def test_yield_to_needs_its_extension_declared():
    spec = copy.deepcopy(SPEC)
    spec["extensions"].remove("yield")
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == "fields.reasoning_content.yield_to"
    assert '"extensions": ["yield"]' in str(info.value)


@pytest.mark.parametrize("spec, path, words", [
    (_with(yield_to=["tool_calls"]), "fields.reasoning_content.yield_to", "exactly"),
    (_with(yield_to={"fields": [], "join": ""}), "fields.reasoning_content.yield_to.fields",
     "non-empty"),
    (_with(yield_to={"fields": ["tool_calls"], "join": 1}),
     "fields.reasoning_content.yield_to.join", "a string"),
    (_with(yield_to={"fields": ["nope"], "join": ""}),
     "fields.reasoning_content.yield_to.fields[0]", "no field"),
    (_with(yield_to={"fields": ["content"], "join": ""}),
     "fields.reasoning_content.yield_to.fields[0]", "with an open"),
    (_with(yield_to={"fields": ["reasoning_content"], "join": ""}),
     "fields.reasoning_content.yield_to.fields[0]", "another field"),
    (_with(content="json"), "fields.reasoning_content.yield_to", "'text'"),
    (_with(repeats=True), "fields.reasoning_content.yield_to", "'text'"),
    (_with(repeats=True, join="\n"), "fields.reasoning_content.yield_to", "same 'join'"),
    (_with(close=None), "fields.reasoning_content.yield_to", "a close"),
])
def test_yield_to_is_checked(spec, path, words):
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == path
    assert words in str(info.value)


def test_a_yielded_to_field_yields_to_none():
    spec = copy.deepcopy(SPEC)
    spec["fields"]["tool_calls"]["yield_to"] = {"fields": ["reasoning_content"], "join": ""}
    spec["fields"]["tool_calls"]["content"] = "text"
    spec["fields"]["tool_calls"].pop("repeats")
    with pytest.raises(TemplateError, match="nest one deep"):
        load_template(spec)


def test_a_call_opened_in_the_reasoning_reads_closes_in_its_strings_as_text():
    # close-outside-strings on the yielded-to field: inside the reasoning, neither the
    # call's close nor the reasoning's counts inside an argument string.
    spec = copy.deepcopy(SPEC)
    spec["extensions"].append("close-outside-strings")
    spec["fields"]["tool_calls"]["close_outside_strings"] = True
    module = load_parser(load_template(spec))
    args = {"text": "a </think> b </tool_call> c"}
    body = json.dumps({"name": "note", "arguments": args})
    text = f"<think>draft <tool_call>{body}</tool_call> more</think>done<|im_end|>"
    want = {"reasoning_content": "draft\n\nmore", "content": "done",
            "tool_calls": [call("note", **args)]}
    assert_everywhere(text, want, module)
    # Cut inside the call, the reasoning's close after it still ends the call (unfinished,
    # so its text stays in the reasoning) when it is outside the call's strings.
    text = '<think>x <tool_call>{"name": "f", "arguments": {</think>y<|im_end|>'
    got = whole(module, text)
    assert "tool_calls" not in got and got["content"] == "y", got
    assert_everywhere(text, got, module)


def test_transformers_refuses_a_yielding_template():
    spec = copy.deepcopy(SPEC)
    spec["extensions"] = ["yield"]
    del spec["fields"]["tool_calls"]["recover"]
    assert load_template(spec).extensions == ("yield",)
    assert reference_outcome(spec).verdict == "reject"
    del spec["extensions"]
    assert reference_outcome(spec).verdict == "reject"


# -- work, counted ------------------------------------------------------------------------

SIZES = (2_000, 8_000, 32_000)


def _work(text: str, step: int) -> float:
    parser = MODULE.ResponseParser("")
    stream = parser._stream
    if step:
        for i in range(0, len(text), step):
            parser.feed(text[i : i + step])
        message = parser.finalize()[0]
    else:
        message = stream.parse_whole(text)
    assert message["reasoning_content"].startswith("word")
    return stream.work


@pytest.mark.parametrize("step", [0, 1, 7])
def test_a_long_reasoning_full_of_calls_costs_linear_work(step):
    unit = f"word <tool_call>{body('f', x=1)}</tool_call> <|im_end|> "
    per = []
    for n in SIZES:
        text = "<think>" + unit * (n // len(unit)) + "</think>done"
        per.append(_work(text, step) / len(text))
    assert max(per) <= 40, per
    assert per[2] <= per[0] * 1.1 + 0.5, per
