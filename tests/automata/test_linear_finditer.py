"""``CompiledRegex.finditer``: every match as ``regex.finditer`` gives it, in linear time.

It is what a tag pattern or a start anchor falls back on when neither a chain nor a
linear stdlib form applies. Its answers are checked against ``regex`` on random
patterns (lookaheads and assertions included); its work is *counted* -- live sets the
backward pass worked out, states the forward walks went through, characters passed
over by one stdlib search -- on the inputs that make a repeated search quadratic or a
backtracking matcher polynomial, at 2K, 8K and 32K characters.
"""

from __future__ import annotations

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler.automata import compile_regex
from rtcompiler.codegen import load_parser
from rtcompiler.dialect import PatternError
from rtcompiler.runtime.compiled_regex import CompiledRegex
from rtcompiler.template import load_template

from ..sweeps import examples
from .strategies import patterns, texts_for

CHECK = settings(
    max_examples=examples(300, 800),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _want(pattern: str, text: str) -> list:
    return [(m.span(), m.groupdict()) for m in regex.finditer(pattern, text, regex.DOTALL)]


@CHECK
@given(st.data())
def test_finditer_matches_regex_on_random_patterns(data) -> None:
    pattern = data.draw(patterns(), label="pattern")
    try:
        expected = regex.compile(pattern, regex.DOTALL)
        ours = compile_regex(pattern)
    except (regex.error, PatternError):
        assume(False)
        return
    text = data.draw(texts_for(pattern), label="text")
    want = [(m.span(), m.groupdict()) for m in expected.finditer(text)]
    assert [(m.span(), m.groupdict()) for m in ours.finditer(text)] == want, (pattern, text)


@pytest.mark.parametrize(("pattern", "text"), [
    (r"x.*y|x", "xxaxyxx"),
    (r"a*", "baaac"),
    (r"(?:(?:^){0})?$", ""),
    (r"$", "ab\n"),
    (r"(?!a)", "aba"),
    (r"\b\w+\b", "ab cd, é_1"),
    (r"(?:a|ab)(?=c)", "abc ac"),
    (r"(?P<k>\w+)\s*:\s*(?P<v>.*)\s*\n", "k: v  \nz:\n"),
    (r"(?P<a>a)?(?P<b>b)*", "abbab"),
    (r"(?:(?P<x>a)|b)+", "abab"),
])
def test_finditer_cases(pattern: str, text: str) -> None:
    assert [(m.span(), m.groupdict()) for m in compile_regex(pattern).finditer(text)] == _want(
        pattern, text
    )


# -- linear time, counted -------------------------------------------------------------

SIZES = (2_000, 8_000, 32_000)

ADVERSARIAL = [
    # (pattern, head, unit, tail)
    (r"x.*y|x", "", "x", ""),  # a search repeated from each match reads to the end each time
    (r"(?P<key>\w+)\s*:\s*(?P<value>.*)\s*\n", "k:", " ", ""),  # 45 s in re at 4,000
    (r"(?P<key>\w+)=(?P<value>.*.*.*.*);", "k=", "a", ""),  # 12.9 s in re at 400
    (r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>", "<arg_key>", " ", "</tool_call>"),
    (r"<p>(?P<v>.*?)</p>", "", "<p>a", ""),  # thousands of unclosed tags
    (r"a(?=.*z)", "", "a", ""),  # a lookahead that reads to the end from every a
    (r"(?:a|ab)*c", "", "ab", ""),
    (r"\b\w+\b", "", "ab ", ""),
    (r"<p>(?P<v>.*?)</p>", "<p>", "a", "</p>"),  # one long value
]


def _work(rx: CompiledRegex, text: str) -> tuple[int, int]:
    before = (CompiledRegex.live_steps, CompiledRegex.walk_steps, CompiledRegex.live_skipped)
    found = sum(1 for _ in rx.finditer(text))
    steps = CompiledRegex.live_steps - before[0] + CompiledRegex.walk_steps - before[1]
    skipped = CompiledRegex.live_skipped - before[2]
    return steps + skipped, found


@pytest.mark.parametrize(("pattern", "head", "unit", "tail"), ADVERSARIAL)
def test_work_per_character_is_bounded(pattern, head, unit, tail) -> None:
    rx = compile_regex(pattern)
    ratios = []
    for n in SIZES:
        text = head + unit * (n // len(unit)) + tail
        work, _ = _work(rx, text)
        ratios.append(work / len(text))
        # The backward pass accounts for every position, stepped or passed over: at
        # least one per character, so work that goes uncounted cannot pass for linear.
        assert 0.99 <= ratios[-1] <= 6, ratios
    assert ratios[-1] <= ratios[0] * 1.05 + 0.05, ratios


def test_a_long_run_of_one_live_set_is_passed_over() -> None:
    # The inside of a long value: one stdlib search backwards, one step of the walk.
    rx = compile_regex(r"<p>(?P<v>.*?)</p>")
    text = "<p>" + "a" * 32_000 + "</p>"
    steps = CompiledRegex.live_steps + CompiledRegex.walk_steps
    assert [m.groupdict() for m in rx.finditer(text)] == [{"v": "a" * 32_000}]
    assert CompiledRegex.live_steps + CompiledRegex.walk_steps - steps < 100


def test_the_start_anchor_over_a_long_prompt() -> None:
    # An anchor whose stdlib form is not safe to search with (its `.*?` reads the '<'
    # another match begins with) over a prompt with thousands of turns: our finditer,
    # with the reference's cut.
    spec = {
        "start_anchor_pattern": r"<\|im_start\|>assistant.*?\n",
        "fields": {"content": {}},
    }
    module = load_parser(load_template(spec))
    anchor = compile_regex(spec["start_anchor_pattern"])
    assert not anchor.apart
    prompt = "<|im_start|>assistant hi\n<|im_start|>assistant" * 2_000 + "\nlast"
    assert not anchor.stdlib_searchable(prompt)
    engine = module.CompiledRegex  # the generated module's own copy of the engine
    counters = ("live_steps", "walk_steps", "live_skipped")
    before = sum(getattr(engine, c) for c in counters)
    message = module.parse_response("!", prefix=prompt)
    work = sum(getattr(engine, c) for c in counters) - before
    assert message == ref_parse_response("!", spec, prefix=prompt) == {"content": "last!"}
    assert 0 < work <= 6 * len(prompt)


@pytest.mark.parametrize(
    ("pattern", "unit", "searchable_up_to"),
    [
        # Loops that read no '<': any number of attempts stay short.
        (r"<p>(?P<v>[^<]*)</p>", "<p>", None),
        # `.*?` reads the '<' of a later attempt: at most 64 attempts, or 64 / (lead + 1)
        # where an attempt begins up to `lead` characters before its literal.
        (r"<p=(?P<k>\w+)>(?P<v>.*?)</p>", "<p=", 64),
        (r"[ab]<p>(?P<v>.*?)</p>", "<p>", 32),
        (r"\w{2}<p>(?P<v>.*?)</p>", "<p>", 21),
        (r"(?:x|yy)<p>(?P<v>.*?)</p>", "x yy ", 32),  # two literals a unit
        # A lead of any length: never.
        (r"\s*<p=(?P<k>\w+)>(?P<v>.*?)</p>", "<p=", 0),
    ],
)
def test_the_stdlib_form_searches_only_where_it_is_linear(
    pattern, unit, searchable_up_to
) -> None:
    rx = compile_regex(pattern)
    assert rx.group_finditer == rx.stdlib_finditer
    if searchable_up_to is None:
        assert rx.stdlib_searchable(unit * 10_000)
        return
    assert rx.stdlib_searchable(unit * searchable_up_to) == (searchable_up_to > 0)
    assert not rx.stdlib_searchable(unit * (searchable_up_to + 1))


class _CountedText(str):
    """A text that records each ``count`` made of it."""

    counts: list = []

    def count(self, *args):  # type: ignore[override]
        self.counts.append(args[0])
        return super().count(*args)


@pytest.mark.parametrize(
    "pattern",
    [r"<p=(?P<k>\w+)>(?P<v>.*?)</p>", r"[ab]<p>(?P<v>.*?)</p>", r"(?:x|yy)<p>(?P<v>.*?)</p>"],
)
def test_a_text_too_short_to_hold_too_many_attempts_is_not_counted(pattern) -> None:
    # Each literal occurs at most len(text) // len(literal) times: up to count_free
    # characters, even a text of the shortest literal alone stays within the budget.
    rx = compile_regex(pattern)
    shortest = min(rx.counted, key=len)
    free = rx.count_free
    assert free > 0
    worst = shortest * (free // len(shortest)) + "z" * (free % len(shortest))
    assert sum(map(worst.count, rx.counted)) <= rx.count_budget
    _CountedText.counts = []
    assert rx.stdlib_searchable(_CountedText(worst))
    assert rx.group_split(_CountedText(worst)) is not None
    list(rx.stdlib_finditer(_CountedText(worst)))
    assert _CountedText.counts == []
    # One character more, and the text is counted.
    assert rx.stdlib_searchable(_CountedText(worst + "z"))
    assert _CountedText.counts
