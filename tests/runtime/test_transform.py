"""Differential tests: transforms against transformers' ``_apply_transform``,
``process_field`` and ``validate_transform_strings``.

Placeholders are drawn with names where the ``regex`` module's ``\\w`` and the
standard library's disagree (combining marks, connector punctuation, superscripts), so
that deciding what is a placeholder at compile time is checked code point by code
point where it matters.
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from transformers.utils.chat_parsing.content_parsers import (
    _apply_transform,
    process_field,
    validate_transform_strings,
)

from rtcompiler.codegen.content import build_parser, content_plan
from rtcompiler.codegen.literals import literal
from rtcompiler.codegen.transform import (
    check_transform_strings,
    contains_placeholder,
    placeholder_path,
    transform_expression,
    transform_plan,
)
from rtcompiler.runtime.transform import (
    apply_transform,
    transform_content,
    transform_each,
)

from .helpers import DIFFERENTIAL, Raised, assert_same, outcome

NAME_CHARS = ["a", "b", "c", "_", "1", "é", "\u0301", "\u203f", "²", "\u0663", "中", "-", " "]
names = st.text(alphabet=st.sampled_from(NAME_CHARS), min_size=0, max_size=3)
# Names a scope actually holds, so that lookups succeed often enough.
SCOPE_NAMES = ["a", "b", "content", "é", "e\u0301", "x\u203fy", "²", "name", "_"]
scope_names = st.one_of(st.sampled_from(SCOPE_NAMES), names)


# Whole placeholders (weighted up), near misses, and mixes with other text.
SHAPES = ["{%s}", "{%s}", "{%s}", "x{%s}", "{%s} ", "{{%s}}", "%s", "{%s", "{%s}{a}"]


@st.composite
def placeholder_strings(draw: st.DrawFn) -> str:
    """Strings around the placeholder syntax: whole placeholders, near misses, mixes."""
    path = ".".join(draw(st.lists(scope_names, min_size=1, max_size=3)))
    shape = draw(st.sampled_from(SHAPES))
    return shape % path


leaves = st.one_of(
    placeholder_strings(),
    st.text(alphabet=st.sampled_from(NAME_CHARS + ["{", "}", "."]), max_size=6),
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
)
TRANSFORM_KEYS = ["type", "function", "name", "arguments", "x"]
transforms = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(TRANSFORM_KEYS), children, max_size=3),
    ),
    max_leaves=8,
)
json_leaves = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=3))
values = st.recursive(
    json_leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(scope_names, children, max_size=3),
    ),
    max_leaves=8,
)
scopes = st.dictionaries(scope_names, values, max_size=4)


@DIFFERENTIAL
@given(transform=transforms, scope=scopes)
def test_apply_transform(transform: Any, scope: dict[str, Any]) -> None:
    ref = outcome(lambda: _apply_transform(transform, scope))
    mine = outcome(lambda: apply_transform(transform_plan(transform), scope))
    assert_same(mine, ref)


@DIFFERENTIAL
@given(text=st.one_of(placeholder_strings(), st.text(max_size=8)))
def test_placeholder_recognition(text: str) -> None:
    """Same verdict as the reference's placeholder pattern, whole and anywhere."""
    import regex

    pattern = regex.compile(r"\{(\w+(?:\.\w+)*)\}")
    whole = pattern.fullmatch(text)
    assert placeholder_path(text) == (whole.group(1) if whole else None)
    assert contains_placeholder(text) == (pattern.search(text) is not None)


@DIFFERENTIAL
@given(transform=transforms)
def test_validate_transform_strings(transform: Any) -> None:
    ref = outcome(lambda: validate_transform_strings("Field 'f'", transform))
    mine = outcome(lambda: check_transform_strings("Field 'f'", transform))
    assert_same(mine, ref)


@DIFFERENTIAL
@given(
    transform=transforms,
    value=values,
    captures=st.dictionaries(scope_names, st.text(max_size=3), max_size=2),
)
def test_transform_content(transform: Any, value: Any, captures: dict[str, str]) -> None:
    ref = outcome(lambda: _apply_transform(transform, {**captures, "content": value}))
    mine = outcome(lambda: transform_content(value, captures, transform_plan(transform)))
    assert_same(mine, ref)


def _compiled(transform: Any) -> Any:
    """What a generated ``_process`` does with the transform: the expression, and the
    interpreted form when the expression's lookups fail."""
    node = transform_plan(transform)
    source = transform_expression(node, "content", "captures", literal)
    expression = eval(f"lambda content, captures: {source}")  # noqa: S307 (our own output)

    def run(value: Any, captures: dict[str, str]) -> Any:
        try:
            return expression(value, captures)
        except (KeyError, TypeError):
            return transform_content(value, captures, node)

    return run


@DIFFERENTIAL
@given(
    transform=transforms,
    value=values,
    captures=st.dictionaries(scope_names, st.text(max_size=3), max_size=2),
)
def test_compiled_transform(transform: Any, value: Any, captures: dict[str, str]) -> None:
    ref = outcome(lambda: _apply_transform(transform, {**captures, "content": value}))
    mine = outcome(lambda: _compiled(transform)(value, captures))
    assert_same(mine, ref)


def test_compiled_transform_falls_back_for_exact_errors() -> None:
    run = _compiled({"function": {"name": "{content.name}", "arguments": "{content.args}"}})
    assert run({"name": "f", "args": {"a": 1}}, {}) == {
        "function": {"name": "f", "arguments": {"a": 1}}
    }
    for value, error in (({"name": "f"}, ValueError), ([1], ValueError), ("s", ValueError)):
        ref = outcome(lambda value=value: _apply_transform(
            {"function": {"name": "{content.name}", "arguments": "{content.args}"}},
            {"content": value},
        ))
        assert isinstance(ref, Raised) and ref.type is error
        assert_same(outcome(lambda value=value: run(value, {})), ref)
    missing = outcome(lambda: _compiled({"n": "{name}"})({}, {}))
    assert isinstance(missing, Raised) and missing.type is KeyError


def _field(content: str, args: Any, transform: Any, each: bool) -> SimpleNamespace:
    return SimpleNamespace(
        name="tool_calls",
        content=content,
        content_args=args,
        transform=transform,
        transform_each=each,
    )


def _ours_process(field: SimpleNamespace, body: str, captures: dict[str, str]) -> Any:
    value = build_parser(content_plan(field.content, field.content_args))(body)
    if field.transform is None:
        return value
    node = transform_plan(field.transform)
    if field.transform_each:
        return transform_each(value, captures, node, field.name)
    return transform_content(value, captures, node)


EACH_TRANSFORMS = [
    {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}},
    {"type": "function", "function": {"name": "{name}", "arguments": "{parameters.a}"}},
    ["{tool_name}", "{é}", "{e\u0301}"],
    "{tool_name}",
    None,
]
EACH_BODIES = [
    '[{"tool_name": "f", "parameters": {"a": 1}}]',
    '[{"tool_name": "f", "parameters": {"a": 1}}, {"tool_name": "g", "parameters": {}}]',
    '[{"tool_name": "f", "parameters": {"a": 1}, "name": "shadow"}]',
    '[{"é": 1, "e\u0301": 2, "tool_name": "x", "parameters": 3}]',
    "[]",
    "[1]",
    '[{"tool_name": "f", "parameters": {"a": 1}}, 2]',
    '{"tool_name": "f"}',
    '"text"',
]


@DIFFERENTIAL
@given(
    transform=st.one_of(st.sampled_from(EACH_TRANSFORMS), transforms),
    body=st.one_of(st.sampled_from(EACH_BODIES), values.map(json.dumps)),
    each=st.booleans(),
    captures=st.dictionaries(st.sampled_from(["name", "tool_name", "a"]), st.text(max_size=3)),
)
def test_process_field(transform: Any, body: str, each: bool, captures: dict[str, str]) -> None:
    """Parse then transform (with and without transform_each), as process_field does."""
    if transform is None:
        each = False  # the loader refuses transform_each without a transform
    field = _field("json", {}, transform, each)
    ref = outcome(lambda: process_field(body, field, dict(captures)))
    mine = outcome(lambda: _ours_process(field, body, dict(captures)))
    assert_same(mine, ref)


def test_transform_returns_fresh_containers() -> None:
    """Callers mutate transformed values (tool typing does): nothing may be shared."""
    call = {"name": "{name}", "arguments": "{content}"}
    transform = {"type": "function", "function": call, "k": [1]}
    node = transform_plan(transform)
    first = transform_content({"a": "1"}, {"name": "f"}, node)
    assert isinstance(first, dict)
    first["k"].append(2)
    first["function"]["name"] = "g"
    second = transform_content({"a": "1"}, {"name": "f"}, node)
    expected = {"type": "function", "function": {"name": "f", "arguments": {"a": "1"}}, "k": [1]}
    assert second == expected
    assert transform == {
        "type": "function",
        "function": {"name": "{name}", "arguments": "{content}"},
        "k": [1],
    }


def test_placeholder_value_is_not_copied() -> None:
    """A whole placeholder hands over the value itself, as the reference does."""
    content = {"a": [1]}
    assert transform_content(content, {}, transform_plan("{content}")) is content
    assert _apply_transform("{content}", {"content": content}) is content


def test_plan_is_plain_data() -> None:
    node = transform_plan({"f": ["{content.a}", 1, None, "{x", {"y": "{é}"}]})
    assert json.loads(json.dumps(node)) == node
    assert copy.deepcopy(node) == node


SMALL_KEYS = ["a", "b", "é", "e\u0301"]
nested = st.recursive(
    st.one_of(st.integers(0, 2), st.text(max_size=2), st.lists(st.integers(0, 2), max_size=2)),
    lambda children: st.dictionaries(st.sampled_from(SMALL_KEYS), children, max_size=3),
    max_leaves=6,
)


@DIFFERENTIAL
@given(
    keys=st.lists(st.sampled_from(SMALL_KEYS), max_size=3),
    root=st.sampled_from(["content", "content", "name", "missing"]),
    value=nested,
)
def test_dotted_paths(keys: list[str], root: str, value: Any) -> None:
    """Descending through dicts: found, missing key (ValueError), not a dict (ValueError)."""
    transform = {"v": "{" + ".".join([root, *keys]) + "}"}
    ref = outcome(lambda: _apply_transform(transform, {"name": "f", "content": value}))
    mine = outcome(lambda: transform_content(value, {"name": "f"}, transform_plan(transform)))
    assert_same(mine, ref)
