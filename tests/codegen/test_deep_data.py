"""A template that compiles gives a module that imports, however deeply its data nests.

Python's parser refuses brackets nested more than 200 deep. A transform's node tree
nests three brackets per level of the transform, so a transform 67 levels deep
compiled into a module that failed to import ("too many nested parentheses") while
the reference parsed with it. Deep data (transforms, defaults, content arguments) is
now written in parts, and a transform too deep to write out as one expression is
interpreted from its node tree.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response as reference_parse
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler.codegen import generate_module
from rtcompiler.codegen.literals import MAX_NESTING, assignment, nesting
from rtcompiler.template import load_template
from rtcompiler.template.load import MAX_DEPTH


def _module(spec: dict) -> dict:
    namespace: dict = {"__name__": "deep_parser"}
    exec(compile(generate_module(load_template(spec)), "deep_parser", "exec"), namespace)
    return namespace


def _outcome(call) -> Any:
    try:
        return ("ok", call())
    except Exception as e:  # the exception's type is the answer (as in tests/runtime)
        return ("error", type(e).__name__)


@st.composite
def nested(draw, depth: int, leaf: Any) -> Any:
    """``leaf`` inside ``depth`` containers, each a dict or a list, with siblings now and then."""
    value = leaf
    for level in range(depth):
        sibling = draw(st.sampled_from([None, "x", 3, [], {"s": [1, {"t": None}]}]))
        if draw(st.booleans()):
            value = {f"k{level}": value} if sibling is None else {f"k{level}": value, "s": sibling}
        else:
            value = [value] if sibling is None else [sibling, value]
    return value


# Where each kind of data sits, and so how deep it may nest before the loader's
# MAX_DEPTH: the containers of a field's transform begin at depth 3, say.
ROOM = {"defaults": MAX_DEPTH - 2, "transform": MAX_DEPTH - 3, "content_args": MAX_DEPTH - 4}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_template_that_compiles_gives_a_module_that_imports(data):
    depth = {kind: data.draw(st.integers(MAX_NESTING - 5, room), label=kind)
             for kind, room in ROOM.items()}
    parser_depth = data.draw(st.integers(1, (MAX_DEPTH - 4) // 2), label="value_parser")
    value_parser: Any = {"name": "text"}
    for _ in range(parser_depth - 1):
        value_parser = {"name": "kv-lines", "args": {"value_parser": value_parser}}
    spec = {
        "start_anchor": "<s>",
        "defaults": {"role": "assistant", "deep": data.draw(nested(depth["defaults"], 1))},
        "fields": {
            "tool_calls": {
                "open": "<t>", "close": "</t>", "content": "json",
                "transform": data.draw(nested(depth["transform"], "{content}")),
                "transform_each": data.draw(st.booleans()),
            },
            "kv": {
                "open": "<kv>", "close": "</kv>", "content": "kv-lines",
                "content_args": {
                    "line_sep": data.draw(nested(depth["content_args"], ";")),
                    "value_parser": value_parser,
                },
            },
            "js": {
                "open": "<js>", "close": "</js>", "content": "json",
                "content_args": {"string_delims": data.draw(nested(depth["content_args"], "|"))},
            },
        },
    }
    template = load_template(spec)  # within every loader limit
    namespace = _module(spec)  # compiles and runs: imports
    message = namespace["parse_response"]("hello", prefix="")
    assert message["deep"] == spec["defaults"]["deep"]
    assert template.sha256 in generate_module(template)


def _deep_transform(depth: int) -> Any:
    transform: Any = {"arguments": "{content.args}", "name": "{content.name}"}
    for level in range(depth - 1):
        transform = {"function": transform, "level": level} if level % 3 else [transform, "{id}"]
    return transform


@pytest.mark.parametrize("depth", [30, MAX_NESTING - 1, MAX_NESTING, 67, MAX_DEPTH - 3])
def test_a_deep_transform_gives_the_references_answer(depth):
    spec = {
        "start_anchor": "<s>",
        "fields": {
            "tool_calls": {
                "open_pattern": "<call id=(?P<id>\\d+)>", "close": "</call>", "content": "json",
                "repeats": True, "transform": _deep_transform(depth),
            },
            "content": {},
        },
    }
    reference = load_response_template(spec)
    namespace = _module(spec)
    for text in (
        'Hi<call id=7>{"name": "f", "args": {"x": [1, 2]}}</call>',
        '<call id=8>{"name": "f"}</call>',  # no "args": a ValueError, worded the same
        '<call id=9>[1]</call>',  # not a dict: the same again
    ):
        ours = _outcome(lambda text=text: namespace["parse_response"](text, prefix=""))
        assert ours == _outcome(lambda text=text: reference_parse(text, reference, prefix=""))


@pytest.mark.parametrize("value", [
    [[[[1]]]],
    {"a": [{"b": (1, 2)}], "c": []},
])
def test_assignment_builds_the_same_value_with_no_line_nested_too_deep(value, monkeypatch):
    monkeypatch.setattr("rtcompiler.codegen.literals.MAX_NESTING", 2)
    source = assignment("DATA", value)
    namespace: dict = {}
    exec(source, namespace)
    assert namespace["DATA"] == value
    for line in source.splitlines():
        depth = deepest = 0
        for ch in line:
            depth += ch in "([{"
            depth -= ch in ")]}"
            deepest = max(deepest, depth)
        assert deepest <= 2, line


def test_a_deep_value_nests_as_deeply_as_its_containers():
    deep: Any = 0
    for _ in range(120):
        deep = [deep]
    source = assignment("DEEP", deep)
    namespace: dict = {}
    exec(compile(source, "deep", "exec"), namespace)
    assert namespace["DEEP"] == deep and nesting(deep) == 120
