"""A typed-values key written with ``key_entities``: the export writes a parameter's name
as the parser reads it back (Kimi K3 escapes ``&`` and ``"`` in attribute values)."""

from __future__ import annotations

import lark

from rtcompiler import compile_template, grammars
from rtcompiler.export import export_grammar

TOOLS = [{"type": "function", "function": {
    "name": "set", "parameters": {"type": "object", "properties": {
        'a"b&c': {"type": "string"}}, "required": ['a"b&c']}}}]


def test_a_name_with_entities_is_written_escaped_and_parses_back():
    g = grammars.grammar("kimi_k3")
    text = export_grammar(g.template, tools=TOOLS, meta=g.meta, format="lark").text
    assert "&quot;b" in text and "&amp;c" in text  # (regex-escaped in the lark form)
    output = (
        '<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|>'
        '<|open|>tools<|sep|><|open|>call tool="set" index="1"<|sep|>'
        '<|open|>argument key="a&quot;b&amp;c" type="string"<|sep|>x<|close|>argument<|sep|>'
        '<|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>'
    )
    lark.Lark(text, parser="earley", lexer="dynamic").parse(output)
    message = compile_template(g.spec).parse_response(
        output, prefix='<|open|>message role="assistant"<|sep|><|open|>think<|sep|>',
        tools=TOOLS,
    )
    assert message["tool_calls"][0]["function"]["arguments"] == {'a"b&c': "x"}
