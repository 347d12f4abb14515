"""Character-set membership comes from `regex` itself, and the sets behave as sets."""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.dialect.charsets import ANY, CharSet, derive, partition

SAMPLES = "aZ09_ \t\n\u00a0\u2003éßΩſ\u212a\u0301🙂中-.|<>"


def test_shorthand_membership_matches_regex_on_every_code_point_sampled():
    for atom in (r"\w", r"\d", r"\s", r"\W", r"\D", r"\S", r"[^a-z\d]"):
        chars = derive(atom)
        compiled = regex.compile(atom, regex.DOTALL)
        for cp in list(range(0, 0x3000)) + [ord(c) for c in SAMPLES]:
            assert (cp in chars) == bool(compiled.fullmatch(chr(cp))), (atom, hex(cp))


def test_case_folding_comes_from_regex():
    # KELVIN SIGN and LONG S fold to k and s in regex's simple case folding.
    assert ord("\u212a") in derive("k", ignore_case=True)
    assert ord("ſ") in derive("s", ignore_case=True)
    assert ord("K") not in derive("k")


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), max_size=6))
def test_charset_normalises_and_complements(pairs):
    ranges = [(min(a, b), max(a, b)) for a, b in pairs]
    cs = CharSet.from_ranges(ranges)
    members = {cp for lo, hi in ranges for cp in range(lo, hi + 1)}
    for cp in range(0, 302):
        assert (cp in cs) == (cp in members)
        assert (cp in cs.complement()) == (cp not in members)
    assert cs.union(cs.complement()) == ANY


def test_partition_separates_exactly_what_the_sets_separate():
    a, b = CharSet.of("abc"), CharSet.of("cd")
    starts = partition([a, b])
    assert starts == [0, ord("a"), ord("c"), ord("d"), ord("e")]
