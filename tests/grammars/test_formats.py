"""The newer bundled formats, output by output: what each model writes, and what it parses to.

The outputs are written here from each format's rendering rules (DeepSeek's DSML encoders,
Kimi K3's XTML encoder, mistral-common's Mistral v3 and Magistral-2506 layouts), one feature
at a time; ``rtc check`` covers random messages. Each output is parsed whole, one character
at a time and in seeded random chunks, and must give the expected message every time.
"""

from __future__ import annotations

import random

import pytest

from rtcompiler import compile_template

D = "｜DSML｜"  # fullwidth bars, U+FF5C
EOS = "<｜end▁of▁sentence｜>"
V3_CHAT = "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜></think>"
V3_THINK = "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜><think>"
GLM5_THINK = "[gMASK]<sop><|user|>Weather in Paris?<|assistant|><think>"
GLM5_CHAT = "[gMASK]<sop><|user|>Weather in Paris?<|assistant|></think>"


def call(name, arguments=None):
    return {"type": "function", "function": {"name": name, "arguments": arguments or {}}}


def message(content=None, reasoning=None, calls=None):
    out = {"role": "assistant"}
    if content is not None:
        out["content"] = content
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    if calls:
        out["tool_calls"] = calls
    return out


def dsml_block(block, calls, space=""):
    """A DSML block as DeepSeek's encoders write it (``space``: V4.1's tag spelling)."""
    invokes = []
    for name, params in calls:
        lines = [f'<{D}{space}parameter name="{k}" string="{s}">{v}</{D}{space}parameter>'
                 for k, s, v in params]
        invokes.append(f'<{D}{space}invoke name="{name}">\n' + "\n".join(lines)
                       + f"\n</{D}{space}invoke>")
    return f"\n\n<{D}{block}>\n" + "\n".join(invokes) + f"\n</{D}{block}>"


K3_THINK = '<|open|>message role="user"<|sep|>Hi<|close|>message<|sep|><|end_of_msg|>' \
    '<|open|>message role="assistant"<|sep|><|open|>think<|sep|>'
K3_CHAT = K3_THINK.replace("think<|sep|>", "response<|sep|>")
K3_END_THINK = "<|close|>think<|sep|>"
K3_END = "<|close|>message<|sep|><|end_of_msg|>"


def xtml_response(text):
    return f"<|open|>response<|sep|>{text}<|close|>response<|sep|>"


def xtml_tools(calls):
    """A K3 tools element as the encoder writes it: calls numbered from 1."""
    body = ""
    for i, (name, arguments) in enumerate(calls, start=1):
        body += f'<|open|>call tool="{name}" index="{i}"<|sep|>'
        for key, kind, value in arguments:
            body += (f'<|open|>argument key="{key}" type="{kind}"<|sep|>{value}'
                     "<|close|>argument<|sep|>")
        body += "<|close|>call<|sep|>"
    return f"<|open|>tools<|sep|>{body}<|close|>tools<|sep|>"


WEATHER = [("get_weather", [("city", "true", "Paris"), ("days", "false", "3")])]
RAW = [("write_file", [("path", "true", "a.py"),
                       ("content", "true", ' print("<b>&amp;")\nif a < b:\n    pass\n')])]
TYPES = [("book", [("n", "false", "2"), ("ok", "false", "true"), ("no", "false", "null"),
                   ("seats", "false", '["12A", "12B"]'), ("meta", "false", '{"a": {"b": 1.5}}')])]
TWO = [("get_weather", [("city", "true", "Paris")]), ("ping", [])]

CASES = {
    "deepseek_v32": [
        (V3_THINK, "Need the weather.</think>Let me look." + dsml_block("function_calls", WEATHER)
         + EOS, message("Let me look.", "Need the weather.",
                        [call("get_weather", {"city": "Paris", "days": 3})])),
        (V3_CHAT, dsml_block("function_calls", TWO) + EOS,
         message(calls=[call("get_weather", {"city": "Paris"}), call("ping")])),
        (V3_CHAT, dsml_block("function_calls", RAW) + EOS, message(calls=[call("write_file", {
            "path": "a.py", "content": ' print("<b>&amp;")\nif a < b:\n    pass\n'})])),
        (V3_CHAT, dsml_block("function_calls", TYPES) + EOS, message(calls=[call("book", {
            "n": 2, "ok": True, "no": None, "seats": ["12A", "12B"], "meta": {"a": {"b": 1.5}}})])),
        (V3_CHAT, "It is sunny." + EOS, message("It is sunny.")),
        (V3_THINK, "</think>" + dsml_block("function_calls", TWO[1:]) + EOS,
         message(calls=[call("ping")])),
        ('…\n</function_results>\n\n<think>', "Got 21.</think>It is 21 °C." + EOS,
         message("It is 21 °C.", "Got 21.")),
        ('…\n</function_results>\n\n</think>', "Sunny." + EOS, message("Sunny.")),
        # Not written by DeepSeek's encoders, accepted: a self-closing invoke.
        (V3_CHAT, f'\n\n<{D}function_calls>\n<{D}invoke name="ping"/>\n<{D}invoke name="f">\n'
         f'<{D}parameter name="a" string="true">x/></{D}parameter>\n</{D}invoke>\n'
         f'<{D}invoke name="g" />\n</{D}function_calls>' + EOS,
         message(calls=[call("ping"), call("f", {"a": "x/>"}), call("g")])),
    ],
    "deepseek_v4": [
        (V3_THINK, "Need the weather.</think>Let me look." + dsml_block("tool_calls", WEATHER)
         + EOS, message("Let me look.", "Need the weather.",
                        [call("get_weather", {"city": "Paris", "days": 3})])),
        (V3_CHAT, dsml_block("tool_calls", TWO) + EOS,
         message(calls=[call("get_weather", {"city": "Paris"}), call("ping")])),
        (V3_CHAT, dsml_block("tool_calls", RAW) + EOS, message(calls=[call("write_file", {
            "path": "a.py", "content": ' print("<b>&amp;")\nif a < b:\n    pass\n'})])),
        (V3_CHAT, "Checking." + dsml_block(" calls", TYPES, " ") + EOS, message("Checking.", calls=[
            call("book", {"n": 2, "ok": True, "no": None, "seats": ["12A", "12B"],
                          "meta": {"a": {"b": 1.5}}})])),
        (V3_THINK, "</think>" + dsml_block(" calls", TWO, " ") + EOS,
         message(calls=[call("get_weather", {"city": "Paris"}), call("ping")])),
        # Tool results are a user turn: the prompt ends with the assistant header again.
        ("<｜User｜><tool_result>21</tool_result><｜Assistant｜><think>",
         "Got 21.</think>It is 21 °C." + EOS, message("It is 21 °C.", "Got 21.")),
    ],
    "kimi_k3": [
        (K3_THINK, "Need the weather." + K3_END_THINK + xtml_response("Checking.")
         + xtml_tools([("get_weather", [("city", "string", "Paris"), ("days", "number", "3")])])
         + K3_END, message("Checking.", "Need the weather.",
                           [call("get_weather", {"city": "Paris", "days": 3})])),
        (K3_THINK, "Book it." + K3_END_THINK + xtml_response("") + xtml_tools([
            ("book", [("to", "string", " Paris\n"), ("n", "number", "2.5"),
                      ("first", "boolean", "false"), ("extras", "object", '{"meal": "veg"}'),
                      ("stops", "array", '["LYS"]'), ("note", "null", "null")]),
            ("ping", [])]) + K3_END,
         message(reasoning="Book it.", calls=[
             call("book", {"to": " Paris\n", "n": 2.5, "first": False,
                           "extras": {"meal": "veg"}, "stops": ["LYS"], "note": None}),
             call("ping")])),
        (K3_CHAT, "It is sunny.<|close|>response<|sep|>" + K3_END, message("It is sunny.")),
        (K3_THINK, K3_END_THINK + xtml_response("Hi!") + K3_END, message("Hi!")),
        (K3_CHAT, "Writing.<|close|>response<|sep|>" + xtml_tools([
            ("write", [("body", "string", 'Use </argument> and <response>, "quoted" & raw.')])])
         + K3_END, message("Writing.", calls=[
             call("write", {"body": 'Use </argument> and <response>, "quoted" & raw.'})])),
    ],
    "mistral_v3": [
        ("<s>[INST]Hi[/INST]", '[TOOL_CALLS][{"name": "get_weather", "arguments": '
         '{"city": "Paris", "days": 3}, "id": "a1b2c3d4e"}, {"name": "ping", "arguments": {}, '
         '"id": "f5g6h7i8j"}]</s>',
         message(calls=[call("get_weather", {"city": "Paris", "days": 3}), call("ping")])),
        ("<s>[INST] Hi[/INST]", '[TOOL_CALLS] [{"name": "f", "arguments": {"s": "[/INST]"}, '
         '"id": "a1b2c3d4e"}]</s>', message(calls=[call("f", {"s": "[/INST]"})])),
        ("<s>[INST] Hi[/INST]", ' It is sunny.</s>', message("It is sunny.")),
        ('[TOOL_RESULTS]{"content": 21, "call_id": "a1b2c3d4e"}[/TOOL_RESULTS]',
         "It is 21 °C.</s>", message("It is 21 °C.")),
    ],
    # GLM-5.x: the GLM-4.7 layout, read by the glm47 grammar.
    "glm47": [
        (GLM5_THINK, "The user wants the weather.</think>Checking.<tool_call>get_weather"
         "<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key>"
         "<arg_value>3</arg_value></tool_call><|observation|>",
         message("Checking.", "The user wants the weather.",
                 [call("get_weather", {"city": "Paris", "days": "3"})])),
        (GLM5_CHAT, "It is sunny.<|user|>", message("It is sunny.")),
        (GLM5_THINK, "Two.</think><tool_call>ping</tool_call><tool_call>f<arg_key>s</arg_key>"
         "<arg_value> a <b> </arg_value></tool_call><|observation|>",
         message(reasoning="Two.", calls=[call("ping"), call("f", {"s": " a <b> "})])),
    ],
    "magistral_2506": [
        ("<s>[INST]Hi[/INST]", "<think>\nTwo lookups.\n</think>\n\nChecking both.[TOOL_CALLS]"
         'get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}[TOOL_CALLS]get_weather'
         '[CALL_ID]f5g6h7i8j[ARGS]{"city": "Lyon"}</s>',
         message("Checking both.", "Two lookups.", [call("get_weather", {"city": "Paris"}),
                                                    call("get_weather", {"city": "Lyon"})])),
        ("<s>[INST]Hi[/INST]", "<think>\nEasy.\n</think>\n\nUse <think> tags.</s>",
         message("Use <think> tags.", "Easy.")),
        ("<s>[INST]Hi[/INST]", "Plain, with <think>x</think> inside.</s>",
         message("Plain, with <think>x</think> inside.")),
        ('[TOOL_RESULTS]a1b2c3d4e[TOOL_CONTENT]21[/TOOL_RESULTS]',
         "<think>It said 21.</think>It is 21 °C.</s>", message("It is 21 °C.", "It said 21.")),
    ],
}


def params():
    return [pytest.param(name, *case, id=f"{name}-{i}")
            for name, cases in CASES.items() for i, case in enumerate(cases)]


@pytest.mark.parametrize("name, prefix, output, expected", params())
def test_each_output_parses_to_its_message(name, prefix, output, expected):
    parser = compile_template(name)
    assert parser.parse_response(output, prefix=prefix) == expected
    rng = random.Random(output)
    for sizes in ([1] * len(output), [rng.randint(1, 9) for _ in output]):
        stream = parser.response_parser(prefix)
        at = 0
        for n in sizes:
            stream.feed(output[at:at + n])
            at += n
        assert stream.finalize()[0] == expected
