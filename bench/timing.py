"""Clocks, time budgets, growth exponents and peak memory."""

from __future__ import annotations

import gc
import math
import signal
import statistics
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


class OverBudget(BaseException):
    """A run exceeded its time budget.

    A BaseException, so that an engine's own ``except Exception`` (say, around a failed
    cast) cannot swallow it and carry on.
    """


def _can_interrupt() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def budget(seconds: float | None) -> Iterator[None]:
    """Interrupt the body after ``seconds`` (SIGALRM; the ``regex`` module checks for signals,
    so a catastrophic backtrack inside the reference is interrupted too). Where signals are
    unavailable the body runs to completion and the caller judges it afterwards."""
    if not seconds or not _can_interrupt():
        yield
        return

    def _expire(signum: int, frame: Any) -> None:
        raise OverBudget

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def settle_heap() -> None:
    """Collect, then exempt everything alive (modules, engines, inputs) from later collections,
    so the collection before each measurement costs what the runs left behind, not what
    transformers imported."""
    gc.collect()
    gc.freeze()


@contextmanager
def quiet_gc() -> Iterator[None]:
    """No collector pauses inside a measurement (timeit's choice); collect before instead."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# What a measurement reads: the process's CPU time by default (``--clock cpu``). On a
# machine shared with busy neighbours, wall time also counts the time the process waits
# for a core, a share that moves with the neighbours' load from one run to the next and
# lands on whichever engine happens to be running; CPU time counts the work alone.
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
clock: Callable[[], float] = CLOCKS["cpu"]


def use_clock(name: str) -> None:
    global clock
    clock = CLOCKS[name]


def timed(run: Callable[[], T], limit: float | None) -> tuple[T, float]:
    """``run()``'s result and the time it took on ``clock``; raises OverBudget past ``limit``
    seconds of wall time."""
    with quiet_gc(), budget(limit):
        start = clock()
        result = run()
        elapsed = clock() - start
    if limit and elapsed > limit:  # no signals here: judged after the fact
        raise OverBudget
    return result, elapsed


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def growth_exponent(sizes: list[int], seconds: list[float]) -> float | None:
    """Least-squares slope of log(time) against log(size): 1 is linear, 2 quadratic."""
    points = [(math.log(n), math.log(t))
              for n, t in zip(sizes, seconds, strict=True) if t and t > 0]
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else None


def peak_memory(run: Callable[[], T]) -> tuple[T, int]:
    """``run()``'s result and the peak bytes it allocated above what was live before it."""
    gc.collect()
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        baseline = tracemalloc.get_traced_memory()[0]
        result = run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        if started:
            tracemalloc.stop()
    return result, max(0, peak - baseline)
