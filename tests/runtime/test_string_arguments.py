"""The ``string-arguments`` extension (docs/extensions.md): arguments written as a JSON
string holding a JSON object are that object.

* Its semantics, whole and streamed at every split: the object for a string that is one
  object (whitespace around it too), the string kept for anything else; a list of calls;
  tool typing after the decoding.
* Against transformers: the strict form is parsed as the reference parses it, and the
  reference refuses the template that declares it.
* The bundled grammars that opt in (Qwen3, Kimi K2).
* The template stage: what it refuses.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler import compile_template, grammars
from rtcompiler.codegen import load_parser
from rtcompiler.template import TemplateError, load_template

from ..template.reference import reference_outcome
from .test_recover import assert_everywhere

CALL = {"type": "function",
        "function": {"name": "{content.name}", "arguments": "{content.arguments}"}}
SPEC = {
    "extensions": ["string-arguments"],
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": True,
            "string_arguments": True, "transform": CALL,
        },
        "content": {"close": "<eot>", "repeats": True, "join": "\n\n"},
    },
}
MODULE = load_parser(load_template(SPEC))
STRICT = grammars.strict_spec(SPEC)


def call(name: str, arguments: Any) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def written(name: str, arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


@pytest.mark.parametrize("arguments, want", [
    ('{"city": "Paris"}', {"city": "Paris"}),
    ('\n  {"a": [1, {"b": null}]}\n', {"a": [1, {"b": None}]}),
    ("{}", {}),
    ("Paris", "Paris"),  # not JSON: the string
    ("[1, 2]", "[1, 2]"),  # JSON, not an object: the string
    ('{"a": 1', '{"a": 1'),  # cut JSON: the string
    ('"{\\"a\\": 1}"', '"{\\"a\\": 1}"'),  # one level is decoded, no more
    ({"city": "Paris"}, {"city": "Paris"}),  # an object stays one
])
def test_a_string_holding_an_object_is_that_object(arguments, want):
    text = "Sure." + written("f", arguments) + "<eot>"
    assert_everywhere(MODULE, text, {"content": "Sure.", "tool_calls": [call("f", want)]})


def test_the_strict_form_is_the_references_and_keeps_the_string():
    assert STRICT == {
        "start_anchor": "<s>",
        "fields": {
            **SPEC["fields"],
            "tool_calls": {k: v for k, v in SPEC["fields"]["tool_calls"].items()
                           if k != "string_arguments"},
        },
    }
    text = written("f", '{"x": 1}') + "<eot>"
    want = ref_parse_response(text, copy.deepcopy(STRICT), prefix="")
    assert want["tool_calls"] == [call("f", '{"x": 1}')]
    assert_everywhere(load_parser(load_template(STRICT)), text, want)
    assert_everywhere(MODULE, text, {"tool_calls": [call("f", {"x": 1})]})


def test_each_call_of_a_list_is_decoded_and_then_typed_by_the_tools():
    spec = copy.deepcopy(SPEC)
    spec["fields"]["tool_calls"].update(
        transform_each=True,
        transform={"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
    )
    module = load_parser(load_template(spec))
    body = json.dumps([{"name": "f", "arguments": '{"days": "3"}'},
                       {"name": "g", "arguments": "plain"}])
    text = f"<tool_call>{body}</tool_call><eot>"
    tools = [{"type": "function", "function": {
        "name": "f",
        "parameters": {"type": "object", "properties": {"days": {"type": "integer"}}}}}]
    message = module.parse_response(text, prefix="", tools=tools)
    assert message["tool_calls"] == [[call("f", {"days": 3}), call("g", "plain")]]
    parser = module.ResponseParser("", tools=tools)
    for ch in text:
        parser.feed(ch)
    assert parser.finalize()[0] == message


@pytest.mark.parametrize("name, prompt, output, want", [
    ("qwen3", "<|im_start|>assistant\n",
     '<tool_call>\n{"name": "f", "arguments": "{\\"q\\": \\"x\\"}"}\n</tool_call><|im_end|>',
     [call("f", {"q": "x"})]),
    ("kimi_k2", "<|im_assistant|>assistant<|im_middle|>",
     '<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>'
     '"{\\"q\\": \\"x\\"}"<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
     [call("f", {"q": "x"})]),
])
def test_the_bundled_grammars_decode_and_their_strict_forms_do_not(name, prompt, output, want):
    assert "string-arguments" in grammars.grammar(name).template.extensions
    message = compile_template(name).parse_response(output, prefix=prompt)
    assert message["tool_calls"] == want
    strict = compile_template(f"{name}:strict").parse_response(output, prefix=prompt)
    assert strict["tool_calls"][0]["function"]["arguments"] == '{"q": "x"}'


def test_it_needs_its_extension_declared():
    spec = copy.deepcopy(SPEC)
    del spec["extensions"]
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == "fields.tool_calls.string_arguments"
    assert '"extensions": ["string-arguments"]' in str(info.value)


@pytest.mark.parametrize("change, words", [
    ({"string_arguments": "yes"}, "true or false"),
    ({"transform": {"name": "{content.name}"}}, "function.arguments"),
    ({"transform": None}, "function.arguments"),
])
def test_it_is_checked(change, words):
    spec = copy.deepcopy(SPEC)
    for key, value in change.items():
        if value is None:
            del spec["fields"]["tool_calls"][key]
        else:
            spec["fields"]["tool_calls"][key] = value
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == "fields.tool_calls.string_arguments"
    assert words in str(info.value)


def test_transformers_refuses_a_template_that_declares_it():
    assert reference_outcome(SPEC).verdict == "reject"
    spec = copy.deepcopy(SPEC)
    del spec["extensions"]
    assert reference_outcome(spec).verdict == "reject"  # the key alone too
