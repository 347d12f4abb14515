"""Each deliberate difference from transformers, with both sides pinned (docs/deviations.md)."""

from __future__ import annotations

import pytest
from transformers.utils.chat_parsing import parse_response as reference_parse

from rtcompiler.codegen import generate_module, load_parser
from rtcompiler.template import TemplateError, load_template


def test_repeats_over_a_non_list_default():
    spec = {
        "defaults": {"role": "assistant", "tool_calls": "none"},
        "start_anchor": "A",
        "fields": {"tool_calls": {"open": "<t>", "close": "</t>", "repeats": True}, "content": {}},
    }
    with pytest.raises(AttributeError):
        reference_parse("<t>x</t>", spec, prefix="")
    with pytest.raises(ValueError, match="tool_calls"):
        load_parser(load_template(spec)).parse_response("<t>x</t>", prefix="")


@pytest.mark.parametrize("spec, path", [
    ({"start_anchor": "A", "fields": {"c": {"open_pattern": "(?<=x)a"}}}, "fields.c.open_pattern"),
    ({"start_anchor": "A", "fields": {"c": {"content": "xml-inline",
      "content_args": {"tag_pattern": "(?<=x)(?P<key>a)"}}}}, "fields.c.content_args.tag_pattern"),
])
def test_unsupported_patterns_are_refused_up_front(spec, path):
    reference_parse("xa", spec, prefix="")  # the reference runs them with `regex`
    with pytest.raises(TemplateError) as caught:
        generate_module(load_template(spec))
    assert caught.value.path == path
    assert "lookbehind" in str(caught.value)


def test_json_nested_too_deeply_is_a_value_error():
    from rtcompiler.grammars import resolve_template

    deep = "[" * 5000 + "]" * 5000
    qwen3 = resolve_template("qwen3:strict")
    output = '<tool_call>\n{"name": "f", "arguments": ' + deep + "}\n</tool_call><|im_end|>"
    with pytest.raises(RecursionError):
        reference_parse(output, qwen3.raw, prefix="")
    module = load_parser(qwen3)
    with pytest.raises(ValueError, match="nested too deeply") as caught:
        module.parse_response(output, prefix="")
    assert type(caught.value) is ValueError
    parser = module.ResponseParser("")
    with pytest.raises(ValueError, match="nested too deeply"):
        for k in range(0, len(output), 7):
            parser.feed(output[k:k + 7])
        parser.finalize()
    # A text argument that the tools type as an array.
    coder = resolve_template("qwen3_coder:strict")
    output = ("<tool_call>\n<function=f>\n<parameter=a>\n" + deep
              + "\n</parameter>\n</function>\n</tool_call><|im_end|>")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "array"}}}}}]
    with pytest.raises(RecursionError):
        reference_parse(output, coder.raw, prefix="", tools=tools)
    with pytest.raises(ValueError, match="nested too deeply"):
        load_parser(coder).parse_response(output, prefix="", tools=tools)
