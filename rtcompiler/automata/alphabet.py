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

        def intervals(chars: CharSet) -> set[int]:
            out: set[int] = set()
            for lo, hi in chars.ranges:
                first = bisect.bisect_right(starts, lo) - 1
                last = bisect.bisect_right(starts, hi) - 1
                out.update(range(first, last + 1))
            return out

        members = [intervals(s) for s in all_sets]
        signature_class: dict[tuple[bool, ...], int] = {}
        interval_class = []
        for k in range(len(starts)):
            signature = tuple(k in m for m in members)
            interval_class.append(signature_class.setdefault(signature, len(signature_class)))
        n_sets = len(charsets)
        accepts = tuple(
            frozenset(c for sig, c in signature_class.items() if sig[i]) for i in range(n_sets)
        )
        is_word = [False] * len(signature_class)
        if word is not None:
            for sig, c in signature_class.items():
                is_word[c] = sig[n_sets]
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
