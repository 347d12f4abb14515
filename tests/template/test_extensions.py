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


# -- the robustness extensions (recover, close-outside-strings) ---------------------------

ROBUST = {
    "extensions": ["recover", "close-outside-strings"],
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>", "close_pattern": r"</tool_call>\s*", "content": "json",
            "repeats": True, "recover": True, "close_outside_strings": True,
        },
        "content": {"close": "<|im_end|>"},
    },
}


def _robust(**changes) -> dict:
    spec = copy.deepcopy(ROBUST)
    for key, value in changes.items():
        if value is None:
            spec["fields"]["tool_calls"].pop(key, None)
        else:
            spec["fields"]["tool_calls"][key] = value
    return spec


def test_robustness_keys_load_into_the_field():
    field = load_template(ROBUST).field("tool_calls")
    assert (field.recover, field.close_outside_strings) == (True, True)
    assert load_template(ROBUST).extensions == ("close-outside-strings", "recover")


@pytest.mark.parametrize("extension, key", [
    ("recover", "recover"), ("close-outside-strings", "close_outside_strings"),
])
def test_a_robustness_key_needs_its_extension_declared(extension, key):
    spec = copy.deepcopy(ROBUST)
    spec["extensions"].remove(extension)
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == f"fields.tool_calls.{key}"
    assert f'"extensions": ["{extension}"]' in str(info.value)


@pytest.mark.parametrize("spec, path, words", [
    (_robust(recover=1), "fields.tool_calls.recover", "true or false"),
    (_robust(close_outside_strings="yes"), "fields.tool_calls.close_outside_strings",
     "true or false"),
    (_robust(content="text"), "fields.tool_calls.close_outside_strings", "'json'"),
    (_robust(content_args={"string_delims": [["'", "'"]]}),
     "fields.tool_calls.close_outside_strings", "string_delims"),
    (_robust(close_pattern='</tool_call>"?'), "fields.tool_calls.close_pattern", "consume"),
    (_robust(close_pattern=None, close="\\end"), "fields.tool_calls.close", "consume"),
    (_robust(close_pattern=None), "fields.tool_calls.close_outside_strings", "needs a 'close'"),
])
def test_robustness_keys_are_checked(spec, path, words):
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == path
    assert words in str(info.value)


def test_a_lookahead_may_read_a_quote():
    # llama3_json's close looks ahead at the next call's '{"name"': read, not consumed.
    load_template(_robust(close_pattern=r'</tool_call>|(?=;\s*\{\s*"name")'))


def test_recover_needs_an_implicit_field_and_an_explicit_one():
    spec = copy.deepcopy(ROBUST)
    del spec["fields"]["content"]
    with pytest.raises(TemplateError, match="needs an implicit field") as info:
        load_template(spec)
    assert info.value.path == "fields.tool_calls.recover"
    spec = copy.deepcopy(ROBUST)
    spec["fields"]["content"]["recover"] = True
    with pytest.raises(TemplateError, match="implicit field cannot recover") as info:
        load_template(spec)
    assert info.value.path == "fields.content.recover"


@pytest.mark.parametrize("extensions", [["recover"], ["close-outside-strings"]])
def test_transformers_refuses_a_robust_template(extensions):
    spec = copy.deepcopy(ROBUST)
    spec["extensions"] = extensions
    for key in ("recover", "close_outside_strings"):
        if key.replace("_", "-") not in extensions and key not in extensions:
            del spec["fields"]["tool_calls"][key]
    assert load_template(spec).extensions == tuple(extensions)
    assert reference_outcome(spec).verdict == "reject"
    # Without the top-level key, the reference refuses the unknown field key instead.
    del spec["extensions"]
    assert reference_outcome(spec).verdict == "reject"


def test_the_generated_module_names_the_robustness_extensions():
    source = compile_template(ROBUST).source
    assert "Extensions: close-outside-strings, recover (rtcompiler only" in source
    assert "recover=True, outside_strings=True)" in source
