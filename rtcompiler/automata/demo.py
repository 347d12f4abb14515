"""Show a delimiter pattern at work on streamed text.

    python -m rtcompiler.automata.demo PATTERN TEXT [--chunk N] [--emit automaton]

After each chunk it prints what ``regex``'s ``search(text, partial=True)`` would
answer for the text so far -- the question a streaming parser asks -- from our
automaton, stepped once per character. ``--emit automaton`` prints the compiled
automaton as JSON instead.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..dialect.errors import PatternError
from .search import compile_regex


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rtcompiler.automata.demo")
    parser.add_argument("pattern")
    parser.add_argument("text")
    parser.add_argument("--chunk", type=int, default=1, help="characters per feed (default 1)")
    parser.add_argument("--emit", choices=["automaton"], help="print the automaton as JSON")
    args = parser.parse_args(argv)
    try:
        rx = compile_regex(args.pattern)
    except PatternError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.emit:
        json.dump(rx.to_data(), sys.stdout, indent=1)
        print()
        return 0
    scanner = rx.scanner()
    for i in range(0, len(args.text), max(args.chunk, 1)):
        chunk = args.text[i : i + max(args.chunk, 1)]
        scanner.feed(chunk)
        m = scanner.result(partial=True)
        if m is None:
            verdict = "no match possible: emit everything"
        elif m.partial:
            verdict = f"partial at {m.start}: hold back {args.text[m.start:scanner.pos]!r}"
        else:
            verdict = f"match {args.text[m.start:m.end]!r} at {m.span()} {m.groupdict() or ''}"
        print(f"{scanner.pos:>4} {chunk!r:>8}  {verdict}")
    states = len(rx.dfa.keys)
    print(f"{scanner.steps} DFA steps for {scanner.pos} characters; {states} DFA states built")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
