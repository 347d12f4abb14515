"""Every bundled grammar's export, in both forms, against SmolLM2's tokenizer (issue 17).

- The lark form loads in ``lark.Lark`` (in at most 200 expanded rules); the llguidance form
  passes llguidance's validation with SmolLM2's tokenizer, for every tool choice, bounded
  or not.
- What ``rtc check``'s strategies render through the grammar's chat template is accepted:
  lark parses it, and llguidance's matcher takes it token by token. Outputs holding
  characters SmolLM2 cannot write are counted apart, never taken as passes.
- What is generated under the bounded grammar -- random walks through llguidance's
  matcher, each token drawn among those its mask allows (sampling without a model) --
  parses without error, whole and streamed token by token alike, and its calls name
  offered tools with arguments valid against their schemas.
"""

from __future__ import annotations

import json
import random

import jsonschema
import lark
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtcompiler import grammars

from ..roundtrip.models_extra import require
from .helpers import encodable, family, llg_accepts, llg_tokenizer, random_walk, streamed

NAMES = grammars.names()
CHOICES = ("auto", "required", "none")
RENDERED = 24  # rendered outputs per grammar
WALKS = 6  # random walks per grammar and tool choice


@pytest.fixture(autouse=True)
def models_extra():
    # SmolLM2's tokenizer (transformers, gguf on first use) and llguidance's matcher.
    require("llguidance", "transformers", "gguf", "accelerate")


@pytest.mark.parametrize("name", NAMES)
def test_both_forms_load(name):
    from llguidance import LLMatcher

    f = family(name)
    for bounded in (False, True):
        parser = lark.Lark(f.export("lark", bounded=bounded).text, parser="earley",
                           lexer="dynamic")
        # Lark expands inline groups into their rule's alternatives; nested ones multiply
        # (phi4_mini's bounded call list once made 24,000 and took minutes to load).
        assert len(parser.rules) <= 200, (bounded, len(parser.rules))
        for choice in CHOICES + (f.tools[0]["function"]["name"],):
            if choice != "auto" and "tool_calls" not in {x.name for x in f.template.fields}:
                continue
            text = f.export("llguidance", tool_choice=choice, bounded=bounded).text
            error = LLMatcher.validate_grammar(LLMatcher.grammar_from_lark(text),
                                               llg_tokenizer())
            assert error == "", f"{choice}, bounded={bounded}: {error}\n{text}"


@pytest.mark.parametrize("name", NAMES)
def test_rendered_outputs_are_accepted(name):
    f = family(name)
    lark_parser = lark.Lark(f.export("lark").text, parser="earley", lexer="dynamic")
    llg_text = f.export("llguidance").text
    outcome = {"checked": 0, "unwritable": 0, "refused": 0}

    @settings(max_examples=RENDERED, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(f.messages())
    def accepted(message):
        rendered = f.render(message)
        if rendered is None:
            outcome["refused"] += 1
            return
        prompt, output = rendered
        assert prompt == f.prompt  # the prompt the grammar starts from
        try:
            lark_parser.parse(output)
        except lark.exceptions.LarkError as e:
            raise AssertionError(f"lark rejects {output!r}: {e}") from None
        if not encodable(output):
            outcome["unwritable"] += 1
            return
        refusal = llg_accepts(llg_text, output)
        assert refusal is None, f"llguidance rejects {output!r}: {refusal}"
        outcome["checked"] += 1

    accepted()
    # The outputs SmolLM2 cannot write are set aside, not passed: enough must remain.
    assert outcome["checked"] >= RENDERED // 4, outcome


@pytest.mark.parametrize("choice", ["auto", "required", "none", "named"])
@pytest.mark.parametrize("name", NAMES)
def test_generated_outputs_parse(name, choice):
    f = family(name)
    has_calls = "tool_calls" in {x.name for x in f.template.fields}
    if choice != "auto" and not has_calls:
        return  # the template writes no call: only "auto" exists (test_both_forms_load)
    chosen = f.tools[0]["function"]["name"] if choice == "named" else choice
    text = f.export("llguidance", tool_choice=chosen, bounded=True).text
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in f.tools}
    prefix = f.prompt
    parser = f.parser
    calls_seen = []

    @settings(max_examples=WALKS, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 2**32 - 1))
    def parses(seed):
        walk = random_walk(text, random.Random(seed))
        assert walk.finished, f"the bounded grammar did not finish: {walk.text!r}"
        whole = parser.parse_response(walk.text, prefix=prefix, tools=f.tools)
        assert streamed(parser, prefix, f.tools, walk.ids) == whole, walk.text
        calls = whole.get("tool_calls") or []
        for call in calls:
            fn = call["function"]
            assert fn["name"] in offered, (walk.text, fn)
            if choice == "named":
                assert fn["name"] == chosen
            try:
                jsonschema.validate(fn["arguments"], offered[fn["name"]])
            except jsonschema.ValidationError as e:
                raise AssertionError(f"{walk.text!r}: {e.message}") from None
        if choice in ("required", "named"):
            assert calls, walk.text
        if choice == "none":
            assert not calls, walk.text
        calls_seen.extend(calls)

    parses()
    if choice in ("required", "named"):
        assert calls_seen
    print(json.dumps({"grammar": name, "choice": choice, "calls": len(calls_seen)}))


WEATHER = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "maxLength": 12},
        "days": {"type": "integer", "minimum": -999, "maximum": 999},
        "extra": {"type": "object", "maxProperties": 2, "additionalProperties": {
            "anyOf": [{"type": "number", "minimum": -9, "maximum": 9}, {"type": "boolean"}]}}},
        "required": ["city", "days", "extra"], "additionalProperties": False}}}]


@pytest.mark.parametrize("name", NAMES)
def test_a_real_tool_is_matched(name):
    """A name longer than one character, with bounded parameters: the delimiter that
    captures it must not keep its own match out of the text before it (glm45's
    ``<tool_call>\\s*[^\\s<]+`` did, and no string matched the grammar: llguidance's matcher
    ran out of fuel proving it), and its random walks' arguments are valid against the
    tool's schema."""
    from llguidance import LLMatcher

    from rtcompiler.export import Bounds, export_grammar

    from .helpers import special_tokens

    f = family(name)
    has_calls = "tool_calls" in {x.name for x in f.template.fields}
    for choice in ("auto", "required") if has_calls else ("auto",):
        text = export_grammar(f.template, tools=WEATHER, tool_choice=choice,
                              format="llguidance", meta=f.meta, name=name, bounds=Bounds(),
                              special_tokens=special_tokens()).text
        matcher = LLMatcher(llg_tokenizer(), LLMatcher.grammar_from_lark(text), log_level=0)
        assert not matcher.is_error(), f"{choice}: {matcher.get_error()}"
        for seed in range(3):
            walk = random_walk(text, random.Random(seed))
            assert walk.finished, walk.text
            whole = f.parser.parse_response(
                walk.text, prefix=f.meta.get("generation_prompt", ""), tools=WEATHER)
            calls = whole.get("tool_calls") or []
            if choice == "required":
                assert calls, walk.text
            for call in calls:
                # Also in the syntaxes the exporter writes itself (Gemma 4's, pythonic),
                # where maxLength, ranges and additionalProperties once went unenforced.
                assert call["function"]["name"] == "get_weather", walk.text
                try:
                    jsonschema.validate(call["function"]["arguments"],
                                        WEATHER[0]["function"]["parameters"])
                except jsonschema.ValidationError as e:
                    raise AssertionError(f"{walk.text!r}: {e.message}") from None


def test_values_of_any_type_compile_in_llguidance():
    """An anyOf, allOf or patternProperties meeting a value of any type: llguidance's schema
    compiler gave up on the recursive definition ("Schema intersection stack level
    exceeded"); nested a bounded number of containers deep, it compiles."""
    from llguidance import LLMatcher

    from rtcompiler.export import export_grammar

    f = family("qwen3")
    for params in (
            {"type": "object", "properties": {"x": {"anyOf": [{"type": "object"},
                                                               {"type": "array"}]}}},
            {"type": "object", "properties": {"x": {"allOf": [{}, {"type": "array"}]}}},
            {"type": "object", "properties": {"x": {"allOf": [
                {"type": "object"}, {"additionalProperties": {}}]}}}):
        tools = [{"type": "function", "function": {"name": "t", "parameters": params}}]
        text = export_grammar(f.template, tools=tools, format="llguidance", meta=f.meta,
                              name="qwen3", prefix=f.prompt).text
        error = LLMatcher.validate_grammar(LLMatcher.grammar_from_lark(text), llg_tokenizer())
        assert error == "", f"{params}: {error}"


def test_the_bounded_llguidance_form_masks_a_parameterless_qwen3_coder_call():
    """Each token masked, as a sampler does: Qwen3-Coder's bounded content once kept out
    ``\\s*<function=[^>\\n]+>\\n`` beside ``<function=``, and after ``<tool_call>\\n<function``
    llguidance's lexer gave up ("too many expressions constructed"), leaving only the end of
    turn to write."""
    import numpy as np
    from llguidance import LLMatcher
    from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask

    from rtcompiler.export import Bounds, export_grammar

    from .helpers import hf_tokenizer, special_tokens

    f = family("qwen3_coder")
    tools = [{"type": "function", "function": {
        "name": "o9", "description": "The o9 tool.",
        "parameters": {"type": "object", "properties": {}, "required": [],
                       "additionalProperties": False}}}]
    text = export_grammar(f.template, tools=tools, tool_choice="required", format="llguidance",
                          prefix="<|im_start|>assistant\n<think>\n",
                          special_tokens=special_tokens(),
                          bounds=Bounds(max_text=24, max_calls=1), meta=f.meta,
                          name="qwen3_coder").text
    tok = hf_tokenizer()
    matcher = LLMatcher(llg_tokenizer(), LLMatcher.grammar_from_lark(text), log_level=0)
    mask = allocate_token_bitmask(1, llg_tokenizer().vocab_size)
    # (The grammar writes the think block's close first: the bundled form reads a call
    # written inside it too, with yield, but the generation grammar writes the turn the
    # chat template writes.)
    for token in tok.encode("</think>\n\n<tool_call>\n<function=o9>\n</tool_call><|im_end|>",
                            add_special_tokens=False):
        fill_next_token_bitmask(matcher, mask, 0)
        assert matcher.get_error() == ""
        allowed = np.unpackbits(mask[0].view(np.uint8), bitorder="little")
        assert allowed[token], tok.decode([token])
        assert matcher.consume_token(token)
    assert matcher.is_accepting()


@pytest.mark.parametrize("name", ["qwen3", "qwen3_coder"])
def test_reasoning_that_yields_keeps_the_call_open_out_of_its_text(name):
    """The bundled forms read a call written in the think block as a call (yield), so the
    exported reasoning text may not hold its open: SmolLM2 once wrote
    ``<tool_call>\\n<function=fn</think>\\n`` there as reasoning, which the parser read as a
    call named ``fn</think``. Text without the open is still reasoning."""
    f = family(name)
    lark_parser = lark.Lark(f.export("lark").text, parser="earley", lexer="dynamic")
    call = {"qwen3": '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>',
            "qwen3_coder": "<tool_call>\n<function=f>\n</function>\n</tool_call>"}[name]
    think = "" if f.prompt.endswith("<think>\n") else "<think>\n"  # (the prompt opens it)
    lark_parser.parse(f"{think}plan, then answer\n</think>\n\nOK<|im_end|>")
    held = f"{think}plan {call} more\n</think>\n\nOK<|im_end|>"
    with pytest.raises(lark.exceptions.LarkError):
        lark_parser.parse(held)
    assert llg_accepts(f.export("llguidance").text, held) is not None
