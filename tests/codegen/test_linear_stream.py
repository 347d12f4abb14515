"""Linear time in the generated parser, shown by counting work, not by timing.

For each adversarial input (quadratic or exponential in the reference), the
characters stepped through delimiter automata grow linearly with the input, no
scanner is restarted over held text, and nothing held is copied per feed.
"""

from __future__ import annotations

import pytest

from rtcompiler.codegen import load_parser
from rtcompiler.template import load_template

HERMES = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open_pattern": r"\s*<tool_call>", "close": "</tool_call>",
                       "repeats": True, "content": "json"},
        "content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)"},
    },
}
CODER = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close_pattern": r"</function>\s*</tool_call>",
                       "repeats": True},
        "content": {},
    },
}
HARMONY = {
    "start_anchor": "<|start|>assistant",
    "fields": {
        "tool_calls": {
            "open_pattern": r"to=functions\.(?P<name>[\w.]+).*?<\|message\|>",
            "close": "<|call|>",
            "repeats": True,
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {},
    },
}
NAMED = {
    "start_anchor": "A",
    "fields": {
        "tool_calls": {"open_pattern": r"\[(?P<name>\w+)\]", "close": "[/]", "repeats": True,
                       "transform": {"name": "{name}"}},
        "content": {},
    },
}
EXPONENTIAL = {  # 9 s in the reference for 26 letters: catastrophic backtracking
    "start_anchor": "A",
    "fields": {"call": {"open_pattern": r"<c(?:[a-z]|\w)+:", "close": ">"}, "content": {}},
}

CASES = [
    (HERMES, "Hi", " ", ""),
    (CODER, "<tool_call><function=f>", " ", ""),
    (HARMONY, "<|channel|>commentary to=functions.get ", "x", ""),
    (NAMED, "[", "a", ""),
    (EXPONENTIAL, "<c", "a", "!"),
]


def _stream(spec, text):
    parser = load_parser(load_template(spec)).ResponseParser("")
    for ch in text:
        parser.feed(ch)
    parser.finalize()
    return parser._stream


@pytest.mark.parametrize("spec, head, unit, tail", CASES, ids=[
    "hermes-ws", "coder-ws", "harmony-header", "name-at-edge", "exponential"])
def test_work_grows_linearly_on_adversarial_inputs(spec, head, unit, tail):
    work = []
    for n in (2_000, 8_000, 32_000):
        stream = _stream(spec, head + unit * n + tail)
        assert stream.rescans == 0
        work.append(stream.work / n)
    # Work per input character stays bounded (no growth with n): each watched
    # delimiter steps or searches each character about once, and the per-feed
    # searches look at held text again only while it is short.
    assert max(work) <= 6, work
    assert work[2] <= work[0] * 1.05 + 0.01, work


def test_emitted_text_is_not_kept():
    parser = load_parser(load_template(HERMES)).ResponseParser("")
    for _ in range(5_000):
        parser.feed("word ")
    stream = parser._stream
    # Only the held tail (the trailing space, which may start "\s*<tool_call>")
    # and one character of context remain buffered, whatever was emitted before.
    assert stream.end == 25_000
    assert stream.end - stream.base <= 16, (stream.base, stream.end)
    # Scanners keep no text of their own: groups are read from the held buffer.
    assert all(s._chunks is None for s in stream.scanners.values())
