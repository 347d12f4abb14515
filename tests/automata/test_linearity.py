"""The facts of ``rtcompiler.automata.linearity`` against a counted backtracking matcher.

A stdlib form is used only where a static check says ``re`` cannot go super-linear
on it. That check must be sound, so it is tested here against work *counted* on a
model of ``re``: a depth-first, priority-ordered walk of the pattern's automaton
(what a backtracking matcher does), counting every state it visits and noting the
farthest character it reads. On texts made of a unit repeated more and more times,

- a pattern said to be ``linear`` must do, per attempt, work that grows no faster
  than the text: each doubling of the text at most doubles it (plus slack);
- one said to be ``apart`` must keep a whole ``finditer`` (an attempt at every
  start) linear the same way;
- one said to have a bounded ``tail`` must read a bounded number of characters
  past every match it returns.

The model is checked too: on the shapes the check refuses (``(a|a)*``,
``\\s*.*?\\s*x``), it counts exponential or polynomial work, as ``re`` does.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from rtcompiler.automata.capture import _Emitter, capture_pattern
from rtcompiler.automata.linearity import _CHAR, _MATCH, _Nfa, _TooLarge, backtracking_facts
from rtcompiler.dialect import PatternError, parse_pattern

from .strategies import literal_fragments, patterns

CHECK = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _facts(source: str):
    """The facts of ``source`` and the automaton they are about, with the loops its
    stdlib form would make atomic (none when it has no form)."""
    parsed = parse_pattern(source)
    emitter = _Emitter()
    try:
        emitter.emit(parsed.root, in_loop=False, after=())
        atomic = frozenset(emitter.atomic)
    except Exception:
        atomic = frozenset()
    return backtracking_facts(parsed.root, atomic), _Nfa(parsed.root, atomic)


class Backtracker:
    """A backtracking matcher over :class:`linearity._Nfa`, counting its work."""

    def __init__(self, nfa: _Nfa) -> None:
        self.nfa = nfa

    def attempt(self, text: str, start: int) -> tuple[int | None, int, int]:
        """``(end of the first match or None, states visited, farthest position read)``."""
        states = self.nfa.states
        stack = [(self.nfa.start, start)]
        work = 0
        reach = start
        n = len(text)
        while stack:
            q, i = stack.pop()
            work += 1
            if work > WORK_CAP:
                return None, work, reach  # far past linear: the assertions will say so
            st = states[q]
            if st[0] == _MATCH:
                return i, work, reach
            if st[0] == _CHAR:
                if i < n:
                    reach = max(reach, i + 1)
                    if ord(text[i]) in st[1]:
                        stack.append((st[2], i + 1))
                continue
            for target, guard in reversed(st[1]):
                # An atomic loop is left only before a character outside its set.
                if guard is None or i == n or ord(text[i]) in guard:
                    stack.append((target, i))
        return None, work, reach

    def finditer_work(self, text: str) -> int:
        total = 0
        pos = 0
        while pos <= len(text):
            end, work, _ = self.attempt(text, pos)
            total += work
            pos = pos + 1 if end is None or end == pos else end
        return total


def _grows_linearly(values: list[int], slack: int = 64) -> bool:
    """Each doubling of the text at most doubles the work (with a little slack)."""
    return all(b <= 2.25 * a + slack for a, b in zip(values, values[1:], strict=False))


SIZES = (4, 8, 16, 32)
WORK_CAP = 2_000_000


@st.composite
def pumped(draw, source: str):
    """A head, a unit to repeat, a tail: pieces of the pattern's own literals, and
    characters its sets hold."""
    pieces = literal_fragments(source) + [" ", "a", "b", "ab", "\n", "<", ">", "x"]
    piece = st.sampled_from(pieces)
    head = "".join(draw(st.lists(piece, max_size=3)))
    unit = draw(st.one_of(
        st.sampled_from([" ", "a", "b", "ab", "<"]),
        st.lists(piece, min_size=1, max_size=3).map("".join),
    ))
    tail = "".join(draw(st.lists(piece, max_size=2)))
    return head, unit, tail


# Loops over overlapping sets, side by side, in groups and optional parts: the shapes
# where backtracking goes polynomial or exponential, and where it only seems to.
LOOPS = [r"\s*", r".*?", r".*", r"a*", r"a+?", r"[ab]+", r"\w*", r"(?:ab)*", r"(?:a|b)*", r"b?",
         r"[^<]*", r"(?:a|ab)+", r"[ a]*?", r"(?:a|ab|b)*", r"(?:a|[ab])+",
         r"(?:(?:b?|x?)a)*"]  # two routes to the same 'a': exponential, no two states
LITERALS = ["x", "<", " ", "a", "ab"]


@st.composite
def loopy_patterns(draw) -> str:
    parts = [
        draw(st.sampled_from(LOOPS if draw(st.integers(0, 3)) else LITERALS))
        for _ in range(draw(st.integers(2, 5)))
    ]
    i = draw(st.integers(0, len(parts) - 1))
    wrap = draw(st.sampled_from(["", "(?P<g>{})", "(?:{})?", "(?:{}|a)", "(?:{}x)?", "(?:{}x|)"]))
    if wrap:
        parts[i] = wrap.format(parts[i])
    source = "".join(parts)
    try:
        parse_pattern(source)
    except PatternError:
        assume(False)
    return source


def _check_linear_work(data, source: str) -> None:
    try:
        facts, nfa = _facts(source)
    except (PatternError, _TooLarge):
        assume(False)
        return
    # The model explores every path: on a pattern the check refuses it may take
    # exponential time, and the property is about the patterns it accepts.
    assume(facts["linear"])
    event(f"apart: {facts['apart']}, tail: {facts['tail']}")
    head, unit, tail = data.draw(pumped(source), label="text")
    model = Backtracker(nfa)
    works, tails = [], []
    finds = []
    for k in SIZES:
        text = head + unit * k + tail
        end, work, reach = model.attempt(text, 0)
        works.append(work)
        if end is not None:
            tails.append(reach - end)
        if facts["apart"]:
            finds.append(model.finditer_work(text))
    assert _grows_linearly(works), (source, head, unit, tail, works)
    if facts["apart"]:
        assert _grows_linearly(finds), (source, head, unit, tail, finds)
    if facts["tail"] and len(tails) == len(SIZES):
        assert max(tails) <= tails[0] + 8, (source, head, unit, tail, tails)


@CHECK
@given(st.data())
def test_linear_forms_do_linear_work_per_attempt(data) -> None:
    _check_linear_work(data, data.draw(patterns(), label="pattern"))


@CHECK
@given(st.data())
def test_loops_said_linear_do_linear_work(data) -> None:
    _check_linear_work(data, data.draw(loopy_patterns(), label="pattern"))


# -- the model counts what re does on the refused shapes --------------------------


@pytest.mark.parametrize(("pattern", "text"), [
    (r"(?:a|a)*b", "a"),  # EDA: two cycles on one word
    (r"\s*(?P<k>.*?)\s*x", " "),  # IDA: three loops share the spaces
    (r"<(?P<v>.*?)>(?P<w>[^<]*?)</", ">"),  # IDA on '>'
    (r"a.*?.*?b", "a"),
])
def test_refused_shapes_do_super_linear_work_in_the_model(pattern: str, text: str) -> None:
    facts, nfa = _facts(pattern)
    assert not facts["linear"]
    model = Backtracker(nfa)
    works = [model.attempt(("<" if pattern.startswith("<") else "") + text * k, 0)[1]
             for k in (8, 16, 32)]
    assert not _grows_linearly(works), works


@pytest.mark.parametrize(("pattern", "linear", "apart", "tail"), [
    (r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>", True, False, True),
    (r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>",
     False, False, False),
    (r"<\|im_assistant\|>[^<]*<\|im_middle\|>", True, True, True),
    (r"\s*<tool_call>", True, False, True),
    (r"</tool_call>\s*", True, True, True),  # a greedy tail finds a better match each step
    (r"x(?:[^y]*y)?", True, False, False),  # reads to the end hoping for y, then settles
    (r"(?P<key>\w+)=(?P<value>.*.*.*.*);", False, False, False),
    # Harmony's header: the name run is atomic (absorbed by [^<]*), so it is linear; no
    # loop reads the '<' it begins with.
    (r"<\|channel\|>(?:commentary|analysis) to=functions\.(?P<name>[^\s<]+)[^<]*<\|message\|>",
     True, True, True),
])
def test_facts_of_known_patterns(pattern: str, linear: bool, apart: bool, tail: bool) -> None:
    facts, _ = _facts(pattern)
    assert facts == {"linear": linear, "apart": apart, "tail": tail}
    form = capture_pattern(parse_pattern(pattern))
    assert (form is not None) == linear


def test_an_absorbed_run_is_atomic_in_the_stdlib_form() -> None:
    # Without it, a header cut off before <|message|> makes re split the name between
    # the two loops every way: quadratic in the name's length, per attempt.
    source = r"to=(?P<name>[^\s<]+)[^<]*<\|message\|>"
    form = capture_pattern(parse_pattern(source))
    assert form is not None
    assert "(?P<name>(?=(" in form["source"]
    facts, nfa = _facts(source)
    model = Backtracker(nfa)
    works = [model.attempt("to=" + "a" * k, 0)[1] for k in (16, 32, 64)]
    assert _grows_linearly(works, slack=0), works
