"""Linear time, shown by counting work instead of timing it.

A streaming search takes exactly one DFA transition per character, whatever the
chunking, and the DFA stays the same size however long the input grows: so the
cost per character is bounded. These are the inputs on which the reference is
quadratic (or exponential).
"""

from __future__ import annotations

import pytest

from rtcompiler.automata import compile_regex

ADVERSARIAL = [
    # (pattern, the repeated unit, what follows) -- each unit run grows the input
    (r"\s*<tool_call>", " ", ""),
    (r"</function>\s*</tool_call>", " ", "", ),
    (r"to=functions\.(?P<name>[\w.]+).*?<\|message\|>", "x ", ""),
    (r"(?P<name>\w+)\s*\(", "a", ""),
    (r"<c(?:[a-z]|\w)+:", "a", "!"),  # exponential backtracking in `regex`
    (r"(?:<think>|<\|channel\|>analysis)", "<thin", ""),
]


def _stream(pattern: str, text: str, chunk: int):
    rx = compile_regex(pattern)
    scanner = rx.scanner()
    for i in range(0, len(text), chunk):
        scanner.feed(text[i : i + chunk])
        scanner.result(partial=True)  # what a streaming parser asks after every chunk
    return rx, scanner


@pytest.mark.parametrize("pattern, unit, tail", ADVERSARIAL)
def test_one_transition_per_character_and_a_bounded_automaton(pattern, unit, tail):
    prefix = {r"</function>\s*</tool_call>": "</function>", r"<c(?:[a-z]|\w)+:": "<c"}.get(
        pattern, "to=functions." if "functions" in pattern else ""
    )
    sizes = []
    for n in (2_000, 8_000, 32_000):
        compile_regex.cache_clear()  # a fresh, lazily built DFA for each size
        text = prefix + unit * (n // len(unit)) + tail
        rx, scanner = _stream(pattern, text, chunk=1)
        # Every character is stepped exactly once, never rescanned.
        assert scanner.steps <= len(text)
        sizes.append(len(rx.dfa.keys))
        compile_regex.cache_clear()
    # The automaton built for 32K characters is no bigger than for 2K: the work
    # per character is a table look-up plus a bounded register update.
    assert sizes[0] == sizes[1] == sizes[2], sizes


def test_registers_stay_bounded_on_a_long_whitespace_run():
    rx = compile_regex(r"\s*<tool_call>")
    scanner = rx.scanner()
    for _ in range(10_000):
        scanner.feed(" ")
        assert len(scanner.registers) <= 2
    assert scanner.result(partial=True).span() == (0, 10_000)


@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_chunking_does_not_change_the_answer_or_the_work(chunk):
    text = "Let me check. " * 50 + "<tool_ca"
    whole_rx, whole = _stream(r"\s*<tool_call>", text, chunk=len(text))
    _, pieces = _stream(r"\s*<tool_call>", text, chunk=chunk)
    assert pieces.result(partial=True) == whole.result(partial=True)
    # Each character is stepped through the DFA or passed over by the prefilter,
    # exactly once; a piece too short to hold the literal is stepped.
    assert pieces.steps + pieces.skipped == whole.steps + whole.skipped == len(text)
    # In one piece, only the last characters that may hold part of "<tool_call>"
    # are stepped (none of them whitespace that could lead it).
    assert whole.steps == len("<tool_call>") - 1


@pytest.mark.parametrize(
    "pattern, text, stepped",
    [
        # Nothing alive where the literal begins: only the name is stepped.
        (r"<\|tool_call>call:(?P<name>[^{<]+)", "hello <|tool_call>call:get", "get"),
        # An attempt alive from the lead run before it: its start is carried over.
        (r"\s*<tool_call>\s*<function=(?P<name>[^>\n]+)>", "ok.\n\n<tool_call>\n<function=get_w",
         "\n\n\n<function=get_w"),
    ],
)
def test_a_prefilter_literal_is_taken_in_one_step(pattern, text, stepped):
    """``CompiledRegex.jump``: the DFA's run over the literal is worked out once and
    reused, so a tool-call header's fixed part is not stepped per character; the
    answer is the one stepping gives."""
    compile_regex.cache_clear()
    rx = compile_regex(pattern)
    scanner = rx.scanner()
    scanner.feed(text)
    assert scanner.steps == len(stepped)
    compile_regex.cache_clear()  # a second CompiledRegex, whose jumps are switched off
    slow_rx = compile_regex(pattern)
    compile_regex.cache_clear()
    assert slow_rx is not rx
    slow_rx.jump = lambda *args: None  # type: ignore[method-assign]
    slow = slow_rx.scanner()
    slow.feed(text)
    assert slow.steps > scanner.steps
    assert scanner.result(partial=True) == slow.result(partial=True)
    assert scanner.result(partial=True).groupdict() == slow.result(partial=True).groupdict()
