"""The pattern reader reads each character a bounded number of times.

It runs on every pattern before any size limit can be checked, so it must be linear:
counted here as the characters its searches pass over and its slices copy. It used to
search from every '{' to the next '}' (quadratic over ``a{a{a{...}``) and to slice the
rest of the pattern at every ``(?`` group.
"""

from __future__ import annotations

import pytest

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
