"""Landmarks when one delimiter's literal begins another's.

A whole-text parse walks from landmark to landmark (ResponseStream.walk), one stdlib
search for every delimiter's literal. gpt_oss reads text outside its channel messages as
content, so its content's close holds a bare ``<|channel|>`` and ``<|start|>`` beside the
headers that open its reasoning and calls (``<|channel|>analysis<|message|>``,
``<|start|>assistant to=functions.``). The longer literals are found by the shorter one's
landmark; at such a landmark a delimiter none of whose literals stands there is not tried
(no failed stdlib match), and a fixed delimiter's literal must be a landmark itself.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import ResponseParser as RefParser
from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler import grammars
from rtcompiler.codegen import load_parser
from rtcompiler.template import load_template

PREFIX = "<|start|>user<|message|>Hi<|end|><|start|>assistant"
ROBUST = load_parser(grammars.grammar("gpt_oss").template)
STRICT_SPEC = grammars.grammar("gpt_oss:strict").spec
STRICT = load_parser(load_template(STRICT_SPEC))


def _message(r: random.Random) -> str:
    roll = r.random()
    words = " ".join(r.choice(["sun", "rain", "Paris", "it", "is", "<", "|"]) for _ in range(40))
    if roll < 0.3:
        return f"<|channel|>analysis<|message|>{words}<|end|>"
    if roll < 0.6:
        return f"<|channel|>final<|message|>{words}<|end|>"
    if roll < 0.8:
        return (f"<|channel|>commentary to=functions.f <|constrain|>json<|message|>"
                f'{{"q": "{words}"}}<|call|>')
    return " to=functions.g<|channel|>commentary json<|message|>{}<|call|>"


def _turn(n: int, seed: int = 0) -> str:
    r = random.Random(seed)
    return "<|start|>assistant".join(_message(r) for _ in range(n))


def test_gpt_oss_is_walked_with_the_shorter_landmarks():
    table = ROBUST.TABLE
    assert table.landmarks is not None
    assert table.landmark_of["<|channel|>analysis"] == "<|channel|>"
    assert table.landmark_of["<|start|>assistant to=functions."] == "<|start|>"
    assert "<|channel|>" in table.walks["content"]
    assert table.landmarks.pattern.count("channel") == 1  # one landmark, not three


@pytest.mark.parametrize("module", [ROBUST, STRICT], ids=["robust", "strict"])
def test_no_stdlib_match_fails_where_its_literal_is_not(module):
    # Every "<|channel|>" of a final message is a landmark of the reasoning's and the
    # calls' opens too; trying their forms there would fail, and past _WHOLE_FAILURES
    # failures the walk hands the rest of the text to the scanners.
    per_size = []
    for n in (20, 80, 320):
        text = _turn(n)
        stream = module.ResponseStream(module.TABLE, PREFIX)
        message = stream.parse_whole(text)
        parser = module.ResponseParser(PREFIX)
        parser.feed(text)
        assert message == parser.finalize()[0]
        assert stream.failures == 0
        per_size.append((stream.steps / len(text), (stream.searched + stream.examined) / len(text)))
    assert max(s for s, _ in per_size) <= 0.05, per_size
    assert max(e for _, e in per_size) <= 3, per_size
    assert per_size[2][1] <= per_size[1][1] * 1.1 + 0.1, per_size


def test_a_fixed_delimiter_must_be_its_own_landmark():
    def landmarks(fields):
        spec = {"start_anchor": "<s>", "fields": {**fields, "content": {}}}
        return load_parser(load_template(spec)).TABLE.landmarks

    # "<|c|>z" (fixed) would be found by the pattern's "<|c|>": the walk would take the
    # landmark for its match.
    assert landmarks({
        "x": {"open": "<|c|>z", "close": "<|e|>"},
        "y": {"open_pattern": "<\\|c\\|>[a-y]+", "close": "<|e|>"},
    }) is None
    # The other way round it is walked: the fixed literal is the landmark.
    assert landmarks({
        "x": {"open": "<|c|>", "close": "<|e|>"},
        "y": {"open_pattern": "<\\|c\\|>z[a-y]*", "close": "<|e|>"},
    }) is not None


TOKENS = [
    "<|channel|>", "analysis", "final", "commentary", "––commentary", " to=functions.f",
    " to=browser.search", "<|message|>", "<|end|>", "<|return|>", "<|call|>", "<|start|>",
    "assistant", "<|constrain|>", "json", " ", '{"a": 1}', "{", "hi", "?", "\n",
]


def _outcome(run):
    try:
        return "message", json.dumps(run(), sort_keys=True)
    except ValueError as e:
        return "error", type(e).__name__


def _fed(parser, text):
    for ch in text:
        parser.feed(ch)
    return parser.finalize()[0]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=14).map("".join))
def test_the_strict_form_is_the_reference_whole_and_fed(text):
    expected = _outcome(lambda: ref_parse_response(text, STRICT_SPEC, prefix=PREFIX))
    assert _outcome(lambda: STRICT.parse_response(text, prefix=PREFIX)) == expected
    assert _outcome(lambda: _fed(STRICT.ResponseParser(PREFIX), text)) == _outcome(
        lambda: _fed(RefParser(STRICT_SPEC, prefix=PREFIX), text)
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=14).map("".join), st.data())
def test_the_robust_form_streams_as_it_parses_whole(text, data):
    whole = _outcome(lambda: ROBUST.parse_response(text, prefix=PREFIX))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]

    def fed():
        parser = ROBUST.ResponseParser(PREFIX)
        for piece in pieces:
            parser.feed(piece)
        return parser.finalize()[0]

    assert _outcome(fed) == whole
    assert whole[0] == "message"  # the robust form keeps every message
