"""Linear time in the OpenAI delta adapter, shown by counting work, not by timing.

A tool call whose arguments run to a megabyte, streamed a token (1 to 8 characters)
at a time, as ``rtc parse --openai`` and a server see it. What one feed costs must not
grow with what came before it. Two counts show it:

* bytes allocated: for each feed, the peak of the memory ``tracemalloc`` traces while
  it runs, above what was in use when it began. A string that grows by ``+=`` (the
  arguments sent so far, the body of an xml-inline call, a value held back for
  retyping) is copied whole into a new one on every feed: the feed then allocates as
  much as everything before it. Counted over windows of feeds early in the argument
  and at its end, per character fed, this must stay the same, and small.
* for xml-inline calls, the steps and C-speed searches of the tag scanners (the
  engine's own counters): the body is searched once, not again on each feed.

``tracemalloc`` slows everything several times, so it runs only over the windows.
"""

from __future__ import annotations

import importlib.util
import io
import json
import random
import sys
import tracemalloc
from typing import Any

import pytest

from rtcompiler import compile_template
from rtcompiler.automata import compile_regex
from rtcompiler.cli.main import main as rtc_main
from rtcompiler.codegen import generate_module
from rtcompiler.codegen.deltas import openai_plan
from rtcompiler.grammars import resolve_template
from rtcompiler.openai import DeltaStream as PackageDeltaStream
from rtcompiler.openai import accumulate
from rtcompiler.runtime.deltas import DeltaStream

MB = 1 << 20
WINDOW = 2_000  # characters fed per measured window
# Bytes allocated per character fed, at most, in any window: a feed makes its events,
# its deltas and the pieces of text they carry (a few hundred bytes a feed).
BYTES_PER_CHAR = 1_000

QWEN = "<|im_start|>assistant\n"
CODER = "<|im_start|>assistant\n<think>\n"
TOOLS = [{"type": "function", "function": {"name": "write", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"},
                                     "content": {"type": "string"},
                                     "options": {"type": "object"}}}}}]


def _text(rnd: random.Random, size: int) -> str:
    """Source-like text with what JSON escapes: quotes, backslashes, newlines, tabs, é."""
    words = ["def", "x", "=", '"q"', "\\", "\n", "\t", "é", "return", "(", ")", "{", "}", " "]
    out, n = [], 0
    while n < size:
        word = rnd.choice(words)
        out.append(word)
        n += len(word)
    return "".join(out)


def json_call(size: int) -> tuple[str, list[tuple[str, int, int]]]:
    """A Qwen3 tool call: a string argument of ``size / 2`` characters (streamed as it
    comes), then an object argument of as much that the tools' schema retypes (held
    back until it is complete). Returns the output and, per argument, its name and
    where its text begins and ends."""
    rnd = random.Random(7)
    content = json.dumps(_text(rnd, size // 2), ensure_ascii=False)
    options = json.dumps({f"k{i}": _text(rnd, 40) for i in range(size // 2 // 60)},
                         ensure_ascii=False)
    head = '<tool_call>\n{"name": "write", "arguments": {"path": "a.py", "content": '
    text = head + content + ', "options": ' + options + "}}\n</tool_call><|im_end|>"
    at = len(head)
    spans = [("content", at, at + len(content))]
    at += len(content) + len(', "options": ')
    spans.append(("options", at, at + len(options)))
    return text, spans


def xml_call(size: int) -> tuple[str, list[tuple[str, int, int]]]:
    """A Qwen3-Coder call: one parameter of ``size / 2`` characters (sent when its tag
    closes), then ``size / 2`` characters of short parameters (sent one by one)."""
    rnd = random.Random(8)
    head = "</think>\n\n<tool_call>\n<function=write>\n<parameter=content>\n"
    big = _text(rnd, size // 2).replace("<", "[")
    small = "".join(
        f"<parameter=p{i}>\n{_text(rnd, 30).replace('<', '[')}\n</parameter>\n"
        for i in range(size // 2 // 55)
    )
    middle = "\n</parameter>\n"
    text = head + big + middle + small + "</tool_call>\n<|im_end|>"
    at = len(head)
    spans = [("content", at, at + len(big))]
    at += len(big) + len(middle)
    spans.append(("small parameters", at, at + len(small)))
    return text, spans


def chunked(text: str, seed: int = 1) -> list[str]:
    rnd = random.Random(seed)
    chunks, i = [], 0
    while i < len(text):
        k = rnd.randint(1, 8)
        chunks.append(text[i : i + k])
        i += k
    return chunks


class Windows:
    """Bytes allocated per character fed (see the module's docstring), over windows of
    ``WINDOW`` characters that begin at given places of the text."""

    def __init__(self, starts: list[int]) -> None:
        self.starts = sorted(starts)
        self.costs: dict[int, float] = {}
        self.at = 0  # characters fed so far

    def feed(self, feed: Any, chunk: str) -> Any:
        start = next((s for s in self.starts if s <= self.at < s + WINDOW), None)
        if start is None:
            self.at += len(chunk)
            return feed(chunk)
        started = not tracemalloc.is_tracing()
        if started:
            tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            out = feed(chunk)
            cost = tracemalloc.get_traced_memory()[1] - before
        finally:
            if started:
                tracemalloc.stop()
        self.costs[start] = self.costs.get(start, 0) + cost / WINDOW
        self.at += len(chunk)
        return out


def window_starts(spans: list[tuple[str, int, int]]) -> dict[str, tuple[int, int]]:
    """Per argument: a window soon after its text begins, and one just before it ends."""
    return {name: (lo + 16_000, hi - 2 * WINDOW) for name, lo, hi in spans}


def assert_flat(windows: Windows, spans: list[tuple[str, int, int]]) -> None:
    for name, (early, late) in window_starts(spans).items():
        costs = windows.costs[early], windows.costs[late]
        what = f"{name}: bytes allocated per character fed, early and late: {costs}"
        assert costs[1] <= BYTES_PER_CHAR, what
        # The same at the end of a megabyte as after 16K: nothing grows with the text.
        assert costs[1] <= 2 * costs[0] + 100, what


def run_stream(stream: Any, text: str, spans: list[tuple[str, int, int]]) -> Windows:
    windows = Windows([s for pair in window_starts(spans).values() for s in pair])
    deltas = list(stream.initial_deltas)
    for chunk in chunked(text):
        deltas += windows.feed(stream.feed, chunk)
    deltas += stream.finish()
    assert stream.divergences == []
    # What was streamed is the parsed call: nothing lost on the way.
    rebuilt = accumulate(deltas)["tool_calls"][0]["function"]
    parsed = stream.message["tool_calls"][0]["function"]
    assert json.loads(rebuilt["arguments"]) == parsed["arguments"]
    return windows


class CountingRegex:
    """A tag pattern that keeps every scanner it makes, for their work counters."""

    def __init__(self, regex: Any) -> None:
        self.regex = regex
        self.scanners: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.regex, name)
        if name not in ("scanner", "scanner_at", "bare_scanner"):
            return attribute

        def make(*args: Any) -> Any:
            scanner = attribute(*args)
            self.scanners.append(scanner)
            return scanner

        return make

    @property
    def work(self) -> int:
        return sum(s.steps + s.searched for s in self.scanners)


def test_json_arguments_of_a_megabyte_cost_the_same_per_token_throughout():
    text, spans = json_call(MB)
    stream = PackageDeltaStream("qwen3:strict", QWEN, tools=TOOLS)
    assert_flat(run_stream(stream, text, spans), spans)


def test_xml_arguments_of_a_megabyte_cost_the_same_per_token_throughout():
    text, spans = xml_call(MB)
    parser = compile_template("qwen3_coder:strict")
    patterns: dict[str, CountingRegex] = {}

    def regex(source: str) -> CountingRegex:
        return patterns.setdefault(source, CountingRegex(compile_regex(source)))

    stream = DeltaStream(parser.response_parser(CODER, tools=TOOLS),
                         openai_plan(parser.template), TOOLS, regex=regex)
    assert_flat(run_stream(stream, text, spans), spans)
    (tags,) = patterns.values()
    # Every character of the body stepped or searched about once, not once per feed.
    assert tags.work <= 2 * len(text), (tags.work, len(text))


@pytest.mark.parametrize(
    "grammar, make", [("qwen3:strict", json_call), ("qwen3_coder:strict", xml_call)])
def test_the_generated_modules_openai_stream_is_linear_too(grammar, make, tmp_path):
    source = generate_module(resolve_template(grammar), openai=True)
    path = tmp_path / f"{grammar}_openai.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"{grammar}_openai", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text, spans = make(MB // 4)
    stream = module.openai_stream(QWEN if grammar == "qwen3:strict" else CODER, tools=TOOLS)
    assert_flat(run_stream(stream, text, spans), spans)


def test_rtc_parse_openai_is_linear_on_a_megabyte_argument(monkeypatch, capsys):
    """``rtc parse --stream --openai`` reading stdin (a line or 64 bytes a read)."""
    text, spans = json_call(MB)
    windows = Windows([s for pair in window_starts(spans).values() for s in pair])
    feed = PackageDeltaStream.feed
    monkeypatch.setattr(PackageDeltaStream, "feed",
                        lambda self, chunk: windows.feed(lambda c: feed(self, c), chunk))
    # The CLI reads stdin's bytes (its buffer), as it does from a terminal or a pipe.
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8"))
    assert rtc_main(["parse", "qwen3", "--stream", "--openai", "--prefix", QWEN]) == 0
    lines = capsys.readouterr().out.splitlines()
    message = accumulate(json.loads(line)["choices"][0]["delta"] for line in lines)
    assert len(message["tool_calls"][0]["function"]["arguments"]) > MB
    assert_flat(windows, spans)
