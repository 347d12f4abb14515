"""Our generated parsers against transformers' reference, side by side in one process.

    python -m bench [--quick] [--sizes 1K,8K] [--modes parse,feed4] [--styles qwen3]
                    [--sections realistic,adversarial,memory,by_hand] [--json out.json]

See bench/README.md for what each column means and issue 6's targets.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, field
from functools import partial
from typing import Any

if __package__ in (None, ""):  # `python bench/run.py`: make the checkout importable
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "bench"

from . import outputs
from .by_hand import call_bodies, conversion_run, parse_by_hand
from .engines import (
    Engine,
    Ours,
    OursFresh,
    ParityError,
    Reference,
    StreamTiming,
    check_parity,
    outcome,
)
from .floor import floor_run
from .timing import (
    OverBudget,
    growth_exponent,
    median,
    peak_memory,
    settle_heap,
    timed,
    use_clock,
)

MODES = ("parse", "feed1", "feed4", "feed16", "feed64", "feed256")
# The modes of a quick run: the chunk sizes issue 6 set targets on, and one larger.
QUICK_MODES = ("parse", "feed1", "feed4", "feed64")
LONG_RUN = 0.5  # seconds: runs this long need no warm-up run before them
# Runs shorter than this are preceded, every repetition, by an untimed run of the same
# engine on the same input. Interleaving the engines cancels machine drift, but a long
# reference run evicts a short run's code and data from the CPU caches (our 64K plain
# parse: 0.07 ms warm, 0.77 ms right after a reference parse); timed cold, the faster
# engine would be charged for the slower one's footprint. Both engines are timed warm.
WARM_RUN = 0.05
# A timed sample of a run shorter than this repeats it, back to back, until the sample
# lasts about this long, and counts the mean: a single 0.1 ms parse timed alone moved by
# 10-20% from one repetition to the next with the machine's state, enough to flip a
# ratio across a target line in a median of three.
SAMPLE_TIME = 0.02
MAX_REPEAT = 200
# Realistic texts a case's runs cycle through (see Inputs): each seeded apart, the
# case's own text first.
VARIANTS = 8
SECTIONS = ("realistic", "shapes", "adversarial", "memory", "by_hand")
SHAPE_MODES = ("parse", "feed64")


def feed_size(mode: str) -> int | None:
    return int(mode[4:]) if mode.startswith("feed") else None


def chunked(text: str, k: int, first: int = 0) -> list[str]:
    """``text`` in pieces of ``k`` characters, the first one ``first`` long if not 0."""
    head = [text[:first]] if first else []
    return head + [text[i:i + k] for i in range(first, len(text), k)]


@dataclass
class Inputs:
    """What each run of one case is given: a variant of its text, cut in feeds.

    Our parser remembers what feeds did (the stream memo) and the answers its searches
    found for short unsent text: a server meets again what every answer of a template
    writes (a tool-call header, an end of turn), and that is measured. Given the same
    text cut the same way run after run, it would replay every feed of a stream from the
    memo, which no server sees and the reference is not given. So runs cycle through
    ``count`` texts (``variant(i)``, seeded apart; 0 is the case's own), and an engine's
    n-th stream of a variant is cut at a different offset for each of its first ``k``
    rounds. Sample r's j-th run gets variant r + j for both engines, and a sample of
    more than one run covers whole cycles (see rounded), so both engines are timed on
    the same texts.
    """

    variant: Callable[[int], outputs.Output]
    count: int
    k: int | None  # characters per feed; None: the whole text
    # (engine, variant) -> how many streams of it the engine was given
    _given: dict[tuple[str, int], int] = field(default_factory=dict)

    def rounded(self, repeat: int) -> int:
        return repeat if repeat == 1 else -(-repeat // self.count) * self.count

    def next(self, engine: str, index: int) -> tuple[outputs.Output, list[str] | None]:
        index %= self.count
        out = self.variant(index)
        if self.k is None:
            return out, None
        n = self._given.get((engine, index), 0)
        self._given[engine, index] = n + 1
        return out, chunked(out.text, self.k, n % self.k)


def parse_size(token: str) -> int:
    token = token.strip().upper()
    scale = 1
    if token.endswith("K"):
        token, scale = token[:-1], 1024
    elif token.endswith("M"):
        token, scale = token[:-1], 1024 * 1024
    return int(float(token) * scale)


def size_label(n: int) -> str:
    return f"{n // 1024}K" if n % 1024 == 0 and n >= 1024 else str(n)


@dataclass
class Config:
    styles: Sequence[str] = outputs.STYLES
    kinds: Sequence[str] = outputs.KINDS
    sizes: Sequence[int] = (1024, 8 * 1024, 64 * 1024, 256 * 1024)
    modes: Sequence[str] = MODES
    reps: int = 3
    adversarial: Sequence[str] = tuple(a.name for a in outputs.ADVERSARIAL)
    adversarial_sizes: Sequence[int] = (2 * 1024, 8 * 1024, 32 * 1024)
    adversarial_reps: int = 1
    shapes: Sequence[str] = tuple(s.name for s in outputs.SHAPES)
    shape_sizes: Sequence[int] = (2 * 1024, 8 * 1024, 32 * 1024)
    memory_size: int = 256 * 1024
    memory_feed: int = 4
    sections: Sequence[str] = SECTIONS
    robust: bool = True  # rows for the robust form of a grammar that has one
    budget: float = 60.0
    seed: int = 0
    variants: int = VARIANTS

    @classmethod
    def quick(cls) -> Config:
        # Small adversarial runs last milliseconds: one noisy run would bend the exponent.
        return cls(sizes=(1024, 8 * 1024), modes=QUICK_MODES, reps=3,
                   adversarial_sizes=(1024, 4 * 1024), adversarial_reps=3,
                   shape_sizes=(2 * 1024, 8 * 1024), memory_size=32 * 1024, budget=5.0)

    @classmethod
    def sweep(cls) -> Config:
        """Issue 18's table: every chunk size over all four styles at 1K, 8K and 64K, the
        shapes, and Gemma 4 by hand; no adversarial or memory sections. Seven timed
        repetitions a case: with three, a cell of a few microseconds moved by a third
        between runs on a shared machine, and with five, a burst of load over two of
        them moved the median of an 8K stream from 0.37 to 0.54 of the reference."""
        return cls(sizes=(1024, 8 * 1024, 64 * 1024), reps=7,
                   sections=("realistic", "shapes", "by_hand"))


EngineFactory = Callable[[dict], Engine]


@dataclass
class Bench:
    config: Config
    make_ours: EngineFactory = Ours
    make_reference: EngineFactory = Reference
    progress: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr,
                                                                          flush=True))
    _engines: dict[str, tuple[Engine, Engine]] = field(default_factory=dict)
    # (engine, case family) -> the size at which it went over budget: larger sizes are skipped
    _over: dict[tuple[str, str], int] = field(default_factory=dict)

    def engines(self, key: str, template: dict) -> tuple[Engine, Engine]:
        if key not in self._engines:
            # The reference parses a robust form's strict template: on outputs where no
            # region fails or is left open (every realistic one), the messages are equal.
            from rtcompiler.grammars import strict_spec

            self._engines[key] = (
                self.make_ours(template), self.make_reference(strict_spec(template)))
            settle_heap()
        return self._engines[key]

    # -- one measured case -----------------------------------------------------------

    @staticmethod
    def _runner(engine: Engine, out: outputs.Output,
                chunks: list[str] | None) -> Callable[[], Any]:
        if chunks is None:
            return lambda: engine.parse(out.text, out.prefix, out.tools)
        return lambda: engine.timed_stream(chunks, out.prefix, out.tools)

    def measure(self, family: str, template_key: str, template: dict, out: outputs.Output,
                size: int, mode: str, reps: int, warmup: bool,
                variant: Callable[[int], outputs.Output] | None = None) -> dict:
        """Check parity, then time both engines in alternating order; medians. The runs
        cycle through ``variant(0)``, ``variant(1)``, ... (see Inputs); without it, through
        ``out`` cut at different offsets."""
        ours, ref = self.engines(template_key, template)
        k = feed_size(mode)
        inputs = Inputs(variant or (lambda i: out), self.config.variants if variant else 1, k)
        limit = self.config.budget
        row: dict[str, Any] = {"chars": out.size, "mode": mode,
                               "feeds": len(chunked(out.text, k)) if k else None}
        skipped = {e.name: self._over.get((e.name, family)) for e in (ours, ref)}
        live = [e for e in (ours, ref) if skipped[e.name] is None]
        for e in (ours, ref):
            at = skipped[e.name]
            if at is not None:
                row[f"{e.name}_status"] = f"skipped (over budget at {size_label(at)})"

        last: dict[str, float] = {}

        def once(engine: Engine, rep: int) -> tuple[Any, float] | None:
            """(message outcome, seconds), or None past the budget."""
            def run(index: int) -> Callable[[], Any]:
                return self._runner(engine, *inputs.next(engine.name, index))

            try:
                estimate = last.get(engine.name)
                if warmup and (estimate or WARM_RUN) < WARM_RUN:
                    # untimed: caches warm (see WARM_RUN), on a text the sample does not start with
                    warm = run(rep + inputs.count // 2)
                    timed(lambda: outcome(warm), limit)
                repeat = _repeats(estimate) if warmup and estimate is not None else 1
                repeat = inputs.rounded(repeat)
                runs = [run(rep + j) for j in range(repeat)]
                ran = (timed(lambda: outcome(runs[0]), limit) if repeat == 1
                       else _repeated_each(runs))
                last[engine.name] = ran[1]
                return ran
            except OverBudget:
                self._over[(engine.name, family)] = size
                row[f"{engine.name}_status"] = f"over budget ({limit:g} s)"
                return None

        samples: dict[str, list] = {e.name: [] for e in (ours, ref)}
        results: dict[str, Any] = {}
        rep = counted = 0
        while live and (counted < reps or (warmup and rep == 0)):
            order = live if rep % 2 == 0 else live[::-1]
            this_rep = {}
            for engine in list(order):
                ran = once(engine, rep)
                if ran is None:
                    live.remove(engine)
                    continue
                result, seconds = ran
                if engine.name not in results:
                    results[engine.name] = result
                    if len(results) == 2:
                        check_parity(self._case_name(out, mode), _message(results["ours"]),
                                     _message(results["reference"]))
                        row["parity"] = "checked"
                this_rep[engine.name] = _sample(result, seconds)
            # A warm-up only matters for short runs (first-call costs); a long parity run
            # is a fair measurement, and counting it saves a repetition of the slowest cases.
            if rep > 0 or not warmup or all(s[0] >= LONG_RUN for s in this_rep.values()):
                for name, sample in this_rep.items():
                    samples[name].append(sample)
                counted += 1
            rep += 1
        if "parity" not in row:
            row["parity"] = "unchecked: " + ", ".join(
                f"{e.name} {row.get(e.name + '_status', 'failed')}" for e in (ours, ref)
                if e.name not in results)
        for e in (ours, ref):
            self._summarise(row, e.name, samples[e.name])
        return row

    @staticmethod
    def _summarise(row: dict, name: str, samples: list[tuple]) -> None:
        if not samples:
            row[f"{name}_s"] = None
            return
        row.setdefault(f"{name}_status", "ok")
        row[f"{name}_s"] = median([s[0] for s in samples])
        row[f"{name}_runs"] = [s[0] for s in samples]
        if samples[0][1] is not None:  # streamed: per-feed costs, whole and by tenth
            timings = [s[1] for s in samples]
            row[f"{name}_feed_us"] = median([t.total / t.feeds * 1e6 for t in timings])
            row[f"{name}_head_us"] = median([t.head / t.head_feeds * 1e6 for t in timings])
            row[f"{name}_tail_us"] = median([t.tail / t.tail_feeds * 1e6 for t in timings])

    @staticmethod
    def _case_name(out: outputs.Output, mode: str) -> str:
        return f"{out.style} {out.kind} {out.size} chars {mode}"

    # -- sections ----------------------------------------------------------------------

    def realistic(self) -> list[dict]:
        c = self.config
        rows = []
        done = 0
        # A style whose grammar opts in to robustness extensions gets rows for both forms:
        # "qwen3" (strict, the reference's template) and "qwen3 robust" (as bundled).
        forms = [(style, robust) for style in c.styles
                 for robust in ((False, True) if c.robust and outputs.has_robust_form(style)
                                else (False,))]
        total = len(forms) * len(c.kinds) * len(c.sizes) * len(c.modes)
        for style, robust in forms:
            template = outputs.response_template(style, robust)
            label = f"{style} robust" if robust else style
            for kind in c.kinds:
                for size in sorted(c.sizes):
                    out = outputs.realistic(style, kind, size, c.seed)
                    variant = _variants(out, partial(outputs.realistic, style, kind, size),
                                        c.seed)
                    settle_heap()
                    floor = self._floor(floor_run(template, out.text, out.message))
                    # Gemma 4 writes no JSON: its floor counts the arguments' conversion too.
                    floor_conv = self._floor(floor_run(
                        template, out.text, out.message,
                        conversion_run(self.engines(style, template)[0].module,  # type: ignore
                                       call_bodies(out.text)))) if style == "gemma4" else None
                    for mode in c.modes:
                        done += 1
                        started = time.perf_counter()
                        row = self.measure(f"{label}/{kind}/{mode}", label, template, out,
                                           size, mode, c.reps, warmup=True, variant=variant)
                        row.update(section="realistic", style=label, kind=kind, size=size,
                                   floor_s=floor, floor_conv_s=floor_conv)
                        rows.append(row)
                        self.progress(f"[{done}/{total}] {label} {kind} {size_label(size)} {mode}: "
                                      f"{_brief(row)} ({time.perf_counter() - started:.1f} s)")
        return rows

    def _floor(self, run: Callable[[], Any]) -> float:
        repeat = _repeats(timed(run, None)[1])  # (untimed: a warm-up, and how long a run takes)
        return statistics.median(
            _repeated(run, repeat)[1] for _ in range(max(3, self.config.reps))
        )

    def shapes(self) -> list[dict]:
        """Shapes where a delimiter search goes a long way before it settles, parsed whole
        and streamed 64 characters a feed: medians, interleaved, as the realistic section."""
        c = self.config
        rows = []
        for name in c.shapes:
            case = outputs.SHAPES_BY_NAME[name]
            for size in sorted(c.shape_sizes):
                out = case.output(size)
                settle_heap()
                for mode in SHAPE_MODES:
                    started = time.perf_counter()
                    row = self.measure(f"shape/{name}/{mode}", name, case.template, out, size,
                                       mode, c.reps, warmup=True)
                    row.update(section="shapes", case=name, description=case.description,
                               size=size)
                    rows.append(row)
                    self.progress(f"shape {name} {size_label(size)} {mode}: {_brief(row)} "
                                  f"({time.perf_counter() - started:.1f} s)")
        return rows

    def adversarial(self) -> tuple[list[dict], list[dict]]:
        c = self.config
        rows, fits = [], []
        for name in c.adversarial:
            case = outputs.ADVERSARIAL_BY_NAME[name]
            # A small instance first, so the case's parity is checked even where the
            # reference cannot finish the measured sizes.
            small = case.output(12)
            self.measure(f"adv/{name}/small", name, case.template, small, 12, "feed1", 0,
                         warmup=True)
            for size in sorted(c.adversarial_sizes):
                started = time.perf_counter()
                row = self.measure(f"adv/{name}", name, case.template, case.output(size), size,
                                   "feed1", c.adversarial_reps, warmup=False)
                row.update(section="adversarial", case=name, description=case.description,
                           size=size)
                rows.append(row)
                self.progress(f"adversarial {name} {size_label(size)}: {_brief(row)} "
                              f"({time.perf_counter() - started:.1f} s)")
            fit: dict[str, Any] = {"section": "growth", "case": name,
                                   "description": case.description}
            for engine in ("ours", "reference"):
                points = [(r["size"], r[f"{engine}_s"]) for r in rows
                          if r["case"] == name and r.get(f"{engine}_s")]
                fit[f"{engine}_exponent"] = growth_exponent([p[0] for p in points],
                                                            [p[1] for p in points])
                fit[f"{engine}_sizes"] = [p[0] for p in points]
            fits.append(fit)
        return rows, fits

    def memory(self) -> list[dict]:
        c = self.config
        rows = []
        for style in c.styles:
            template = outputs.response_template(style)
            ours, ref = self.engines(style, template)
            out = outputs.realistic(style, "mixed", c.memory_size, c.seed)
            chunks = chunked(out.text, c.memory_feed)
            row: dict[str, Any] = {"section": "memory", "style": style, "kind": "mixed",
                                   "size": c.memory_size, "chars": out.size,
                                   "feed": c.memory_feed}
            messages = {}
            for engine in (ours, ref):
                def streamed(e: Engine = engine, o: outputs.Output = out,
                             pieces: list[str] = chunks) -> dict:
                    # tracemalloc slows both engines several times: a looser budget
                    return timed(lambda: e.stream(pieces, o.prefix, o.tools), c.budget * 4)[0]

                try:
                    messages[engine.name], row[f"{engine.name}_peak"] = peak_memory(streamed)
                except OverBudget:
                    row[f"{engine.name}_peak"] = None
                    row[f"{engine.name}_status"] = f"over budget ({c.budget * 4:g} s)"
            if len(messages) == 2:
                check_parity(f"memory {style}", ("ok", messages["ours"]),
                             ("ok", messages["reference"]))
            rows.append(row)
            self.progress(f"memory {style} {size_label(c.memory_size)}: "
                          f"ours {_kib(row.get('ours_peak'))}, "
                          f"reference {_kib(row.get('reference_peak'))}")
        return rows

    def by_hand(self) -> list[dict]:
        """Gemma 4's mixed outputs parsed by ours, by a parser written by hand for its one
        template (by_hand.py), and by the floor, and their tool calls converted alone: how
        far above the floor the format keeps a parser."""
        c = self.config
        rows = []
        template = outputs.response_template("gemma4")
        ours, ref = self.engines("gemma4", template)
        module = ours.module  # type: ignore[attr-defined]
        for size in sorted(c.sizes):
            out = outputs.realistic("gemma4", "mixed", size, c.seed)
            settle_heap()
            runs: dict[str, Callable[[], Any]] = {
                "ours": partial(ours.parse, out.text, out.prefix, out.tools),
                "by_hand": partial(parse_by_hand, module, out.text, out.tools),
                "floor": floor_run(template, out.text, out.message),
                "floor_conv": floor_run(template, out.text, out.message,
                                        conversion_run(module, call_bodies(out.text))),
                "conversion": conversion_run(module, call_bodies(out.text)),
            }
            expected = outcome(partial(ref.parse, out.text, out.prefix, out.tools))
            for name in ("ours", "by_hand"):
                check_parity(f"by hand: gemma4 mixed {out.size} chars, {name}",
                             outcome(runs[name]), expected)
            # (untimed: a warm-up, and how long a run takes)
            repeats = {k: _repeats(timed(run, None)[1]) for k, run in runs.items()}
            samples: dict[str, list[float]] = {k: [] for k in runs}
            for rep in range(max(3, c.reps)):
                for name in (list(runs) if rep % 2 == 0 else list(runs)[::-1]):
                    samples[name].append(_repeated(runs[name], repeats[name])[1])
            row: dict[str, Any] = {"section": "by_hand", "style": "gemma4", "kind": "mixed",
                                   "size": size, "chars": out.size,
                                   "calls": len(out.message.get("tool_calls") or [])}
            row.update({f"{k}_s": median(v) for k, v in samples.items()})
            rows.append(row)
            self.progress(f"by hand: gemma4 mixed {size_label(size)}: " + ", ".join(
                f"{k} {row[k + '_s'] * 1e6:.1f} us" for k in runs))
        return rows

    def run(self) -> dict:
        c = self.config
        started = time.perf_counter()
        report: dict[str, Any] = {
            "config": {k: list(v) if isinstance(v, tuple) else v for k, v in vars(c).items()},
            "machine": {"python": platform.python_version(), "platform": platform.platform(),
                        "load_before": _load(), "clock": _clock_name()},
            "versions": _versions(),
        }
        try:
            if "realistic" in c.sections:
                report["realistic"] = self.realistic()
            if "shapes" in c.sections:
                report["shapes"] = self.shapes()
            if "adversarial" in c.sections:
                report["adversarial"], report["growth"] = self.adversarial()
            if "memory" in c.sections:
                report["memory"] = self.memory()
            if "by_hand" in c.sections and "gemma4" in c.styles:
                report["by_hand"] = self.by_hand()
        finally:
            gc.unfreeze()  # hand the heap back to the collector (the bench may run in-process)
        report["machine"]["load_after"] = _load()
        report["worst"] = worst_cells(report)
        report["targets"] = targets(report)
        report["seconds"] = time.perf_counter() - started
        return report


def _message(result: Any) -> Any:
    """The message in an engine's outcome (a streamed run also carries its timing)."""
    status, value = result
    if status == "ok" and isinstance(value, tuple):
        return status, value[0]
    return status, value


def _repeats(estimate: float) -> int:
    """How many back-to-back runs of about ``estimate`` seconds one sample takes."""
    if estimate >= SAMPLE_TIME:
        return 1
    return min(MAX_REPEAT, max(1, round(SAMPLE_TIME / max(estimate, 1e-7))))


def _variants(out: outputs.Output, seeded: Callable[[int], outputs.Output],
              seed: int) -> Callable[[int], outputs.Output]:
    """Variant i of ``out`` (made with ``seed``): ``seeded(seed + i)``, made when first asked."""
    made = {0: out}

    def variant(i: int) -> outputs.Output:
        if i not in made:
            made[i] = seeded(seed + i)
        return made[i]

    return variant


def _repeated(run: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    return _repeated_each([run] * repeat)


def _repeated_each(each: Sequence[Callable[[], Any]]) -> tuple[Any, float]:
    """The runs timed back to back as one sample (see SAMPLE_TIME): the last outcome,
    with a streamed run's tenths summed over the runs, and the mean seconds per run.

    Each run's message is dropped when the next one is made, as a server drops one it
    has sent: kept, a loop of 256K parses held tens of megabytes of fresh strings, and
    every parse paid the page faults of new memory (ours took 0.29 ms instead of 0.18).
    """
    timings: list[StreamTiming] = []

    def runs() -> Any:
        last = None
        for run in each:
            last = None  # (the previous message goes before the next run, not after it)
            last = outcome(run)
            if last[0] == "ok" and isinstance(last[1], tuple):
                timings.append(last[1][1])
        return last

    last, seconds = timed(runs, None)
    status, value = last
    if status == "ok" and timings:
        value = (value[0], StreamTiming(*(sum(t[k] for t in map(astuple, timings))
                                          for k in range(6))))
    return (status, value), seconds / len(each)


def _sample(result: Any, seconds: float) -> tuple:
    status, value = result
    timing = value[1] if status == "ok" and isinstance(value, tuple) else None
    return (seconds, timing)


def _versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in ("rtcompiler", "transformers", "regex"):
        try:
            from importlib.metadata import version

            versions[name] = version(name)
        except Exception:
            versions[name] = None
    return versions


def _clock_name() -> str:
    from . import timing

    return next(name for name, c in timing.CLOCKS.items() if c is timing.clock)


def _load() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (what ``uptime`` shows), where known."""
    try:
        import os

        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _kib(n: int | None) -> str:
    return "-" if n is None else f"{n / 1024:,.0f} KiB"


def _brief(row: dict) -> str:
    parts = []
    for name in ("ours", "reference"):
        s = row.get(f"{name}_s")
        parts.append(f"{name} {row.get(name + '_status', '-')}" if s is None else
                     f"{name} {s * 1e3:.2f} ms")
    return ", ".join(parts)


# -- the table ------------------------------------------------------------------------

def _ratio(a: float | None, b: float | None) -> str:
    return "-" if not a or not b else f"{a / b:.2f}"


def _cell(row: dict, name: str, per_feed: bool) -> str:
    value = row.get(f"{name}_feed_us") if per_feed else row.get(f"{name}_s")
    if value is None:
        status = row.get(f"{name}_status", "-")
        return "over budget" if status.startswith("over") else (
            "skipped" if status.startswith("skipped") else status)
    return f"{value:.2f}" if per_feed else f"{value * 1e3:.2f}"


# Fewer feeds per tenth than this and the ratio measures noise (and, in a mixed output, which
# regions happen to close in the last tenth), not how the cost per feed grows.
MIN_TENTH_FEEDS = 200


def _tail_head(row: dict, name: str) -> str:
    if row["mode"] == "parse" or (row.get("feeds") or 0) // 10 < MIN_TENTH_FEEDS:
        return ""
    return _ratio(row.get(f"{name}_tail_us"), row.get(f"{name}_head_us"))


def _format(headers: list[str], rows: list[list[str]], left: Sequence[int] = (0, 1)) -> str:
    """Columns in ``left`` are text (left-aligned); the others numbers."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) if i in left else c.rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
    lines = [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]
    return "\n".join(x.rstrip() for x in lines)


def table(report: dict) -> str:
    out = []
    if report.get("realistic"):
        headers = ["case", "mode", "size", "chars", "unit", "ours", "reference", "ours/ref",
                   "ours/floor", "ours/floor+conv", "tail/head ours", "tail/head ref"]
        rows = []
        for r in report["realistic"]:
            per_feed = r["mode"] != "parse"
            rows.append([
                f"{r['style']} {r['kind']}", r["mode"], size_label(r["size"]), str(r["chars"]),
                "us/feed" if per_feed else "ms", _cell(r, "ours", per_feed),
                _cell(r, "reference", per_feed),
                _ratio(r.get("ours_s"), r.get("reference_s")),
                _ratio(r.get("ours_s"), r.get("floor_s")),
                _ratio(r.get("ours_s"), r.get("floor_conv_s")),
                _tail_head(r, "ours"), _tail_head(r, "reference"),
            ])
        out.append("Realistic outputs (medians; ours/ref < 1 means we are faster; floor = one "
                   "stdlib re scan + json.loads; floor+conv, Gemma 4 only: the floor + our "
                   "parse_json of each call's text alone)\n" + _format(headers, rows))
    if report.get("shapes"):
        headers = ["case", "mode", "size", "chars", "unit", "ours", "reference", "ours/ref"]
        rows = [[r["case"], r["mode"], size_label(r["size"]), str(r["chars"]), "ms",
                 _cell(r, "ours", False), _cell(r, "reference", False),
                 _ratio(r.get("ours_s"), r.get("reference_s"))] for r in report["shapes"]]
        out.append("Shapes: a delimiter search that goes a long way (medians, total time per "
                   "parse or stream)\n" + _format(headers, rows))
    if report.get("worst"):
        rows = [[w["cells"], _num(w["worst"]), w["where"]] for w in report["worst"]]
        out.append("Worst cell (ours/ref over the realistic and shapes tables)\n"
                   + _format(["cells", "ours/ref", "where"], rows, left=(0, 2)))
    if report.get("adversarial"):
        headers = ["case", "mode", "size", "chars", "unit", "ours", "reference", "ours/ref"]
        rows = [[r["case"], r["mode"], size_label(r["size"]), str(r["chars"]), "ms",
                 _cell(r, "ours", False), _cell(r, "reference", False),
                 _ratio(r.get("ours_s"), r.get("reference_s"))] for r in report["adversarial"]]
        out.append("Adversarial inputs, fed one character at a time (total time per stream)\n"
                   + _format(headers, rows))
        headers = ["case", "exponent ours", "exponent ref", "note"]
        rows = []
        for f in report.get("growth", []):
            note = _growth_note(report, f)
            rows.append([f["case"], _num(f.get("ours_exponent")), _num(f.get("reference_exponent")),
                         note])
        out.append("Growth exponent (log-log slope of time against size; 1 = linear)\n"
                   + _format(headers, rows, left=(0, 3)))
    if report.get("memory"):
        headers = ["case", "feed", "size", "ours peak", "ref peak", "ours/ref"]
        rows = [[f"{r['style']} {r['kind']}", str(r["feed"]), size_label(r["size"]),
                 _kib(r.get("ours_peak")), _kib(r.get("reference_peak")),
                 _ratio(r.get("ours_peak"), r.get("reference_peak"))] for r in report["memory"]]
        out.append("Peak memory while streaming (tracemalloc, above what was live before)\n"
                   + _format(headers, rows))
    if report.get("by_hand"):
        headers = ["case", "size", "chars", "calls", "unit", "ours", "by hand", "floor",
                   "floor+conv", "conversion", "ours/floor", "ours/floor+conv",
                   "by hand/floor", "by hand/floor+conv", "conversion/floor"]
        rows = [[f"{r['style']} {r['kind']}", size_label(r["size"]), str(r["chars"]),
                 str(r["calls"]), "us", *(f"{r[k + '_s'] * 1e6:.1f}" for k in
                                          ("ours", "by_hand", "floor", "floor_conv",
                                           "conversion")),
                 _ratio(r["ours_s"], r["floor_s"]), _ratio(r["ours_s"], r["floor_conv_s"]),
                 _ratio(r["by_hand_s"], r["floor_s"]), _ratio(r["by_hand_s"], r["floor_conv_s"]),
                 _ratio(r["conversion_s"], r["floor_s"])] for r in report["by_hand"]]
        out.append("Gemma 4 by hand (bench/by_hand.py: the template's one parser written out, "
                   "with our JSON conversion; conversion = the tool calls' arguments alone)\n"
                   + _format(headers, rows, left=(0,)))
    if report.get("targets"):
        headers = ["target", "worst", "met", "where"]
        rows = [[t["target"], _num(t["worst"]),
                 {True: "yes", False: "NO", None: "-"}[t["met"]], t["where"]]
                for t in report["targets"]]
        out.append("Targets (worst case of this run)\n" + _format(headers, rows, left=(0, 2, 3)))
    return "\n\n".join(out)


# -- issue 6's targets ------------------------------------------------------------------

def worst_cells(report: dict) -> list[dict]:
    """The largest ours/ref over every timed cell of the realistic and shapes tables, and
    over those from 8K up (issue 18: every cell <= 1, from 8K up <= 0.5)."""
    cells = (report.get("realistic") or []) + (report.get("shapes") or [])
    out = []
    for label, low in (("every cell", 0), ("from 8K up", 8 * 1024)):
        timed_cells = [r for r in cells if r["size"] >= low
                       and r.get("ours_s") and r.get("reference_s")]
        if not timed_cells:
            continue
        worst = max(timed_cells, key=lambda r: r["ours_s"] / r["reference_s"])
        out.append({"cells": label, "worst": worst["ours_s"] / worst["reference_s"],
                    "where": _row_name(worst), "count": len(timed_cells)})
    return out


def _worst(rows: list[dict], num: str, den: str) -> tuple[float | None, str]:
    """The largest num/den over ``rows`` and the case it comes from; None if a row lacks one."""
    worst: tuple[float | None, str] = (None, "")
    for r in rows:
        a, b = r.get(num), r.get(den)
        if not a or not b:
            return None, _row_name(r) + f": no {num if not a else den}"
        if worst[0] is None or a / b > worst[0]:
            worst = (a / b, _row_name(r))
    return worst


def _row_name(r: dict) -> str:
    name = r.get("case") or f"{r.get('style')} {r.get('kind')}"
    return f"{name} {r.get('mode', '')} {size_label(r['size'])}".replace("  ", " ")


def targets(report: dict) -> list[dict]:
    """Each target of issue 6 against this run: the worst measured value and whether it is met
    (None when this run did not measure what the target needs, e.g. a --quick run)."""
    realistic = report.get("realistic") or []

    def rows(modes: Sequence[str], kinds: Sequence[str], low: int, high: int | None = None):
        return [r for r in realistic if r["mode"] in modes and r["kind"] in kinds
                and r["size"] >= low and (high is None or r["size"] <= high)]

    K = 1024
    every = realistic + (report.get("shapes") or [])
    checks: list[tuple[str, list[dict], str, str, float]] = [
        ("issue 18: every cell (realistic and shapes): ours/ref <= 1",
         every, "ours_s", "reference_s", 1.0),
        ("issue 18: every cell from 8K up: ours/ref <= 0.5",
         [r for r in every if r["size"] >= 8 * K], "ours_s", "reference_s", 0.5),
        ("issue 18: Gemma 4 whole-text parse of mixed outputs, 8K-256K: "
         "ours/(floor + conversion) <= 2",
         [r for r in rows(["parse"], ["mixed"], 8 * K) if r["style"] == "gemma4"],
         "ours_s", "floor_conv_s", 2.0),
        ("whole-text parse of mixed outputs, 8K-256K: ours/ref <= 1/3",
         rows(["parse"], ["mixed"], 8 * K), "ours_s", "reference_s", 1 / 3),
        ("whole-text parse of mixed outputs, 8K-256K: ours/floor <= 2",
         rows(["parse"], ["mixed"], 8 * K), "ours_s", "floor_s", 2.0),
        ("streaming 1-4 chars per feed at 1K: ours/ref <= 1/3",
         rows(["feed1", "feed4"], outputs.KINDS, K, K), "ours_s", "reference_s", 1 / 3),
        ("streaming 1-4 chars per feed at 64K and up: ours/ref <= 1/5",
         rows(["feed1", "feed4"], outputs.KINDS, 64 * K), "ours_s", "reference_s", 1 / 5),
        # On plain answers, where the text is uniform: in a mixed output the last tenth may
        # hold a large tool call whose arguments are decoded as it closes.
        ("per-feed cost, last tenth / first tenth of a plain 256K stream (ours) <= 1.2",
         rows(["feed1", "feed4"], ["plain"], 256 * K), "ours_tail_us", "ours_head_us", 1.2),
        ("peak memory streaming: ours/ref < 1",
         report.get("memory") or [], "ours_peak", "reference_peak", 1.0),
    ]
    out: list[dict[str, Any]] = []
    for name, selected, num, den, limit in checks:
        if not selected:
            out.append({"target": name, "worst": None, "met": None, "where": "not measured"})
            continue
        worst, where = _worst(selected, num, den)
        strict = name.startswith("peak memory")  # below the reference's, not equal
        met = None if worst is None else (worst < limit if strict else worst <= limit)
        out.append({"target": name, "worst": worst, "met": met, "where": where})
    fits = report.get("growth") or []
    if fits:
        values = [(f.get("ours_exponent"), f["case"]) for f in fits]
        missing = [case for value, case in values if value is None]
        worst_fit = max((v for v in values if v[0] is not None), default=(None, ""))
        out.append({"target": "adversarial inputs fed 1 char at a time: growth exponent <= 1.1",
                    "worst": worst_fit[0],
                    "met": None if missing or worst_fit[0] is None else worst_fit[0] <= 1.1,
                    "where": f"no fit for {', '.join(missing)}" if missing else worst_fit[1]})
    return out


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _growth_note(report: dict, fit: dict) -> str:
    notes = []
    for engine in ("ours", "reference"):
        over = [r for r in report["adversarial"]
                if r["case"] == fit["case"] and r.get(f"{engine}_s") is None]
        if over:
            first = min(over, key=lambda r: r["size"])
            status = first.get(f"{engine}_status", "failed")
            notes.append(f"{engine} {status} at {size_label(first['size'])}"
                         + ("; larger sizes skipped" if len(over) > 1 else ""))
    return "; ".join(notes)


# -- command line ---------------------------------------------------------------------

def _list(value: str, known: Sequence[str] | None = None) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if known is not None:
        unknown = [v for v in items if v not in known]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {', '.join(known)}")
    return items


def arguments(argv: Sequence[str] | None = None) -> tuple[Config, argparse.Namespace]:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="small sizes (1K, 8K; adversarial 1K, 4K; shapes 2K, 8K; memory 32K), "
                        "feeds of 1, 4 and 64 characters, and a 5 s budget")
    p.add_argument("--sweep", action="store_true",
                   help="issue 18's table: feeds of 1, 4, 16, 64 and 256 characters and the "
                        "whole text, all styles at 1K, 8K and 64K, the shapes, Gemma 4 by hand")
    p.add_argument("--styles", type=lambda v: (
        list(outputs.ALL_STYLES) if v.strip() == "all" else _list(v, outputs.ALL_STYLES)
    ), help=f"comma-separated, of {', '.join(outputs.ALL_STYLES)}; or all (default: "
            f"{','.join(outputs.STYLES)})")
    p.add_argument("--kinds", type=lambda v: _list(v, outputs.KINDS))
    p.add_argument("--sizes", type=lambda v: [parse_size(s) for s in _list(v)],
                   help="comma-separated, e.g. 1K,8K,64K,256K")
    p.add_argument("--modes", type=lambda v: _list(v, MODES), help=f"of {', '.join(MODES)}")
    p.add_argument("--sections", type=lambda v: _list(v, SECTIONS),
                   help=f"of {', '.join(SECTIONS)}")
    p.add_argument("--adversarial", type=lambda v: _list(v, list(outputs.ADVERSARIAL_BY_NAME)),
                   help=f"cases, of {', '.join(outputs.ADVERSARIAL_BY_NAME)}")
    p.add_argument("--adversarial-sizes", type=lambda v: [parse_size(s) for s in _list(v)])
    p.add_argument("--shapes", type=lambda v: _list(v, list(outputs.SHAPES_BY_NAME)),
                   help=f"shapes, of {', '.join(outputs.SHAPES_BY_NAME)}")
    p.add_argument("--shape-sizes", type=lambda v: [parse_size(s) for s in _list(v)])
    p.add_argument("--reps", type=int, help="timed repetitions per case (median), default 3")
    p.add_argument("--adversarial-reps", type=int)
    p.add_argument("--memory-size", type=parse_size)
    p.add_argument("--memory-feed", type=int, help="characters per feed when measuring memory")
    p.add_argument("--budget", type=float,
                   help="seconds one run may take before it is interrupted and larger sizes of "
                        "the same case are skipped for that engine (default 60, quick 5)")
    p.add_argument("--seed", type=int)
    p.add_argument("--variants", type=int,
                   help=f"seeded texts each realistic case's runs cycle through (default "
                        f"{VARIANTS}; 1: the case's own text only, still cut at a different "
                        f"offset each run)")
    p.add_argument("--no-robust", dest="robust", action="store_false", default=None,
                   help="no rows for the robust forms (NAME as bundled, with its robustness "
                        "extensions) beside the strict ones")
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                   help="what a measurement reads: the process's CPU time (default; on a "
                        "shared machine it leaves out the time spent waiting for a core) or "
                        "wall time")
    p.add_argument("--json", metavar="OUT", help="also write every measurement as JSON")
    p.add_argument("--fresh", action="store_true",
                   help="our parser forgets, before every run, the tool-call headers it met "
                        "in earlier runs (see bench/README.md)")
    args = p.parse_args(argv)
    if args.quick and args.sweep:
        p.error("--quick and --sweep are two different runs; choose one")
    config = Config.quick() if args.quick else Config.sweep() if args.sweep else Config()
    for name in ("styles", "kinds", "sizes", "modes", "sections", "adversarial",
                 "adversarial_sizes", "shapes", "shape_sizes", "reps", "adversarial_reps",
                 "memory_size", "memory_feed", "budget", "seed", "variants", "robust"):
        value = getattr(args, name)
        if value is not None:
            setattr(config, name, tuple(value) if isinstance(value, list) else value)
    return config, args


def main(argv: Sequence[str] | None = None) -> int:
    config, args = arguments(argv)
    use_clock(args.clock)
    bench = Bench(config, make_ours=OursFresh if args.fresh else Ours)
    try:
        report = bench.run()
    except ParityError as e:
        print(f"bench: parity failure: {e}", file=sys.stderr)
        return 1
    print(table(report))
    load = report["machine"]
    print(f"\n{report['seconds']:.0f} s; {load['clock']} time; "
          f"load average (1, 5, 15 min) {load['load_before']} "
          f"before, {load['load_after']} after; {load['platform']}, "
          f"Python {report['machine']['python']}; " +
          ", ".join(f"{k} {v}" for k, v in report["versions"].items()))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
