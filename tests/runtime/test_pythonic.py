"""The `pythonic` extension's content parser: Python call lists as tool calls."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.runtime.content import parse_pythonic

ARGS = {"strip": True}


def calls(text: str) -> list:
    return parse_pythonic(text, ARGS)


def test_keyword_calls_in_order():
    assert calls('[get_weather(city="Paris", unit="c"), ping()]') == [
        {"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}},
        {"name": "ping", "arguments": {}},
    ]


def test_literals_are_read_as_python_reads_them():
    got = calls(
        "[f(a='it\\'s', b=\"tab\\there\", c=-1.5e3, d=True, e=None, f=(1, [2, {'k': ()}]),"
        " g='con' 'cat', h=0x10, i=\"\\u00e9\\N{BULLET}\")]"
    )
    assert got[0]["arguments"] == {
        "a": "it's", "b": "tab\there", "c": -1500.0, "d": True, "e": None,
        "f": [1, [2, {"k": []}]], "g": "concat", "h": 16, "i": "é•",
    }


def test_delimiter_characters_inside_strings_do_not_end_anything():
    got = calls('[f(x="a)], g(y=1)", z=\'[{\')]')
    assert got == [{"name": "f", "arguments": {"x": "a)], g(y=1)", "z": "[{"}}]


def test_dotted_names_whitespace_and_newlines():
    text = '  [\n  tools.search(\n    query="q",\n  ),\n]\n'
    assert calls(text) == [{"name": "tools.search", "arguments": {"query": "q"}}]


def test_parameters_and_functions_named_like_python_keywords():
    got = calls('[translate(text="from=x", from="en", to="fr"), g(class=[1,\n 2], None=0),'
                ' or(), a.in.b(x=[None, True])]')
    assert got == [
        {"name": "translate", "arguments": {"text": "from=x", "from": "en", "to": "fr"}},
        {"name": "g", "arguments": {"class": [1, 2], "None": 0}},
        {"name": "or", "arguments": {}},
        {"name": "a.in.b", "arguments": {"x": [None, True]}},
    ]


def test_strip_false_keeps_surrounding_whitespace_an_error_for_leading_indent():
    with pytest.raises(ValueError, match="pythonic"):
        parse_pythonic("  [f()]", {"strip": False})
    assert parse_pythonic("[f()]\n", {"strip": False}) == [{"name": "f", "arguments": {}}]


@pytest.mark.parametrize("text, says", [
    ("[f(1)]", "positional arguments"),
    ("[f(**kw)]", "**kwargs"),
    ("[f(x=open('a'))]", "not a Python literal"),
    ("[f(x=1 + 2)]", "not a Python literal"),
    ("[f(x={1, 2})]", "set is not a JSON value"),
    ("[f(x=b'a')]", "bytes is not a JSON value"),
    ("[f(x=1j)]", "complex is not a JSON value"),
    ("[f(x={1: 2})]", "dict keys must be strings"),
    ("[f(x=1), 3]", "every list item must be a call"),
    ("f(x=1)", "expected a list of calls"),
    ("[(lambda: 1)()]", "must name a function"),
    ("[f(x=1)", "not a Python list of calls"),
    ("[f(x=1)] and more", "expected a list of calls"),
    ("[f(x=1)] more", "not a Python list of calls"),
    ("[f(x='\x00')]", "not a Python list of calls"),
    ("[f(x=" + "[" * 5000 + "]" * 5000 + ")]", "not a Python list of calls"),
])
def test_what_is_not_a_call_list_is_a_value_error_saying_why(text, says):
    with pytest.raises(ValueError) as info:
        calls(text)
    assert str(info.value).startswith("pythonic: ")
    assert says in str(info.value)


def test_nothing_is_evaluated():
    # A call inside a value would run code under eval(); literal reading refuses it.
    with pytest.raises(ValueError, match="not a Python literal"):
        calls("[f(x=__import__('os').getcwd())]")


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_names, st.dictionaries(_names, _json_values, max_size=4)), max_size=4))
def test_repr_of_any_json_arguments_reads_back(call_list):
    # repr() writes Python literals: single quotes, escapes, True/None, nested containers.
    text = "[" + ", ".join(
        f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"
        for name, args in call_list
    ) + "]"
    got = calls(text)
    want = [{"name": n, "arguments": a} for n, a in call_list]
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
