"""rtcompiler.hf against transformers' own tokenizer.parse_response, on the same inputs."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompiler.hf as hf

from .conftest import QWEN3_TEMPLATE, build_tokenizer

PROMPT = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
OUTPUTS = [
    "<think>\nThe user wants the weather.\n</think>\n\nIt is sunny 🙂, 21°C.<|im_end|>",
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n'
    "</tool_call><|im_end|>",
    "Bonne journée<|im_end|>",
    "<think>\ncut off mid-thou",
]


def get_weather(city: str, days: int = 1) -> str:
    """Look up the weather.

    Args:
        city: The city.
        days: How many days ahead.
    """
    return city


TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]


def ids(tokenizer, text):
    return tokenizer.encode(text, add_special_tokens=False)


def padded(tokenizer, rows, side="right"):
    width = max(len(r) for r in rows)
    pad = [tokenizer.pad_token_id]
    return [r + pad * (width - len(r)) if side == "right" else pad * (width - len(r)) + r
            for r in rows]


def test_strings_and_string_batches_parse_as_transformers_does(tokenizer):
    for text in OUTPUTS:
        assert hf.parse_response(tokenizer, text, prefix=PROMPT) == \
            tokenizer.parse_response(text, prefix=PROMPT)
    expected = tokenizer.parse_response(OUTPUTS, prefix=PROMPT)
    assert hf.parse_response(tokenizer, OUTPUTS, prefix=PROMPT) == expected
    assert isinstance(expected, list) and len(expected) == len(OUTPUTS)
    # One prefix per item, and the empty list that means "no prefix".
    prefixes = [PROMPT, "", PROMPT + "<think>\n", PROMPT]
    assert hf.parse_response(tokenizer, OUTPUTS, prefix=prefixes) == \
        tokenizer.parse_response(OUTPUTS, prefix=prefixes)
    assert hf.parse_response(tokenizer, OUTPUTS[2], prefix=[]) == \
        tokenizer.parse_response(OUTPUTS[2], prefix=[])
    assert hf.parse_response(tokenizer, [], prefix=PROMPT) == []


def test_token_ids_arrays_and_tensors_parse_as_transformers_does(tokenizer):
    rows = [ids(tokenizer, t) for t in OUTPUTS]
    prompt = ids(tokenizer, PROMPT)
    for row in rows:
        for value in (row, tuple(row), np.array(row), torch.tensor(row)):
            for prefix in (PROMPT, prompt, np.array(prompt), torch.tensor(prompt)):
                assert hf.parse_response(tokenizer, value, prefix=prefix) == \
                    tokenizer.parse_response(value, prefix=prefix)
    # Ragged rows: a list of id lists, and a list of 1-D tensors.
    for batch in (rows, [torch.tensor(r) for r in rows], [np.array(r) for r in rows]):
        assert hf.parse_response(tokenizer, batch, prefix=PROMPT) == \
            tokenizer.parse_response(batch, prefix=PROMPT)
    # Rectangular rows (no padding needed): 2-D arrays and tensors, one prefix row per item.
    same = [rows[2]] * 3
    for batch in (same, np.array(same), torch.tensor(same)):
        prefixes = torch.tensor([prompt] * 3)
        assert hf.parse_response(tokenizer, batch, prefix=prefixes) == \
            tokenizer.parse_response(batch, prefix=prefixes)
    assert hf.parse_response(tokenizer, torch.tensor(rows[0][0]), prefix="") == \
        tokenizer.parse_response(torch.tensor(rows[0][0]), prefix="")


def test_padding_is_dropped_where_transformers_parses_it_as_output():
    # The bundled qwen3 drops a stray <|endoftext|> (Qwen's pad token) from content: the
    # template as it was before that, where padding becomes text, shows what is dropped.
    template = copy.deepcopy(QWEN3_TEMPLATE)
    template["fields"]["content"]["close"] = "<|im_end|>"
    tokenizer = build_tokenizer(template)
    rows = [ids(tokenizer, t) for t in OUTPUTS]
    unpadded = tokenizer.parse_response(rows, prefix=PROMPT)
    batch = torch.tensor(padded(tokenizer, rows))
    assert hf.parse_response(tokenizer, batch, prefix=PROMPT) == unpadded
    assert hf.parse_response(tokenizer, batch.numpy(), prefix=PROMPT) == unpadded
    # transformers decodes the pad tokens into the text, and they become content (qwen3
    # keeps text after its end of turn, joined to what came before).
    theirs = tokenizer.parse_response(batch, prefix=PROMPT)
    assert theirs != unpadded
    assert theirs[2]["content"].endswith("<|endoftext|>")
    assert "<|endoftext|>" not in unpadded[2].get("content", "")
    assert hf.parse_response(tokenizer, batch, prefix=PROMPT, skip_padding=False) == theirs
    # Left-padded prompts, one per row, as a batched generate() takes them.
    prompts = [ids(tokenizer, PROMPT), ids(tokenizer, "<|im_start|>assistant\n<think>\n")]
    two = torch.tensor(padded(tokenizer, [rows[0], rows[3]]))
    left = torch.tensor(padded(tokenizer, prompts, side="left"))
    assert hf.parse_response(tokenizer, two, prefix=left) == \
        tokenizer.parse_response([rows[0], rows[3]], prefix=[PROMPT, tokenizer.decode(prompts[1])])


def test_tools_type_the_arguments_as_transformers_does(tokenizer):
    for tools in (TOOLS, [get_weather]):
        ours = hf.parse_response(tokenizer, OUTPUTS[1], prefix=PROMPT, tools=tools)
        assert ours == tokenizer.parse_response(OUTPUTS[1], prefix=PROMPT, tools=tools)
        assert ours["tool_calls"][0]["function"]["arguments"] == {"city": "Paris", "days": 3}


def test_streaming_gives_transformers_events_at_token_boundaries(tokenizer):
    for text in OUTPUTS:
        chunks, row, seen = [], ids(tokenizer, text), ""
        for i in range(1, len(row) + 1):
            decoded = tokenizer.decode(row[:i])
            if not decoded.endswith("\ufffd"):  # a character split across tokens waits
                chunks.append(decoded[len(seen):])
                seen = decoded
        for prefix in (PROMPT, ids(tokenizer, PROMPT), torch.tensor(ids(tokenizer, PROMPT)), []):
            ours = hf.get_response_parser(tokenizer, prefix=prefix, tools=TOOLS)
            theirs = tokenizer.get_response_parser(prefix=prefix, tools=TOOLS)
            assert ours.initial_events == theirs.initial_events
            for chunk in chunks:
                assert ours.feed(chunk) == theirs.feed(chunk)
            assert ours.finalize() == theirs.finalize()


def test_template_comes_from_the_tokenizer_a_grammar_or_a_schema(tokenizer):
    bare = build_tokenizer(response_template=None)
    with pytest.raises(AttributeError):
        bare.parse_response(OUTPUTS[0], prefix=PROMPT)
    with pytest.raises(AttributeError, match="grammar="):
        hf.parse_response(bare, OUTPUTS[0], prefix=PROMPT)
    expected = tokenizer.parse_response(OUTPUTS[0], prefix=PROMPT)
    assert hf.parse_response(bare, OUTPUTS[0], prefix=PROMPT, grammar="qwen3") == expected
    assert hf.parse_response(bare, OUTPUTS[0], prefix=PROMPT, schema=QWEN3_TEMPLATE) == expected
    other = {"start_anchor": "<|im_start|>assistant\n", "fields": {"content": {}}}
    assert hf.parse_response(tokenizer, OUTPUTS[2], prefix=PROMPT, schema=other) == \
        tokenizer.parse_response(OUTPUTS[2], other, prefix=PROMPT)
    with pytest.raises(ValueError, match="not both"):
        hf.compiled_parser(tokenizer, schema=other, grammar="qwen3")


def test_bad_calls_raise_what_transformers_raises(tokenizer):
    for call in (lambda f: f(OUTPUTS[0]), lambda f: f(OUTPUTS, prefix=[PROMPT, PROMPT])):
        with pytest.raises(ValueError):
            call(tokenizer.parse_response)
        with pytest.raises(ValueError):
            call(lambda *a, **k: hf.parse_response(tokenizer, *a, **k))
    with pytest.raises(ValueError):
        hf.get_response_parser(tokenizer)
    with pytest.raises(ValueError, match="not a batch"):
        hf.get_response_parser(tokenizer, prefix=torch.tensor([ids(tokenizer, PROMPT)] * 2))


def test_a_template_compiles_once_then_comes_from_the_cache(tokenizer, monkeypatch):
    compiled = []
    real = hf.load_template
    monkeypatch.setattr(hf, "load_template", lambda spec: compiled.append(spec) or real(spec))
    # A template no other test uses, so that this process has not compiled it yet.
    fresh = {"fields": {"content": {"close": "<|im_end|>"}},
             "start_anchor": "<|im_start|>assistant\n", "defaults": {"cache": "test"}}
    tok = build_tokenizer(response_template=fresh)
    first = hf.compiled_parser(tok)
    for _ in range(3):
        assert hf.parse_response(tok, OUTPUTS[2], prefix=PROMPT)["content"] == "Bonne journée"
    hf.parse_response(tok, [OUTPUTS[2]] * 5, prefix=PROMPT)
    hf.get_response_parser(tok, prefix=PROMPT)
    # The same template spelled with its keys in another order is the same template.
    reordered = dict(reversed(list(fresh.items())))
    assert hf.compiled_parser(schema=reordered) is first
    assert len(compiled) == 1


def outcome(parse, *args, **kwargs):
    try:
        return parse(*args, **kwargs)
    except Exception as e:  # the exception's type is the outcome to compare
        return type(e)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(st.integers(0, 399), max_size=40), min_size=1, max_size=4),
       prompt=st.lists(st.integers(0, 399), max_size=12))
def test_random_token_soup_gives_transformers_outcome(tokenizer, rows, prompt):
    """Any ids (special tokens anywhere, characters split across tokens, pad tokens inside
    rows), one by one and as a ragged batch: the same messages, or the same exception type."""
    rows = [[i % len(tokenizer) for i in row] for row in rows]
    for value in (rows[0], rows):
        for prefix in (prompt, PROMPT):
            theirs = outcome(tokenizer.parse_response, value, prefix=prefix)
            ours = outcome(hf.parse_response, tokenizer, value, prefix=prefix, skip_padding=False)
            assert ours == theirs
