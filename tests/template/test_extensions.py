"""rtcompiler's opt-in extensions: declared in the template, refused by transformers."""

from __future__ import annotations

import copy

import pytest

from rtcompiler import compile_template, grammars
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
    # The reference's error for a value parser it does not know: a KeyError of the name.
    with pytest.raises(KeyError) as info:
        parser.parse_response("<x>a: 1</x>", prefix=PYTHONIC["start_anchor"])
    assert info.value.args == ("pythonic",)


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


# -- typed-values -----------------------------------------------------------------------

TYPED = {
    "extensions": ["typed-values"],
    "start_anchor": "<A>",
    "fields": {
        "tool_calls": {
            "open_pattern": r'<call name="(?P<name>\w+)">',
            "close": "</call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r'<arg key="(?P<key>\w+)" type="(?P<type>\w+)">(?P<value>.*?)</arg>',
                "typed_values": {"group": "type", "parsers": {
                    "json": {"name": "json"}, "int": {"name": "int"}, "raw": None}},
            },
            "transform": {"type": "function",
                          "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<E>"},
    },
}


def typed(**content_args) -> dict:
    spec = copy.deepcopy(TYPED)
    args = spec["fields"]["tool_calls"]["content_args"]
    for key, value in content_args.items():
        if value is None:
            args.pop(key, None)
        else:
            args[key] = value
    return spec


def test_typed_values_load_when_declared():
    assert load_template(TYPED).extensions == ("typed-values",)


def test_undeclared_typed_values_name_the_key_and_what_to_add():
    spec = copy.deepcopy(TYPED)
    del spec["extensions"]
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == "fields.tool_calls.content_args.typed_values"
    assert '"extensions": ["typed-values"]' in str(info.value)
    # transformers would load this one and read every value raw, silently: that is why
    # we refuse it. With the declaration, transformers refuses it too.
    assert reference_outcome(spec).verdict == "accept"
    assert reference_outcome(TYPED).verdict == "reject"


@pytest.mark.parametrize("args, path, words", [
    ({"typed_values": "type"}, "typed_values", "an object"),
    ({"typed_values": {"group": "type", "parsers": {}, "x": 1}}, "typed_values.x", "unknown key"),
    ({"typed_values": {"group": 3, "parsers": {}}}, "typed_values.group", "name a group"),
    ({"typed_values": {"group": "kind", "parsers": {}}}, "typed_values.group", "'type'"),
    ({"typed_values": {"group": "value", "parsers": {}}}, "typed_values.group", "other than"),
    ({"typed_values": {"group": "type", "parsers": []}}, "typed_values.parsers", "an object"),
    ({"typed_values": {"group": "type", "parsers": {"a": "json"}}}, "typed_values.parsers.a",
     "value parser"),
    ({"typed_values": {"group": "type", "parsers": {"a": {"name": "pythonic"}}}},
     "typed_values.parsers.a.name", "unknown content parser"),
    ({"typed_values": {"group": "type", "parsers": {"a": {"name": "json", "args": 1}}}},
     "typed_values.parsers.a.args", "an object"),
    ({"typed_values": {"group": "type", "parsers": {}, "key_entities": {"&quot;": '"'}}},
     "typed_values.key_entities", "[entity, text] pairs"),
    ({"typed_values": {"group": "type", "parsers": {}, "key_entities": [["&amp;", "&", "x"]]}},
     "typed_values.key_entities", "[entity, text] pairs"),
    ({"typed_values": {"group": "type", "parsers": {}, "key_entities": [["", "&"]]}},
     "typed_values.key_entities", "non-empty"),
    ({"tag_pattern": None}, "typed_values", "tag_pattern"),
    ({"value_parser": {"name": "xml-inline", "args": {"typed_values": {}}}},
     "value_parser.args.typed_values", "nested"),
])
def test_typed_values_are_checked(args, path, words):
    with pytest.raises(TemplateError) as info:
        load_template(typed(**args))
    assert info.value.path == "fields.tool_calls.content_args." + path
    assert words in str(info.value)


def test_typed_values_belong_to_xml_inline_fields():
    spec = copy.deepcopy(TYPED)
    spec["fields"]["content"] = {"close": "<E>", "content": "json",
                                 "content_args": {"typed_values": {}}}
    with pytest.raises(TemplateError, match="'xml-inline' fields only") as info:
        load_template(spec)
    assert info.value.path == "fields.content.content_args.typed_values"


def test_undeclared_nested_typed_values_are_ignored_as_the_reference_ignores_them():
    spec = typed(typed_values=None,
                 value_parser={"name": "text", "args": {"typed_values": {"group": "x"}}})
    del spec["extensions"]
    assert reference_outcome(spec).verdict == "accept"
    parser = compile_template(spec)
    text = '<call name="f"><arg key="a" type="int"> 1 </arg></call><E>'
    assert parser.parse_response(text, prefix="<A>") == {
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": "1"}}}]}


def test_each_tag_is_read_by_the_parser_its_group_names():
    parser = compile_template(TYPED)
    text = ('<call name="f"><arg key="a" type="json">[1, {"b": null}]</arg>'
            '<arg key="b" type="int"> 7 </arg><arg key="c" type="raw"> 7 </arg>'
            '<arg key="d" type="other">{"x": 1}</arg></call><E>')
    want = {"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {
        "a": [1, {"b": None}], "b": 7, "c": " 7 ", "d": '{"x": 1}'}}}]}
    assert parser.parse_response(text, prefix="<A>") == want
    stream = parser.response_parser("<A>")
    for ch in text:
        stream.feed(ch)
    assert stream.finalize()[0] == want
    source = parser.source
    assert "Extensions: typed-values (rtcompiler only" in source
    assert "def parse_xml_typed" in source and "def parse_xml_inline" not in source


def test_unlisted_texts_fall_back_to_the_value_parser():
    parser = compile_template(typed(value_parser={"name": "float"}))
    text = ('<call name="f"><arg key="a" type="raw">1.5</arg>'
            '<arg key="b" type="real">1.5</arg></call><E>')
    assert parser.parse_response(text, prefix="<A>")["tool_calls"][0]["function"][
        "arguments"] == {"a": "1.5", "b": 1.5}


def test_a_typed_value_that_does_not_parse_fails_like_a_value_parser():
    parser = compile_template(TYPED)
    with pytest.raises(ValueError, match="json"):
        parser.parse_response('<call name="f"><arg key="a" type="json">[1,</arg></call>',
                              prefix="<A>")


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
    (_robust(recover=1), "fields.tool_calls.recover", "true, false or a field name"),
    (_robust(recover=""), "fields.tool_calls.recover", "true, false or a field name"),
    (_robust(close_outside_strings="yes"), "fields.tool_calls.close_outside_strings",
     'true, false or {"open"'),
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


def test_recover_may_name_the_field_that_keeps_the_text():
    spec = copy.deepcopy(ROBUST)
    spec["fields"]["content"]["open"] = "<answer>"
    with pytest.raises(TemplateError, match="needs an implicit field.*or the name of the field"):
        load_template(spec)
    spec["fields"]["tool_calls"]["recover"] = "content"
    assert load_template(spec).field("tool_calls").recover == "content"
    assert "recover_to='content'," in compile_template(spec).source
    for keeper, words in [("answer", "no field named 'answer'"),
                          ("tool_calls", "cannot keep its own")]:
        spec["fields"]["tool_calls"]["recover"] = keeper
        with pytest.raises(TemplateError, match=words) as info:
            load_template(spec)
        assert info.value.path == "fields.tool_calls.recover"
    # A keeper that recovers too could fail in turn: refused.
    spec["fields"]["tool_calls"]["recover"] = "content"
    spec["fields"]["content"]["recover"] = "tool_calls"
    with pytest.raises(TemplateError, match="'content' recovers too") as info:
        load_template(spec)
    assert info.value.path == "fields.tool_calls.recover"
    # The strict form drops the key whatever its value.
    assert "recover" not in grammars.strict_spec(spec)["fields"]["tool_calls"]


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
    assert (
        "process=_process_0, recover=\"json\", outside_strings=True, decode=_json_loads, "
        "decoded=_decoded_0,\n"
    ) in source


# -- close-outside-strings with value delimiters (XML bodies) -----------------------------

XML = {
    "extensions": ["close-outside-strings", "recover"],
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool_call>\n<function=(?P<name>[^>\n]+)>\n",
            "close_pattern": r"</tool_call>\s*", "content": "xml-inline",
            "content_args": {"tag_pattern":
                             r"<parameter=(?P<key>[^>\n]+)>\n(?P<value>.*?)\n</parameter>"},
            "repeats": True, "recover": True,
            "close_outside_strings": {"open": ["<parameter="],
                                      "close": ["</parameter>", "</function>"]},
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {"close": "<|im_end|>"},
    },
}


def _xml(spans) -> dict:
    spec = copy.deepcopy(XML)
    if spans is None:
        del spec["fields"]["tool_calls"]["close_outside_strings"]
    else:
        spec["fields"]["tool_calls"]["close_outside_strings"] = spans
    return spec


def test_value_delimiters_load_into_the_field_and_the_module():
    from rtcompiler.template.model import ValueDelimiters

    field = load_template(XML).field("tool_calls")
    assert field.close_outside_strings == ValueDelimiters(
        ("<parameter=",), ("</parameter>", "</function>"))
    # A lone string is a list of one.
    one = load_template(_xml({"open": "<v>", "close": "</v>"})).field("tool_calls")
    assert one.close_outside_strings == ValueDelimiters(("<v>",), ("</v>",))
    source = compile_template(XML).source
    assert ("outside_strings=ValueSpans.prepare(('<parameter=',), "
            "('</parameter>', '</function>')),") in source
    assert "class ValueSpans" in source
    # Only a module whose template names value delimiters carries their tracker.
    assert "class ValueSpans" not in compile_template(ROBUST).source


@pytest.mark.parametrize("spans, path, words", [
    ({"open": ["<v>"]}, ".close", "non-empty list of strings, got missing"),
    ({"open": [], "close": ["</v>"]}, ".open", "non-empty list"),
    ({"open": ["<v>", ""], "close": ["</v>"]}, ".open[1]", "non-empty string"),
    ({"open": ["<v>"], "close": [3]}, ".close[0]", "non-empty string, got"),
    ({"open": ["<v>"], "close": ["</v>"], "escape": "\\"}, "", "unknown key 'escape'"),
    ({"open": ["<v>", "|"], "close": ["|"]}, "", "'|' both begins and ends a value"),
    ({"open": ["<v>"], "close": ["</v>", "v>"]}, "", "'v>' is written inside '<v>'"),
    ({"open": ["<v>"], "close": [f"</{i}>" for i in range(65)]}, ".close",
     "at most 64 delimiters, got 65"),
    ({"open": ["<" + "v" * 300], "close": ["</v>"]}, ".open[0]", "at most 256 characters"),
])
def test_value_delimiters_are_checked(spans, path, words):
    with pytest.raises(TemplateError) as info:
        load_template(_xml(spans))
    assert info.value.path == "fields.tool_calls.close_outside_strings" + path
    assert words in str(info.value)


def test_value_delimiters_need_a_body_that_is_not_json_and_a_close():
    spec = _robust(close_outside_strings={"open": ["<v>"], "close": ["</v>"]})
    with pytest.raises(TemplateError, match="write true, not value delimiters"):
        load_template(spec)
    spec = _xml({"open": ["<v>"], "close": ["</v>"]})
    del spec["fields"]["tool_calls"]["close_pattern"]
    with pytest.raises(TemplateError, match="needs a 'close'") as info:
        load_template(spec)
    assert info.value.path == "fields.tool_calls.close_outside_strings"


def test_transformers_refuses_a_template_with_value_delimiters():
    assert reference_outcome(XML).verdict == "reject"
    spec = copy.deepcopy(XML)
    del spec["extensions"]
    assert reference_outcome(spec).verdict == "reject"
    # Without the key, the same template is one the reference takes.
    plain = _xml(None)
    del plain["extensions"]
    del plain["fields"]["tool_calls"]["recover"]
    assert reference_outcome(plain).verdict != "reject"
    assert "close_outside_strings" not in grammars.strict_spec(XML)["fields"]["tool_calls"]
