"""rtcompiler's opt-in extensions: declared in the template, refused by transformers."""

from __future__ import annotations

import copy

import pytest

from rtcompiler import compile_template
from rtcompiler.template import TemplateError, load_template

from .reference import reference_outcome

PYTHONIC = {
    "extensions": ["pythonic"],
    "start_anchor": "<|header_start|>assistant<|header_end|>\n\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"^\s*(?=\[\s*[A-Za-z_][\w.]*\()",
            "close": ["<|eot|>"],
            "content": "pythonic",
            "transform_each": True,
            "transform": {"type": "function",
                          "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"close": ["<|eot|>"]},
    },
}


def without_extensions() -> dict:
    spec = copy.deepcopy(PYTHONIC)
    del spec["extensions"]
    return spec


def test_a_declared_extension_loads_and_is_recorded():
    assert load_template(PYTHONIC).extensions == ("pythonic",)


def test_an_undeclared_extension_names_the_field_and_what_to_add():
    with pytest.raises(TemplateError) as info:
        load_template(without_extensions())
    assert info.value.path == "fields.tool_calls.content"
    assert '"extensions": ["pythonic"]' in str(info.value)


@pytest.mark.parametrize("value, path", [
    (["pythonic", "telepathy"], "extensions[1]"),
    ("pythonic", "extensions"),
    ([1], "extensions"),
])
def test_bad_extension_lists(value, path):
    spec = {**PYTHONIC, "extensions": value}
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == path


def test_pythonic_is_not_a_value_parser():
    spec = copy.deepcopy(PYTHONIC)
    spec["fields"]["content"] = {
        "open": "<x>", "close": "</x>", "content": "kv-lines",
        "content_args": {"value_parser": {"name": "pythonic"}},
    }
    del spec["fields"]["tool_calls"]["open_pattern"]
    spec["fields"]["tool_calls"]["open"] = "["
    parser = compile_template(spec)
    with pytest.raises(KeyError, match="unknown content parser 'pythonic'"):
        parser.parse_response("<x>a: 1</x>", prefix=PYTHONIC["start_anchor"])


def test_transformers_refuses_both_forms():
    # With the key, the reference rejects the unknown top-level key; without it, the
    # unknown content parser. It never parses such a template differently.
    assert reference_outcome(PYTHONIC).verdict == "reject"
    assert reference_outcome(without_extensions()).verdict == "reject"


def test_the_generated_module_says_it_needs_rtcompiler():
    source = compile_template(PYTHONIC).source
    assert "Extensions: pythonic (rtcompiler only" in source
    assert "import ast as _ast" in source
    plain = compile_template({"start_anchor": "a", "fields": {"content": {}}}).source
    assert "Extensions" not in plain and "_ast" not in plain


def test_a_pythonic_template_parses_streams_and_types():
    parser = compile_template(PYTHONIC)
    prefix = PYTHONIC["start_anchor"]
    text = '[get_weather(city="Paris", days=3), ping()]<|eot|>'
    want = {"tool_calls": [
        {"type": "function", "function": {"name": "get_weather",
                                          "arguments": {"city": "Paris", "days": 3}}},
        {"type": "function", "function": {"name": "ping", "arguments": {}}},
    ]}
    assert parser.parse_response(text, prefix=prefix) == want
    stream = parser.response_parser(prefix)
    for ch in text:
        stream.feed(ch)
    assert stream.finalize()[0] == want
    assert parser.parse_response("Plain [answer](x).<|eot|>", prefix=prefix) == {
        "content": "Plain [answer](x)."}
