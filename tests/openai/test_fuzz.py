"""Tool-call bodies written every way a model might: the stream agrees with the parser.

Random JSON values are written in random styles (spacing, escapes, key order
kept) -- and for Gemma 4 in its near-JSON (bare keys, ``<|"|>`` strings) mixed
with plain JSON -- then fed in random chunks. Whenever the parser accepts the
body, the arguments streamed must be exactly ``json.dumps`` of what it parsed;
when it refuses it, the stream raises what ``parse_response`` raises.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtcompiler.openai import DeltaStream
from rtcompiler.roundtrip.strategies import chunkings

from .helpers import grammar

KEYS = st.sampled_from(["a", "b", "key_1", "é", "x y", "a,b:c", "{k:", "", "名"])
STRINGS = st.text(st.sampled_from(list('ab ,:{}[]"\\/\n\té😀\u2028<|>')), max_size=10)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                    st.floats(allow_nan=False, allow_infinity=False), STRINGS)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)), max_leaves=8)


@st.composite
def written(draw: Any, value: Any, near: bool) -> str:
    """``value`` as JSON text in a style drawn for each part."""
    space = draw(st.sampled_from(["", " ", "\n  "]))
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            bare = near and draw(st.booleans()) and key.isidentifier()
            k = key if bare else draw(written(key, near))
            parts.append(f"{k}{space}:{space}{draw(written(item, near))}")
        return "{" + space + ("," + space).join(parts) + "}"
    if isinstance(value, list):
        return "[" + ("," + space).join(draw(written(item, near)) for item in value) + "]"
    if isinstance(value, str) and near and draw(st.booleans()) and '<|"|>' not in value:
        return '<|"|>' + value + '<|"|>'
    return json.dumps(value, ensure_ascii=draw(st.booleans()))


def body_of(near: bool) -> st.SearchStrategy[str]:
    objects = st.dictionaries(KEYS, VALUES, max_size=4)
    return objects.flatmap(lambda v: written(v, near))


def outcome(run):
    try:
        return ("ok", run())
    except Exception as e:  # compared, whatever it is
        return ("error", type(e).__name__)


def streamed(name, prefix, output, chunks):
    stream = DeltaStream(grammar(name).template, prefix, call_id=str)
    deltas, at = list(stream.initial_deltas), 0
    for n in chunks:
        deltas += stream.feed(output[at:at + n])
        at += n
    deltas += stream.finish()
    sent = "".join(c["function"].get("arguments", "")
                   for d in deltas for c in d.get("tool_calls", []))
    return stream, sent


def check(name, prefix, output, chunks):
    expected = outcome(lambda: grammar(name).module.parse_response(output, prefix=prefix))
    got = outcome(lambda: streamed(name, prefix, output, chunks))
    if expected[0] == "error":
        assert got == expected
        return
    stream, sent = got[1]
    assert stream.divergences == []
    final = [c["function"]["arguments"] for c in expected[1].get("tool_calls", [])]
    assert sent == "".join(json.dumps(a, ensure_ascii=False) for a in final)


SETTINGS = settings(max_examples=150, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


@SETTINGS
@given(st.data())
def test_json_bodies(data):
    body = data.draw(body_of(near=False))
    output = '<tool_call>\n{"name": "f", "arguments": ' + body + "}\n</tool_call><|im_end|>"
    check("qwen3", "<|im_start|>assistant\n", output, data.draw(chunkings(output)))


@SETTINGS
@given(st.data())
def test_near_json_bodies(data):
    body = data.draw(body_of(near=True))
    output = "<|tool_call>call:f" + body + "<tool_call|><turn|>"
    check("gemma4", "<|turn>model\n", output, data.draw(chunkings(output)))
