"""``python -m bench.ab``: two of our generated parsers side by side, in one process.

The bench's cells (ours/reference) move by 10-15% between runs of the same code on a
shared machine, more than a change of a few percent. Here both parsers run in the same
process, alternating round by round, so that whatever slows the machine slows both:

* ``--base REV`` compares the module this checkout generates with the one the checkout
  at git revision ``REV`` generates (made in a temporary ``git worktree``): the A/B of a
  change, as the commit messages and closing notes give it;
* ``--strict`` compares a bundled grammar's robust form with its strict form: what the
  opt-in extensions cost;
* ``--since REV`` compares the robust form here with the grammar as it was bundled at
  ``REV``, compiled there: what a user who upgrades sees for the same outputs. The
  reference is timed too, on the template as bundled at ``REV`` and on today's strict
  form (what the bench's robust row is measured against), so that the last column is the
  change of the bench's own ratio, ours/reference, since ``REV``.

Each round streams every cut of 8 realistic outputs of the style once (up to 16 cuts),
with what the parsers remember of earlier streams forgotten first, as a server meets a
new output; a parse mode parses the 8 outputs 4 times. The ratio printed is of the
minimum time per stream over the rounds (``new/old``, or ``robust/strict``).

    python -m bench.ab --base HEAD~1 --style gpt_oss --size 1K --modes feed64,feed256
    python -m bench.ab --strict --style qwen3 --size 8K
    python -m bench.ab --since 0ceb12b --style qwen3 --size 1K

``--opcodes`` counts the Python bytecode instructions each parser runs instead of
timing it: the same figure on every run to a few instructions in ten thousand (what a
parser keeps across rounds, such as the order a prefilter tries its literals in), so a
change of a percent shows on a machine whose timings move by ten. sre's searches and
``json.loads`` run in C and are not counted: a count ratio overstates a time ratio where
C work is a large share, and the reference's count leaves out its regex work.

    python -m bench.ab --base HEAD~1 --style qwen3 --size 8K --modes parse,feed64 --opcodes
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

from . import outputs
from .engines import Reference, remembered
from .run import chunked

ROOT = Path(__file__).resolve().parent.parent


def module_from_source(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def source_at(tree: Path, template: dict) -> str:
    """The module the compiler in checkout ``tree`` generates for ``template``."""
    program = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); "
        "from rtcompiler import compile_template; "
        "sys.stdout.write(compile_template(json.loads(sys.stdin.read())).source)"
    )
    return subprocess.run(
        [sys.executable, "-c", program, str(tree)], input=json.dumps(template),
        capture_output=True, text=True, check=True,
    ).stdout


def forget(module: types.ModuleType) -> None:
    """What a generated parser remembers of earlier streams, forgotten."""
    if isinstance(module, ReferenceModule):
        return
    for kept in remembered(module):
        kept.clear()


class ReferenceModule:
    """transformers' parser for one template (bench.engines.Reference), with a generated
    module's two entry points."""

    def __init__(self, template: dict) -> None:
        reference = Reference(template)
        self.parse_response = lambda text, prefix=None, tools=None: reference.parse(
            text, prefix, tools)
        self.ResponseParser = lambda prefix=None, tools=None: reference.stream_parser(
            prefix, tools)


def _runs(mode: str, outs: list) -> tuple[int, list]:
    """The characters per feed (0: a whole parse) and the (output, first cut) runs of a round."""
    k = 0 if mode == "parse" else int(mode.removeprefix("feed"))
    runs = [(o, 0) for o in outs] * 4 if k == 0 else [
        (outs[i % len(outs)], (i // len(outs)) % k) for i in range(len(outs) * min(k, 16))
    ]
    return k, runs


def _go(module, k: int, part: list) -> None:
    for out, first in part:
        if k == 0:
            module.parse_response(out.text, prefix=out.prefix, tools=out.tools)
        else:
            parser = module.ResponseParser(out.prefix, tools=out.tools)
            for piece in chunked(out.text, k, first):
                parser.feed(piece)
            parser.finalize()


def timed(module: types.ModuleType, mode: str, outs: list) -> float:
    """Seconds per stream (or parse) of one round, after two runs to warm up."""
    k, runs = _runs(mode, outs)
    forget(module)
    _go(module, k, runs[:2])
    start = time.process_time()
    _go(module, k, runs[2:])
    return (time.process_time() - start) / (len(runs) - 2)


def counted(module: types.ModuleType, mode: str, outs: list) -> float:
    """Python bytecode instructions per stream (or parse) of one round, after two runs to
    warm up (``sys.settrace``: what runs in C is not counted)."""
    k, runs = _runs(mode, outs)
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return tracer

    # A whole round first: what compiles once per process (re's cache holds the
    # stdlib patterns a stream builds when first needed, and keeps them across
    # ``forget``) is not counted, as the minimum of timed rounds leaves it out.
    _go(module, k, runs)
    forget(module)
    _go(module, k, runs[:2])
    sys.settrace(tracer)
    try:
        _go(module, k, runs[2:])
    finally:
        sys.settrace(None)
    return count / (len(runs) - 2)


def compare(parsers: list, style: str, size: int, modes: list,
            rounds: int, measure=timed) -> list[tuple[str, list[float]]]:
    """Per mode: (mode, best measure of each parser), taking turns in a rotating order."""
    outs = [outputs.realistic(style, "mixed", size, seed=s) for s in range(8)]
    found = []
    for mode in modes:
        if measure is counted:  # (the same count each round)
            found.append((mode, [counted(p, mode, outs) for p in parsers]))
            continue
        best = [float("inf")] * len(parsers)
        for r in range(rounds):
            order = list(range(len(parsers)))
            for i in order[r % len(order):] + order[:r % len(order)]:
                best[i] = min(best[i], measure(parsers[i], mode, outs))
        found.append((mode, best))
    return found


def _size(text: str) -> int:
    return int(text[:-1]) * 1024 if text.upper().endswith("K") else int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.split("\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--base", help="git revision to compare this checkout with")
    which.add_argument("--strict", action="store_true", help="robust form against strict form")
    which.add_argument(
        "--since", metavar="REV",
        help="robust form against the grammar as bundled at git revision REV",
    )
    parser.add_argument("--style", default="gpt_oss", choices=sorted(outputs.ALL_STYLES))
    parser.add_argument("--robust", action="store_true", help="with --base: the robust form")
    parser.add_argument("--size", default="1K", help="output size (1K, 8K, ...)")
    parser.add_argument(
        "--modes", default="parse,feed1,feed4,feed16,feed64,feed256",
        help="comma-separated: parse and feedN (N characters a feed); default: the "
        "sweep's modes",
    )
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument(
        "--opcodes", action="store_true",
        help="count Python bytecode instructions instead of timing: nearly the same figure "
             "on every run (C work, sre and json, is not counted)",
    )
    args = parser.parse_args(argv)
    size, modes = _size(args.size), args.modes.split(",")
    if args.strict:
        names = ("strict", "robust")
        a = module_from_source(source_at(ROOT, outputs.response_template(args.style)), "strict")
        b = module_from_source(
            source_at(ROOT, outputs.response_template(args.style, True)), "robust"
        )
    else:
        rev = args.base or args.since
        names = ("old", "new") if args.base else (rev, "robust")
        template = outputs.response_template(args.style, args.robust or bool(args.since))
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "base"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), rev],
                check=True,
            )
            try:
                old = template if args.base else json.loads(
                    (tree / "rtcompiler" / "grammars" / args.style / "response_template.json")
                    .read_text(encoding="utf-8")
                )
                a = module_from_source(source_at(tree, old), "old")
            finally:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                    check=True,
                )
        b = module_from_source(source_at(ROOT, template), "new")
    label = args.style + (" robust" if args.robust else "")
    parsers = [a, b]
    if args.since:
        label = f"{args.style}, robust here against as bundled at {args.since}"
        # The bench's robust row is measured against the reference on the strict form.
        from rtcompiler.grammars import strict_spec

        parsers += [ReferenceModule(strict_spec(old)), ReferenceModule(strict_spec(template))]
    scale = 1 if args.opcodes else 1e6
    if args.opcodes:
        print(f"{label} {args.size}, Python opcodes per stream or parse")
    else:
        print(f"{label} {args.size}, min of {args.rounds} rounds, us per stream or parse")
    head = f"{'mode':8s} {names[0]:>8s} {names[1]:>8s} {names[1] + '/' + names[0]:>14s}"
    if args.since:
        head += f" {'ref then':>9s} {'ref now':>8s} {'bench ratio now/then':>21s}"
    print(head)
    measure = counted if args.opcodes else timed
    for mode, best in compare(parsers, args.style, size, modes, args.rounds, measure):
        line = f"{mode:8s} {best[0] * scale:8.1f} {best[1] * scale:8.1f} {best[1] / best[0]:14.3f}"
        if args.since:
            then, now = best[0] / best[2], best[1] / best[3]
            line += f" {best[2] * scale:9.1f} {best[3] * scale:8.1f} {now / then:21.3f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
