"""The input alphabet of one pattern: code points grouped into classes.

Two characters fall in one class when no character set of the pattern (and, if
the pattern uses ``\\b``/``\\B``, not the ``\\w`` set either) tells them apart, so the
automata step on class numbers and their tables stay small.

>>> a = Alphabet.build([CharSet.of("ab")], word=None)
>>> a.class_of(ord("a")) == a.class_of(ord("b")) != a.class_of(ord("c"))
True
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from ..dialect.charsets import CharSet, partition


@dataclass(frozen=True)
class Alphabet:
    """Intervals of code points, each mapped to a class.

    The intervals come from cutting the code space at every range boundary of
    every set; intervals that belong to exactly the same sets share one class,
    so ``\\w``'s hundreds of ranges still give a handful of classes.
    """

    starts: tuple[int, ...]  # interval k covers [starts[k], starts[k+1])
    interval_class: tuple[int, ...]  # the class of each interval
    accepts: tuple[frozenset[int], ...]  # per character set: the classes inside it
    is_word: tuple[bool, ...]  # per class: whether it lies in \w (False if unused)

    @staticmethod
    def build(charsets: Sequence[CharSet], word: CharSet | None) -> Alphabet:
        all_sets = list(charsets) + ([word] if word is not None else [])
        starts = tuple(partition(all_sets))
        # The sets holding each interval, listed set by set: as much work as the sets
        # cover, where asking every set about every interval was quadratic (1,000
        # one-character sets of a literal list cut the code space in 2,000 intervals).
        holders: list[list[int]] = [[] for _ in starts]
        for i, chars in enumerate(all_sets):
            for lo, hi in chars.ranges:
                first = bisect.bisect_right(starts, lo) - 1
                last = bisect.bisect_right(starts, hi) - 1
                for k in range(first, last + 1):
                    holders[k].append(i)
        signature_class: dict[tuple[int, ...], int] = {}
        interval_class = []
        for held_by in holders:
            signature = tuple(held_by)
            interval_class.append(signature_class.setdefault(signature, len(signature_class)))
        n_sets = len(charsets)
        inside: list[set[int]] = [set() for _ in range(n_sets)]
        is_word = [False] * len(signature_class)
        for signature, c in signature_class.items():
            for i in signature:
                if i < n_sets:
                    inside[i].add(c)
                else:  # the \w set, listed last
                    is_word[c] = True
        accepts = tuple(frozenset(classes) for classes in inside)
        return Alphabet(starts, tuple(interval_class), accepts, tuple(is_word))

    @property
    def size(self) -> int:
        return len(self.is_word)

    def class_of(self, code_point: int) -> int:
        return self.interval_class[bisect.bisect_right(self.starts, code_point) - 1]

    def to_data(self) -> dict:
        return {
            "starts": list(self.starts),
            "interval_class": list(self.interval_class),
            "accepts": [sorted(a) for a in self.accepts],
            "word_classes": [k for k, w in enumerate(self.is_word) if w],
        }

    @staticmethod
    def from_data(data: dict) -> Alphabet:
        interval_class = tuple(data["interval_class"])
        size = max(interval_class) + 1
        words = set(data["word_classes"])
        return Alphabet(
            tuple(data["starts"]),
            interval_class,
            tuple(frozenset(a) for a in data["accepts"]),
            tuple(k in words for k in range(size)),
        )
