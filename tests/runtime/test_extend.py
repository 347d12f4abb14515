"""The ``extend`` extension (docs/extensions.md): a later block of calls adds its calls.

* Its semantics, whole and streamed at every split: every block's calls, in order; one
  block gives the reference's message; a failed block adds nothing; a default list is
  extended, never changed in place.
* Against transformers: the strict form (the template without ``extend``) is parsed as
  the reference parses it, and the reference refuses the template that declares it.
* The bundled grammar that opts in (Command R7B's action blocks), and the OpenAI deltas a
  client accumulates: both blocks' calls, numbered in order.
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
from rtcompiler.openai import DeltaStream
from rtcompiler.template import TemplateError, load_template

from ..template.reference import reference_outcome
from .test_recover import assert_everywhere, run

CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
SPEC = {
    "extensions": ["recover", "extend"],
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open": "<calls>", "close": "</calls>", "content": "json", "recover": True,
            "extend": True, "transform_each": True, "transform": CALL,
        },
        "content": {"close": "<eot>", "repeats": True, "join": "\n\n"},
    },
}
MODULE = load_parser(load_template(SPEC))
STRICT = grammars.strict_spec(SPEC)
STRICT_MODULE = load_parser(load_template(STRICT))


def call(name: str, **arguments: Any) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def block(*calls: tuple[str, dict]) -> str:
    return "<calls>" + json.dumps([{"name": n, "arguments": a} for n, a in calls]) + "</calls>"


# -- semantics ------------------------------------------------------------------------


def test_every_blocks_calls_are_kept_in_order():
    text = (f"A{block(('f', {'x': 1}), ('g', {}))}B{block(('h', {'y': [1, 2]}))}"
            f"{block(('i', {}))}C<eot>")
    assert_everywhere(MODULE, text, {
        "content": "A\n\nB\n\nC",
        "tool_calls": [call("f", x=1), call("g"), call("h", y=[1, 2]), call("i")],
    })


def test_one_block_gives_the_references_message():
    text = f"A{block(('f', {'x': 1}), ('g', {}))}B<eot>"
    want = ref_parse_response(text, copy.deepcopy(STRICT_NO_RECOVER), prefix="<s>")
    assert want["tool_calls"] == [call("f", x=1), call("g")]
    assert_everywhere(MODULE, text, want, prefix="<s>")


def test_without_extend_a_later_block_replaces_the_first_as_in_the_reference():
    text = f"{block(('f', {}))}{block(('g', {}))}<eot>"
    want = ref_parse_response(text, copy.deepcopy(STRICT_NO_RECOVER), prefix="<s>")
    assert want["tool_calls"] == [call("g")]
    assert_everywhere(STRICT_MODULE, text, want, prefix="<s>")
    assert_everywhere(MODULE, text, {"tool_calls": [call("f"), call("g")]}, prefix="<s>")


def test_a_failed_block_adds_nothing_and_keeps_its_text():
    text = f"{block(('f', {}))}<calls>[{{\"name\": \"g\"</calls>{block(('h', {}))}<eot>"
    assert_everywhere(MODULE, text, {
        "tool_calls": [call("f"), call("h")], "content": '[{"name": "g"',
    })


def test_events_carry_each_blocks_own_list():
    text = f"{block(('f', {}))}{block(('g', {}))}<eot>"
    message, events = run(MODULE, text, list(text))
    closes = [e["value"] for e in events
              if e["type"] == "region_close" and e["field"] == "tool_calls"]
    assert closes == [[call("f")], [call("g")]]
    assert message["tool_calls"] == [call("f"), call("g")]


def test_a_default_list_is_extended_and_never_changed_in_place():
    spec = copy.deepcopy(SPEC)
    spec["defaults"] = {"tool_calls": [call("d")]}
    module = load_parser(load_template(spec))
    text = f"{block(('f', {}))}{block(('g', {}))}<eot>"
    assert_everywhere(module, text, {"tool_calls": [call("d"), call("f"), call("g")]})
    assert module.parse_response("x<eot>", prefix="") == {"tool_calls": [call("d")], "content": "x"}


# -- the bundled grammars ---------------------------------------------------------------

R7B_PROMPT = ("<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hi<|END_OF_TURN_TOKEN|>"
              "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>")
R7B = ('<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {}}]'
       '<|END_ACTION|><|START_ACTION|>[{"tool_call_id": "1", "tool_name": "g", '
       '"parameters": {"a": 1}}]<|END_ACTION|><|END_OF_TURN_TOKEN|>')
@pytest.mark.parametrize("name, prompt, output, want", [
    ("command_r7b", R7B_PROMPT, R7B, {"tool_calls": [call("f"), call("g", a=1)]}),
])
def test_the_bundled_grammar_keeps_every_block_and_deltas_number_them_in_order(
    name, prompt, output, want
):
    module = compile_template(name).module
    message = {"role": "assistant", **want}
    assert_everywhere(module, output, message, prefix=prompt)
    strict = compile_template(f"{name}:strict").parse_response(output, prefix=prompt)
    assert strict["tool_calls"] == want["tool_calls"][-len(strict["tool_calls"]):]
    assert len(strict["tool_calls"]) < len(want["tool_calls"])  # the last block only
    stream = DeltaStream(name, prompt, call_id=lambda i: f"call_{i}")
    deltas = list(stream.initial_deltas)
    for ch in output:
        deltas += stream.feed(ch)
    deltas += stream.finish()
    headers = [(c["index"], c["function"]["name"]) for d in deltas
               for c in d.get("tool_calls", []) if "name" in c.get("function", {})]
    assert headers == [(i, c["function"]["name"]) for i, c in enumerate(want["tool_calls"])]
    assert stream.message["tool_calls"] == want["tool_calls"]


# -- the template stage -----------------------------------------------------------------

STRICT_NO_RECOVER = {
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {"open": "<calls>", "close": "</calls>", "content": "json",
                       "transform_each": True, "transform": CALL},
        "content": {"close": "<eot>", "repeats": True, "join": "\n\n"},
    },
}


def _with(**changes: Any) -> dict:
    spec = copy.deepcopy(SPEC)
    for key, value in changes.items():
        if value is None:
            spec["fields"]["tool_calls"].pop(key, None)
        else:
            spec["fields"]["tool_calls"][key] = value
    return spec


def test_extend_loads_into_the_field_and_the_strict_form_drops_it():
    assert load_template(SPEC).field("tool_calls").extend is True
    assert "extend" not in STRICT["fields"]["tool_calls"]
    assert "extensions" not in STRICT  # both are robustness extensions
    assert STRICT == {**STRICT_NO_RECOVER, "fields": {
        **STRICT_NO_RECOVER["fields"],
        "tool_calls": STRICT_NO_RECOVER["fields"]["tool_calls"]}}


def test_extend_needs_its_extension_declared():
    spec = copy.deepcopy(SPEC)
    spec["extensions"].remove("extend")
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == "fields.tool_calls.extend"
    assert '"extensions": ["extend"]' in str(info.value)


@pytest.mark.parametrize("spec, words", [
    (_with(extend=1), "true or false"),
    (_with(transform_each=None), "'transform_each'"),
    (_with(repeats=True), "drop 'repeats'"),
])
def test_extend_is_checked(spec, words):
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == "fields.tool_calls.extend"
    assert words in str(info.value)


def test_the_implicit_field_cannot_extend():
    spec = copy.deepcopy(SPEC)
    spec["fields"]["content"].update(
        transform_each=True, transform=CALL, content="json", extend=True)
    del spec["fields"]["content"]["repeats"], spec["fields"]["content"]["join"]
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert info.value.path == "fields.content.extend"
    assert "implicit" in str(info.value)


def test_transformers_refuses_an_extending_template():
    spec = copy.deepcopy(SPEC)
    spec["extensions"] = ["extend"]
    del spec["fields"]["tool_calls"]["recover"]
    assert load_template(spec).extensions == ("extend",)
    assert reference_outcome(spec).verdict == "reject"
    del spec["extensions"]
    assert reference_outcome(spec).verdict == "reject"
