"""Throughput of rtc parse --jsonl, with 1 and with N worker processes.

    python bench/batch_throughput.py [--lines 20000] [--workers 2]

Writes a JSON Lines file of Qwen3-style generations (reasoning and an answer, tool
calls, long plain answers; one in fifty broken), parses it with ``parse_jsonl`` once
per worker count, checks that every run wrote the same bytes, and prints lines and
megabytes per second, and CPU time over wall time. The template is compiled before
the clock starts: the figures are parsing, JSON decoding and encoding, and writing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rtcompiler.batch import batch_parser, parse_jsonl  # noqa: E402

PROMPT = "<|im_start|>user\nWhat now?<|im_end|>\n<|im_start|>assistant\n"


def generation(i: int) -> str:
    kind = i % 50
    if kind == 0:
        return '<tool_call>\n{"name": "search", "arguments": {"q": \n</tool_call><|im_end|>'
    if kind % 3 == 0:
        call = {"name": "search", "arguments": {"q": f"item {i}", "limit": i % 10}}
        return f"<tool_call>\n{json.dumps(call)}\n</tool_call><|im_end|>"
    if kind % 3 == 1:
        return (f"<think>\nThe user asks about case {i}. Let me think it through, step by step, "
                f"before answering.\n</think>\n\nThe answer to case {i} is {i * 7}.<|im_end|>")
    return ("A longer plain answer that goes on for a while, as models do. " * 12) + "<|im_end|>"


def _cpu_seconds() -> float:
    # This process and its finished children (the pool's workers, once it is closed): a
    # CPU/wall ratio near N shows N workers busy, which a loaded machine can hide in wall time.
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--lines", type=int, default=20_000)
    args.add_argument("--workers", type=int, default=2)
    args.add_argument("--grammar", default="qwen3")
    options = args.parse_args()
    parser = batch_parser(options.grammar, prefix=PROMPT)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.jsonl"
        with open(source, "w", encoding="utf-8") as f:
            for i in range(options.lines):
                f.write(json.dumps({"id": i, "text": generation(i)}) + "\n")
        megabytes = source.stat().st_size / 1e6
        print(f"{options.lines} lines, {megabytes:.1f} MB, grammar {options.grammar}, "
              f"{os.cpu_count()} CPUs")
        outputs = []
        for workers in sorted({1, options.workers}):
            out = Path(tmp) / f"out{workers}.jsonl"
            started, cpu = time.perf_counter(), _cpu_seconds()
            summary = parse_jsonl(parser, source, out, workers=workers, progress=False)
            seconds = time.perf_counter() - started
            cpu = _cpu_seconds() - cpu
            outputs.append(out.read_bytes())
            print(f"workers={workers}: {seconds:6.2f} s  {options.lines / seconds:8.0f} lines/s  "
                  f"{megabytes / seconds:5.2f} MB/s  CPU {cpu / seconds:4.2f}x wall  "
                  f"({summary.errors} lines with an error)")
        assert all(o == outputs[0] for o in outputs), "worker counts wrote different files"


if __name__ == "__main__":
    main()
