"""The ``regex`` module's partial-matching semantics, one named test per rule.

Every rule was learned by experiment against ``regex.compile(p, regex.DOTALL)``
and ``.search(text, pos, partial=...)``, the way transformers calls it. Each test
pins ``regex``'s answer (so an upgrade that changes behaviour is caught) and
requires :func:`rtcompiler.automata.compile_regex` to give the same answer.

An answer is ``(start, end, partial, groupdict)`` or ``None``.
"""

from __future__ import annotations

from typing import Any

import regex

from rtcompiler.automata import compile_regex

Answer = Any  # None or (start, end, partial, groupdict)


def _answer(m: Any) -> Answer:
    if m is None:
        return None
    start, end = m.span()
    return (start, end, bool(m.partial), m.groupdict())


def regex_answer(p: str, text: str, pos: int = 0, partial: bool = True) -> Answer:
    return _answer(regex.compile(p, regex.DOTALL).search(text, pos, partial=partial))


def engine_answer(p: str, text: str, pos: int = 0, partial: bool = True) -> Answer:
    return _answer(compile_regex(p).search(text, pos, partial=partial))


def both(p: str, text: str, pos: int = 0, partial: bool = True) -> Answer:
    """``regex``'s answer, after checking that our engine gives the same one."""
    want = regex_answer(p, text, pos, partial)
    got = engine_answer(p, text, pos, partial)
    assert got == want, (
        f"engine disagrees with regex: pattern {p!r}, text {text!r}, pos={pos}, "
        f"partial={partial}: regex {want}, engine {got}"
    )
    return want


def deviation(p: str, text: str, pos: int, regex_says: Answer, we_say: Answer) -> None:
    """A documented deviation (docs/regex-dialect.md): pin both sides, so that a
    change in ``regex`` or in our engine shows up."""
    assert regex_answer(p, text, pos) == regex_says, (p, text, pos)
    assert engine_answer(p, text, pos) == we_say, (p, text, pos)


# -- which match wins ----------------------------------------------------------


def test_complete_match_anywhere_beats_earlier_partial() -> None:
    """A complete match anywhere in the searched range wins over a partial match that would start
    earlier.
    """
    assert both(r"a.*c|b", "ab") == (1, 2, False, {})
    assert both(r"abcd|bx|c", "abc") == (2, 3, False, {})
    assert both(r"abd|bc", "abc") == (1, 3, False, {})


def test_zero_width_complete_match_at_end_beats_earlier_partial() -> None:
    """An empty complete match at the end of the text (``$``, ``\\Z``) still beats an earlier
    partial one.
    """
    assert both(r"abc|$", "xab") == (3, 3, False, {})
    assert both(r"abc|\Z", "xab") == (3, 3, False, {})


def test_complete_lower_priority_alternative_beats_partial_at_same_start() -> None:
    """At one start, a complete match by a lower-priority path wins over a higher-priority path that
    ran into the end.
    """
    assert both(r"ab|a", "a") == (0, 1, False, {})
    assert both(r"ab?", "a") == (0, 1, False, {})
    assert both(r"a|ab", "a") == (0, 1, False, {})
    assert both(r"a(?=b)c|a", "a") == (0, 1, False, {})


def test_partial_starts_leftmost_and_ends_at_text_end() -> None:
    """Without a complete match, the partial match starts at the leftmost start from which some path
    ran into the end, and ends at len(text).
    """
    assert both(r"abc", "xxab") == (2, 4, True, {})
    assert both(r"\s*<t>", "  x ") == (3, 4, True, {})
    assert both(r"abc", "abxab", 1) == (3, 5, True, {})
    assert both(r"ab", "a") == (0, 1, True, {})
    assert both(r"abc", "xxab", partial=False) is None


def test_later_partial_branch_at_earlier_start_wins_over_later_start() -> None:
    """Among partial matches the earliest start wins, whichever alternative produced it."""
    assert both(r"abc|c", "xab") == (1, 3, True, {})
    assert both(r"xy|abc", "abx") == (2, 3, True, {})


# -- loops and repeats at the end ------------------------------------------------


def test_greedy_loop_at_end_is_complete() -> None:
    """A greedy loop that could take more at the end of the text still gives a complete match."""
    assert both(r"a+", "aaa") == (0, 3, False, {})
    assert both(r"a{2,3}", "aa") == (0, 2, False, {})
    assert both(r".*", "abc") == (0, 3, False, {})


def test_lazy_loop_gives_shortest_complete_match() -> None:
    """A lazy loop stops as early as it can, complete, even with partial=True."""
    assert both(r"a+?", "aaa") == (0, 1, False, {})
    assert both(r"a{2,3}?", "aa") == (0, 2, False, {})


def test_counted_repeat_short_of_minimum_is_partial() -> None:
    """A counted repeat short of its minimum when the text ends gives a partial match."""
    assert both(r"a{2,3}", "a") == (0, 1, True, {})
    assert both(r"a{3}", "xaa") == (1, 3, True, {})
    assert both(r"(?:ab){2}", "aba") == (0, 3, True, {})
    assert both(r"a{2,}b", "aaa") == (0, 3, True, {})
    assert both(r"a{0,2}b", "aa") == (0, 2, True, {})
    assert both(r"a{2,3}?", "a") == (0, 1, True, {})


def test_lazy_dotstar_before_literal_runs_to_end() -> None:
    """A lazy ``.*?`` that has not found what follows it yet gives a partial match to the end of the
    text.
    """
    assert both(r"a.*?b", "axx") == (0, 3, True, {})
    assert both(r"a.*?b", "axbx") == (0, 3, False, {})
    assert both(r".*?x", "ab") == (0, 2, True, {})


def test_nullable_pattern_at_end_is_complete_empty_match() -> None:
    """A pattern that can match empty gives a complete empty match at pos, even at the end of the
    text.
    """
    assert both(r"x*", "aaa", 3) == (3, 3, False, {})
    assert both(r"x*", "aaa", 3, partial=False) == (3, 3, False, {})
    assert both(r"x*", "aaa") == (0, 0, False, {})
    assert both(r"a*", "") == (0, 0, False, {})


def test_empty_pattern_matches_empty_at_pos() -> None:
    """The empty pattern matches empty at pos, complete, also at and past the end of the text."""
    assert both(r"", "") == (0, 0, False, {})
    assert both(r"", "abc", 1) == (1, 1, False, {})
    assert both(r"", "abc", 3) == (3, 3, False, {})
    assert both(r"", "abc", 7) == (3, 3, False, {})


def test_case_insensitive_partial() -> None:
    """Case-insensitive literals run into the end like any other character set, Unicode folds
    included.
    """
    assert both(r"(?i)ABC", "zab") == (1, 3, True, {})
    assert both(r"(?i)abc", "zAB") == (1, 3, True, {})
    assert both(r"(?i)kz", "x\u212a") == (1, 2, True, {})
    assert both(r"(?i)k", "\u212a") == (0, 1, False, {})


# -- assertions and lookaheads -------------------------------------------------------


def test_assertion_at_end_is_evaluated_not_run_into() -> None:
    """Zero-width assertions at the end of the text are evaluated normally; failing there is a plain
    failure.
    """
    # \B fails after x; the (1, 1) comes from the fast path at the end
    assert both(r"x\B", "x") == (1, 1, True, {})
    assert both(r"a\Zb", "a") == (0, 1, True, {})
    assert both(r"x\b", "x") == (0, 1, False, {})
    assert both(r"a\Z", "a") == (0, 1, False, {})


def test_lookahead_running_into_end_makes_partial() -> None:
    """A lookahead body (positive or negative) that runs into the end of the text makes the match
    partial.
    """
    assert both(r"a(?=b)", "a") == (0, 1, True, {})
    assert both(r"a(?!b)(?!)", "a") == (0, 1, True, {})
    assert both(r"(?=abc)", "ab") == (0, 2, True, {})
    assert both(r"(?=abc)", "xab") == (1, 3, True, {})
    assert both(r"(?=a)", "") == (0, 0, True, {})


def test_negative_lookahead_succeeds_at_end_in_complete_search() -> None:
    """Because the complete search comes first, a negative lookahead whose body is cut off by the
    end succeeds.
    """
    assert both(r"a(?!bc)", "ab") == (0, 1, False, {})
    assert both(r"a(?!b)", "a") == (0, 1, False, {})
    assert both(r"(?!a)", "") == (0, 0, False, {})
    assert both(r"(?!a)", "a", 1) == (1, 1, False, {})


def test_lookahead_is_evaluated_before_the_path_continues() -> None:
    """A lookahead that runs into the end makes the match partial even if what follows it could
    never match.
    """
    assert both(r"a(?=bcd)x", "ab") == (0, 2, True, {})


# -- searching at the end of the text --------------------------------------------


def test_end_fast_path_skips_assertions() -> None:
    """At len(text), a pattern that needs at least one character reports a partial (len, len)
    without evaluating its assertions.
    """
    assert both(r"\Bx", "a") == (1, 1, True, {})
    assert both(r"\bx", "-", 1) == (1, 1, True, {})
    assert both(r"(?!)x", "a", 1) == (1, 1, True, {})
    assert both(r"\b[^ab]", "-", 1) == (1, 1, True, {})


def test_unmatchable_text_still_gives_partial_at_end() -> None:
    """So a pattern that needs a character never answers None with partial=True unless it is
    anchored: it answers (len, len).
    """
    assert both(r"abc", "xyz") == (3, 3, True, {})
    assert both(r"abc", "xyz", partial=False) is None
    assert both(r"abc", "") == (0, 0, True, {})
    assert both(r"(?P<n>a)", "") == (0, 0, True, {"n": None})


def test_end_fast_path_needs_positive_min_width() -> None:
    """A pattern that can match empty gets no fast path at the end: its assertions decide."""
    assert both(r"\b", "") is None
    assert both(r"\B", "a", 1) is None
    assert both(r"(?!)", "a", 1) is None
    assert both(r"\B", "") == (0, 0, False, {})


def test_end_fast_path_not_for_anchored_patterns() -> None:
    """A pattern anchored at the start of the string (every path starts with ^ or \\A, through
    non-capturing groups) gets no fast path.
    """
    assert both(r"\Ax", "a", 1) is None
    assert both(r"(?:\Ax)z", "a", 1) is None
    assert both(r"^abc", "xyz") is None
    assert both(r"^abc", "xab") is None
    assert both(r"^abc", "ab") == (0, 2, True, {})


def test_end_fast_path_anchor_hidden_by_alternative_or_capture() -> None:
    """An anchor in only one alternative, or inside a capturing group, does not make the pattern
    anchored.
    """
    assert both(r"(?:\Ax|y)", "a", 1) == (1, 1, True, {})
    assert both(r"(?P<n>\Ax)", "a", 1) == (1, 1, True, {"n": None})
    assert both(r"(?:^|x)abc", "yab") == (3, 3, True, {})


def test_end_fast_path_off_when_first_item_is_any_or_negated_char() -> None:
    """DEVIATION (start heuristics). When a match may begin with "any character" or a single
    negated character, regex searches the end normally, so a failing leading assertion gives None;
    we apply rule 3 (a partial (len, len) for a pattern that needs a character) uniformly.
    """
    deviation(r"\b.", "-", 1, None, (1, 1, True, {}))
    deviation(r"\b[\s\S]", "-", 1, None, (1, 1, True, {}))
    deviation(r"\b(?:x|.)", "-", 1, None, (1, 1, True, {}))
    deviation(r"\b[^a]", "-", 1, None, (1, 1, True, {}))
    deviation(r"\b[^a]", "--", 0, None, (2, 2, True, {}))
    # where the assertion holds, the next item runs into the end as usual
    assert both(r"\b.", "a", 1) == (1, 1, True, {})


def test_regex_bug_lone_any_char_at_end_answers_past_the_text() -> None:
    """regex bug: a pattern that is only ``.`` (DOTALL) repeated, searched partially at the end,
    answers a complete match ending past the text; our engine answers the sane partial (len, len).
    """
    assert regex_answer(r".", "") == (0, 1, False, {})
    assert regex_answer(r".+", "") == (0, 2**32, False, {})
    assert regex_answer(r".{1,3}", "ab", 2) == (2, 5, False, {})
    assert regex_answer(r"[\s\S]", "") == (0, 1, False, {})
    # a capturing group, or anything else in the pattern, avoids the bug
    assert both(r"(?P<n>.)", "") == (0, 0, True, {"n": None})
    assert both(r".{2,}", "") == (0, 0, True, {})
    assert both(r"..", "ab", 2) == (2, 2, True, {})
    # deliberate divergence: an answer past the end of the text is no oracle
    assert engine_answer(r".", "") == (0, 0, True, {})
    assert engine_answer(r".+", "") == (0, 0, True, {})
    assert engine_answer(r".{1,3}", "ab", 2) == (2, 2, True, {})


# -- which starts are tried ------------------------------------------------------------


def test_leading_lookahead_only_tried_where_a_match_can_begin() -> None:
    """DEVIATION (start heuristics). regex only tries starts whose character can begin the first
    consuming item after leading lookaheads, so a leading lookahead that would run into the end at
    another start is never evaluated there. We evaluate every start: the partial match begins at
    the leftmost start where any path, lookaheads included, runs into the end.
    """
    deviation(r"(?!ab)c", "a", 0, (1, 1, True, {}), (0, 1, True, {}))
    deviation(r"(?!ab)c", "xa", 0, (2, 2, True, {}), (1, 2, True, {}))
    deviation(r"(?=ab)c", "a", 0, (1, 1, True, {}), (0, 1, True, {}))
    deviation(r"(?=ab)c", "xa", 0, (2, 2, True, {}), (1, 2, True, {}))
    deviation(r"(?!ab)[cd]", "a", 0, (1, 1, True, {}), (0, 1, True, {}))
    deviation(r"(?!ab)\d", "a", 0, (1, 1, True, {}), (0, 1, True, {}))
    deviation(r"x|(?!ab)c", "a", 0, (1, 1, True, {}), (0, 1, True, {}))


def test_leading_lookahead_tried_where_a_match_can_begin() -> None:
    """Where the start's character can begin the match, the leading lookahead is evaluated and runs
    into the end as usual.
    """
    assert both(r"(?!ab)(?:c|a)d", "a") == (0, 1, True, {})
    assert both(r"(?!ab)x?ad", "a") == (0, 1, True, {})
    assert both(r"(?!ab)[^c]d", "a") == (0, 1, True, {})
    assert both(r"\s*(?!ab)c", " a") == (0, 2, True, {})
    assert both(r"(?:(?!ab)c|(?=ab)d)", "a") == (0, 1, True, {})


def test_positive_lookahead_then_class_does_not_filter_starts() -> None:
    """After a leading positive lookahead, a first item that is a class (not a literal) does not
    filter starts in regex: the lookahead runs into the end, as it does for us.
    """
    assert both(r"(?=ab)[cd]", "a") == (0, 1, True, {})
    assert both(r"(?=ab)\d", "a") == (0, 1, True, {})
    assert both(r"(?=ab)(?:c|d)", "a") == (0, 1, True, {})
    # but a literal first item does filter in regex (the deviation above)
    deviation(r"(?=ab)(?:cd|ce)", "a", 0, (1, 1, True, {}), (0, 1, True, {}))


# -- pos, anchors and boundaries ----------------------------------------------------


def test_pos_beyond_end_is_clamped() -> None:
    """A pos past the end of the text is treated as len(text)."""
    assert both(r"abc", "ab", 5) == (2, 2, True, {})
    assert both(r"abc", "ab", 5, partial=False) is None


def test_start_anchors_fail_after_pos_zero() -> None:
    """``^`` and ``\\A`` match only at offset 0 of the text, never at a later pos."""
    assert both(r"^a", "ba", 1) is None
    assert both(r"^a", "ba", 1, partial=False) is None
    assert both(r"\Aa", "ba", 1) is None
    assert both(r"^a", "ab") == (0, 1, False, {})


def test_word_boundary_looks_before_pos() -> None:
    """``\\b`` at pos sees the character before pos, not a start of text."""
    assert both(r"\bb", "ab", 1) == (2, 2, True, {})
    assert both(r"\bb", "ab", 1, partial=False) is None
    assert both(r"\bb", "-b", 1) == (1, 2, False, {})
    assert both(r"\b", "a", 1) == (1, 1, False, {})


def test_dollar_matches_before_final_newline_but_z_does_not() -> None:
    """``$`` matches at the end or just before a final newline; ``\\Z`` only at the very end."""
    assert both(r"a$", "a\n") == (0, 1, False, {})
    assert both(r"a$", "a\n", partial=False) == (0, 1, False, {})
    assert both(r"$", "a\n") == (1, 1, False, {})
    assert both(r"$", "a\n", 2) == (2, 2, False, {})
    assert both(r"a\Z", "a\n") == (2, 2, True, {})
    assert both(r"a\Z", "a\n", partial=False) is None
    assert both(r"abc|\Z", "xab\n") == (4, 4, False, {})


def test_dollar_with_partial_on_text_ending_in_newline() -> None:
    """With partial=True, ``$`` before a final newline is a real match, and only the final newline
    counts.
    """
    assert both(r"a$\n", "a\n") == (0, 2, False, {})
    assert both(r"a\n$", "a\n") == (0, 2, False, {})
    assert both(r"abc|$", "xab\n") == (3, 3, False, {})
    assert both(r"a$x", "a\n") == (2, 2, True, {})
    assert both(r"a$", "a\n\n") == (3, 3, True, {})
    assert both(r"a$", "a\nb") == (3, 3, True, {})


# -- groups of a partial match -----------------------------------------------------------


def test_partial_groups_come_from_first_path_into_end() -> None:
    """The groups of a partial match are those of the first path, in priority order, that ran into
    the end.
    """
    assert both(r"(?P<n>a)(?:(?P<m>b)c|bd)", "ab") == (0, 2, True, {"n": "a", "m": "b"})
    assert both(r"(?:(?P<m>b)c|bd)", "b") == (0, 1, True, {"m": "b"})
    assert both(r"(?P<n>a)(?P<m>b)?c", "ab") == (0, 2, True, {"n": "a", "m": "b"})
    assert both(r"(?P<n>a)(?P<m>b)?c", "a") == (0, 1, True, {"n": "a", "m": None})


def test_partial_group_still_open_is_unset() -> None:
    """A group that had not closed when its path ran into the end is None, even if it had matched
    text.
    """
    assert both(r"(?P<n>ab)", "a") == (0, 1, True, {"n": None})
    assert both(r"(?P<n>a)(?P<m>b)", "a") == (0, 1, True, {"n": "a", "m": None})
    assert both(r"(?P<n>x)|(?P<m>ab)", "a") == (0, 1, True, {"n": None, "m": None})
    # a greedy loop inside the group asks for one more character before closing
    assert both(r"(?P<n>a+)b", "aaa") == (0, 3, True, {"n": None})
    assert both(r"(?P<n>a*)b", "aa") == (0, 2, True, {"n": None})


def test_partial_lazy_loop_in_group_runs_into_end_inside_group() -> None:
    """DEVIATION (groups of partial matches). With a lazy loop in a group followed by a literal,
    regex reports the group as still open (None); we report the first path in priority order that
    runs into the end, which closed the group. Transformers never reads the groups of a partial
    match: it only holds text back from its start.
    """
    deviation(r"(?P<n>a*?)b", "aa", 0, (0, 2, True, {"n": None}), (0, 2, True, {"n": "aa"}))
    deviation(r"(?P<n>a+?)c", "aa", 0, (0, 2, True, {"n": None}), (0, 2, True, {"n": "aa"}))


def test_partial_repeated_group_keeps_last_completed_iteration() -> None:
    """A repeated group that starts a new iteration and runs into the end keeps the value of its
    last completed iteration.
    """
    assert both(r"(?P<n>a|b)*c", "ab") == (0, 2, True, {"n": "b"})
    assert both(r"(?P<n>ab)*c", "aba") == (0, 3, True, {"n": "ab"})
    assert both(r"(?P<n>[ab])+c", "ab") == (0, 2, True, {"n": "b"})
    assert both(r"(?P<n>.)*c", "ab") == (0, 2, True, {"n": "b"})
    # the complete answers, for contrast
    assert both(r"(?P<n>a|b)*c", "abc") == (0, 3, False, {"n": "b"})
    assert both(r"(?P<n>a|b)*", "ab") == (0, 2, False, {"n": "b"})


def test_partial_group_from_earlier_iteration_survives() -> None:
    """A group set in an earlier loop iteration keeps its value when a later iteration takes another
    alternative.
    """
    assert both(r"(?:(?P<n>a)|b)*c", "ab") == (0, 2, True, {"n": "a"})
    assert both(r"(?:(?P<n>a)|b)*c", "ba") == (0, 2, True, {"n": "a"})
    assert both(r"(?:(?P<n>a)|(?P<m>b))*c", "ab") == (0, 2, True, {"n": "a", "m": "b"})
    assert both(r"(?:(?P<n>a)b)*c", "ab") == (0, 2, True, {"n": "a"})


def test_partial_groups_with_required_literal_string() -> None:
    """DEVIATION (groups of partial matches). When a literal string of the pattern is cut off at
    the end, regex reports the path that puts the string where its partial occurrence begins; we
    report the first path in priority order. Spans agree; only these groups differ.
    """
    deviation(r"(?P<n>a)?ab", "a", 0, (0, 1, True, {"n": None}), (0, 1, True, {"n": "a"}))
    deviation(r"(?P<n>x)?xy", "x", 0, (0, 1, True, {"n": None}), (0, 1, True, {"n": "x"}))
    deviation(r"q(?P<n>a)?ab", "qa", 0, (0, 2, True, {"n": None}), (0, 2, True, {"n": "a"}))
    # no partial occurrence of the string, or one further right: the first path wins in both
    assert both(r"(?P<n>a)?bc", "a") == (0, 1, True, {"n": "a"})
    assert both(r"(?P<n>a)?ab", "aa") == (0, 2, True, {"n": "a"})
    assert both(r"(?P<n>a)*ab", "aa") == (0, 2, True, {"n": "a"})
    assert both(r"(?P<n>a)?[ab]b", "a") == (0, 1, True, {"n": "a"})
    assert both(r"(?P<n>a)?a(?:b|c)", "a") == (0, 1, True, {"n": "a"})

def test_end_fast_path_counts_positive_lookahead_bodies() -> None:
    """At the end, a pattern whose positive lookahead needs a character takes the fast path,
    even though the lookahead itself is zero-width; a negative lookahead does not count.
    """
    assert both(r"(?=^x)", "a", 1) == (1, 1, True, {})
    assert both(r"(?=^<tool_call>)", "<", 1) == (1, 1, True, {})
    assert both(r"(?=(?=^x))", "a", 1) == (1, 1, True, {})
    assert both(r"(?=^x|^)", "a", 1) is None
    assert both(r"(?!^x)(?!)", "a", 1) is None


def test_repetition_of_an_anchored_group_is_anchored() -> None:
    """A repetition of at least one anchored item keeps the pattern anchored (no fast path at
    the end); an optional one does not.
    """
    assert both(r"(?:^<think>)+", "<", 1) is None
    assert both(r"(?:^<t>){2}", "<", 1) is None
    assert both(r"(?:^<t>|^x)+", "<", 1) is None
    assert both(r"(?:^<t>)?", "<", 1) == (1, 1, False, {})


def test_partial_start_heuristics() -> None:
    """DEVIATION (start heuristics). Where a lookahead has alternatives, or a lazy loop runs over
    a class before a literal or with an assertion, regex's partial start comes from how it scans;
    ours is the leftmost start from which a path runs into the end.
    """
    deviation(r"(?=abc|a)$", "ab", 0, (0, 2, True, {}), (2, 2, True, {}))
    deviation(r"x*?ab", "ac", 0, (0, 2, True, {}), (2, 2, True, {}))
    deviation(r"(?:/|.*?)\bf", "/", 0, (1, 1, True, {}), (0, 1, True, {}))
    # the plain cases agree
    assert both(r"(?=abc)$", "ab") == (0, 2, True, {})
    assert both(r".*?<\|message\|>", "to=functions.f <|mes") == (0, 20, True, {})


def test_dollar_is_an_assertion_not_a_read() -> None:
    """``$`` never counts as running into the end, even inside a negative lookahead."""
    assert both(r"(?!$)", "") is None
    assert both(r"(?!$)$", "a", 1) is None
    assert both(r"a$b", "a") == (0, 1, True, {})


def test_late_start_anchor_at_the_end() -> None:
    """DEVIATION. A start anchor after the first item cannot hold at the end of a non-empty
    text; regex still reports a partial match there for some such patterns and not others."""
    deviation(r"$^", " ", 0, (1, 1, True, {}), None)
    deviation(r"$^$", " ", 0, (1, 1, True, {}), None)
    assert both(r"$$^", " ") is None
