"""The two engines under one interface: our generated module and the transformers reference.

Both are built once per template before anything is timed, so a measurement is the
parse itself: for us, the module ``rtc compile`` would write for the template, compiled by
the compiler in this checkout; for the reference, its ``ResponseTemplate`` loaded once
(``parse_response`` accepts an already-loaded one, and skips the reload).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import timing


class ParityError(AssertionError):
    """Both engines were given the same input and returned different messages."""


@dataclass
class StreamTiming:
    """One streamed run: total seconds, and seconds in the first and last tenth of the feeds."""

    total: float
    head: float
    tail: float
    head_feeds: int
    tail_feeds: int
    feeds: int


class Engine:
    """Parse a whole text, or stream it in given chunks."""

    name = "engine"

    def parse(self, text: str, prefix: str, tools: list | None) -> dict:
        raise NotImplementedError

    def stream_parser(self, prefix: str, tools: list | None) -> Any:
        """A fresh object with ``feed(text)`` and ``finalize() -> (message, events)``."""
        raise NotImplementedError

    def stream(self, chunks: Sequence[str], prefix: str, tools: list | None) -> dict:
        parser = self.stream_parser(prefix, tools)
        for chunk in chunks:
            parser.feed(chunk)
        return parser.finalize()[0]

    def timed_stream(self, chunks: Sequence[str], prefix: str,
                     tools: list | None) -> tuple[dict, StreamTiming]:
        """Stream and time it, with clock reads only at the tenth boundaries (not per feed).

        The tenths time feeds alone; the total also counts building the parser (with its
        prefix) and finalizing.
        """
        n = len(chunks)
        tenth = max(1, n // 10)
        head, middle, tail = chunks[:tenth], chunks[tenth:n - tenth], chunks[max(tenth, n - tenth):]
        clock = timing.clock
        start = clock()
        parser = self.stream_parser(prefix, tools)
        feed = parser.feed
        t0 = clock()
        for chunk in head:
            feed(chunk)
        t1 = clock()
        for chunk in middle:
            feed(chunk)
        t2 = clock()
        for chunk in tail:
            feed(chunk)
        t3 = clock()
        message = parser.finalize()[0]
        t4 = clock()
        return message, StreamTiming(t4 - start, t1 - t0, t3 - t2, len(head), len(tail), n)


class Ours(Engine):
    name = "ours"

    def __init__(self, template: dict) -> None:
        from rtcompiler import compile_template

        self.module = compile_template(template).module

    def parse(self, text: str, prefix: str, tools: list | None) -> dict:
        return self.module.parse_response(text, prefix=prefix, tools=tools)

    def stream_parser(self, prefix: str, tools: list | None) -> Any:
        return self.module.ResponseParser(prefix, tools=tools)


def remembered(module: Any) -> list:
    """What a generated parser module keeps from earlier streams (see OursFresh), as the
    containers to clear to forget it."""
    table = module.TABLE
    regexes = [
        delimiter.regex
        for region in table.regions
        for delimiter in (region.open, region.close)
        if delimiter is not None
    ]
    return [r.partials for r in regexes] + [r.settled_at for r in regexes] + [
        r.settled_lengths for r in regexes] + [table.transitions]


class OursFresh(Ours):
    """Ours with nothing kept from earlier streams: every stream meets each tool-call
    header for the first time. A compiled parser remembers what a search answered for
    a header it met, the groups of a header it read, and what a feed did from a state
    it met (docs/automaton.md, "Headers met before", "Groups" and "Feeds met before");
    the bench repeats each output, so by default it times a parser that has met them
    all, as a server that has seen its tools' headers once. Forgetting is timed too, against us."""

    def __init__(self, template: dict) -> None:
        super().__init__(template)
        self.kept = remembered(self.module)

    def forget(self) -> None:
        for kept in self.kept:
            kept.clear()

    def parse(self, text: str, prefix: str, tools: list | None) -> dict:
        self.forget()
        return super().parse(text, prefix, tools)

    def stream_parser(self, prefix: str, tools: list | None) -> Any:
        self.forget()
        return super().stream_parser(prefix, tools)


class Reference(Engine):
    name = "reference"

    def __init__(self, template: dict) -> None:
        from transformers.utils.chat_parsing import ResponseParser, parse_response
        from transformers.utils.chat_parsing.response_templates import load_response_template

        self.template = load_response_template(template)
        self._parse = parse_response
        self._parser = ResponseParser

    def parse(self, text: str, prefix: str, tools: list | None) -> dict:
        return self._parse(text, self.template, prefix=prefix, tools=tools)

    def stream_parser(self, prefix: str, tools: list | None) -> Any:
        return self._parser(self.template, prefix, tools=tools)


def _first_difference(a: Any, b: Any, path: str = "message") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}[{key!r}] only in {'reference' if key in b else 'ours'}"
            if a[key] != b[key]:
                return _first_difference(a[key], b[key], f"{path}[{key!r}]")
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items in ours, {len(b)} in the reference"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    if isinstance(a, str) and isinstance(b, str):
        pairs = enumerate(zip(a, b, strict=False))
        i = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
        return (f"{path}: strings of {len(a)} and {len(b)} characters differ at {i}: "
                f"ours {a[i:i + 40]!r}, reference {b[i:i + 40]!r}")
    return f"{path}: ours {a!r:.200}, reference {b!r:.200}"


def outcome(run: Callable[[], Any]) -> tuple[str, Any]:
    """What a run returns, or the exception it raises (an outcome to compare, too)."""
    try:
        return "ok", run()
    except Exception as e:
        return "error", e


def check_parity(case: str, ours: tuple[str, Any], reference: tuple[str, Any]) -> None:
    """Fail loudly unless both returned equal messages, or both raised the same exception type
    (the messages of exceptions are ours to word)."""
    if ours[0] == reference[0] == "ok":
        if ours[1] == reference[1]:
            return
        detail = _first_difference(ours[1], reference[1])
    elif ours[0] == reference[0] == "error" and type(ours[1]) is type(reference[1]):
        return
    else:
        detail = (f"ours {ours[0]} {_shown(ours[1])}; reference {reference[0]} "
                  f"{_shown(reference[1])}")
    raise ParityError(f"{case}: the engines disagree -- {detail}")


def _shown(value: Any) -> str:
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"[:300]
    return repr(value)[:300]
