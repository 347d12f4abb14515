"""``Prefilter.find`` over several literals: right, and reading linear amounts of text.

It finds the leftmost literal with one ``str.find`` per literal over windows that grow
until one holds a hit, instead of an alternation search with ``re`` (see its comments).
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from rtcompiler.runtime.prefilter import Prefilter


def _prefilter(literals: list[str]) -> Prefilter:
    return Prefilter({"literals": literals, "lead": 0, "lead_ranges": []})


@given(
    # Some sets share a first character (searched with re), most do not (str.find).
    literals=st.lists(st.text("ab<|", min_size=1, max_size=4), min_size=2, max_size=4, unique=True),
    text=st.text("ab<| ", max_size=3000),
    data=st.data(),
)
def test_finds_the_leftmost_literal_in_the_range(literals, text, data):
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    alternation = re.compile("|".join(re.escape(s) for s in literals))
    m = alternation.search(text, lo, hi)
    # Both report the leftmost start; at one start, either literal will do.
    assert _prefilter(literals).find(text, lo, hi) == (-1 if m is None else m.start())


class _CountingText(str):
    """A text that counts the characters its ``find`` calls read (up to the hit)."""

    read = 0

    def find(self, sub, lo=0, hi=None):  # type: ignore[override]
        at = str.find(self, sub, lo, hi)
        stop = len(self) if hi is None else min(hi, len(self))
        _CountingText.read += max(0, (at + len(sub) if at >= 0 else stop) - lo)
        return at


def test_reads_a_bounded_amount_per_character_whatever_the_hits():
    # One literal on every line, the other never: a find per literal over the rest
    # of the text after each hit would read n^2/2 characters.
    pre = _prefilter(["<|never|>", "\n"])
    for n in (4_000, 64_000):
        text = _CountingText(("word " * 3 + "\n") * (n // 16))
        _CountingText.read = 0
        lo, hits = 0, 0
        while (hit := pre.find(text, lo, len(text))) >= 0:
            lo, hits = hit + 1, hits + 1
        assert hits == n // 16
        # The literal that hits is searched first, and bounds the other's search:
        # about twice the text in all, after the first window.
        assert _CountingText.read <= 4 * len(text) + 2 * 1024, (n, _CountingText.read)


def test_literals_with_one_first_character_are_searched_as_one_alternation():
    assert _prefilter(["<|a|>", "<|b|>"])._any is not None
    assert _prefilter([" to=", "<|c|>"])._any is None


def test_far_hits_cost_a_constant_multiple_of_their_distance():
    pre = _prefilter(["a|>", "<|b|>"])
    text = _CountingText("x" * 200_000 + "<|b|>")
    _CountingText.read = 0
    assert pre.find(text, 0, len(text)) == 200_000
    assert _CountingText.read <= 2 * 4 * 200_000


@given(
    literal=st.text("ab<|", min_size=1, max_size=4),
    text=st.text("ab<| ", max_size=3000),
    data=st.data(),
)
def test_one_literal_is_found_where_str_find_finds_it(literal, text, data):
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    assert _prefilter([literal]).find(text, lo, hi) == text.find(literal, lo, hi)


def test_one_literal_is_found_by_its_first_character_then_at_most_once_more_in_full():
    # Searched for its first character first (a memchr), the literal costs a read to its
    # hit where that character is rare, and at most one more read where it is frequent.
    pre = _prefilter(["END"])
    n = 64_000
    for text, most in (
        ("word and more words, " * (n // 21) + "END", 1),  # no E before the hit
        ("Every Nice Day, " * (n // 16) + "END", 2),  # an E every 16 characters
    ):
        counting = _CountingText(text)
        _CountingText.read = 0
        assert pre.find(counting, 0, len(text)) == len(text) - 3
        assert _CountingText.read <= most * len(text), (text[:20], _CountingText.read)
    # The first of those two reads is a memchr: where the first character never occurs
    # before the hit, str.find of the whole literal is not called at all.
    calls = []

    class _Calls(str):
        def find(self, sub, lo=0, hi=None):  # type: ignore[override]
            calls.append(sub)
            return str.find(self, sub, lo, hi)

    assert pre.find(_Calls("word " * 1000 + "END"), 0, 5003) == 5000
    assert calls == ["E"]
