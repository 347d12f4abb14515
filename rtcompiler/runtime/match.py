"""What a search reports, as ``regex`` reports it: span, partial flag, named groups.

Standard library only (the ``match`` section).
"""

from __future__ import annotations


###{standalone match
class Match:
    """What ``regex`` reports for a match: span, partial flag, named groups.

    Groups are worked out on first request only: a streaming parser asks for
    spans after every chunk, and for groups once, when it commits a match.
    """

    __slots__ = ("start", "end", "partial", "_groups", "_resolve")

    def __init__(self, start: int, end: int, partial: bool, groups=None, resolve=None) -> None:
        self.start = start
        self.end = end
        self.partial = partial
        self._groups = groups
        self._resolve = resolve

    def span(self) -> tuple[int, int]:
        return self.start, self.end

    def groupdict(self) -> dict[str, str | None]:
        if self._groups is None:
            self._groups = self._resolve() if self._resolve is not None else {}
            self._resolve = None
        return dict(self._groups)

    def captured(self) -> dict[str, str]:
        """The groups that took part: what a region's ``{name}`` placeholders read."""
        groups = self._groups
        if groups is None:
            if self._resolve is None:
                return {}  # a literal's match, or a pattern without groups
            groups = self._groups = self._resolve()
            self._resolve = None
        if None not in groups.values():
            return dict(groups)  # (a copy, at C speed: the usual case)
        return {k: v for k, v in groups.items() if v is not None}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Match):
            return NotImplemented
        return (self.span(), self.partial, self.groupdict()) == (
            other.span(), other.partial, other.groupdict()
        )

    def __repr__(self) -> str:
        return f"Match(span={self.span()}, partial={self.partial}, groups={self.groupdict()})"
###}
