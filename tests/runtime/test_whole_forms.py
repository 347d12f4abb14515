"""Stdlib matches in a whole-text parse: only where backtracking stays linear.

``parse_response`` tries a delimiter's stdlib form at the one start its literal
allows (ResponseStream.complete, the landmark walk). ``re`` cannot be instrumented,
so what is counted is what the parse hands to it: a form that reads past the match
it returns (no bounded ``tail``) is never used, and successful matches go through at
most ``_WHOLE_READS`` times the text before the scanners take over.
"""

from __future__ import annotations

from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler.codegen import load_parser
from rtcompiler.template import load_template


class Counting:
    """A stdlib pattern that records the spans its matches went through."""

    def __init__(self, pattern) -> None:
        self.pattern = pattern
        self.calls = 0
        self.read = 0

    def match(self, text, pos=0, endpos=None):
        self.calls += 1
        found = self.pattern.match(text, pos) if endpos is None else self.pattern.match(
            text, pos, endpos
        )
        if found is not None:
            self.read += found.end() - pos
        return found

    def __getattr__(self, name):
        return getattr(self.pattern, name)


def _open_regex(module, field: str):
    return module.TABLE.by_name[field].open.regex


def test_a_form_that_reads_past_its_match_is_left_to_the_scanner() -> None:
    # `x(?:[^y]*y)?` matches "x" but, with no y ahead, re reads to the end first: at
    # every x of a long run of them, a whole-text parse would read the rest again.
    spec = {
        "start_anchor": "<s>",
        "fields": {"t": {"open_pattern": "x(?:[^y]*y)?", "close": "!"}, "content": {}},
    }
    module = load_parser(load_template(spec))
    regex = _open_regex(module, "t")
    assert regex.captures is not None and not regex.tail
    counting = Counting(regex.captures)
    regex.captures = counting
    try:
        text = "ab" + "x!" * 500 + " xxay!"
        assert module.parse_response(text, prefix="") == ref_parse_response(text, spec, prefix="")
    finally:
        regex.captures = counting.pattern
    assert counting.calls == 0


def test_successful_stdlib_matches_read_at_most_a_few_times_the_text() -> None:
    # Every open of `d` spans to the final x, and every time the implicit field's close
    # `e<d>`, which begins one character earlier, wins: the open is looked for again
    # from further on. The stdlib matches stop after _WHOLE_READS times the text.
    spec = {
        "start_anchor": "<s>",
        "fields": {
            "content": {"close_pattern": "e<d>"},
            "d": {"open_pattern": "<d>[^x]*x", "close": "</d>"},
        },
    }
    module = load_parser(load_template(spec))
    regex = _open_regex(module, "d")
    assert regex.captures is not None and regex.tail
    counting = Counting(regex.captures)
    regex.captures = counting
    try:
        text = "e<d>" * 500 + "x"
        stream = module.ResponseStream(module.TABLE, "")
        assert stream.parse_whole(text) == ref_parse_response(text, spec, prefix="")
    finally:
        regex.captures = counting.pattern
    assert counting.calls > 1
    assert counting.read <= 4 * len(text) + len(text)  # the budget, and the match that crossed it
