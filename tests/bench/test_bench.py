"""The benchmark in a tiny configuration, so it cannot rot: every case runs, the table and the
JSON hold what they should, and a wrong engine is caught by the parity check. Nothing here
asserts a timing."""

from __future__ import annotations

import json
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from bench import batch, outputs
from bench.engines import Ours, ParityError
from bench.run import MODES, SHAPE_MODES, Bench, Config, main, table
from bench.timing import growth_exponent

TINY = Config(sizes=(1024,), reps=1, adversarial_sizes=(48, 96), shape_sizes=(64,),
              memory_size=1024, budget=1.0)


def _quiet(line: str) -> None:
    pass


def test_tiny_run_measures_and_checks_every_case():
    # One test, not several over a shared fixture: under xdist each worker would redo the run.
    report = Bench(TINY, progress=_quiet).run()

    realistic = {(r["style"], r["kind"], r["mode"]) for r in report["realistic"]}
    # Every style in its strict form, and as bundled when that form has robustness extensions.
    labels = [*outputs.STYLES,
              *(f"{s} robust" for s in outputs.STYLES if outputs.has_robust_form(s))]
    assert {"qwen3 robust", "qwen3_coder robust"} <= set(labels)
    assert realistic == {(s, k, m) for s in labels for k in outputs.KINDS for m in MODES}
    assert all(r["parity"] == "checked" for r in report["realistic"])
    assert all(r["ours_s"] and r["reference_s"] and r["floor_s"] for r in report["realistic"])
    streamed = [r for r in report["realistic"] if r["mode"] != "parse"]
    assert all(r["ours_feed_us"] and r["ours_head_us"] and r["reference_tail_us"]
               for r in streamed)

    assert [(r["style"], r["size"]) for r in report["by_hand"]] == [("gemma4", 1024)]
    assert all(report["by_hand"][0][f"{k}_s"] for k in ("ours", "by_hand", "floor", "conversion"))

    adversarial = {(r["case"], r["size"]) for r in report["adversarial"]}
    assert adversarial == {(a.name, n) for a in outputs.ADVERSARIAL for n in (48, 96)}
    assert {f["case"] for f in report["growth"]} == set(outputs.ADVERSARIAL_BY_NAME)
    assert all(f["ours_exponent"] is not None for f in report["growth"])

    assert {r["style"] for r in report["memory"]} == set(outputs.STYLES)
    assert all(r["ours_peak"] and r["reference_peak"] for r in report["memory"])
    assert len(report["targets"]) == 10

    shapes = {(r["case"], r["mode"], r["size"]) for r in report["shapes"]}
    assert shapes == {(s.name, m, 64) for s in outputs.SHAPES for m in SHAPE_MODES}
    assert all(r["parity"] == "checked" for r in report["shapes"])
    gemma = [r for r in report["realistic"] if r["style"] == "gemma4"]
    assert all(r["floor_conv_s"] > 0 for r in gemma)
    assert all(r["floor_conv_s"] is None for r in report["realistic"]
               if r["style"].split()[0] != "gemma4")  # "gemma4" and "gemma4 robust"
    assert report["by_hand"][0]["floor_conv_s"]
    worst = {w["cells"]: w for w in report["worst"]}
    assert set(worst) == {"every cell"}  # nothing from 8K up in a 1K run
    assert worst["every cell"]["count"] == len(report["realistic"]) + len(report["shapes"])
    assert worst["every cell"]["worst"] == max(
        r["ours_s"] / r["reference_s"] for r in report["realistic"] + report["shapes"])

    # The exponential case: 2^48 backtracking steps, so the reference is cut at the budget,
    # the larger size is skipped, and the table says so.
    rows = [r for r in report["adversarial"] if r["case"] == "exponential"]
    assert rows[0]["reference_status"].startswith("over budget")
    assert rows[1]["reference_status"].startswith("skipped")
    assert rows[0]["parity"].startswith("unchecked")

    text = table(report)
    assert "over budget" in text
    for heading in ("Realistic outputs", "Shapes", "Worst cell", "Adversarial inputs",
                    "Growth exponent", "Peak memory", "Gemma 4 by hand", "Targets"):
        assert heading in text
    for style in outputs.STYLES:
        assert f"{style} mixed" in text and f"{style} plain" in text
    json.dumps(report, default=str)


class _DropsALetter(Ours):
    """Our parser, but the content loses its last character: the kind of bug parity must catch."""

    def parse(self, text, prefix, tools):
        return _damage(super().parse(text, prefix, tools))

    def stream_parser(self, prefix, tools):
        inner = super().stream_parser(prefix, tools)

        class Damaged:
            feed = inner.feed

            def finalize(self):
                message, events = inner.finalize()
                return _damage(message), events

        return Damaged()


def _damage(message: dict) -> dict:
    return {**message, "content": message.get("content", "x")[:-1]}


@pytest.mark.parametrize("mode", ["parse", "feed4"])
def test_a_wrong_engine_fails_loudly(mode):
    config = Config(styles=("qwen3",), kinds=("plain",), sizes=(1024,), modes=(mode,), reps=1,
                    sections=("realistic",))
    with pytest.raises(ParityError, match="content"):
        Bench(config, make_ours=_DropsALetter, progress=_quiet).run()


def test_command_line_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = main(["--styles", "gemma4", "--kinds", "plain", "--sizes", "1K", "--modes",
                 "parse,feed64", "--sections", "realistic", "--reps", "1", "--json", str(out)])
    assert code == 0
    assert "gemma4 plain" in capsys.readouterr().out
    data = json.loads(out.read_text())
    # gemma4 opts in to recover: its strict rows, then its robust rows.
    assert [(r["style"], r["mode"]) for r in data["realistic"]] == [
        ("gemma4", "parse"), ("gemma4", "feed64"),
        ("gemma4 robust", "parse"), ("gemma4 robust", "feed64")]


def test_batch_runs_in_workers_without_third_party_imports():
    report = batch.run("qwen3", n=6, workers=2, reps=1, chunk=2, progress=_quiet)
    assert [r["way"] for r in report["rows"]] == [
        "ours, 1 process", "ours, 2 worker processes", "reference, 1 process"]
    assert report["worker_imports"] == []
    assert all(r["messages_per_s"] > 0 for r in report["rows"])


def test_growth_exponent():
    sizes = [1_000, 4_000, 16_000]
    assert growth_exponent(sizes, [n * 1e-6 for n in sizes]) == pytest.approx(1.0)
    assert growth_exponent(sizes, [(n * 1e-4) ** 2 for n in sizes]) == pytest.approx(2.0)
    assert growth_exponent(sizes[:1], [1.0]) is None


@pytest.mark.parametrize("args", [["-m", "bench"], ["bench/run.py"], ["-m", "bench.batch"]])
def test_entry_points_start(args):
    root = Path(__file__).resolve().parent.parent.parent
    done = subprocess.run([sys.executable, *args, "--help"], cwd=root, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "--json" in done.stdout


def test_fresh_makes_our_parser_forget_the_headers_it_met():
    from bench.engines import OursFresh
    from bench.run import arguments

    o = outputs.realistic("qwen3_coder", "mixed", 1024)
    chunks = [o.text[i:i + 4] for i in range(0, len(o.text), 4)]
    kept = Ours(outputs.response_template("qwen3_coder"))
    fresh = OursFresh(outputs.response_template("qwen3_coder"))
    assert fresh.stream(chunks, o.prefix, o.tools) == kept.stream(chunks, o.prefix, o.tools)
    assert any(fresh.kept)  # the stream left answers for its headers
    fresh.stream_parser(o.prefix, o.tools)
    assert not any(fresh.kept)
    assert fresh.parse(o.text, o.prefix, o.tools) == kept.parse(o.text, o.prefix, o.tools)
    assert arguments(["--fresh"])[1].fresh and not arguments([])[1].fresh


def test_a_short_run_is_timed_as_a_loop_with_its_tenths_summed():
    from bench.engines import StreamTiming
    from bench.run import _repeated

    calls = []

    def run():
        calls.append(1)
        return {"content": "x"}, StreamTiming(1.0, 0.25, 0.5, 1, 2, 10)

    (status, (message, timing)), seconds = _repeated(run, 4)
    assert len(calls) == 4 and status == "ok" and message == {"content": "x"}
    assert timing == StreamTiming(4.0, 1.0, 2.0, 4, 8, 40)  # per-feed means unchanged
    assert 0 <= seconds < 1.0


def test_a_loop_drops_each_result_before_the_next_run():
    # Kept, the messages of a loop of long parses made every parse pay for fresh memory.
    from bench.run import _repeated

    class Message:
        pass

    alive: weakref.WeakSet = weakref.WeakSet()
    seen = []

    def run():
        seen.append(len(alive))
        message = Message()
        alive.add(message)
        return message

    (status, last), _ = _repeated(run, 5)
    assert status == "ok" and last in alive
    assert seen == [0, 0, 0, 0, 0]


def test_gemma4_by_hand_gives_our_message():
    # bench/by_hand.py is only a measure if it parses the bench's outputs as ours does.
    from bench import outputs
    from bench.by_hand import call_bodies, conversion_run, parse_by_hand
    from rtcompiler import compile_template

    module = compile_template(outputs.response_template("gemma4")).module
    out = outputs.realistic("gemma4", "mixed", 8 * 1024)
    assert parse_by_hand(module, out.text, out.tools) == module.parse_response(
        out.text, prefix=out.prefix, tools=out.tools
    ) == out.message
    assert conversion_run(module, call_bodies(out.text))() == len(out.message["tool_calls"])


def test_a_loop_whose_last_run_fails_gives_the_failure():
    from bench.engines import StreamTiming
    from bench.run import _repeated

    runs = iter([True, True, False])

    def run():
        if next(runs):
            return {"content": "x"}, StreamTiming(1.0, 0.25, 0.5, 1, 2, 10)
        raise ValueError("bad")

    (status, value), _ = _repeated(run, 3)
    assert status == "error" and isinstance(value, ValueError)


def test_sweep_and_quick_configurations():
    from bench.run import QUICK_MODES, arguments

    sweep, _ = arguments(["--sweep"])
    assert sweep.sizes == (1024, 8 * 1024, 64 * 1024)
    assert sweep.modes == MODES == ("parse", "feed1", "feed4", "feed16", "feed64", "feed256")
    assert set(sweep.sections) == {"realistic", "shapes", "by_hand"}
    assert set(sweep.styles) == set(outputs.STYLES) and set(sweep.kinds) == set(outputs.KINDS)
    quick, _ = arguments(["--quick"])
    assert quick.modes == QUICK_MODES and max(quick.sizes) == 8 * 1024
    assert max(quick.shape_sizes) == 8 * 1024
    with pytest.raises(SystemExit):
        arguments(["--quick", "--sweep"])


def test_the_clock_is_cpu_time_unless_asked(tmp_path):
    from bench import timing

    out = tmp_path / "bench.json"
    try:
        for flag, name in (([], "cpu"), (["--clock", "wall"], "wall")):
            assert main(["--styles", "qwen3", "--kinds", "plain", "--sizes", "1K", "--modes",
                         "parse", "--sections", "realistic", "--reps", "1", "--json",
                         str(out), *flag]) == 0
            assert json.loads(out.read_text())["machine"]["clock"] == name
            assert timing.clock is timing.CLOCKS[name]
    finally:
        timing.use_clock("cpu")


def _recording_engine(name: str, given: list):
    from bench.engines import Engine

    class Recording(Engine):
        def __init__(self, template: dict) -> None:
            self.name = name

        def parse(self, text, prefix, tools):
            given.append((text, None))
            return {"content": "x"}

        def stream_parser(self, prefix, tools):
            chunks: list[str] = []
            given.append(("".join(chunks), chunks))

            class Parser:
                def feed(self, piece):
                    chunks.append(piece)

                def finalize(self):
                    given[-1] = ("".join(chunks), tuple(chunks))
                    return {"content": "x"}, []

            return Parser()

    return Recording


def test_runs_are_given_other_texts_and_other_cuts_not_the_same_stream_again():
    # Fed the same stream run after run, our memo of feeds replays each one: the bench
    # flattered small feeds that way, with help the reference does not get.
    variants = {i: outputs.Output("x", "mixed", f"{i}:" + "abcdefgh" * 40, "", None)
                for i in range(4)}
    ours: list = []
    reference: list = []
    bench = Bench(Config(reps=3, variants=4), make_ours=_recording_engine("ours", ours),
                  make_reference=_recording_engine("reference", reference), progress=_quiet)
    row = bench.measure("x", "x", {}, variants[0], 1024, "feed64", 3, warmup=True,
                        variant=variants.__getitem__)
    assert row["parity"] == "checked" and len(ours) > 4 * 64
    # Every variant, both engines, the case's own text uncut first.
    assert ours[0][1] == reference[0][1] == tuple(
        variants[0].text[i:i + 64] for i in range(0, len(variants[0].text), 64))
    assert {t for t, _ in ours} == {t for t, _ in reference} == {v.text for v in variants.values()}
    for variant in variants.values():
        streams = [chunks for text, chunks in ours if text == variant.text][:64]
        assert len(streams) == 64 and len(set(streams)) == 64  # never the same cut twice


def test_a_sample_covers_whole_cycles_of_variants_so_both_engines_time_the_same_texts():
    from bench.run import Inputs

    texts = [outputs.Output("x", "mixed", f"text {i}", "", None) for i in range(8)]
    inputs = Inputs(texts.__getitem__, 8, None)
    assert [inputs.rounded(n) for n in (1, 2, 8, 9, 200)] == [1, 8, 8, 16, 200]
    given = {e: [inputs.next(e, 3 + j)[0].text for j in range(16)] for e in ("a", "b")}
    assert given["a"] == given["b"] and sorted(given["a"]) == sorted([t.text for t in texts] * 2)
