"""``python -m bench.ab`` in a tiny configuration, so it cannot rot. Nothing here asserts a
timing: the tool prints one, and these tests check what it compares and how it reads."""

from __future__ import annotations

from bench import ab, outputs
from rtcompiler import compile_template


def test_the_module_a_checkout_generates_is_the_compilers():
    template = outputs.response_template("qwen3")
    assert ab.source_at(ab.ROOT, template) == compile_template(template).source


def test_strict_against_robust_prints_a_ratio_per_mode(capsys):
    assert ab.main(["--strict", "--style", "gemma4", "--size", "1K", "--modes",
                    "parse,feed256", "--rounds", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("gemma4 1K, min of 1 rounds")
    assert lines[1].split() == ["mode", "strict", "robust", "robust/strict"]
    rows = [line.split() for line in lines[2:]]
    assert [r[0] for r in rows] == ["parse", "feed256"]
    for _, a, b, ratio in rows:
        assert float(a) > 0 and float(b) > 0
        assert abs(float(ratio) - float(b) / float(a)) < 0.01


def test_a_round_forgets_what_the_parser_remembered():
    module = ab.module_from_source(
        compile_template(outputs.response_template("gpt_oss")).source, "m"
    )
    outs = [outputs.realistic("gpt_oss", "mixed", 1024, seed=s) for s in range(2)]
    assert ab.timed(module, "feed4", outs) > 0
    assert module.TABLE.transitions  # the round's streams left feeds remembered ...
    ab.forget(module)
    assert not module.TABLE.transitions  # ... which the next round does not find
    assert all(
        not d.regex.partials for r in module.TABLE.regions for d in (r.open, r.close)
        if d is not None
    )


def test_opcodes_are_nearly_the_same_count_on_every_run_and_follow_the_work():
    module = ab.module_from_source(
        compile_template(outputs.response_template("qwen3")).source, "m"
    )
    short = [outputs.realistic("qwen3", "mixed", 1024, seed=s) for s in range(2)]
    long = [outputs.realistic("qwen3", "mixed", 8192, seed=s) for s in range(2)]
    first = ab.counted(module, "feed64", short)
    # (What a parser keeps across rounds, such as the order a prefilter tries its
    # literals in, moves the count by a few instructions in ten thousand.)
    assert first > 0 and abs(ab.counted(module, "feed64", short) - first) <= first * 1e-3
    # Streams of eight times the text run more instructions; a whole parse, fewer.
    assert ab.counted(module, "feed64", long) > 1.5 * first
    assert ab.counted(module, "parse", short) < first


def test_since_prints_the_change_of_the_bench_ratio(capsys):
    assert ab.main(["--since", "HEAD", "--style", "gemma4", "--size", "1K", "--modes",
                    "parse", "--opcodes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "gemma4, robust here against as bundled at HEAD 1K, Python opcodes per stream or parse"
    )
    (mode, then, now, ratio, ref_then, ref_now, bench) = lines[2].split()
    assert mode == "parse"
    # The same template compiled by the same compiler, the same reference template.
    assert abs(float(now) / float(then) - 1) <= 1e-3 and abs(float(ratio) - 1) <= 1e-3
    assert abs(float(ref_now) / float(ref_then) - 1) <= 1e-3 and abs(float(bench) - 1) <= 2e-3
