"""Shared pieces of the runtime differential tests: outcomes, equality, settings."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis.control import currently_in_test_context

# Every parser, transform and typing function gets at least this many examples.
DIFFERENTIAL = settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class Raised:
    """The outcome of a call that raised: compared by exception type only."""

    def __init__(self, exc: BaseException) -> None:
        self.type = type(exc)
        self.message = str(exc)

    def __repr__(self) -> str:
        return f"Raised({self.type.__name__}: {self.message[:200]!r})"


def outcome(call: Callable[[], Any]) -> Any:
    """The call's value, or a :class:`Raised` for the exception it raised."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 -- the exception is the observation
        return Raised(exc)


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (1, 1.0 and True differ; NaN == NaN).

    Exceptions are equal when their types are.
    """
    if isinstance(a, Raised) or isinstance(b, Raised):
        return isinstance(a, Raised) and isinstance(b, Raised) and a.type is b.type
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def assert_same(mine: Any, ref: Any) -> None:
    """Assert equal outcomes; under Hypothesis, also record what the reference did."""
    if currently_in_test_context():
        kind = ref.type.__name__ if isinstance(ref, Raised) else type(ref).__name__
        event(f"reference: {kind}")
    assert same(mine, ref), f"ours: {mine!r}\nreference: {ref!r}"
