"""The robustness extensions ``recover`` and ``close-outside-strings`` (docs/extensions.md).

* Their semantics on the outputs the issue lists, whole and streamed at every split.
* Against transformers (hypothesis): a template that opts in gives exactly the
  reference's message whenever the reference succeeds and no region is left unfinished,
  whether its implicit field or a field it names keeps the text.
* Streamed == whole, at random chunkings, for the robust form of every bundled grammar
  on messy outputs: truncated anywhere, broken JSON, markers inside strings, stray markers.
* Work counted (never timed) for a long unfinished call fed a character at a time, and
  for a body full of closing tags inside strings.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import ResponseParser as RefParser
from transformers.utils.chat_parsing import parse_response as ref_parse_response
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler import grammars
from rtcompiler.codegen import load_parser
from rtcompiler.template import TemplateError, load_template

from ..parity.strategies import chunkings, outputs, prefixes, templates, tools
from ..parity.test_parity import _lazy_delimiters

UNFINISHED = "unfinished: the output ended inside the region"

QWEN = {
    "extensions": ["recover", "close-outside-strings"],
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>", "close_pattern": r"</tool_call>\s*",
            "content": "json", "repeats": True, "recover": True, "close_outside_strings": True,
            "transform": {"type": "function",
                          "function": {"name": "{content.name}",
                                       "arguments": "{content.arguments}"}},
        },
        "content": {"close": "<|im_end|>", "repeats": True, "join": "\n\n"},
    },
}
MODULE = load_parser(load_template(QWEN))


def call(name: str, **arguments: Any) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def run(module: Any, text: str, chunks: list[str] | None = None, prefix: str = "") -> tuple:
    """(message or exception type, events) streamed with ``chunks`` (default: whole)."""
    parser = module.ResponseParser(prefix)
    events = list(parser.initial_events)
    try:
        for chunk in [text] if chunks is None else chunks:
            events += parser.feed(chunk)
        message, final = parser.finalize()
    except Exception as e:  # noqa: BLE001 -- the type is what is compared
        return type(e), events
    return message, events + final


def whole(module: Any, text: str, prefix: str = "") -> Any:
    try:
        return module.parse_response(text, prefix=prefix)
    except Exception as e:  # noqa: BLE001
        return type(e)


def assert_everywhere(module: Any, text: str, want: Any, prefix: str = "") -> None:
    """``want`` whole, streamed a character at a time, and split at every position."""
    assert whole(module, text, prefix) == want
    assert run(module, text, list(text), prefix)[0] == want
    for i in range(len(text) + 1):
        assert run(module, text, [text[:i], text[i:]], prefix)[0] == want, i


# -- semantics ------------------------------------------------------------------------


def test_a_malformed_call_is_kept_as_text_in_its_place_and_the_others_are_kept():
    text = ('before<tool_call>{"name": "f", "arguments": {</tool_call>middle'
            '<tool_call>{"name": "g", "arguments": {"x": 1}}</tool_call>after<|im_end|>')
    assert_everywhere(MODULE, text, {
        "content": 'before\n\n{"name": "f", "arguments": {\n\nmiddle\n\nafter',
        "tool_calls": [call("g", x=1)],
    })


def test_a_call_failing_its_transform_is_no_call():
    # JSON, but no "arguments": the transform fails in the reference (ValueError).
    text = 'a<tool_call>{"name": "f"}</tool_call>b'
    assert_everywhere(MODULE, text, {"content": 'a\n\n{"name": "f"}\n\nb'})


def test_a_truncated_call_is_never_a_call_and_its_text_is_kept():
    text = 'Cleaning up.<tool_call>{"name": "bash", "arguments": {"cmd": "rm -rf /tmp/build"}}'
    # Cut anywhere inside its JSON: never a call, the prose always kept, no marker.
    for cut in range(len("Cleaning up.<tool_call>"), len(text)):
        message = whole(MODULE, text[:cut])
        assert "tool_calls" not in message, cut
        assert message["content"].startswith("Cleaning up."), cut
        assert "<tool_call>" not in message["content"], cut
    for cut in (len(text) - 3, len(text) - 1):  # "rm -rf /tmp/bu", one brace short
        assert_everywhere(MODULE, text[:cut], {"content": "Cleaning up.\n\n" + text[
            len("Cleaning up.<tool_call>"):cut]})
    # Its JSON complete, only the close missing (a stop token stripped by the server):
    # the JSON itself says the call is whole, so it is one, as in the reference.
    want = {"content": "Cleaning up.", "tool_calls": [call("bash", cmd="rm -rf /tmp/build")]}
    assert_everywhere(MODULE, text, want)
    assert ref_parse_response(text, grammars.strict_spec(QWEN), prefix="")["tool_calls"]


def test_a_marker_at_the_very_end_leaks_nowhere():
    for text in ("Let me check.<tool_call>", "Let me check.\n<tool_call>\n  "):
        assert_everywhere(MODULE, text, {"content": "Let me check."})


def test_a_marker_inside_an_argument_string_does_not_close_the_call():
    text = ('x<tool_call>{"name": "note", "arguments": {"text": "close it with </tool_call> '
            'then \\"</tool_call>\\" and \\\\"}}</tool_call>y<|im_end|>')
    assert_everywhere(MODULE, text, {
        "content": "x\n\ny",
        "tool_calls": [call("note", text='close it with </tool_call> then "</tool_call>" and \\')],
    })


def test_a_close_inside_a_string_that_never_ends_counts():
    # The stray quote after "arguments opens a string that never ends: the first close
    # inside it ends the call after all, so no marker leaks and the text after it is
    # content again.
    text = 'a<tool_call>{"name": "f, "arguments": {}}</tool_call>b<|im_end|>'
    assert_everywhere(MODULE, text, {"content": 'a\n\n{"name": "f, "arguments": {}}\n\nb'})
    text = 'a<tool_call>{"name": "f", "arguments": {"s": "x</tool_call>b</tool_call>c'
    assert_everywhere(MODULE, text, {
        "content": 'a\n\n{"name": "f", "arguments": {"s": "x\n\nb</tool_call>c'})
    # Only the string left open counts: a close in one that ended before it does not.
    text = 'a<tool_call>{"name": "f", "arguments": {"a": "</tool_call>", "s": "x</tool_call>b'
    assert_everywhere(MODULE, text, {
        "content": 'a\n\n{"name": "f", "arguments": {"a": "</tool_call>", "s": "x\n\nb'})
    # Whereas a string that ends keeps every close inside it.
    text = 'a<tool_call>{"name": "f", "arguments": {"s": "x</tool_call>b"}}</tool_call>c'
    assert_everywhere(MODULE, text, {
        "content": "a\n\nc", "tool_calls": [call("f", s="x</tool_call>b")]})


def test_a_doubled_open_is_dropped_and_the_call_parsed():
    body = '{"name": "f", "arguments": {"x": 1}}'
    for opens in ("<tool_call>\n<tool_call>", "<tool_call><tool_call> <tool_call>"):
        assert_everywhere(MODULE, f"a{opens}{body}</tool_call>b", {
            "content": "a\n\nb", "tool_calls": [call("f", x=1)]})
    # Still broken, or cut: its text is kept without the stray open.
    assert_everywhere(MODULE, "a<tool_call>\n<tool_call>{bad</tool_call>b", {
        "content": "a\n\n{bad\n\nb"})
    assert_everywhere(MODULE, '<tool_call><tool_call>{"name": "f", "argu', {
        "content": '{"name": "f", "argu'})


def test_a_doubled_open_gives_its_own_captures():
    spec = {
        "extensions": ["recover"], "start_anchor": "<s>",
        "fields": {
            "tool_calls": {"open_pattern": r"<call:(?P<name>\w+)>", "close": "</call>",
                           "content": "json", "repeats": True, "recover": True,
                           "transform": {"name": "{name}", "arguments": "{content}"}},
            "content": {},
        },
    }
    module = load_parser(load_template(spec))
    assert_everywhere(module, '<call:f> <call:g>{"x": 1}</call>', {
        "tool_calls": [{"name": "g", "arguments": {"x": 1}}]})


GEMMA = {
    "extensions": ["recover"], "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<\|tool_call>call:(?P<name>[^{<]+)", "close": "<tool_call|>",
            "content": "json", "repeats": True, "recover": True,
            "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
            "transform": {"type": "function", "function": {"name": "{name}",
                                                           "arguments": "{content}"}},
        },
        "content": {"close": "<turn|>"},
    },
}
Q = '<|"|>'


@pytest.mark.parametrize("body, arguments", [
    ("{query:weather in Tokyo" + Q + "}", {"query": "weather in Tokyo"}),
    ("{query:Paris, France" + Q + ",limit:5}", {"query": "Paris, France", "limit": 5}),
    ("{paths:[a/b.png" + Q + "]}", {"paths": ["a/b.png"]}),
    ("{code:" + Q + "x = 1" + Q + ',refs=["r\\"1"],alt:[\'it\\\'s\'],n:-2.5,ok:true}',
     {"code": "x = 1", "refs": ['r"1'], "alt": ["it's"], "n": -2.5, "ok": True}),
    ("{a:1,b=" + Q + "x" + Q + ",c:{}}", {"a": 1, "b": "x", "c": {}}),
    ("{a:[1,2" + Q + "],b:c,d" + Q + "}", {"a": [1, "2"], "b": "c,d"}),
])
def test_gemmas_near_json_is_read_leniently_where_its_parser_fails(body, arguments):
    module = load_parser(load_template(GEMMA))
    text = f"<|tool_call>call:f{body}<tool_call|>"
    assert_everywhere(module, text, {"tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": arguments}}]})
    # The strict form refuses each of them, as the reference does.
    assert whole(load_parser(load_template(grammars.strict_spec(GEMMA))), text) is ValueError


@pytest.mark.parametrize("body", [
    "{query:weather}",  # a bare word is no value
    "{query:" + Q + "open}",  # an unfinished string
    "{a:1 b:2}", "{a:1", "{a:[1,]}", "{:1}",
])
def test_what_the_lenient_reading_cannot_read_is_kept_as_text(body):
    module = load_parser(load_template(GEMMA))
    assert_everywhere(module, f"<|tool_call>call:f{body}<tool_call|>", {"content": body})


def test_the_lenient_reading_is_linear():
    from rtcompiler.runtime.lenient import LenientReader

    for n in (1_000, 10_000):
        text = "[" + "1," * n + "x" + Q + "]"
        reader = LenientReader(text, Q)
        assert reader.read() == [1] * n + ["x"]
        assert reader.searched <= len(text), (n, reader.searched)


def test_events_of_a_failed_region():
    text = "a<tool_call>{bad</tool_call>b<tool_call>{"
    _, events = run(MODULE, text, list(text))
    closes = [e for e in events if e["type"] == "region_close"]
    assert [(e["field"], e["value"]) for e in closes] == [
        ("content", "a"), ("tool_calls", None), ("content", "{bad"), ("content", "b"),
        ("tool_calls", None), ("content", "{"),
    ]
    assert "could not parse region as JSON" in closes[1]["error"]
    # Cut: a JSON body is parsed at the end, and a cut one does not parse.
    assert "could not parse region as JSON" in closes[4]["error"]
    # The recovered text arrives as one chunk of the implicit field, right after the close.
    k = events.index(closes[1])
    assert events[k + 1 : k + 3] == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "{bad", "dirty": False},
    ]
    assert all("error" not in e for e in events if e not in (closes[1], closes[4]))


LIST = {
    "extensions": ["recover"],
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open": "[TOOL_CALLS]", "close": "</s>", "content": "json", "recover": True,
            "transform_each": True,
            "transform": {"type": "function",
                          "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"close": "</s>", "repeats": True, "join": "\n\n"},
    },
}
LIST_MODULE = load_parser(load_template(LIST))


def test_a_lone_object_where_a_list_of_calls_is_expected_is_a_list_of_one():
    text = 'Checking.[TOOL_CALLS] {"name": "f", "arguments": {"a": 1}}</s>'
    assert_everywhere(LIST_MODULE, text, {"content": "Checking.", "tool_calls": [call("f", a=1)]})
    # The reference refuses it (transform_each wants a list).
    with pytest.raises(ValueError, match="transform_each requires"):
        ref_parse_response(text, grammars.strict_spec(LIST), prefix="")


@pytest.mark.parametrize("text", [
    '[TOOL_CALLS]{"name": "f", "arguments": {}}, {"name": "g", "arguments": {}}</s>',
    '[TOOL_CALLS]{"name": "f", "arguments": {}} and more</s>',
    '[TOOL_CALLS]{"x": 1}</s>',  # an object, but no call: the transform fails
    # An array that ends (the region closed) is read as it is: a broken element is no repair.
    '[TOOL_CALLS][{"name": "f", "arguments": {}}, {"name": "g", "arguments": </s>',
    # Cut, but broken before the cut: a comma missing after the first call.
    '[TOOL_CALLS][{"name": "f", "arguments": {}} {"name": "g", "arguments": {}}, {"na',
])
def test_what_is_not_one_call_or_a_cut_list_stays_text(text):
    body = text[len("[TOOL_CALLS]") :].removesuffix("</s>")
    assert_everywhere(LIST_MODULE, text, {"content": body.strip()})


def test_a_cut_array_keeps_its_finished_calls_and_the_rest_as_text():
    full = ('Checking.[TOOL_CALLS][{"name": "a", "arguments": {"x": "]"}}, '
            '{"name": "b", "arguments": {"x": "Lyon"}} ,{"name": "c", "arguments": {}}]')
    calls = [call("a", x="]"), call("b", x="Lyon"), call("c")]
    body_at = full.index("[{")
    for cut in range(body_at, len(full) + 1):
        text = full[:cut]
        message = whole(LIST_MODULE, text)
        got = message.get("tool_calls", [])
        # Only finished calls, in order; what is left of the cut one is content.
        assert got == calls[: len(got)], cut
        # A call counts once the comma after it has come (the last, once the array ends).
        commas = [full.index(s) + len(s) for s in ('"]"}},', '"Lyon"}} ,')]
        assert len(got) == sum(comma <= cut for comma in commas) or cut == len(full), cut
        rest = message.get("content", "")
        assert rest.startswith("Checking."), cut
        assert "[TOOL_CALLS]" not in rest, cut
        assert run(LIST_MODULE, text, list(text))[0] == message, cut
    text = full[: full.index("Lyon") + 2]
    assert_everywhere(LIST_MODULE, text, {
        "content": 'Checking.\n\n{"name": "b", "arguments": {"x": "Ly',
        "tool_calls": [call("a", x="]")],
    })
    _, events = run(LIST_MODULE, text, list(text))
    closes = [e for e in events if e["type"] == "region_close"]
    assert [(e["field"], e["value"]) for e in closes] == [
        ("content", "Checking."), ("tool_calls", [call("a", x="]")]),
        ("content", '{"name": "b", "arguments": {"x": "Ly'),
    ]


def test_without_recover_the_same_outputs_fail_as_in_the_reference():
    module = load_parser(load_template(_without("recover")))
    for text in ("a<tool_call>{bad</tool_call>b", 'a<tool_call>{"name": "f"}</tool_call>'):
        assert whole(module, text) is ValueError
        assert run(module, text, list(text))[0] is ValueError
    # Unfinished but parseable: a call, as in the reference.
    text = 'a<tool_call>{"name": "f", "arguments": {}}'
    assert whole(module, text)["tool_calls"] == [call("f")]


def test_failures_that_are_not_the_models_still_raise():
    spec = copy.deepcopy(QWEN)
    spec["fields"]["tool_calls"]["optional"] = False
    module = load_parser(load_template(spec))
    assert whole(module, "a<tool_call>{bad</tool_call>") is ValueError


# -- a named field keeps the text (templates without an implicit field) ----------------

COHERE = {
    "extensions": ["recover"],
    "start_anchor": "<s>",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open": "<act>", "close": "</act>", "content": "json", "recover": "content",
            "transform_each": True,
            "transform": {"type": "function",
                          "function": {"name": "{tool_name}", "arguments": "{parameters}"}},
        },
        "content": {"open": "<answer>", "close": "</answer>", "repeats": True, "join": "\n\n"},
    },
}
COHERE_MODULE = load_parser(load_template(COHERE))


def test_a_named_field_keeps_a_failed_regions_text_in_its_place():
    text = ('<think>Plan.</think><answer>Before.</answer><act>[{"tool_name": "f", '
            '"parameters": {"a": 1]</act><answer>After.</answer>')
    assert_everywhere(COHERE_MODULE, text, {
        "reasoning_content": "Plan.",
        "content": 'Before.\n\n[{"tool_name": "f", "parameters": {"a": 1]\n\nAfter.'})
    # Text outside every region still goes nowhere: there is no implicit field.
    assert_everywhere(COHERE_MODULE, "stray<act>[{]</act>", {"content": "[{]"})


def test_a_named_field_keeps_an_unfinished_regions_text_and_a_whole_json_body_is_a_call():
    head = '<think>Plan.</think><act>'
    body = '[{"tool_name": "rm", "parameters": {"path": "/tmp/build"}}]'
    for cut in range(len(body)):
        message = whole(COHERE_MODULE, head + body[:cut])
        assert "tool_calls" not in message, cut
        assert message.get("content") == (body[:cut].strip() or None), cut
    assert_everywhere(COHERE_MODULE, head + body[:-3], {
        "reasoning_content": "Plan.", "content": body[:-3]})
    # Whole, only the close missing: the JSON says it is complete.
    assert_everywhere(COHERE_MODULE, head + body, {
        "reasoning_content": "Plan.",
        "tool_calls": [{"type": "function",
                        "function": {"name": "rm", "arguments": {"path": "/tmp/build"}}}]})
    assert_everywhere(COHERE_MODULE, head + " \n", {"reasoning_content": "Plan."})


def test_events_of_a_recovery_into_a_named_field():
    message, events = run(COHERE_MODULE, "<act>[{]</act>")
    assert message == {"content": "[{]"}
    closes = [e for e in events if e["type"] == "region_close"]
    assert closes[0]["field"] == "tool_calls" and closes[0]["value"] is None
    assert "error" in closes[0]
    assert events[-3:] == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "[{]", "dirty": False},
        {"type": "region_close", "field": "content", "value": "[{]"},
    ]


# -- pythonic call lists say themselves whether they are whole -----------------------------

PYTHONIC = {
    "extensions": ["pythonic", "recover"],
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open_pattern": r"^\s*(?=\[\s*[A-Za-z_][\w.]*\()", "close": ["<|eot|>"],
            "content": "pythonic", "recover": True, "transform_each": True,
            "transform": {"type": "function",
                          "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"close": ["<|eot|>"], "repeats": True, "join": "\n\n"},
    },
}
PYTHONIC_MODULE = load_parser(load_template(PYTHONIC))


def test_a_pythonic_call_list_cut_anywhere_keeps_its_finished_calls_and_the_rest_is_text():
    text = '[rm(path="/tmp/build", opts={"force": True, "list": [1, (2, 3)]}), ping()]'
    rm = call("rm", path="/tmp/build", opts={"force": True, "list": [1, [2, 3]]})
    comma = text.index("), ping") + 1  # the call before it is finished
    for cut in range(1, len(text)):
        if cut > comma:
            rest = text[comma + 1 : cut].strip()
            want = {"tool_calls": [rm], **({"content": rest} if rest else {})}
        else:
            want = {"content": text[:cut].strip()} if text[:cut].strip() else {}
        assert whole(PYTHONIC_MODULE, text[:cut]) == want, cut
    for cut in (comma, 20):
        assert_everywhere(PYTHONIC_MODULE, text[:cut], {"content": text[:cut]})
    for cut in (len(text) - 1, len(text) - 2):
        assert_everywhere(PYTHONIC_MODULE, text[:cut],
                          {"tool_calls": [rm], "content": text[comma + 1 : cut].strip()})
    # The stop token stripped by the server: the list is complete, so it is the calls.
    want = {"tool_calls": [rm, call("ping")]}
    assert_everywhere(PYTHONIC_MODULE, text, want)
    assert_everywhere(PYTHONIC_MODULE, text + "\n", want)
    # Closed but not a call list (a positional argument): no call, its text is kept.
    assert_everywhere(PYTHONIC_MODULE, "[f(1)]<|eot|>", {"content": "[f(1)]"})


def test_an_unfinished_pythonic_list_is_parsed_once_at_the_end():
    parsed = []
    module = load_parser(load_template(PYTHONIC))
    region = module.TABLE.by_name["tool_calls"]
    process = region.process

    def counting(body, captures):
        parsed.append(len(body))
        return process(body, captures)

    region.process = counting  # the module is cached: put back below
    per = []
    try:
        for n in SIZES:
            text = '[f(s="' + "a" * n
            parsed.clear()
            work = _work(module, text, 1)
            assert parsed == [len(text)], n  # one parse, of the whole body, at the end
            per.append(work / len(text))
    finally:
        region.process = process
    assert max(per) <= 40, per
    assert per[2] <= per[0] * 1.1 + 0.5, per


def test_a_cut_pythonic_list_is_parsed_twice_at_most_in_linear_work():
    # Once whole (it fails), once up to its last finished call: the pass that finds where
    # that is reads the body once.
    parsed = []
    module = load_parser(load_template(PYTHONIC))
    region = module.TABLE.by_name["tool_calls"]
    process = region.process

    def counting(body, captures):
        parsed.append(len(body))
        return process(body, captures)

    region.process = counting  # the module is cached: put back below
    per = []
    try:
        for n in SIZES:
            calls = n // 20
            text = "[" + 'f(s="a]b,c"), ' * calls + 'g(s="cut'
            parsed.clear()
            message = whole(module, text)
            assert len(message["tool_calls"]) == calls and message["content"] == 'g(s="cut'
            assert parsed == [len(text), len(text) - len(' g(s="cut')], n
            per.append(_work(module, text, 64) / len(text))
    finally:
        region.process = process
    assert per[2] <= per[0] * 1.1 + 0.5, per


# -- an open cut in the middle of its spelling at the very end ------------------------------


@pytest.mark.parametrize("tail", ["<t", "<tool_", "<tool_call"])
def test_an_output_ending_in_the_beginning_of_a_recovering_open_ends_with_no_text(tail):
    # A text decode of a partial stream ends inside a token (FreeToken PR #346).
    text = f'Hi.<tool_call>{{"name": "f", "arguments": {{}}}}</tool_call>So {tail}'
    want = {"tool_calls": [call("f")], "content": "Hi.\n\nSo"}
    assert_everywhere(MODULE, text, want)
    assert_everywhere(MODULE, tail, {})


@pytest.mark.parametrize("text, want", [
    ("a <", {"content": "a <"}),  # one character is not a cut marker
    ("a <|im_end", {"content": "a <|im_end"}),  # the beginning of a close, not of an open
    ("a <tool_call> b", {"content": "a\n\nb"}),  # a whole open opens (an unfinished call)
    ("<tool_call>{}</tool_call>x <tool_cal y", {"content": "{}\n\nx <tool_cal y"}),
])
def test_only_the_very_end_and_only_an_opens_beginning_is_cut(text, want):
    assert_everywhere(MODULE, text, want)


NAMED = {
    "extensions": ["recover"],
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open_pattern": r'<call name="(?P<name>[^"<>]+)">', "close": "</call>",
            "content": "json", "repeats": True, "recover": True,
            "transform": {"type": "function",
                          "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<|im_end|>", "repeats": True, "join": "\n\n"},
    },
}
NAMED_MODULE = load_parser(load_template(NAMED))


@pytest.mark.parametrize("text, want", [
    # The literal whole, then a name cut short: the open is cut at its literal.
    ('Hi.<call name="get_wea', {"content": "Hi."}),
    ('Hi.<call name="get_weather"', {"content": "Hi."}),
    ('<call name="f">{}</call>Then <call name="g', {"tool_calls": [call("f")], "content": "Then"}),
    # What the rest of the open cannot begin stays text, and so does the same text
    # before the very end.
    ('Hi.<call name="a b>c', {"content": 'Hi.<call name="a b>c'}),
    ('Hi.<call name="a" x', {"content": 'Hi.<call name="a" x'}),
    ('Hi.<call name="a and more.<|im_end|>', {"content": 'Hi.<call name="a and more.'}),
])
def test_an_output_ending_in_an_opens_literal_and_a_name_cut_short_ends_with_no_text(text, want):
    assert_everywhere(NAMED_MODULE, text, want)


THINKING = copy.deepcopy(QWEN)
THINKING["fields"] = {"reasoning_content": {"open": "<think>", "close": "</think>"},
                      **QWEN["fields"]}


@pytest.mark.parametrize("end", ["<think>", "<think>\n ", "<tool_call>"])
def test_an_empty_region_the_output_ends_in_replaces_nothing(end):
    # magistral: [THINK]Plan.[/THINK]It is sunny.[THINK] cut right after the new opener.
    text = "<think>Plan.</think>It is sunny." + end
    assert_everywhere(load_parser(load_template(THINKING)), text,
                      {"reasoning_content": "Plan.", "content": "It is sunny."})
    if end.startswith("<think>"):
        # The reference's reading: the empty region's "" replaces the reasoning, dropped.
        strict = load_parser(load_template(grammars.strict_spec(THINKING)))
        assert whole(strict, text) == {"content": "It is sunny."}


def test_without_recover_an_opens_beginning_at_the_end_stays_text():
    strict = load_parser(load_template(grammars.strict_spec(QWEN)))
    assert_everywhere(strict, "So <tool_call", {"content": "So <tool_call"})


# A pythonic field whose open also takes a JSON object or array (Llama 4 in its wrapper).
PYTHONIC_JSON = copy.deepcopy(PYTHONIC)
PYTHONIC_JSON["fields"]["tool_calls"]["open_pattern"] = r"^\s*(?=\[\s*[A-Za-z_][\w.]*\(|\[?\s*\{)"
PYTHONIC_JSON_MODULE = load_parser(load_template(PYTHONIC_JSON))


@pytest.mark.parametrize("text, want", [
    ('{"name": "f", "parameters": {"q": "a\\"b\\u00e9", "n": [1, 2.5, null, true], '
     '"d": {"k": {"from": -1e-05}}}}',
     {"tool_calls": [call("f", q='a"b\u00e9', n=[1, 2.5, None, True], d={"k": {"from": -1e-05}})]}),
    ('[{"name": "a.b", "arguments": {}, "type": "function"}, '
     '{"name": "g", "parameters": {"from": 1}}]',
     {"tool_calls": [call("a.b"), call("g", **{"from": 1})]}),
    # Only the calls the JSON says: a name or key that is not one is text, never pasted in.
    ('{"name": "f(), rm", "parameters": {}}', {"content": '{"name": "f(), rm", "parameters": {}}'}),
    ('{"name": "f", "parameters": {"x=1, y": 2}}',
     {"content": '{"name": "f", "parameters": {"x=1, y": 2}}'}),
    ('{"name": "f", "parameters": {}, "arguments": {}}',
     {"content": '{"name": "f", "parameters": {}, "arguments": {}}'}),
    ('{"name": "f", "parameters": {}, "extra": 1}',
     {"content": '{"name": "f", "parameters": {}, "extra": 1}'}),
    ('{"name": "f", "parameters": {"x": 1e999}}',
     {"content": '{"name": "f", "parameters": {"x": 1e999}}'}),
    ('{"name": "f", "parameters": {"\ufb01le": 1}}',  # Python would read it as "file"
     {"content": '{"name": "f", "parameters": {"\ufb01le": 1}}'}),
    ('[{"name": "f", "parameters": {}}, 3]', {"content": '[{"name": "f", "parameters": {}}, 3]'}),
])
def test_a_pythonic_body_of_json_calls_is_those_calls(text, want):
    assert_everywhere(PYTHONIC_JSON_MODULE, text + "<|eot|>", want)


@pytest.mark.parametrize("text, want", [
    # A whole list, then prose: the list says where it ends (brackets in strings, comments
    # and nested containers do not end it).
    ('[f(s="a]b", t=\'c)\', d={"k": [1]}), g()]\n\nDone. [x]', {
        "tool_calls": [call("f", s="a]b", t="c)", d={"k": [1]}), call("g")],
        "content": "Done. [x]"}),
    ('[f(s="""x]""")  # a ] here\n]  Done.',
     {"tool_calls": [call("f", s="x]")], "content": "Done."}),
    # ... but only a list of calls: else all of it is text.
    ("[f(1)] Done.", {"content": "[f(1)] Done."}),
    ('[f(s="x"] Done.', {"content": '[f(s="x"] Done.'}),
    # A list that closed but failed alone gives no value, prose or not.
    ("[f(x=1), 2]", {"content": "[f(x=1), 2]"}),
])
def test_a_whole_pythonic_list_followed_by_text_is_the_calls_and_the_text(text, want):
    assert_everywhere(PYTHONIC_MODULE, text + "<|eot|>", want)
    # The same where the list ends the output (no close): the rest is text too.
    assert whole(PYTHONIC_MODULE, text) == want


WRAPPED = copy.deepcopy(PYTHONIC)
WRAPPED["fields"]["tool_calls"].update(
    open_pattern=r"^\s*(?=\[\s*[A-Za-z_][\w.]*\()|<\|python_start\|>\s*",
    close=["<|python_end|>", "<|eot|>"])
WRAPPED_MODULE = load_parser(load_template(WRAPPED))


@pytest.mark.parametrize("text, want", [
    ('<|python_start|>f(x=1, s="a)")<|python_end|><|eot|>',
     {"tool_calls": [call("f", x=1, s="a)")]}),
    ('<|python_start|>a.b()<|python_end|><|eot|>', {"tool_calls": [call("a.b")]}),
    # Unfinished, a call that looks whole may have gone on: text.
    ('<|python_start|>f(x=1)', {"content": "f(x=1)"}),
    ('<|python_start|>f(x=1) and more<|python_end|><|eot|>', {"content": "f(x=1) and more"}),
    ('<|python_start|>{"name": "f", "parameters": {"x": 1}}; {"name": "g", "parameters": {}};'
     '<|python_end|><|eot|>', {"tool_calls": [call("f", x=1), call("g")]}),
    ('<|python_start|>{"name": "f", "parameters": {}}, {"name": "g", "parameters": {}}'
     '<|python_end|><|eot|>',
     {"content": '{"name": "f", "parameters": {}}, {"name": "g", "parameters": {}}'}),
])
def test_a_wrapped_call_without_brackets_or_json_calls_apart_by_semicolons(text, want):
    assert_everywhere(WRAPPED_MODULE, text, want)


def test_json_calls_cut_anywhere_are_text_and_whole_without_their_close_are_calls():
    text = '{"name": "rm", "parameters": {"path": "/tmp/build", "force": true}}'
    for cut in range(1, len(text)):
        want = {"content": text[:cut].strip()} if text[:cut].strip() else {}
        assert whole(PYTHONIC_JSON_MODULE, text[:cut]) == want, cut
    assert_everywhere(PYTHONIC_JSON_MODULE, text,
                      {"tool_calls": [call("rm", path="/tmp/build", force=True)]})


def test_a_pythonic_body_is_read_as_json_only_after_its_own_parse_failed():
    parsed = []
    module = load_parser(load_template(PYTHONIC_JSON))
    region = module.TABLE.by_name["tool_calls"]
    process = region.process

    def counting(body, captures):
        parsed.append(body)
        return process(body, captures)

    region.process = counting  # the module is cached: put back below
    try:
        whole(module, "[f(x=1)]<|eot|>")
        assert parsed == ["[f(x=1)]"]  # a call list: one parse, no JSON reading
        parsed.clear()
        whole(module, '{"name": "f", "parameters": {"x": 1}}<|eot|>')
        assert parsed == ['{"name": "f", "parameters": {"x": 1}}', "[f(x=1)]"]
    finally:
        region.process = process


def _without(*keys: str) -> dict:
    spec = copy.deepcopy(QWEN)
    for key in keys:
        spec["fields"]["tool_calls"].pop(key, None)
        spec["extensions"].remove({"recover": "recover"}.get(key, "close-outside-strings"))
    return spec



# -- against the reference ------------------------------------------------------------


def robust(spec: dict, kept: tuple = (), keeper: str | None = None) -> dict | None:
    """``spec`` opting in to both extensions wherever it can (None when nowhere), with
    the other extensions ``kept`` it declares. The field named ``keeper`` (if any)
    keeps the failed regions' text of the others, else the implicit field does."""
    if not isinstance(spec, dict) or "extensions" in spec:
        return None
    fields = spec.get("fields") or {}
    if keeper not in fields or len(fields) < 2:
        keeper = None
        if not any("open" not in f and "open_pattern" not in f for f in fields.values()):
            return None
    out = copy.deepcopy(spec)
    used = set()
    for name, f in out["fields"].items():
        if "open" not in f and "open_pattern" not in f or name == keeper:
            continue
        f["recover"] = keeper or True
        used.add("recover")
        args = f.get("content_args") or {}
        if (
            f.get("content") == "json" and ("close" in f or "close_pattern" in f)
            and isinstance(args, dict) and not args.get("string_delims")
            and not args.get("allow_non_json")
        ):
            f["close_outside_strings"] = True
            out["extensions"] = ["close-outside-strings"]
            try:
                load_template({**out, "extensions": [
                    "recover", "close-outside-strings", *kept]})
            except TemplateError:
                del f["close_outside_strings"]
            else:
                used.add("close-outside-strings")
    out["extensions"] = sorted({*used, *kept})
    return out


DIFFERENTIAL = settings(
    max_examples=200, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)


def robust_run(module: Any, chunks: list[str], prefix: str, tool_list: Any) -> tuple:
    """(message, or None when it raised; whether a region was left unfinished), streamed.

    The final pass is run as ``finalize`` runs it, so that its events are seen even when
    the message then fails (a required field that an unfinished region left empty)."""
    events: list = []
    try:
        parser = module.ResponseParser(prefix, tools=copy.deepcopy(tool_list))
        stream = parser._stream
        events += parser.initial_events
        for chunk in chunks:
            events += parser.feed(chunk)
        stream.forget()
        stream.process(events, eos=True)
    except Exception:  # noqa: BLE001 -- compared only where the reference succeeds
        return None, any(e.get("error") == UNFINISHED for e in events)
    unfinished = any(e.get("error") == UNFINISHED for e in events)
    try:
        return stream.finish(), unfinished
    except Exception:  # noqa: BLE001
        return None, unfinished


def reference_run(spec: dict, chunks: list[str], prefix: str, tool_list: Any) -> Any:
    """The reference's streamed message, or None when it raised."""
    try:
        parser = RefParser(load_response_template(json.loads(json.dumps(spec))), prefix=prefix,
                           tools=copy.deepcopy(tool_list))
        for chunk in chunks:
            parser.feed(chunk)
        return parser.finalize()[0]
    except Exception:  # noqa: BLE001
        return None


def _joins_an_empty_piece(strict: Any, spec: dict, chunks: list[str], prefix: str,
                          tool_list: Any) -> bool:
    """Whether the strict parser (the reference's events) gives a field with a ``join``
    two pieces or more, one of them empty, or one piece or more after a default of ``""``
    (which the reference joins as an empty first piece)."""
    joined = {name for name, f in (spec.get("fields") or {}).items()
              if isinstance(f, dict) and f.get("join") is not None}
    pieces: dict = {}
    try:
        parser = strict.ResponseParser(prefix, tools=copy.deepcopy(tool_list))
        events = [e for chunk in chunks for e in parser.feed(chunk)]
        events += parser.finalize()[1]
    except Exception:  # noqa: BLE001 -- the caller compares only where the reference succeeds
        return False
    for e in events:
        if (e.get("type") == "region_close" and e.get("field") in joined
                and isinstance(e.get("value"), str)):
            pieces.setdefault(e["field"], []).append(e["value"])
    defaults = spec.get("defaults") if isinstance(spec.get("defaults"), dict) else {}
    return any(
        len(values) > 1 and "" in values or defaults.get(name) == ""
        for name, values in pieces.items()
    )


@DIFFERENTIAL
@given(data=st.data())
def test_where_the_reference_succeeds_and_nothing_is_unfinished_the_message_is_its(data):
    spec = data.draw(templates())
    assume(not _lazy_delimiters(spec))
    fields = sorted(spec.get("fields") or {}) if isinstance(spec, dict) else []
    opted = robust(spec, keeper=data.draw(st.sampled_from([None, *fields])))
    assume(opted is not None)
    try:
        load_response_template(json.loads(json.dumps(spec)))
    except ValueError:
        assume(False)
    module = load_parser(load_template(opted))
    text = data.draw(outputs(spec))
    prefix = data.draw(prefixes(spec))
    tool_list = data.draw(tools())
    chunks = data.draw(chunkings(text))
    if "".join(chunks) != text:
        chunks = [text]
    # An output ending in the beginning of a recovering open ends with no text (see
    # test_an_output_ending_in_the_beginning_of_a_recovering_open_ends_with_no_text):
    # unfinished too, where the reference keeps those characters as text.
    # (The prompt's tail is read before the output: an empty or short output leaves the
    # end of what the parser holds in it.)
    cut = _cut_at_end(module, prefix + text)
    compared = 0
    strict = load_parser(load_template(spec))
    for pieces in ([text], chunks):
        want = reference_run(spec, pieces, prefix, tool_list)
        got, unfinished = robust_run(module, pieces, prefix, tool_list)
        if want is not None and _joins_an_empty_piece(strict, spec, pieces, prefix, tool_list):
            # The one difference where nothing is recovered (docs/extensions.md, recover:
            # "Empty pieces join nothing"): no separator for an empty piece.
            event("an empty piece joined by the reference")
            continue
        if want is not None and not unfinished and not cut:
            assert json.dumps(got) == json.dumps(want), pieces
            compared += 1
    # parse_response gives what a single feed gives.
    try:
        whole_message = module.parse_response(text, prefix=prefix, tools=copy.deepcopy(tool_list))
    except Exception:  # noqa: BLE001
        whole_message = None
    assert json.dumps(whole_message) == json.dumps(robust_run(module, [text], prefix, tool_list)[0])
    named = any(isinstance(f.get("recover"), str) for f in opted["fields"].values())
    event(f"compared with the reference: {compared}" + (", text kept by a named field"
                                                          if named else ""))


# -- the robust forms of the bundled grammars, on messy outputs -------------------------


def _robust_forms() -> list[tuple[str, dict]]:
    """Every bundled grammar's robust form: as bundled when it opts in, else opted in to
    whatever it can be (so the test covers every grammar's delimiters)."""
    out = []
    for name in grammars.names():
        spec = grammars.grammar(name).spec
        if "recover" not in (spec.get("extensions") or []):
            strict = grammars.grammar(f"{name}:strict").spec
            plain = {k: v for k, v in strict.items() if k != "extensions"}
            spec = robust(plain, tuple(strict.get("extensions") or ()))
            if spec is None:
                continue
        out.append((name, spec))
    return out


FORMS = _robust_forms()
FORM_MODULES = {name: load_parser(load_template(spec)) for name, spec in FORMS}


@st.composite
def messy(draw: Any, spec: dict) -> str:
    """A bundled grammar's output, then broken: cut, a character dropped, a delimiter
    or a quote put anywhere (inside strings too)."""
    plain = {k: v for k, v in spec.items() if k != "extensions"}
    for f in plain["fields"].values():
        f.pop("recover", None)
        f.pop("close_outside_strings", None)
        f.pop("yield_to", None)
    text = draw(outputs(plain))
    markers = [s for f in spec["fields"].values() for key in ("open", "close")
               for s in ([f[key]] if isinstance(f.get(key), str) else f.get(key) or [])]
    markers += ['"', '\\', "{", "}", "</tool_call>", "<tool_call>", "[TOOL_CALLS]", "</s>",
                "<|im_end|>", "</parameter>", "</function>", "<parameter=", "<arg_value>",
                "</arg_value>"]
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["cut", "drop", "insert"]))
        at = draw(st.integers(0, len(text)))
        if how == "cut":
            text = text[:at]
        elif how == "drop":
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + draw(st.sampled_from(markers)) + text[at:]
    return text


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_robust_bundled_forms_stream_as_they_parse_whole(data):
    name, spec = data.draw(st.sampled_from(FORMS))
    module = FORM_MODULES[name]
    text = data.draw(messy(spec))
    meta = grammars.meta(name)
    prefix = data.draw(st.sampled_from(["", meta.get("generation_prompt") or ""]))
    want = whole(module, text, prefix)
    chunks = data.draw(chunkings(text))
    got, _ = run(module, text, chunks if "".join(chunks) == text else [text], prefix)
    assert got == want


@pytest.mark.parametrize("text, content, arguments", [
    ('x[TOOL_CALLS]:[CALL_ID]{"a": {}}</s>', "x", {"a": {}}),
    ('[TOOL_CALLS]f[CALL_ID]a1B2c3D4e{"city": {"in": {"x": 1}}}</s>', None,
     {"city": {"in": {"x": 1}}}),
])
def test_a_mistral_call_id_ends_at_the_first_brace_streamed_and_whole(text, content, arguments):
    # Without [ARGS] the call opens at the '{' after the id. An id that ran on over '{'
    # made the whole-text parse open the call at the last '{' (a backtracking match)
    # while a stream opened it at the first: the arguments differed.
    name = text[len("x[TOOL_CALLS]" if content else "[TOOL_CALLS]"):].split("[")[0]
    want = {"role": "assistant", "tool_calls": [{
        "type": "function", "function": {"name": name, "arguments": arguments}}]}
    if content is not None:
        want["content"] = content
    assert_everywhere(FORM_MODULES["mistral"], text, want)
    strict = grammars.grammar("mistral:strict")
    assert ref_parse_response(text, strict.spec, prefix="") == want
    assert load_parser(strict.template).parse_response(text, prefix="") == want


_G = {"type": "function", "function": {"name": "g", "arguments": {}}}


@pytest.mark.parametrize("name, text, want", [
    ("mistral", 'x[TOOL_CALLS]f[ARGS]aa"</s>[TOOL_CALLS]g[ARGS]{}</s>:',
     {"content": 'x\n\naa"\n\n:', "tool_calls": [_G]}),
    ("magistral", '[THINK][TOOL_CALLS]f[ARGS]aa"</s>[TOOL_CALLS]g[ARGS]{}</s>:',
     {"reasoning_content": 'aa"\n\n:', "tool_calls": [_G]}),
    ("magistral", '[THINK][TOOL_CALLS]f[ARGS]aa"</s>[TOOL_CALLS]f[ARGS]</s>:',
     {"reasoning_content": 'aa"\n\n:'}),
])
def test_after_a_string_that_never_ends_the_next_calls_close_is_found_whole(name, text, want):
    # The first call's string never ends: it closes at the first </s> in it, which
    # rebases the held text. The next call's close (an alternation: </s> or before
    # [TOOL_CALLS]) was then looked up, whole-text, at where </s> occurs in the text
    # before the rebase: missed, the call was unfinished and lost (its text kept).
    want = {"role": "assistant", **want}
    assert_everywhere(FORM_MODULES[name], text, want)


@pytest.mark.parametrize("name", [name for name, _ in FORMS])
def test_robust_bundled_forms_truncated_at_every_position(name):
    module = FORM_MODULES[name]
    spec = dict(FORMS)[name]
    tool_calls = spec["fields"].get("tool_calls", {})
    example = grammars.meta(name).get("ambiguities", [])
    texts = [a["output"] for a in example if "output" in a][:3]
    assert texts, name
    for text in texts:
        for cut in range(len(text) + 1):
            part = text[:cut]
            want = whole(module, part)
            assert run(module, part, list(part))[0] == want, (name, cut)
            if isinstance(want, dict) and tool_calls.get("recover"):
                # Whatever was cut, no delimiter of the grammar leaks into a call.
                for c in want.get("tool_calls") or []:
                    assert "<tool_call>" not in json.dumps(c), (name, cut)


# -- work, counted ------------------------------------------------------------------------

SIZES = (2_000, 8_000, 32_000)


def _work(module: Any, text: str, step: int) -> float:
    parser = module.ResponseParser("")
    stream = parser._stream
    for i in range(0, len(text), step):
        parser.feed(text[i : i + step])
    parser.finalize()
    return stream.work


@pytest.mark.parametrize("unit", ["a", 'a\\"', "</tool_call", "</tool_call>", ' "</tool_call>" ,'])
def test_a_long_unfinished_call_fed_a_character_at_a_time_is_linear(unit):
    # Inside a string that never ends, or outside one, with closes that never count or
    # never complete: each feed reads its piece, not the body again.
    head = 'x<tool_call>{"name": "f", "arguments": {"text": "' if unit != ' "</tool_call>" ,' \
        else 'x<tool_call>{"name": "f", "arguments": ['
    per = []
    for n in SIZES:
        text = head + unit * (n // len(unit))
        work = _work(MODULE, text, 1)
        per.append(work / len(text))
        assert whole(MODULE, text)["content"].startswith("x\n\n{")
    assert max(per) <= 40, per
    assert per[2] <= per[0] * 1.1 + 0.5, per


def test_closing_tags_inside_strings_cost_linear_work_whole_and_streamed():
    for step in (0, 1, 7):
        per = []
        for n in SIZES:
            items = ", ".join(['"</tool_call>"'] * (n // 16))
            text = f'<tool_call>{{"name": "f", "arguments": {{"a": [{items}]}}}}</tool_call>'
            if step:
                work = _work(MODULE, text, step)
            else:
                parser = MODULE.ResponseParser("")
                stream = parser._stream
                message = stream.parse_whole(text)
                assert len(message["tool_calls"][0]["function"]["arguments"]["a"]) == n // 16
                work = stream.work
            per.append(work / len(text))
        assert max(per) <= 40, (step, per)
        assert per[2] <= per[0] * 1.1 + 0.5, (step, per)


@pytest.mark.parametrize("text", ["Answer.<|end|>  <|eot|>", "  <|end|>Answer.<|eot|>"])
def test_an_empty_piece_of_a_joined_field_joins_nothing_in_a_recovering_template(text):
    """The reference joins an empty piece with its separator, and the strict template
    keeps that; with a recovering field no separator is left (a stream may give a field
    whitespace between two markers that the whole text's close takes)."""
    strict = {"version": 1, "start_anchor": "<|a|>", "fields": {
        "tool_calls": {"open": "<call>", "close": "</call>", "content": "json",
                       "repeats": True},
        "content": {"close": ["<|eot|>", "<|end|>"], "repeats": True, "join": "\n\n",
                    "content": "text"}}}
    opted = copy.deepcopy(strict)
    opted["extensions"] = ["recover"]
    opted["fields"]["tool_calls"]["recover"] = True
    want = ref_parse_response(text, load_response_template(copy.deepcopy(strict)), prefix="")
    assert "\n\n" in want["content"]
    assert load_parser(load_template(strict)).parse_response(text, prefix="") == want
    module = load_parser(load_template(opted))
    assert module.parse_response(text, prefix="") == {"content": "Answer."}
    parser = module.ResponseParser("")
    for ch in text:
        parser.feed(ch)
    assert parser.finalize()[0] == {"content": "Answer."}


def _cut_at_end(module: Any, text: str) -> bool:
    """Whether ``text`` ends in the beginning of a recovering open, in some mode: a cut
    literal, or a whole literal and the beginning of the rest of its open."""
    table = module.ResponseParser("")._stream.table
    for mode, literals in table.cut_opens.items():
        if module.cut_open_length(text, literals):
            return True
        for literal, regex in table.cut_forms[mode]:
            at = text.rfind(literal)
            begins = None if at < 0 else regex.beginning()
            if begins is not None and begins(text, at):
                return True
    return False
