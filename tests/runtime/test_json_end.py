"""The ``json-end`` extension (docs/extensions.md): a call's region ends where its JSON
value ends, and the text after it is content.

* Its semantics, whole and streamed at every split: prose on both sides of a call, a
  literal that must follow the value (``"json_end": "}"``), a call that fails on its own,
  a cut value, a call inside a yielding reasoning; its events.
* Against transformers (hypothesis): on random templates opting in wherever they can,
  the message is the reference's wherever the reference succeeds; and a JSON value
  followed by random text gives the reference's value for the output without that text,
  the text being content.
* The template stage: what it refuses; transformers refuses such a template; the strict
  form drops it.
* Work counted (never timed): the characters decoded and parsed at the region's close,
  and the stream's own work, for a long value followed by long text.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from rtcompiler import grammars
from rtcompiler.codegen import load_parser
from rtcompiler.template import TemplateError, load_template

from ..parity.strategies import chunkings, outputs, prefixes, templates, tools
from ..parity.test_parity import _lazy_delimiters
from ..sweeps import examples
from ..template.reference import reference_outcome
from .test_recover import reference_run, robust_run, run, whole

CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
# Mistral v0.3's list of calls: nothing marks the end of the array but the end of turn.
SPEC = {
    "extensions": ["json-end"],
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open": "[TOOL_CALLS]", "close": "</s>", "content": "json", "json_end": True,
            "transform_each": True, "transform": CALL,
        },
        "content": {"close": "</s>", "repeats": True, "join": "\n\n"},
    },
}
MODULE = load_parser(load_template(SPEC))
# Llama 3's call: the open reads the call's head, up to its arguments; the call's own
# closing brace follows the arguments' value.
LLAMA = {
    "extensions": ["json-end"],
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open_pattern": r'<\|python_tag\|>\{"name": "(?P<name>[^"]*)", "arguments": ',
            "close_pattern": r"\}<\|eot_id\|>", "content": "json", "json_end": "}",
            "repeats": True,
            "transform": {"type": "function",
                          "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<|eot_id|>", "repeats": True, "join": "\n\n"},
    },
}
LLAMA_MODULE = load_parser(load_template(LLAMA))


def call(name: str, **arguments: Any) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def assert_everywhere(module: Any, text: str, want: Any) -> None:
    """``want`` whole, streamed a character at a time, and split at every position."""
    assert whole(module, text) == want
    assert run(module, text, list(text))[0] == want
    for i in range(len(text) + 1):
        assert run(module, text, [text[:i], text[i:]])[0] == want, i


# -- semantics ------------------------------------------------------------------------


def test_prose_on_both_sides_of_a_call_is_kept():
    text = 'Sure.[TOOL_CALLS][{"name": "f", "arguments": {"q": "a ] } b"}}] I called it.</s>'
    assert_everywhere(MODULE, text, {
        "content": "Sure.\n\nI called it.", "tool_calls": [call("f", q="a ] } b")]})
    # Without the extension, the reference's: the body is not JSON.
    strict = load_parser(load_template(grammars.strict_spec(SPEC)))
    assert whole(strict, text) is ValueError


def test_the_value_followed_only_by_its_close_is_as_ever():
    text = 'Sure.[TOOL_CALLS] [{"name": "f", "arguments": {}}]\n</s>'
    assert_everywhere(MODULE, text, {"content": "Sure.", "tool_calls": [call("f")]})


def test_the_text_after_the_value_is_cut_at_the_implicit_fields_close():
    text = '[TOOL_CALLS][{"name": "f", "arguments": {}}] one</s>two'
    # No marker stays in the content; the text after the end of turn is a piece too.
    assert_everywhere(MODULE, text, {"content": "one\n\ntwo", "tool_calls": [call("f")]})


def test_a_literal_after_the_value_belongs_to_the_call():
    text = ('Checking.<|python_tag|>{"name": "f", "arguments": {"x": {"y": 1}}} '
            "Tell me more.<|eot_id|>")
    assert_everywhere(LLAMA_MODULE, text, {
        "content": "Checking.\n\nTell me more.", "tool_calls": [call("f", x={"y": 1})]})
    # Without the literal after the value, the body is not a call that ends there.
    text = 'Checking.<|python_tag|>{"name": "f", "arguments": {"x": 1} Tell me more.<|eot_id|>'
    assert_everywhere(LLAMA_MODULE, text, ValueError)


@pytest.mark.parametrize("text", [
    '[TOOL_CALLS]{"name": "f"} then prose</s>',  # the value fails on its own (no arguments)
    '[TOOL_CALLS]"a string" then prose</s>',  # not an object or an array
    '[TOOL_CALLS][{"name": "f", "arguments": {}} then prose</s>',  # the value never ends
])
def test_what_does_not_end_in_a_value_that_makes_a_call_fails_as_before(text):
    assert_everywhere(MODULE, text, ValueError)


def test_a_lone_call_followed_by_text_is_a_list_of_one_with_recover():
    spec = copy.deepcopy(SPEC)
    spec["extensions"].append("recover")
    spec["fields"]["tool_calls"]["recover"] = True
    module = load_parser(load_template(spec))
    text = 'a[TOOL_CALLS]{"name": "f", "arguments": {"x": 1}} b</s>'
    assert_everywhere(module, text, {"content": "a\n\nb", "tool_calls": [call("f", x=1)]})
    # A value that fails on its own is recovered as text, the text after it with it.
    text = 'a[TOOL_CALLS]{"name": "f"} b</s>'
    assert_everywhere(module, text, {"content": 'a\n\n{"name": "f"} b'})


def test_a_list_of_calls_then_the_open_again_and_another_list_is_one_list():
    spec = copy.deepcopy(SPEC)
    spec["extensions"].append("recover")
    spec["fields"]["tool_calls"]["recover"] = True
    module = load_parser(load_template(spec))
    first, second = json.dumps([{"name": "f", "arguments": {"x": "[TOOL_CALLS][]"}}]), \
        json.dumps([{"name": "g", "arguments": {}}])
    text = f"a[TOOL_CALLS]{first}[TOOL_CALLS] []\n[TOOL_CALLS]{second} b</s>"
    assert_everywhere(module, text, {
        "content": "a\n\nb", "tool_calls": [call("f", x="[TOOL_CALLS][]"), call("g")]})
    assert_everywhere(module, text.replace(" b</s>", "</s>"), {
        "content": "a", "tool_calls": [call("f", x="[TOOL_CALLS][]"), call("g")]})
    # Not another list after the open: the text after the first list is text as usual, the
    # open with it (opens are not looked for in that text: docs/extensions.md, Limits).
    text = f"[TOOL_CALLS]{first}[TOOL_CALLS] then</s>"
    assert_everywhere(module, text, {
        "content": "[TOOL_CALLS] then", "tool_calls": [call("f", x="[TOOL_CALLS][]")]})


def test_an_unfinished_region_ends_at_its_value_too():
    # The output ends inside the region (no </s>): a complete value is the call, the
    # text after it content; a cut value is no value (a failure, or text with recover).
    text = 'a[TOOL_CALLS][{"name": "f", "arguments": {}}] and then'
    assert_everywhere(MODULE, text, {"content": "a\n\nand then", "tool_calls": [call("f")]})
    assert_everywhere(MODULE, text[:-12], ValueError)


def test_a_call_inside_a_yielding_reasoning_gives_the_text_after_back_to_it():
    spec = {
        "extensions": ["json-end", "yield"],
        "start_anchor": "<s>",
        "fields": {
            "reasoning_content": {"open": "[THINK]", "close": "[/THINK]",
                                  "yield_to": {"fields": ["tool_calls"], "join": "\n\n"}},
            "tool_calls": {
                "open_pattern": r"\[TOOL_CALLS\](?P<name>[^\[]+)\[ARGS\]", "close": "</s>",
                "content": "json", "json_end": True, "repeats": True,
                "transform": {"type": "function",
                              "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {"close": "</s>", "repeats": True, "join": "\n\n"},
        },
    }
    module = load_parser(load_template(spec))
    text = '[THINK]I could write [TOOL_CALLS]f[ARGS]{"x": 1} but no.[/THINK]Done.</s>'
    assert_everywhere(module, text, {
        "reasoning_content": "I could write\n\nbut no.", "content": "Done.",
        "tool_calls": [call("f", x=1)]})


def test_events_of_a_region_that_ends_at_its_value():
    text = 'Sure.[TOOL_CALLS][{"name": "f", "arguments": {}}] Done.</s>'
    message, events = run(MODULE, text)
    closes = [e for e in events if e["type"] == "region_close"]
    # The call's value, then the text after it as a region of the content of its own.
    assert closes == [
        {"type": "region_close", "field": "content", "value": "Sure."},
        {"type": "region_close", "field": "tool_calls", "value": [call("f")]},
        {"type": "region_close", "field": "content", "value": "Done."},
    ]
    assert events[-3:-1] == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": " Done.", "dirty": False},
    ]
    for chunks in (list(text), [text[:20], text[20:40], text[40:]]):
        streamed, streamed_events = run(MODULE, text, chunks)
        assert streamed == message
        assert ([e for e in streamed_events if e["type"] != "region_chunk"]
                == [e for e in events if e["type"] != "region_chunk"]), chunks


# -- the template stage -------------------------------------------------------------------


def _with(**keys: Any) -> dict:
    spec = copy.deepcopy(SPEC)
    spec["fields"]["tool_calls"].update(keys)
    spec["fields"]["tool_calls"] = {k: v for k, v in spec["fields"]["tool_calls"].items()
                                    if v is not None}
    return spec


def _no_implicit() -> dict:
    spec = copy.deepcopy(SPEC)
    spec["fields"]["content"]["open"] = "<a>"
    return spec


@pytest.mark.parametrize("spec, path, words", [
    ({**SPEC, "extensions": []}, "fields.tool_calls.json_end", "declare it"),
    (_with(json_end=1), "fields.tool_calls.json_end", "must be true, false"),
    (_with(json_end=" "), "fields.tool_calls.json_end", "not blank"),
    (_with(content="text", transform_each=None, transform=None),
     "fields.tool_calls.json_end", "needs 'content': 'json'"),
    (_with(content_args={"allow_non_json": True}), "fields.tool_calls.json_end",
     "allow_non_json"),
    (_no_implicit(), "fields.tool_calls.json_end", "implicit field"),
])
def test_json_end_is_checked(spec, path, words):
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == path
    assert words in str(info.value)


def test_the_implicit_field_cannot_end_at_its_value():
    spec = copy.deepcopy(SPEC)
    spec["fields"]["content"].update(content="json", json_end=True)
    spec["fields"]["content"].pop("join")
    with pytest.raises(TemplateError, match="implicit field cannot end"):
        load_template(spec)


def test_a_named_keeper_stands_for_the_implicit_field():
    spec = _no_implicit()
    spec["extensions"].append("recover")
    spec["fields"]["tool_calls"]["recover"] = "content"
    module = load_parser(load_template(spec))
    text = '<a>x</s>[TOOL_CALLS][{"name": "f", "arguments": {}}] y</s>'
    assert whole(module, text) == {"content": "x\n\ny", "tool_calls": [call("f")]}


def test_transformers_refuses_the_template_and_the_strict_form_drops_it():
    assert load_template(SPEC).extensions == ("json-end",)
    assert reference_outcome(SPEC).verdict == "reject"
    strict = grammars.strict_spec(SPEC)
    assert "extensions" not in strict and "json_end" not in strict["fields"]["tool_calls"]
    assert reference_outcome(strict).verdict != "reject"


# -- against the reference ------------------------------------------------------------

# Each example compiles a parser: a third of the full count by default (tests/sweeps.py).
DIFFERENTIAL = settings(
    max_examples=examples(60, 200), deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)


def opted_in(spec: Any) -> dict | None:
    """``spec`` with ``json_end`` on every json field it can take it (None when none)."""
    if not isinstance(spec, dict) or "extensions" in spec:
        return None
    fields = spec.get("fields") or {}
    if not any("open" not in f and "open_pattern" not in f for f in fields.values()):
        return None
    out = copy.deepcopy(spec)
    used = False
    for f in out["fields"].values():
        args = f.get("content_args") or {}
        if (
            f.get("content") == "json" and ("open" in f or "open_pattern" in f)
            and isinstance(args, dict) and not args.get("string_delims")
            and not args.get("allow_non_json")
        ):
            f["json_end"] = True
            used = True
    if not used:
        return None
    out["extensions"] = ["json-end"]
    return out


@DIFFERENTIAL
@given(data=st.data())
def test_where_the_reference_succeeds_the_message_is_its(data):
    spec = data.draw(templates())
    assume(not _lazy_delimiters(spec))
    opted = opted_in(spec)
    assume(opted is not None)
    try:
        module = load_parser(load_template(opted))
    except TemplateError:
        assume(False)
    text = data.draw(outputs(spec))
    prefix = data.draw(prefixes(spec))
    tool_list = data.draw(tools())
    chunks = data.draw(chunkings(text))
    if "".join(chunks) != text:
        chunks = [text]
    compared = 0
    for pieces in ([text], chunks):
        want = reference_run(spec, pieces, prefix, tool_list)
        got, _ = robust_run(module, pieces, prefix, tool_list)
        if want is not None:
            assert json.dumps(got) == json.dumps(want), pieces
            compared += 1
    event(f"compared with the reference: {compared}")


PLAIN = {
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {"open": "[TOOL_CALLS]", "close": "</s>", "content": "json"},
        "content": {"close": "</s>", "repeats": True, "join": "\n\n"},
    },
}
PLAIN_OPTED = copy.deepcopy(PLAIN)
PLAIN_OPTED["extensions"] = ["json-end"]
PLAIN_OPTED["fields"]["tool_calls"]["json_end"] = True
PLAIN_MODULE = load_parser(load_template(PLAIN_OPTED))
_SCALARS = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
            | st.text("ab ]}[{\",:\\é", max_size=6))
VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab]\"", max_size=3),
                                                                inner, max_size=3),
    max_leaves=8,
).filter(lambda v: isinstance(v, (list, dict)))


@settings(max_examples=300, deadline=None)
@given(value=VALUES, before=st.text("ab \n", max_size=6), after=st.text("ab ]}\"{[,\n", max_size=8),
       spaced=st.booleans(), data=st.data())
def test_a_value_followed_by_text_is_the_references_value_and_the_text_content(
        value, before, after, spaced, data):
    dumped = json.dumps(value, ensure_ascii=False, indent=1 if spaced else None)
    text = f"{before}[TOOL_CALLS]{dumped}{after}</s>"
    # The text after the value is content, as if it came after the close.
    moved = f"{before}[TOOL_CALLS]{dumped}</s>{after if after.strip() else ''}"
    want = reference_run(PLAIN, [moved], "", None)
    assert want is not None and want.get("tool_calls", value) == value  # (empty: dropped)
    if after.strip():
        assert reference_run(PLAIN, [text], "", None) is None  # the reference fails
    chunks = data.draw(chunkings(text))
    for pieces in ([text], chunks if "".join(chunks) == text else [text]):
        got, _ = robust_run(PLAIN_MODULE, pieces, "", None)
        assert json.dumps(got) == json.dumps(want), pieces
    assert json.dumps(PLAIN_MODULE.parse_response(text, prefix="")) == json.dumps(want)


# -- work, counted ------------------------------------------------------------------------

SIZES = (2_000, 8_000, 32_000)


def _counted(module: Any, text: str, step: int, calls: int) -> tuple[int, int]:
    """(characters the region's close decoded or parsed, the stream's work)."""
    table = module.ResponseParser("")._stream.table
    region = table.by_name["tool_calls"]
    decode, process = module._json_raw, region.process
    read = [0]

    def counting_decode(s: str, i: int = 0) -> Any:
        # A decode reads up to the end of the value it returns (all the rest, at most,
        # when it fails).
        try:
            value, end = decode(s, i)
        except ValueError:
            read[0] += len(s) - i
            raise
        read[0] += end - i
        return value, end

    def counting_process(body: str, captures: dict) -> Any:
        read[0] += len(body)
        return process(body, captures)

    module._json_raw, region.process = counting_decode, counting_process
    try:
        parser = module.ResponseParser("")
        stream = parser._stream
        if step:
            for i in range(0, len(text), step):
                parser.feed(text[i : i + step])
            message = parser.finalize()[0]
        else:
            message = stream.parse_whole(text)
    finally:
        module._json_raw, region.process = decode, process
    assert message["content"].startswith("x\n\nwords")
    assert len(message["tool_calls"]) == calls
    return read[0], stream.work


RECOVERING = copy.deepcopy(SPEC)
RECOVERING["extensions"].append("recover")
RECOVERING["fields"]["tool_calls"]["recover"] = True
RECOVERING_MODULE = load_parser(load_template(RECOVERING))


@pytest.mark.parametrize("lists", [False, True])
@pytest.mark.parametrize("step", [0, 1, 7])
def test_a_long_value_then_long_text_costs_linear_work(step, lists):
    # One long list, or (joined) one list of one call per [TOOL_CALLS].
    per_read, per_work = [], []
    for n in SIZES:
        one = json.dumps({"name": "f", "arguments": {"q": "a ] } b"}})
        calls = (f"[{one}][TOOL_CALLS]" * (n // 80))[: -len("[TOOL_CALLS]")] if lists \
            else "[" + ", ".join([one] * (n // 80)) + "]"
        text = f"x[TOOL_CALLS]{calls} " + "words ] } " * (n // 20) + "</s>"
        read, work = _counted(RECOVERING_MODULE if lists else MODULE, text, step, n // 80)
        per_read.append(read / len(text))
        per_work.append(work / len(text))
    # The body is parsed once, then its value (or each list) decoded and parsed once more,
    # whatever the chunking.
    assert max(per_read) <= 3, per_read
    assert max(per_work) <= 40, per_work
    assert per_work[2] <= per_work[0] * 1.1 + 0.5, per_work
