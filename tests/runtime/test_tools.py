"""Differential tests: tool-argument typing against transformers' ``ResponseParser``.

``_schema_types``, ``_coerce`` and ``ResponseParser._coerce_tool_calls`` (through a real
``ResponseParser`` built with the drawn ``tools``, so the name -> properties map is the
reference's too) against ``schema_types``, ``coerce_argument``, ``coerce_tool_calls``
and ``tool_parameters``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from transformers.utils.chat_parsing.response_parser import (
    ResponseParser,
    _coerce,
    _schema_types,
)

from rtcompiler.runtime.tools import (
    coerce_argument,
    schema_types,
    tool_coercer,
    tool_parameters,
)

from .helpers import DIFFERENTIAL, Raised, assert_same, outcome, same

TYPE_NAMES = [
    "integer",
    "number",
    "boolean",
    "null",
    "object",
    "array",
    "string",
    "date",
    "Integer",
]
type_names = st.sampled_from(TYPE_NAMES)
# Values a schema's keys may hold, well-formed or not.
odd_values = st.sampled_from([None, 0, 1, True, "", "abc", {}, {"type": "integer"}, [1, "x"]])

schemas = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(type_names, st.lists(st.one_of(type_names, odd_values), max_size=3)),
            "nullable": st.one_of(st.booleans(), odd_values),
            "description": st.text(max_size=3),
        },
    ),
    lambda children: st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(type_names, st.lists(type_names, max_size=2)),
            "anyOf": st.one_of(st.lists(children, max_size=3), odd_values),
            "oneOf": st.one_of(st.lists(children, max_size=3), odd_values),
            "nullable": st.booleans(),
        },
    ),
    max_leaves=6,
)


@DIFFERENTIAL
@given(schema=st.one_of(schemas, odd_values))
def test_schema_types(schema: Any) -> None:
    assert_same(outcome(lambda: schema_types(schema)), outcome(lambda: _schema_types(schema)))


RAW = [
    "3",
    " 3 ",
    "3.0",
    "3.5",
    "-0",
    "+4",
    "1_000",
    "1e3",
    "1E3",
    "1e400",
    "-1e400",
    "1e-400",
    "inf",
    "-inf",
    "Infinity",
    "nan",
    "NaN",
    "\u0663",
    "\u0663.0",
    "²",
    "0x1f",
    "9" * 5000,
    "9" * 5000 + ".0",
    "true",
    " TRUE ",
    "1",
    "0",
    "false",
    "yes",
    "null",
    " None ",
    "none",
    "",
    " ",
    '{"a": 1}',
    "[1, 2]",
    "[",
    "{}",
    "[]",
    '"s"',
    "[" * 100000,
    "London",
]
raws = st.one_of(
    st.sampled_from(RAW),
    st.text(
        alphabet=st.sampled_from(list('0123456789_.+-eE nifatrulN[]{}",:') + ["\u0663"]), max_size=8
    ),
    st.floats().map(repr),
    st.integers().map(str),
)


@DIFFERENTIAL
@given(raw=raws, types=st.lists(type_names, min_size=1, max_size=3).map(tuple))
def test_coerce_argument(raw: str, types: tuple[str, ...]) -> None:
    assert_same(outcome(lambda: coerce_argument(raw, types)), outcome(lambda: _coerce(raw, types)))


def test_coerce_argument_cases() -> None:
    cases = [
        ("3.0", ("integer",), 3),
        ("3.5", ("integer", "number"), 3.5),
        ("3.5", ("integer",), "3.5"),
        ("1e3", ("number",), 1000),
        ("1.0", ("number",), 1.0),
        ("nan", ("number",), "nan"),
        ("1e400", ("number", "integer"), "1e400"),
        ("1_000", ("integer",), 1000),
        ("\u0663", ("integer",), 3),
        (" 1 ", ("boolean",), True),
        ("None", ("null",), None),
        ("[1]", ("object", "array"), [1]),
    ]
    for raw, types, expected in cases:
        assert_same(coerce_argument(raw, types), expected)
        assert_same(_coerce(raw, types), expected)


# --- tool calls, through a real ResponseParser ---------------------------------------------

TEMPLATE = {"start_anchor": "<s>", "fields": {"content": {}}}
ARG_NAMES = ["a", "b", "c", "d"]
# Mostly schemas that admit some type, so that arguments do get typed.
property_schemas = st.one_of(
    type_names.map(lambda t: {"type": t}),
    st.lists(type_names, min_size=1, max_size=3).map(lambda ts: {"type": ts}),
    st.lists(type_names, min_size=1, max_size=2).map(
        lambda ts: {"anyOf": [{"type": t} for t in ts], "nullable": True}
    ),
    schemas,
    odd_values,
)
properties = st.dictionaries(st.sampled_from(ARG_NAMES), property_schemas, min_size=1, max_size=4)


@st.composite
def tools(draw: st.DrawFn) -> Any:
    """A tools list: wrapped and bare function schemas, and entries that are neither."""
    out = []
    for _ in range(draw(st.integers(0, 3))):
        spec: dict[str, Any] = {"name": draw(st.sampled_from(["f", "f", "g", 3]))}
        parameters = draw(
            st.one_of(
                properties.map(lambda p: {"type": "object", "properties": p}),
                st.just({"type": "object"}),
                odd_values,
            )
        )
        if draw(st.integers(0, 3)):
            spec["parameters"] = parameters
        kind = draw(st.sampled_from(["wrapped", "wrapped", "bare", "odd"]))
        if kind == "wrapped":
            out.append({"type": "function", "function": spec})
        elif kind == "bare":
            out.append(spec)
        else:
            out.append(draw(st.sampled_from(["f", 3, None, {"function": "f"}, {"function": None}])))
    return draw(st.sampled_from([out, out, out, None, tuple(out)]))


argument_values = st.one_of(
    raws,
    st.lists(st.one_of(raws, st.integers()), max_size=3),
    st.integers(),
    st.none(),
    st.dictionaries(st.sampled_from(["x"]), raws, max_size=1),
)
calls = st.fixed_dictionaries(
    {
        "type": st.just("function"),
        "function": st.one_of(
            st.fixed_dictionaries(
                {
                    "name": st.sampled_from(["f", "g", "h", 3]),
                    "arguments": st.one_of(
                        st.dictionaries(
                            st.sampled_from([*ARG_NAMES, "z"]), argument_values, max_size=4
                        ),
                        st.text(max_size=3),
                    ),
                }
            ),
            st.just("f"),
        ),
    }
)
region_values = st.one_of(
    calls,
    st.lists(st.one_of(calls, st.lists(calls, max_size=2), st.text(max_size=2)), max_size=3),
    st.text(max_size=3),
    st.none(),
    st.dictionaries(st.sampled_from(["function"]), st.integers(), max_size=1),
)


spellings = st.sampled_from(RAW[:-2])  # without the slow 100000-deep nesting


@st.composite
def matched(draw: st.DrawFn) -> tuple[Any, Any]:
    """A tool ``f`` and calls of it whose arguments its schema does describe."""
    props = draw(properties)
    tool = {"type": "function", "function": {"name": "f", "parameters": {"properties": props}}}
    noise = draw(tools())
    # A later tool of the same name replaces an earlier one: mostly put ours last.
    first = draw(st.integers(0, 3)) == 0
    tool_list = [tool, *(noise or [])] if first else [*(noise or []), tool]
    arguments = st.dictionaries(
        st.sampled_from(sorted(props) + ["z"]),
        st.one_of(spellings, st.lists(spellings, max_size=3), raws, st.integers()),
        min_size=1,
        max_size=4,
    )
    call = arguments.map(lambda a: {"type": "function", "function": {"name": "f", "arguments": a}})
    value = draw(st.one_of(call, st.lists(call, max_size=3)))
    return tool_list, value


@DIFFERENTIAL
@given(tool_list=tools(), value=region_values)
def test_coerce_tool_calls(tool_list: Any, value: Any) -> None:
    _check_coerce_tool_calls(tool_list, value)


@DIFFERENTIAL
@given(case=matched())
def test_coerce_tool_calls_of_described_tools(case: tuple[Any, Any]) -> None:
    _check_coerce_tool_calls(*case)


def _check_coerce_tool_calls(tool_list: Any, value: Any) -> None:
    parser = ResponseParser(TEMPLATE, prefix="", tools=tool_list)
    params = tool_parameters(tool_list)
    assert same(params, parser._tool_params)

    ref_value, my_value = copy.deepcopy(value), copy.deepcopy(value)
    # The reference types only when some tool was kept (`if self._tool_params`).
    typing = parser._coerce_tool_calls if parser._tool_params else lambda v: v
    ref = outcome(lambda: typing(ref_value))
    coerce = tool_coercer(tool_list)
    assert (coerce is None) == (not parser._tool_params)
    mine = outcome(lambda: coerce(my_value) if coerce is not None else my_value)
    assert_same(mine, ref)
    # Arguments are typed in place, in the reference and here alike.
    assert same(my_value, ref_value)
    event("typed something" if not same(my_value, value) else "typed nothing")


def test_documented_example() -> None:
    tool_list = [
        {
            "type": "function",
            "function": {
                "name": "set_alarm",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "hour": {"type": "integer"},
                        "enabled": {"type": "boolean"},
                        "label": {"type": "string"},
                        "tags": {"type": "string"},
                        "when": {"anyOf": [{"type": "null"}, {"type": "number"}]},
                    },
                },
            },
        }
    ]
    call = {
        "type": "function",
        "function": {
            "name": "set_alarm",
            "arguments": {
                "hour": "7",
                "enabled": "true",
                "label": "wake up",
                "tags": ["a", "1"],
                "when": "None",
            },
        },
    }
    coerce = tool_coercer(tool_list)
    assert coerce is not None
    out = coerce(call)
    assert out["function"]["arguments"] == {
        "hour": 7,
        "enabled": True,
        "label": "wake up",
        "tags": ["a", "1"],
        "when": None,
    }


def _tool(city: str, days: int = 1) -> str:
    """Weather.

    Args:
        city: The city
        days: How many days
    """
    return city


class _Tools:
    def method(self, city: str) -> str:
        """Weather.

        Args:
            city: The city
        """
        return city


@pytest.mark.parametrize("fn", [_tool, _Tools().method, lambda x: x, _Tools.method])
def test_python_functions_are_converted_as_the_reference_does(fn: Any) -> None:
    """A function among the tools types arguments as the reference's (get_json_schema);
    one the reference cannot convert fails with its exception name and message."""
    ref = outcome(lambda: ResponseParser(TEMPLATE, prefix="", tools=[fn])._tool_params)
    mine = outcome(lambda: tool_parameters([fn]))
    if isinstance(ref, Raised):
        assert isinstance(mine, Raised), mine
        assert mine.type.__name__ == ref.type.__name__
        assert mine.message.startswith(ref.message), (mine, ref)
    else:
        assert mine == ref


def test_tool_schema_gives_the_reference_typing() -> None:
    """Converting a function with tool_schema types exactly as passing the function."""
    from rtcompiler.runtime.functions import tool_schema

    for fn in (_tool, _Tools().method):
        parser = ResponseParser(TEMPLATE, prefix="", tools=[fn])
        assert tool_parameters([tool_schema(fn)]) == parser._tool_params


def test_an_argument_nested_too_deeply_is_a_value_error_where_the_reference_crashes() -> None:
    # Not "this type does not fit, try the next" either (docs/deviations.md).
    deep = "[" * 100000
    ref = outcome(lambda: _coerce(deep, ("array", "string")))
    assert isinstance(ref, Raised) and ref.type is RecursionError
    mine = outcome(lambda: coerce_argument(deep, ("array", "string")))
    assert isinstance(mine, Raised) and mine.type is ValueError
    assert "nested too deeply" in mine.message
