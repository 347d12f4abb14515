"""The in-process API and the generated module take Python functions as tools."""

from __future__ import annotations

from rtcompiler import compile_template

SPEC = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True,
                       "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close": "<|im_end|>"},
    },
}
OUT = '<tool_call>{"name": "get_weather", "arguments": {"days": "3"}}</tool_call><|im_end|>'


def get_weather(city: str, days: int = 1) -> str:
    """Look up the weather.

    Args:
        city: The city.
        days: How many days ahead.
    """
    return city


def test_functions_are_converted_like_transformers_does():
    parser = compile_template(SPEC)
    message = parser.parse_response(OUT, prefix="", tools=[get_weather])
    assert message["tool_calls"][0]["function"]["arguments"] == {"days": 3}
    stream = parser.response_parser("", tools=[get_weather])
    stream.feed(OUT)
    assert stream.finalize()[0] == message


def test_the_generated_module_converts_functions_itself():
    module = compile_template(SPEC).module
    message = module.parse_response(OUT, prefix="", tools=[get_weather])
    assert message["tool_calls"][0]["function"]["arguments"] == {"days": 3}


def test_compile_template_accepts_a_bundled_grammar_name():
    parser = compile_template("qwen3")
    message = parser.parse_response("Hi<|im_end|>", prefix="<|im_start|>assistant\n")
    assert message["content"] == "Hi"
