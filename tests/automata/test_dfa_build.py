"""Building the complete DFA tables: a row at a time, with its work counted and bounded.

``Dfa.build_all`` computes each state's row with one closure per word-ness of the
next character and one step per group of classes the state's sets cannot tell
apart, instead of one closure and one step per class. These tests check that the
rows are the ones the per-class steps give, and count the work: closures computed,
NFA states read, and the budget past which a pattern is refused.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings

from rtcompiler.automata.dfa import MAX_DFA_WORK, Dfa
from rtcompiler.automata.nfa import compile_nfa
from rtcompiler.dialect import PatternError

from .strategies import delimiter_patterns, patterns


def _built(pattern: str) -> Dfa:
    dfa = Dfa(compile_nfa(pattern))
    dfa.build_all()
    return dfa


def _built_per_class(pattern: str) -> Dfa:
    """The tables built the way build_all did before rows: one lazy step per class."""
    dfa = Dfa(compile_nfa(pattern))
    todo = [dfa.initial(p) for p in range(3)]
    done: set[int] = set()
    while todo:
        sid = todo.pop()
        if sid in done:
            continue
        done.add(sid)
        dfa.at_eof(sid)
        if not dfa.is_dead(sid):
            todo.extend(dfa.step(sid, c)[0] for c in range(dfa.alphabet.size))
    return dfa


def _cjk_alternatives(n: int) -> str:
    # Two characters each, all distinct: every character is a class of its own.
    return "|".join(re.escape(chr(0x4E00 + 2 * i) + chr(0x4E01 + 2 * i)) for i in range(n))


ROWS = settings(
    max_examples=200, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@ROWS
@given(patterns())
def test_rows_are_the_per_class_steps(pattern):
    try:
        rows = _built(pattern)
    except PatternError:
        return  # refused patterns (loops over nullable bodies) have no tables
    one_by_one = _built_per_class(pattern)
    # Same states, numbered alike (both meet them in class order), same transitions.
    assert rows.keys == one_by_one.keys
    assert rows.transitions == one_by_one.transitions
    assert rows.eof_answers == one_by_one.eof_answers


@ROWS
@given(delimiter_patterns())
def test_rows_are_the_per_class_steps_on_delimiter_shapes(pattern):
    rows = _built(pattern)
    one_by_one = _built_per_class(pattern)
    assert rows.keys == one_by_one.keys
    assert rows.transitions == one_by_one.transitions


@pytest.mark.parametrize("pattern", [
    r"\bfoo\b|bar$",  # word-ness changes the closure: two per state
    r"a(?=bc)|\bx$|(?!q)y+?",  # lookahead obligations: the machine steps each group
    r"(?i)<\|?im_end\|?>|\Z",
])
def test_rows_with_assertions_and_lookaheads(pattern):
    rows = _built(pattern)
    one_by_one = _built_per_class(pattern)
    assert rows.keys == one_by_one.keys
    assert rows.transitions == one_by_one.transitions


def _count_closures(dfa: Dfa) -> list[int]:
    calls = [0]
    closure = dfa.machine.closure

    def counted(*args, **kwargs):
        calls[0] += 1
        return closure(*args, **kwargs)

    dfa.machine.closure = counted
    return calls


def test_a_row_costs_one_closure_per_word_ness_not_one_per_class():
    """200 two-character CJK alternatives: ~400 classes and ~200 states. Per class,
    building took 80,000 closures over 200 threads each (30 s); per row, one."""
    dfa = Dfa(compile_nfa(_cjk_alternatives(200)))
    calls = _count_closures(dfa)
    dfa.build_all()
    states, classes = len(dfa.keys), dfa.alphabet.size
    assert classes > 400 and states > 200
    # One closure for the row and one at the end of the text, per state.
    assert calls[0] <= 2 * states
    # The work is the table's cells plus a bounded amount per state and class.
    assert dfa.work <= 4 * states * classes


def test_the_work_on_a_counted_repeat_grows_with_its_attempts_alive():
    """a{n}: n states with up to n attempts alive each, so n*n/2 registers; the work
    counted tracks that, and doubling n about quadruples it."""
    work = []
    for n in (50, 100, 200):
        dfa = _built(f"a{{{n}}}")
        assert len(dfa.keys) == n + 2
        work.append(dfa.work)
    assert 3 * work[0] <= work[1] <= 5 * work[0]
    assert 3 * work[1] <= work[2] <= 5 * work[1]


@pytest.mark.parametrize("pattern", [
    pytest.param("a{1500}", id="repeat"),  # n*n/2 registers
    pytest.param("(?:a|b)*a(?:a|b){14}", id="exponential"),  # 2**15 states
    pytest.param(_cjk_alternatives(400), id="cjk-400"),  # 400 states of 800 classes
    # Lookaheads: a state per subset of the 12 still pending.
    pytest.param("|".join(f"(?=.{{{i}}}a)" for i in range(12)) + "b", id="lookaheads"),
])
def test_tables_past_the_budget_are_refused_after_bounded_work(pattern):
    dfa = Dfa(compile_nfa(pattern))
    with pytest.raises(PatternError, match=f"more than {MAX_DFA_WORK} units of work"):
        dfa.build_all()
    # Refused as soon as the budget is spent: a read, or one row's cells, past it.
    assert MAX_DFA_WORK < dfa.work <= MAX_DFA_WORK + dfa.alphabet.size
    assert not dfa.complete


def test_a_complete_build_is_not_redone():
    dfa = _built(r"\s*<tool_call>")
    calls = _count_closures(dfa)
    dfa.build_all()
    assert calls[0] == 0 and dfa.complete


def test_the_verdict_does_not_depend_on_steps_taken_before():
    """Lazy steps (a search in-process) before the build do not change its work, so
    neither whether the pattern is refused: every row is computed afresh."""
    pattern = r"to=functions\.(?P<name>[\w.]+).*?<\|message\|>"
    fresh = _built(pattern)
    used = Dfa(compile_nfa(pattern))
    state = used.initial(0)
    for ch in "to=functions.get <|message|>":
        state = used.step(state, used.alphabet.class_of(ord(ch)))[0]
    used.build_all()
    assert used.work == fresh.work
    assert set(used.keys) == set(fresh.keys)  # the same states (numbered as first met)
