"""What the adapter sends and when: incremental arguments, retyping, escapes, odd JSON."""

from __future__ import annotations

import json

import pytest

from rtcompiler import compile_template, grammars
from rtcompiler.openai import DeltaStream, accumulate, arguments_json, openai_plan
from rtcompiler.template import load_template

QWEN = "<|im_start|>assistant\n"
CODER = "<|im_start|>assistant\n<think>\n"
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"},
                                     "xs": {"type": "integer"}}}}}]


def stream_of(grammar, prefix, tools=None, **options):
    return DeltaStream(grammar, prefix, tools=tools, call_id=lambda i: f"call_{i}", **options)


def feed_chars(stream, text):
    """Deltas per character fed, then finish's."""
    steps = [stream.feed(ch) for ch in text]
    return steps, stream.finish()


def arguments(deltas, index=0):
    return "".join(
        call["function"].get("arguments", "")
        for d in deltas for call in d.get("tool_calls", []) if call["index"] == index
    )


def qwen_call(body):
    return f"<tool_call>\n{body}\n</tool_call><|im_end|>"


def test_json_arguments_arrive_before_the_call_closes():
    text = qwen_call('{"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}')
    stream = stream_of("qwen3:strict", QWEN)
    steps, last = feed_chars(stream, text)
    close_at = text.index("</tool_call>")
    before = [d for step in steps[:close_at] for d in step]
    # Everything but nothing is missing before the closing tag is even seen.
    assert arguments(before) == '{"city": "Paris", "days": [1, 2]}'
    header = next(d["tool_calls"][0] for d in before if "tool_calls" in d)
    assert header == {"index": 0, "id": "call_0", "type": "function",
                      "function": {"name": "get_weather", "arguments": ""}}
    # and it grew a piece at a time, not in one go
    growing = [step for step in steps[:close_at] if arguments(step)]
    assert len(growing) > 10
    assert arguments(before + [d for s in steps[close_at:] for d in s] + last) == json.dumps(
        stream.message["tool_calls"][0]["function"]["arguments"])


def test_a_delta_with_null_content_feeds_nothing():
    """Upstream deltas often carry ``content: null``: fed as is, they give no delta."""
    stream = stream_of("qwen3:strict", QWEN)
    assert stream.feed("Hi") == [{"content": "Hi"}]
    assert stream.feed(None) == []
    assert stream.feed("") == []
    assert stream.feed(" there<|im_end|>") == [{"content": " there"}]
    assert stream.finish() == []
    assert stream.message == {"role": "assistant", "content": "Hi there"}


def test_xml_parameters_arrive_as_each_one_closes():
    text = ("<tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>\n"
            "<parameter=s>\nsome text\n</parameter>\n</tool_call>\n<|im_end|>")
    stream = stream_of("qwen3_coder:strict", CODER, tools=TOOLS)
    steps, last = feed_chars(stream, "</think>\n\n" + text)
    offset = len("</think>\n\n")
    first_closed = offset + text.index("</parameter>") + len("</parameter>")
    assert arguments([d for s in steps[:first_closed + 1] for d in s]) == '{"n": 7'
    all_deltas = [d for s in steps for d in s] + last
    assert arguments(all_deltas) == '{"n": 7, "s": "some text"}'


def test_string_argument_retyped_by_the_schema_is_held_until_complete():
    text = qwen_call('{"name": "f", "arguments": {"n": "42", "s": "42", "xs": ["1", "2"]}}')
    stream = stream_of("qwen3:strict", QWEN, tools=TOOLS)
    steps, last = feed_chars(stream, text)
    sent = [arguments(s) for s in steps] + [arguments(last)]
    assert '"42"' not in "".join(sent).split('"s": ')[0]
    assert "".join(sent) == '{"n": 42, "s": "42", "xs": [1, 2]}'
    assert stream.message["tool_calls"][0]["function"]["arguments"] == {"n": 42, "s": "42",
                                                                       "xs": [1, 2]}


def test_parser_tools_unknown_to_the_stream_only_delay_arguments():
    compiled = compile_template("qwen3:strict")
    from rtcompiler.runtime.deltas import DeltaStream as RuntimeStream

    parser = compiled.response_parser(QWEN, tools=TOOLS)
    stream = RuntimeStream(parser, openai_plan(compiled.template))
    text = qwen_call('{"name": "f", "arguments": {"n": "42"}}')
    deltas = [d for ch in text for d in stream.feed(ch)] + stream.finish()
    assert arguments(deltas) == '{"n": 42}'


ESCAPED = r'"a\"b\\c\/d\n\t\u00e9\ud83d\ude00\u2028 z"'


@pytest.mark.parametrize("cut", range(len(ESCAPED) + 1))
def test_escapes_split_anywhere(cut):
    body = '{"name": "f", "arguments": {"s": ' + ESCAPED + ', "t": [' + ESCAPED + "]}}"
    text = qwen_call(body)
    at = text.index(ESCAPED) + cut
    for ensure_ascii in (False, True):
        stream = stream_of("qwen3:strict", QWEN, ensure_ascii=ensure_ascii)
        deltas = stream.initial_deltas + stream.feed(text[:at]) + stream.feed(text[at:])
        deltas += stream.finish()
        final = stream.message["tool_calls"][0]["function"]["arguments"]
        assert arguments(deltas) == json.dumps(final, ensure_ascii=ensure_ascii)


@pytest.mark.parametrize("value", ["1.50", "1e2", "-0", "-0.0", "1E400", "NaN", "-Infinity",
                                   "true", "null", "[]", "{}", "[[], {}, [1, {}]]", '""'])
def test_scalars_and_empty_containers_are_written_as_arguments_json_writes_them(value):
    text = qwen_call('{"name": "f", "arguments": {"v": ' + value + ', "w":' + value + "}}")
    stream = stream_of("qwen3:strict", QWEN)
    steps, last = feed_chars(stream, text)
    final = stream.message["tool_calls"][0]["function"]["arguments"]
    assert arguments([d for s in steps for d in s] + last) == arguments_json(final)
    assert stream.divergences == []


def test_arguments_given_as_a_string_stream_as_that_string():
    text = qwen_call(r'{"name": "f", "arguments": "{\"a\": \"\u00e9\"}"}')
    stream = stream_of("qwen3:strict", QWEN)
    steps, last = feed_chars(stream, text)
    assert stream.message["tool_calls"][0]["function"]["arguments"] == '{"a": "é"}'
    assert arguments([d for s in steps for d in s] + last) == '{"a": "é"}'
    assert arguments_json('{"a": "é"}') == '{"a": "é"}'


def test_arguments_before_the_name_wait_for_the_close():
    text = qwen_call('{"arguments": {"a": 1}, "name": "f"}')
    stream = stream_of("qwen3:strict", QWEN)
    steps, last = feed_chars(stream, text)
    assert not any(arguments(s) for s in steps[: text.index("</tool_call>")])
    assert arguments([d for s in steps for d in s] + last) == '{"a": 1}'


def test_a_nested_key_written_twice_still_decodes_to_the_final_arguments():
    text = qwen_call('{"name": "f", "arguments": {"a": {"x": 1, "x": 2}}}')
    stream = stream_of("qwen3:strict", QWEN)
    steps, last = feed_chars(stream, text)
    sent = arguments([d for s in steps for d in s] + last)
    assert json.loads(sent) == stream.message["tool_calls"][0]["function"]["arguments"]
    assert stream.divergences == []


def test_arguments_written_twice_are_reported_as_a_divergence():
    text = qwen_call('{"name": "f", "arguments": {"a": 1}, "arguments": {"b": 2}}')
    stream = stream_of("qwen3:strict", QWEN)
    feed_chars(stream, text)
    assert stream.message["tool_calls"][0]["function"]["arguments"] == {"b": 2}
    assert [d["index"] for d in stream.divergences] == [0]


def test_json_the_parser_refuses_raises_as_parse_response_does():
    text = qwen_call('{"name": "f", "arguments": {"a": 1,}}')
    stream = stream_of("qwen3:strict", QWEN)
    with pytest.raises(ValueError, match="could not parse region as JSON"):
        for ch in text:
            stream.feed(ch)
        stream.finish()


def test_each_call_of_a_list_body_streams_under_its_own_index():
    body = ('[{"tool_call_id": "0", "tool_name": "a", "parameters": {"x": 1}}, '
            '{"tool_call_id": "1", "tool_name": "b", "parameters": {}}]')
    text = f"<|START_ACTION|>{body}<|END_ACTION|><|START_RESPONSE|>ok<|END_RESPONSE|>"
    # The robust form holds a call until its action closes, unless live_calls.
    for options in ({}, {"live_calls": True}):
        stream = stream_of("command_r7b", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", **options)
        steps, last = feed_chars(stream, text)
        before = [d for s in steps[: text.index("<|END_ACTION|>")] for d in s]
        if options:
            assert arguments(before, 0) == '{"x": 1}' and arguments(before, 1) == "{}"
        else:
            assert not any("tool_calls" in d for d in before)
        message = accumulate(stream.initial_deltas + [d for s in steps for d in s] + last)
        assert [c["function"]["name"] for c in message["tool_calls"]] == ["a", "b"]
        assert message["content"] == "ok"


def test_joined_text_fields_get_their_separator():
    prefix = "<|start|>assistant"
    text = ("<|channel|>analysis<|message|> think <|end|><|start|>assistant"
            "<|channel|>final<|message|>one<|end|><|start|>assistant"
            "<|channel|>final<|message|> two <|return|>")
    stream = stream_of("gpt_oss", prefix)
    steps, last = feed_chars(stream, text)
    message = accumulate(stream.initial_deltas + [d for s in steps for d in s] + last)
    assert message["content"] == stream.message["content"] == "one\n\ntwo"
    assert message["reasoning_content"] == stream.message["reasoning_content"]


def test_stripped_text_holds_back_only_whitespace():
    stream = stream_of("qwen3:strict", QWEN)
    assert stream.feed("  Hello") == [{"content": "Hello"}]
    assert stream.feed(" \n ") == []
    assert stream.feed("world  ") == [{"content": " \n world"}]
    assert stream.feed("<|im_end|>") == []
    assert stream.finish() == []
    assert stream.message["content"] == "Hello \n world"
    assert stream.finish_reason == "stop"


def test_prefix_that_opens_a_region_streams_from_the_start():
    stream = stream_of("qwen3_coder:strict", CODER)
    assert stream.initial_deltas == [{"role": "assistant"}]
    assert stream.feed("plan\n</think>\n\nHi") == [{"reasoning_content": "plan"}, {"content": "Hi"}]


def test_a_call_id_from_the_template_is_used():
    template = load_template({
        "start_anchor": "<s>",
        "fields": {
            "tool_calls": {"open_pattern": r"<call id=(?P<id>\w+)>", "close": "</call>",
                           "repeats": True, "content": "json",
                           "transform": {"id": "{id}", "type": "function",
                                         "function": {"name": "{content.name}",
                                                      "arguments": "{content.arguments}"}}},
            "content": {"close": "</s>"},
        },
    })
    assert openai_plan(template)["tool_calls"]["stream"]["id"] == "id"
    stream = DeltaStream(template, "<s>")
    first = stream.feed('<call id=abc>{"name": "f", "arguments": {"a": [')
    assert first[-1]["tool_calls"][0]["id"] == "abc"
    deltas = first + stream.feed("]}}</call></s>") + stream.finish()
    assert accumulate(deltas)["tool_calls"] == [
        {"id": "abc", "type": "function", "function": {"name": "f", "arguments": '{"a": []}'}}]


def test_default_ids_are_distinct_and_stable_per_call():
    stream = DeltaStream("qwen3:strict", QWEN)
    text = qwen_call('{"name": "f", "arguments": {}}') .replace("<|im_end|>", "")
    deltas = stream.feed(text) + stream.feed(qwen_call('{"name": "g", "arguments": {}}'))
    deltas += stream.finish()
    ids = [c["id"] for d in deltas for c in d["tool_calls"] if "id" in c]
    assert len(ids) == 2 and len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)


def test_python_function_tools_are_accepted_by_the_package_stream():
    def f(n: int) -> int:
        """Return n.

        Args:
            n: a number
        """
        return n

    stream = DeltaStream("qwen3_coder:strict", CODER, tools=[f])
    text = "</think>\n\n<tool_call>\n<function=f>\n<parameter=n>\n5\n</parameter>\n</tool_call>"
    deltas = stream.feed(text) + stream.finish()
    assert accumulate(deltas)["tool_calls"][0]["function"]["arguments"] == '{"n": 5}'


def test_a_field_filled_twice_is_reported_since_streamed_text_cannot_be_taken_back():
    # qwen3's content as it was before it kept text on both sides of a call: one region,
    # so the parser keeps the last, as transformers does.
    template = grammars.strict_spec(json.loads(
        (grammars.grammar("qwen3").folder / "response_template.json").read_text()))
    del template["fields"]["content"]["repeats"], template["fields"]["content"]["join"]
    stream = DeltaStream(template, QWEN, call_id=lambda i: f"call_{i}")
    text = 'Hi <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call> bye<|im_end|>'
    deltas = stream.initial_deltas + stream.feed(text) + stream.finish()
    assert stream.message["content"] == "bye"
    assert accumulate(deltas)["content"] == "Hibye"
    assert stream.divergences == [{"field": "content", "sent": "Hibye", "final": "bye"}]


def test_qwen3_keeps_text_on_both_sides_of_a_call_in_its_deltas_too():
    stream = stream_of("qwen3", QWEN)
    text = 'Hi <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call> bye<|im_end|>'
    deltas = stream.initial_deltas + stream.feed(text) + stream.finish()
    assert stream.message["content"] == accumulate(deltas)["content"] == "Hi\n\nbye"
    assert stream.divergences == []


def test_an_xml_parameter_given_twice_still_decodes_to_the_final_arguments():
    text = ("</think>\n\n<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n"
            "<parameter=b>\n2\n</parameter>\n<parameter=a>\n3\n</parameter>\n</tool_call>")
    stream = stream_of("qwen3_coder:strict", CODER)
    steps, last = feed_chars(stream, text)
    sent = arguments([d for s in steps for d in s] + last)
    assert sent == '{"a": "1", "b": "2", "a": "3"}'
    assert json.loads(sent) == stream.message["tool_calls"][0]["function"]["arguments"]
    assert stream.divergences == []


def _strict(text):
    """json.loads as a strict JSON reader (JavaScript's JSON.parse) reads it."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("chunk", [1, 7, None])
def test_nan_and_infinities_reach_a_client_as_strings_it_can_decode(chunk):
    body = '{"name": "f", "arguments": {"n": NaN, "s": [Infinity, -Infinity], "xs": 1}}'
    text = qwen_call(body)
    stream = stream_of("qwen3", QWEN, tools=TOOLS)
    pieces = [text] if chunk is None else [text[i:i + chunk] for i in range(0, len(text), chunk)]
    deltas = [d for piece in pieces for d in stream.feed(piece)] + stream.finish()
    assert _strict(arguments(deltas)) == {"n": "NaN", "s": ["Infinity", "-Infinity"], "xs": 1}


def test_arguments_json_writes_no_bare_nan():
    assert _strict(arguments_json({"a": float("nan"), "b": [float("inf")]})) == {
        "a": "NaN", "b": ["Infinity"]}
    assert arguments_json({"a": 1.5}) == '{"a": 1.5}'
