"""Sets of code points, and their membership as the ``regex`` module defines it.

Unicode classes (``\\w``, ``\\d``, ``\\s``, their negations, classes that contain
them, case-insensitive literals) are never written down by hand here: the set for an
atom is derived by letting ``regex`` itself scan every code point once, then kept as
sorted inclusive ranges. The result is cached per (atom, flags), in memory and on
disk, keyed by the ``regex`` version so that an upgrade re-derives everything.
"""

from __future__ import annotations

import atexit
import bisect
import functools
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MAX_CODE_POINT = 0x10FFFF


@dataclass(frozen=True)
class CharSet:
    """An immutable set of code points as sorted, disjoint, non-adjacent ranges.

    >>> CharSet.of("abc").ranges
    ((97, 99),)
    >>> ord("b") in CharSet.of("abc")
    True
    """

    ranges: tuple[tuple[int, int], ...]

    @staticmethod
    def from_ranges(ranges: Iterable[tuple[int, int]]) -> CharSet:
        merged: list[list[int]] = []
        for lo, hi in sorted(ranges):
            if merged and lo <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        return CharSet(tuple((lo, hi) for lo, hi in merged))

    @staticmethod
    def of(chars: str) -> CharSet:
        return CharSet.from_ranges((ord(c), ord(c)) for c in chars)

    def __contains__(self, cp: object) -> bool:
        if not isinstance(cp, int):
            return False
        i = bisect.bisect_right(self.ranges, (cp, MAX_CODE_POINT + 1)) - 1
        return i >= 0 and self.ranges[i][0] <= cp <= self.ranges[i][1]

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def union(self, other: CharSet) -> CharSet:
        return CharSet.from_ranges(self.ranges + other.ranges)

    def intersection(self, other: CharSet) -> CharSet:
        return self.complement().union(other.complement()).complement()

    def difference(self, other: CharSet) -> CharSet:
        return self.intersection(other.complement())

    def complement(self) -> CharSet:
        out = []
        nxt = 0
        for lo, hi in self.ranges:
            if lo > nxt:
                out.append((nxt, lo - 1))
            nxt = hi + 1
        if nxt <= MAX_CODE_POINT:
            out.append((nxt, MAX_CODE_POINT))
        return CharSet(tuple(out))


ANY = CharSet(((0, MAX_CODE_POINT),))


@functools.lru_cache(maxsize=1)
def _every_code_point() -> str:
    return "".join(map(chr, range(MAX_CODE_POINT + 1)))


def _cache_file() -> Path:
    import regex

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    name = f"charsets-regex-{regex.__version__}-py{sys.version_info[0]}{sys.version_info[1]}.json"
    return Path(base) / "rtcompiler" / name


_disk: dict[str, list[list[int]]] | None = None
_dirty = False


def _disk_cache() -> dict[str, list[list[int]]]:
    global _disk
    if _disk is None:
        try:
            _disk = json.loads(_cache_file().read_text())
        except (OSError, ValueError):
            _disk = {}
    return _disk


def _save_disk_cache() -> None:
    path = _cache_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(_disk_cache()))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home only costs a re-derivation next time


@functools.lru_cache(maxsize=4096)
def derive(atom: str, ignore_case: bool = False, verbose: bool = False) -> CharSet:
    """The code points that ``regex`` matches with the one-character pattern ``atom``.

    ``atom`` is pattern source for a single character: ``\\w``, ``[^a-z\\d]``, ``k``.

    >>> ord("\\u212a") in derive("k", ignore_case=True)   # KELVIN SIGN folds to k
    True
    """
    import regex

    flags = ("i" if ignore_case else "") + ("x" if verbose else "")
    key = f"{flags}:{atom}"
    cached = _disk_cache().get(key)
    if cached is not None:
        return CharSet(tuple((lo, hi) for lo, hi in cached))
    prefix = f"(?{flags})" if flags else ""
    runs = regex.compile(f"{prefix}(?:{atom})+", regex.DOTALL)
    ranges = tuple((m.start(), m.end() - 1) for m in runs.finditer(_every_code_point()))
    result = CharSet(ranges)
    global _dirty
    if not _dirty:
        _dirty = True
        atexit.register(_save_disk_cache)
    _disk_cache()[key] = [list(r) for r in ranges]
    return result


def partition(sets: Iterable[CharSet]) -> list[int]:
    """Split the code space into classes no set distinguishes.

    Returns the sorted start points of the classes: class ``k`` is
    ``[starts[k], starts[k+1])``. Two characters in one class belong to exactly the
    same sets, so an automaton can step on class numbers instead of characters.
    """
    cuts = {0}
    for s in sets:
        for lo, hi in s.ranges:
            cuts.add(lo)
            if hi < MAX_CODE_POINT:
                cuts.add(hi + 1)
    return sorted(cuts)
