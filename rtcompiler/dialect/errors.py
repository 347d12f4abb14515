"""Errors raised while reading a delimiter pattern."""

from __future__ import annotations


class PatternError(ValueError):
    """A pattern uses syntax outside the supported dialect, or is invalid.

    ``construct`` names what was found (``"lookbehind"``, ``"backreference"``, ...)
    and ``column`` is its 0-based offset in the pattern text, so that a template
    author can go straight to it.
    """

    def __init__(self, construct: str, column: int, pattern: str, detail: str = "") -> None:
        self.construct = construct
        self.column = column
        self.pattern = pattern
        self.detail = detail
        message = f"unsupported {construct} at column {column} in pattern {pattern!r}"
        if detail:
            message = f"{detail} at column {column} in pattern {pattern!r}"
        super().__init__(message)
