"""The pattern reader reads each character a bounded number of times.

It runs on every pattern before any size limit can be checked, so it must be linear:
counted here as the characters its searches pass over and its slices copy. It used to
search from every '{' to the next '}' (quadratic over ``a{a{a{...}``) and to slice the
rest of the pattern at every ``(?`` group.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.dialect import parser


class _CountingText(str):
    """Pattern text that counts the characters its searches and slices go through."""

    read = 0

    def find(self, sub, start=0, end=None):
        found = super().find(sub, start, len(self) if end is None else end)
        _CountingText.read += (len(self) if found < 0 else found) - start
        return found

    def __getitem__(self, key):
        piece = super().__getitem__(key)
        _CountingText.read += len(piece)
        return piece


@pytest.fixture
def characters_read(monkeypatch):
    _CountingText.read = 0
    fuzzy = parser._FUZZY_CONSTRAINT

    class CountedFuzzy:
        def search(self, text, start=0):
            m = fuzzy.search(text, start)
            _CountingText.read += (len(text) if m is None else m.start()) - start
            return m

    monkeypatch.setattr(parser, "_FUZZY_CONSTRAINT", CountedFuzzy())
    return _CountingText


@pytest.mark.parametrize("unit, tail", [
    ("a{", "}"),  # every '{' looked for its '}' at the very end
    ("b{1,x", "}"),
    ("(?:a)", ""),  # every group sliced the rest of the pattern
    ("(?i:a)", ""),
    ("(?=a)", ""),
    ("c{2}", ""),
])
def test_characters_read_grow_linearly(unit, tail, characters_read):
    read = []
    for n in (1_000, 4_000):
        characters_read.read = 0
        parser.parse_pattern(_CountingText(unit * n + tail))
        read.append(characters_read.read)
    assert read[1] <= 4 * read[0] + 100, read
    assert read[1] <= 10 * len(unit * 4_000 + tail), read  # a few peeks per character


def test_fuzzy_constraints_are_still_found(characters_read):
    with pytest.raises(parser.PatternError, match="fuzzy"):
        parser.parse_pattern("a{e<=1}" + "b{" * 100 + "}")
    # A brace regex reads as a literal, far from any fuzzy constraint, is a literal.
    tree = parser.parse_pattern("a{x" * 50 + "}")
    assert tree.source.endswith("}")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="[](){}?:=!<>P^$|\\*+.-axdi0,#", max_size=12))
def test_reading_without_regex_ends_on_any_text(source):
    """read_pattern runs before regex has checked the pattern (to size it first): on
    text regex refuses it may give up, but it must end, and agree when it reads."""
    tree = parser.read_pattern(source)
    try:
        checked = parser.parse_pattern(source)
    except parser.PatternError:
        return
    assert tree == checked


@pytest.mark.parametrize("source", ["[", "[a", "[^", "[\\", "(?#", "(?P<a", "\\x1", "("])
def test_reading_unfinished_patterns_ends(source):
    parser.read_pattern(source)  # an unterminated "[" used to loop for ever
    with pytest.raises(parser.PatternError, match="invalid pattern"):
        parser.parse_pattern(source)
