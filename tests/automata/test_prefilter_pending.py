"""``Prefilter.pending`` looks for a literal's beginning only where one can end the text.

A proper beginning of a literal at the end of the text begins at most ``heads_reach``
(the longest literal's length less one) characters before the end; the stream charges
pending that much (ResponseStream.answer), so pending must search no further back, and
answer as a search of the whole rest of the text would.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from rtcompiler.runtime.prefilter import Prefilter


class _StartsRecorded:
    """Stands for the compiled beginnings search and records where each search starts."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.starts = []

    def search(self, text, pos=0):
        self.starts.append(pos)
        return self.compiled.search(text, pos)


@given(
    literals=st.lists(st.text("ab<|", min_size=1, max_size=6), min_size=1, max_size=3, unique=True),
    text=st.text("ab<| ", max_size=300),
    data=st.data(),
)
def test_pending_searches_only_the_end_and_answers_as_a_whole_search(literals, text, data):
    pre = Prefilter({"literals": literals, "lead": 0, "lead_ranges": [], "bare": True})
    lo = data.draw(st.integers(0, len(text)))
    heads = sorted({s[:k] for s in literals for k in range(1, len(s))})
    whole = re.compile("(?:" + "|".join(map(re.escape, heads)) + r")\Z") if heads else None
    m = None if whole is None else whole.search(text, lo)
    expected = len(text) if m is None else m.start()
    if pre._heads is not None:
        pre._heads = _StartsRecorded(pre._heads)
    assert pre.pending(text, lo) == expected
    if pre._heads is not None:
        assert min(pre._heads.starts) >= len(text) - pre.heads_reach, pre._heads.starts
