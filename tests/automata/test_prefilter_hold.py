"""``Prefilter.hold``: one stdlib pattern that says where a simple pattern pends.

The stream's quick path searches the unsent text with every watcher's ``hold``
pattern at once instead of calling ``Prefilter.pending`` per watcher; the two
must agree on every text that holds no literal.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from rtcompiler.runtime.prefilter import Prefilter

WHITESPACE = [[9, 10], [13, 13], [32, 32]]


def _prefilter(literals: list[str], lead_ranges: list) -> Prefilter:
    data = {"literals": literals, "lead": 0, "lead_ranges": lead_ranges}
    if lead_ranges:
        data["lead_is_loop"] = True
    else:
        data["bare"] = True
    return Prefilter(data)


@given(
    literals=st.lists(st.text("ab< \n", min_size=1, max_size=5), min_size=1, max_size=3,
                      unique=True),
    lead=st.sampled_from([[], WHITESPACE, [[97, 97]]]),
    text=st.text("ab< \n", max_size=40),
    data=st.data(),
)
def test_the_hold_search_pends_where_pending_does(literals, lead, text, data):
    pre = _prefilter(literals, lead)
    lo = data.draw(st.integers(0, len(text)))
    if any(s in text[lo:] for s in literals):
        return  # pending() is defined for text holding no literal only
    expected = pre.pending(text, lo)
    if pre.hold is None:
        # No beginning of a literal and no lead: nothing can pend.
        assert expected == len(text)
        return
    # Searched alone, as the stream does: the guard must not read text[lo - 1].
    found = re.compile(pre.hold, re.DOTALL).search(text[lo:])
    assert (len(text) if found is None else lo + found.start()) == expected


def test_a_lead_run_is_entered_where_it_begins_only():
    pre = _prefilter(["<tool_call>"], WHITESPACE)
    hold = re.compile(pre.hold, re.DOTALL)
    assert hold.search("word   <too").start() == 4
    assert hold.search("word   ").start() == 4
    assert hold.search("word   x") is None
    # Inside a run, the guard fails at once: a position in the middle of it cannot
    # begin the leftmost attempt, so sre does not read the run again from there.
    assert hold.search("   <t", 1) is None
    assert hold.search("   ", 1) is None
