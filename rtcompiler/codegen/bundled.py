"""Regenerate ``generated/``: the compiled parser of every bundled grammar.

A tool of the checkout (``generated/`` is not part of the package).

    python -m rtcompiler.codegen.bundled          # rewrite generated/*.py
    python -m rtcompiler.codegen.bundled --check  # exit 1 if any file is stale

A test runs the check, so a change to the compiler or to a grammar that is
not followed by a regeneration fails the suite.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import grammars
from . import generate_module

# generated/ is the checkout's, beside the package: compiler output kept in the repository.
GENERATED = Path(__file__).resolve().parent.parent.parent / "generated"


def expected() -> dict[str, str]:
    """File name in ``generated/`` -> the source the compiler produces now."""
    return {
        f"{name}.py": generate_module(grammars.grammar(name).template)
        for name in grammars.names()
    }


def stale() -> list[str]:
    """Files of ``generated/`` that differ from what the compiler produces, or missing or extra."""
    want = expected()
    have = {p.name for p in GENERATED.glob("*.py")} if GENERATED.is_dir() else set()
    problems = [f"extra: {name}" for name in sorted(have - set(want))]
    for name, source in want.items():
        path = GENERATED / name
        if not path.is_file():
            problems.append(f"missing: {name}")
        elif path.read_text(encoding="utf-8") != source:
            problems.append(f"stale: {name}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rtcompiler.codegen.bundled")
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale()
        for line in problems:
            print(line)
        return 1 if problems else 0
    GENERATED.mkdir(exist_ok=True)
    want = expected()
    for old in GENERATED.glob("*.py"):
        if old.name not in want:
            old.unlink()
    for name, source in want.items():
        (GENERATED / name).write_text(source, encoding="utf-8")
        print(f"wrote generated/{name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
