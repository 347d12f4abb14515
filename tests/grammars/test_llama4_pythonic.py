"""The llama4_pythonic grammar on the call-list shapes Llama 4 writes (issue 21, section 2).

A crash (anything but the ``ValueError`` a malformed list is) is a bug in every mode: each
shape is parsed whole, one character at a time, in every two-piece split, with and without
tools, and as OpenAI deltas, and must give the calls. The property at the end renders random
call lists the way Python writes literals (``repr``), in every spacing, wrapping and ending
the model uses, and parses them back exactly through the compiled grammar.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler import compile_template
from rtcompiler.openai import DeltaStream, accumulate

PARSER = compile_template("llama4_pythonic")
PREFIX = ("<|header_start|>user<|header_end|>\n\nHi<|eot|>"
          "<|header_start|>assistant<|header_end|>\n\n")


def call(name: str, **arguments) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


SHAPES = [
    # parallel calls without spaces
    ("[a(x=1),b(y=2)]<|eot|>", [call("a", x=1), call("b", y=2)]),
    # a call without parameters, alone and among others
    ("[get_time()]<|eot|>", [call("get_time")]),
    ("[get_time(),ping()]<|eom|>", [call("get_time"), call("ping")]),
    # escaped quotes in strings, both quote styles
    ("[f(s=\"a \\\"b\\\" c\", t='it\\'s')]<|eot|>", [call("f", s='a "b" c', t="it's")]),
    # the wrapper Llama 4 writes around calls
    ("<|python_start|>[get_weather(city=\"Paris\")]<|python_end|><|eot|>",
     [call("get_weather", city="Paris")]),
    ("<|python_start|>\n[a(x=1), b(y=2)]\n<|python_end|>", [call("a", x=1), call("b", y=2)]),
    # leading-underscore function and parameter names
    ("[_internal(_key=\"x\", __n=2)]<|eot|>", [call("_internal", _key="x", __n=2)]),
    # nested lists and dicts
    ("[search(q=[\"a\", [\"b\", [\"c\"]]], f={\"k\": [1, {\"m\": []}]})]<|eot|>",
     [call("search", q=["a", ["b", ["c"]]], f={"k": [1, {"m": []}]})]),
    # no end-of-turn token (servers strip it)
    ("[a(x=1),b(y=2)]", [call("a", x=1), call("b", y=2)]),
]

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {p: {"type": t} for p, t in props.items()}}}}
    for name, props in {
        "a": {"x": "integer"}, "b": {"y": "integer"}, "get_time": {}, "ping": {},
        "f": {"s": "string", "t": "string"}, "get_weather": {"city": "string"},
        "_internal": {"_key": "string", "__n": "integer"},
        "search": {"q": "array", "f": "object"},
    }.items()
]


def whole(text: str, tools: list | None = None) -> dict:
    return PARSER.parse_response(text, prefix=PREFIX, tools=tools)


def streamed(chunks: list[str], tools: list | None = None) -> dict:
    parser = PARSER.response_parser(PREFIX, tools=tools)
    for chunk in chunks:
        parser.feed(chunk)
    return parser.finalize()[0]


def deltas(chunks: list[str], tools: list | None = None) -> dict:
    stream = DeltaStream(PARSER, PREFIX, tools=tools, call_id=lambda i: f"call_{i}")
    gathered = list(stream.initial_deltas)
    for chunk in chunks:
        gathered += stream.feed(chunk)
    gathered += stream.finish()
    return accumulate(gathered)


def decoded(delta_calls: list[dict]) -> list[dict]:
    """Calls accumulated from OpenAI deltas (arguments as JSON text, with ids) as messages
    hold them."""
    return [{"type": c["type"], "function": {
        "name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}}
        for c in delta_calls]


@pytest.mark.parametrize(("text", "calls"), SHAPES, ids=[s[0][:40] for s in SHAPES])
@pytest.mark.parametrize("tools", [None, TOOLS], ids=["no tools", "tools"])
def test_every_shape_is_its_calls_whole_streamed_and_as_deltas(text, calls, tools):
    want = {"role": "assistant", "tool_calls": calls}
    assert whole(text, tools) == want
    assert streamed(list(text), tools) == want
    for cut in range(1, len(text)):
        assert streamed([text[:cut], text[cut:]], tools) == want, cut
    message = deltas(list(text), tools)
    assert decoded(message["tool_calls"]) == calls
    assert [c["id"] for c in message["tool_calls"]] == [f"call_{i}" for i in range(len(calls))]
    assert not message.get("content")


def test_a_second_wrapped_list_adds_its_calls_and_a_stray_wrapper_never_stays_in_content():
    text = "<|python_start|>[a()]<|python_end|><|python_start|>[b()]<|python_end|><|eot|>"
    assert whole(text) == {"role": "assistant", "tool_calls": [call("a"), call("b")]}
    assert streamed(list(text)) == whole(text)
    text = "Hi.<|python_end|> There.<|python_start|>not code<|python_end|><|eot|>"
    assert whole(text) == {"role": "assistant", "content": "Hi.\n\nThere.\n\nnot code"}
    assert streamed(list(text)) == whole(text)


# -- the property ---------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_names = st.from_regex(r"_{0,2}[A-Za-z][A-Za-z0-9_]{0,6}", fullmatch=True)
_functions = st.lists(_names, min_size=1, max_size=2).map(".".join)


def _json(value):
    """What a Python literal reads back as: tuples are lists."""
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    return value


@settings(max_examples=200, deadline=None)
@given(
    calls=st.lists(st.tuples(_functions, st.dictionaries(_names, _json_values, max_size=3)),
                   min_size=1, max_size=4),
    separator=st.sampled_from([",", ", ", ",\n", " , "]),
    inner=st.sampled_from(["", " ", "\n"]),
    wrap=st.booleans(),
    end=st.sampled_from(["<|eot|>", "<|eom|>", ""]),
    cuts=st.lists(st.integers(1, 10_000), max_size=6),
)
def test_repr_written_call_lists_parse_back_exactly(calls, separator, inner, wrap, end, cuts):
    text = "[" + inner + separator.join(
        f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"
        for name, args in calls
    ) + inner + "]"
    if wrap:
        text = f"<|python_start|>{text}<|python_end|>"
    text += end
    want = {"role": "assistant", "tool_calls": [call(n, **_json(a)) for n, a in calls]}
    assert whole(text) == want
    bounds = sorted({c % len(text) for c in cuts} - {0})
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)], strict=True)]
    assert streamed(chunks) == want
    assert decoded(deltas(chunks)["tool_calls"]) == want["tool_calls"]
