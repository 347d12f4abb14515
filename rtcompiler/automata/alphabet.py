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
    starts: tuple[int, ...]  # class k covers [starts[k], starts[k+1])
    accepts: tuple[frozenset[int], ...]  # per character set: the classes inside it
    is_word: tuple[bool, ...]  # per class: whether it lies in \w (False if unused)

    @staticmethod
    def build(charsets: Sequence[CharSet], word: CharSet | None) -> Alphabet:
        all_sets = list(charsets) + ([word] if word is not None else [])
        starts = tuple(partition(all_sets))

        def classes(chars: CharSet) -> frozenset[int]:
            out: set[int] = set()
            for lo, hi in chars.ranges:
                first = bisect.bisect_right(starts, lo) - 1
                last = bisect.bisect_right(starts, hi) - 1
                out.update(range(first, last + 1))
            return frozenset(out)

        accepts = tuple(classes(c) for c in charsets)
        word_classes = classes(word) if word is not None else frozenset()
        is_word = tuple(k in word_classes for k in range(len(starts)))
        return Alphabet(starts, accepts, is_word)

    @property
    def size(self) -> int:
        return len(self.starts)

    def class_of(self, code_point: int) -> int:
        return bisect.bisect_right(self.starts, code_point) - 1

    def to_data(self) -> dict:
        return {
            "starts": list(self.starts),
            "accepts": [sorted(a) for a in self.accepts],
            "word_classes": [k for k, w in enumerate(self.is_word) if w],
        }

    @staticmethod
    def from_data(data: dict) -> Alphabet:
        starts = tuple(data["starts"])
        words = set(data["word_classes"])
        return Alphabet(
            starts,
            tuple(frozenset(a) for a in data["accepts"]),
            tuple(k in words for k in range(len(starts))),
        )
