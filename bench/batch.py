"""Batch throughput: messages per second parsing N seeded outputs.

    python -m bench.batch [--quick] [--n 2000] [--style qwen3] [--workers 2] [--json out.json]

Three ways, timed in turn and repeated (medians): the generated module in this process;
the generated module in a pool of worker processes that load only the module's file
(``bench/worker.py``); transformers' reference in this process. Every message from each
way is first compared with the reference's.

Heavy imports (rtcompiler, transformers) happen inside functions: a spawned worker
re-imports this module, and must stay standard-library only.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # `python bench/batch.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "bench"

from . import worker


def corpus(style: str, n: int, seed: int = 0, low: int = 512,
           high: int = 16 * 1024) -> list[Any]:
    """``n`` seeded outputs, sizes log-uniform in [low, high], a third of them plain answers."""
    from .outputs import realistic

    rng = random.Random(f"batch:{seed}:{style}")
    items = []
    for i in range(n):
        size = int(low * (high / low) ** rng.random())
        kind = "plain" if rng.random() < 1 / 3 else "mixed"
        items.append(realistic(style, kind, size, seed=seed * 1_000_003 + i))
    return items


def _batches(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def run(style: str = "qwen3", n: int = 2000, workers: int = 2, reps: int = 3,
        chunk: int = 32, seed: int = 0, progress: Any = None) -> dict:
    from rtcompiler import compile_template

    from .engines import Reference, check_parity
    from .outputs import TOOLS, response_template

    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    template = response_template(style)
    compiled = compile_template(template)
    reference = Reference(template)
    say(f"batch: rendering {n} {style} outputs")
    outs = corpus(style, n, seed)
    pairs = [(o.text, o.prefix) for o in outs]
    chars = sum(len(t) for t, _ in pairs)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{style}_parser.py"
        path.write_text(compiled.source, encoding="utf-8")
        worker.load(str(path), TOOLS)  # this process runs the very file the workers load

        def ours_here() -> list[dict]:
            return worker.parse_batch(pairs)

        def reference_here() -> list[dict]:
            return [reference.parse(t, p, TOOLS) for t, p in pairs]

        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context, initializer=worker.load,
                                 initargs=(str(path), TOOLS)) as pool:
            # Start every worker and load the module before the clock runs.
            list(pool.map(worker.parse_batch, [pairs[:1]] * workers * 2))
            leaked = sorted(set().union(*pool.map(_imported, range(workers * 2))))

            def ours_pool() -> list[dict]:
                out: list[dict] = []
                for part in pool.map(worker.parse_batch, _batches(pairs, chunk)):
                    out.extend(part)
                return out

            ways = {"ours, 1 process": ours_here,
                    f"ours, {workers} worker processes": ours_pool,
                    "reference, 1 process": reference_here}
            say("batch: checking every message against the reference")
            expected = reference_here()
            for name, way in ways.items():
                got = way()
                for i, (a, b) in enumerate(zip(got, expected, strict=True)):
                    check_parity(f"batch {name}, output {i}", ("ok", a), ("ok", b))
            seconds: dict[str, list[float]] = {name: [] for name in ways}
            for rep in range(reps):
                order = list(ways.items())
                for name, way in (order if rep % 2 == 0 else order[::-1]):
                    start = time.perf_counter()
                    way()
                    seconds[name].append(time.perf_counter() - start)
                    say(f"batch: rep {rep + 1}/{reps} {name}: {seconds[name][-1]:.2f} s")

    base = statistics.median(seconds["reference, 1 process"])
    rows = []
    for name, runs in seconds.items():
        s = statistics.median(runs)
        rows.append({"way": name, "seconds": s, "runs": runs, "messages_per_s": n / s,
                     "mchars_per_s": chars / s / 1e6, "vs_reference": base / s})
    return {"style": style, "messages": n, "characters": chars, "workers": workers,
            "chunk": chunk, "reps": reps, "worker_imports": leaked, "rows": rows}


def _imported(_: int) -> list[str]:
    return worker.imported()


def table(report: dict) -> str:
    headers = ["way", "messages/s", "Mchar/s", "× reference"]
    rows = [[r["way"], f"{r['messages_per_s']:,.0f}", f"{r['mchars_per_s']:.2f}",
             f"{r['vs_reference']:.2f}"] for r in report["rows"]]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    imports = ", ".join(report["worker_imports"]) or "none"
    return "\n".join(
        [f"Batch: {report['messages']} {report['style']} outputs, {report['characters']:,} "
         f"characters (medians of {report['reps']}); third-party packages imported by "
         f"workers: {imports}", line(headers), line(["-" * w for w in widths])]
        + [line(r) for r in rows])


def main(argv: Sequence[str] | None = None) -> int:
    from .engines import ParityError
    from .outputs import STYLES

    p = argparse.ArgumentParser(prog="python -m bench.batch", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="200 outputs, 1 repetition")
    p.add_argument("--n", type=int, help="how many outputs (default 2000)")
    p.add_argument("--style", default="qwen3", choices=STYLES)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--reps", type=int, help="repetitions (default 3)")
    p.add_argument("--chunk", type=int, default=32, help="outputs per task sent to a worker")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="OUT")
    args = p.parse_args(argv)
    n = args.n or (200 if args.quick else 2000)
    reps = args.reps or (1 if args.quick else 3)
    try:
        report = run(args.style, n, args.workers, reps, args.chunk, args.seed)
    except ParityError as e:
        print(f"bench.batch: parity failure: {e}", file=sys.stderr)
        return 1
    print(table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
