"""Stdlib matches in a whole-text parse: only where backtracking stays linear.

``parse_response`` tries a delimiter's stdlib form at the one start its literal
allows (ResponseStream.complete, the landmark walk). ``re`` cannot be instrumented,
so what is counted is what the parse hands to it: a form that reads past the match
it returns (no bounded ``tail``) is never used, and successful matches go through at
most ``_WHOLE_READS`` times the text before the scanners take over.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler.codegen import load_parser
from rtcompiler.template import load_template

from .helpers import DIFFERENTIAL, assert_same, outcome


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


# -- a lazy tail: `head S*? literal` matched as the head's form, then a find ------------

def _lazy_spec(open_pattern: str) -> dict:
    return {
        "start_anchor": "<s>",
        "fields": {
            "call": {"open_pattern": open_pattern, "close": "!", "repeats": True,
                     "transform": {"name": "{name}", "arguments": "{content}"}},
            "content": {},
        },
    }


# Each pattern with the pieces its texts are made of.
LAZY_CASES = (
    # Harmony's header, written lazily: the whole pattern has no stdlib form (the name
    # run and the lazy loop could split a word every way).
    (r"to=functions\.(?P<name>[\w.]+).*?<\|message\|>",
     ("to=functions.", "get", "_", ".", " ", "json", "<|message|>", "<|mess", "<", "\n", "!")),
    # The loop leaves out a character: one between the head and the literal fails it.
    (r"to=(?P<name>\w+)[^\n]*?<\|message\|>",
     ("to=", "x", " ", "\n", "<|message|>", "<|mess", "!")),
    # The head's first match can end past the literal's only occurrence (`t=xxab`):
    # a shorter head match then succeeds, which only the scanner finds.
    (r"t=(?P<name>\w+).*?ab", ("t=", "x", "a", "b", "ab", " ", "!")),
    # A head with an optional part, and a literal that begins like the loop's text.
    (r"<(?P<name>[a-z]+)(?: v\d)?.*?>>", ("<", "ab", " v1", " ", ">", ">>", "!")),
)
LAZY_PATTERNS = tuple(pattern for pattern, _ in LAZY_CASES)


def test_lazy_tail_patterns_get_a_head_form() -> None:
    for pattern in LAZY_PATTERNS:
        module = load_parser(load_template(_lazy_spec(pattern)))
        regex = _open_regex(module, "call")
        assert regex.captures is None or not regex.tail, pattern
        assert regex.lazy_tail is not None, pattern


@DIFFERENTIAL
@given(data=st.data(), case=st.sampled_from(LAZY_CASES))
@example(data=None, case=(LAZY_CASES[2][0], ("t=", "x", "x", "ab")))
def test_a_lazy_tail_finds_the_references_match(data, case) -> None:
    pattern, pieces = case
    if data is not None:
        pieces = data.draw(st.lists(st.sampled_from(pieces), max_size=16))
    spec = _lazy_spec(pattern)
    module = _lazy_module(pattern)
    text = "".join(pieces)
    assert_same(
        outcome(lambda: module.parse_response(text, prefix="")),
        outcome(lambda: ref_parse_response(text, spec, prefix="")),
    )


_LAZY_MODULES: dict = {}


def _lazy_module(pattern: str):
    if pattern not in _LAZY_MODULES:
        _LAZY_MODULES[pattern] = load_parser(load_template(_lazy_spec(pattern)))
    return _LAZY_MODULES[pattern]


def test_a_long_lazy_header_takes_no_python_step_in_a_whole_text_parse() -> None:
    # Harmony's lazy header held open for n characters: the head's form reads the name,
    # and str.find the stretch up to <|message|>. No DFA step, no group walked, and the
    # text read about once, whatever n.
    spec = {
        "start_anchor": "<|start|>assistant",
        "fields": {
            "tool_calls": {
                "open_pattern": LAZY_PATTERNS[0], "close": "<|call|>", "repeats": True,
                "content": "json", "transform": {"name": "{name}", "arguments": "{content}"},
            },
            "content": {},
        },
    }
    module = load_parser(load_template(spec))
    regex = _open_regex(module, "tool_calls")
    for n in (2_000, 8_000, 32_000):
        text = ("Checking.<|channel|>commentary to=functions.get_weather "
                + ("json x " * n)[:n] + '<|message|>{"city": "Paris"}<|call|>')
        walked = regex.walked
        stream = module.ResponseStream(module.TABLE, "")
        message = stream.parse_whole(text)
        assert message == ref_parse_response(text, spec, prefix="")
        assert message["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
        assert stream.steps == 0, (n, stream.steps)
        assert regex.walked == walked
        assert stream.searched + stream.examined <= 1.1 * len(text), n


# -- an alternation of forms and lookaheads: each alternative's leftmost match ------------

def _branch_spec(close_pattern: str) -> dict:
    return {
        "start_anchor": "<s>",
        "fields": {"t": {"open": "[", "close_pattern": close_pattern}, "content": {}},
    }


BRANCH_CASES = (
    # Qwen3's call close: a call also ends where the turn does.
    (r"</tool_call>\s*|(?=<\|im_end\|>)", ("[", "x", " ", "\n", "</tool_call>", "</tool_",
                                           "<|im_end|>", "<|im_")),
    # The lookahead first: at one start, it wins over the form.
    (r"(?=ab)|a\s*", ("[", "a", "b", "ab", " ", "x")),
    # Two forms, a literal of one inside the other's match.
    (r"ab\s*c|(?=b)|bc", ("[", "a", "b", "c", " ", "abc")),
)


def test_alternations_of_forms_and_lookaheads_get_branches() -> None:
    for pattern, _ in BRANCH_CASES:
        module = load_parser(load_template(_branch_spec(pattern)))
        regex = module.TABLE.by_name["t"].close.regex
        # (The whole has a form too now, its lookahead written in: a streamed search
        # answers from the branches, a whole-text parse with the form.)
        assert regex.branches is not None and regex.captures is not None, pattern


_BRANCH_MODULES: dict = {}


@DIFFERENTIAL
@given(data=st.data(), case=st.sampled_from(BRANCH_CASES))
def test_branches_find_the_references_match(data, case) -> None:
    pattern, pieces = case
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=16)))
    spec = _branch_spec(pattern)
    if pattern not in _BRANCH_MODULES:
        _BRANCH_MODULES[pattern] = load_parser(load_template(spec))
    module = _BRANCH_MODULES[pattern]
    assert_same(
        outcome(lambda: module.parse_response(text, prefix="")),
        outcome(lambda: ref_parse_response(text, spec, prefix="")),
    )


def test_qwen3_calls_closed_by_a_lookahead_take_no_python_step_in_a_whole_text_parse() -> None:
    # qwen3:strict closes a call with `</tool_call>\s*|(?=<\|im_end\|>)`, which has no form
    # and no prefilter: each alternative is found apart, and the end of turn looked for
    # once a parse, however many calls there are.
    from rtcompiler.grammars import grammar

    spec = grammar("qwen3:strict").spec
    module = load_parser(load_template(spec))
    call = '<tool_call>\n{"name": "f", "arguments": {"a": "x</tool_cal y"}}\n</tool_call>\nok '
    for n in (10, 100, 400):
        text = "Hi " + call * n + '<tool_call>\n{"name": "g", "arguments": {}}<|im_end|>'
        stream = module.ResponseStream(module.TABLE, "")
        message = stream.parse_whole(text)
        assert message == ref_parse_response(text, spec, prefix="")
        assert len(message["tool_calls"]) == n + 1
        assert stream.steps == 0, (n, stream.steps)
        assert stream.examined <= 4.1 * len(text), (n, stream.examined / len(text))


# Delimiters whose stdlib forms hold ^, $ or a lookahead with loops: (open, close, pieces).
EDGE_CASES = (
    # Llama 3's call: opened at the start of the output or after ";", closed by "}" and
    # what may follow it (its end, a next call, an end of turn, a new line of prose).
    (r"(?:^\s*|;\s*)\{(?P<k>\w*):", r"\s*\}\s*(?:<e>|(?=;\s*\{)|$)|\s*\}(?=[ \t]*\n\s*[^\s,}])",
     ("{", "}", "a:", ";", " ", "\n", "<e>", "x", ",")),
    # An open at the start only, and a close at the end of the output (or before its
    # final newline).
    (r"^\s*<(?P<k>\w)>", r"\s*!|\s*$", ("<", "a>", "b>", " ", "\n", "!", "x")),
    # A lookahead with loops right after a loop the run of which it may read too.
    (r"(?:^|;)\[", r"\](?=\s*(?:;|$))", ("[", "]", ";", " ", "\n", "y")),
)


def _edge_spec(case) -> dict:
    open_pattern, close_pattern, _ = case
    return {
        "start_anchor": "<s>",
        "fields": {"t": {"open_pattern": open_pattern, "close_pattern": close_pattern,
                         "repeats": True, "transform": {"k": "{k}", "v": "{content}"}},
                   "content": {"repeats": True}},
    }


def test_anchors_and_lookaheads_with_loops_get_forms_for_whole_texts() -> None:
    for case in EDGE_CASES:
        module = load_parser(load_template(_edge_spec(case)))
        table = module.TABLE.by_name["t"]
        opening, closing = table.open.regex, table.close.regex
        assert opening.form_start and opening.captures_first is not None, case
        assert closing.captures is not None and closing.form_whole, case


_EDGE_MODULES: dict = {}


@DIFFERENTIAL
@given(data=st.data(), case=st.sampled_from(EDGE_CASES))
def test_anchored_and_whole_text_forms_find_the_references_match(data, case) -> None:
    # ^ holds at the start of the output only, $ at its end only (a stream may go on past
    # the text so far), and a lookahead's run may be cut by the end of a feed: whole and
    # streamed at random cuts, the reference's message.
    text = "".join(data.draw(st.lists(st.sampled_from(case[2]), max_size=14)))
    spec = _edge_spec(case)
    if case not in _EDGE_MODULES:
        _EDGE_MODULES[case] = load_parser(load_template(spec))
    module = _EDGE_MODULES[case]
    want = outcome(lambda: ref_parse_response(text, spec, prefix=""))
    assert_same(outcome(lambda: module.parse_response(text, prefix="")), want)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=4)))

    def streamed():
        parser = module.ResponseParser("")
        for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True):
            parser.feed(text[a:b])
        return parser.finalize()[0]

    assert_same(outcome(streamed), want)


def test_llama3_calls_take_no_python_step_in_a_whole_text_parse() -> None:
    # llama3_json:strict opens a call at the start of the output (^) or after ";" and closes
    # it where "}" meets its end ($), the next call or a new line (lookaheads with loops):
    # no scanner, however many calls there are, the first at the start of the output too.
    from rtcompiler.grammars import grammar

    spec = grammar("llama3_json:strict").spec
    module = load_parser(load_template(spec))
    call = '{"name": "f", "parameters": {"a": "x}; y", "b": {"c": [1, {}]}}}; '
    for n in (10, 100, 400):
        text = call * n + '{"name": "g", "parameters": {}}<|eot_id|>'
        stream = module.ResponseStream(module.TABLE, "")
        message = stream.parse_whole(text)
        assert message == ref_parse_response(text, spec, prefix="")
        assert len(message["tool_calls"]) == n + 1
        assert stream.steps == 0, (n, stream.steps)
        assert stream.examined <= 4.1 * len(text), (n, stream.examined / len(text))


_LLAMA3_PIECES = (
    '{"name": "f", "parameters": ', '{"a": "x}; y"}', '{"b": {"c": [1, {}]}}', "}", "; ",
    " ", "\n", "{count}", '"', "<|eot_id|>", "<|python_tag|>", "Hi", ",", "<|eo",
)


@DIFFERENTIAL
@given(data=st.data())
def test_llama3_streams_give_the_references_message(data) -> None:
    # Llama 3's open is anchored at the start in one alternative (past it, the pattern
    # without it answers), its close a lead loop then "}" whose stream form skips nested
    # objects' braces: whole and at random cuts, the reference's message.
    from rtcompiler.grammars import grammar

    spec = grammar("llama3_json:strict").spec
    if "llama3" not in _EDGE_MODULES:
        _EDGE_MODULES["llama3"] = load_parser(load_template(spec))
    module = _EDGE_MODULES["llama3"]
    text = "".join(data.draw(st.lists(st.sampled_from(_LLAMA3_PIECES), max_size=12)))
    want = outcome(lambda: ref_parse_response(text, spec, prefix=""))
    assert_same(outcome(lambda: module.parse_response(text, prefix="")), want)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=5)))

    def streamed():
        parser = module.ResponseParser("")
        for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True):
            parser.feed(text[a:b])
        return parser.finalize()[0]

    assert_same(outcome(streamed), want)


def test_llama3_streams_make_no_scanner_for_nested_braces() -> None:
    # Streamed in pieces of 64 or 256 characters, Llama 3's calls, whose arguments hold
    # braces of their own (in strings and nested objects), are found with stdlib calls: the
    # open's first call by its form with \A, the later ones by the pattern past the start,
    # the close by trying each "}" in turn, none of which pends.
    from rtcompiler.grammars import grammar

    spec = grammar("llama3_json:strict").spec
    module = load_parser(load_template(spec))
    opening = module.TABLE.by_name["tool_calls"].open.regex
    assert opening.late is not None and opening.late.prefilter.simple
    assert not opening.prefilter.simple
    made = []
    scanner = module.ResponseStream.scanner

    def counted(self, key, delimiter):
        before = self.scanners.get(key)
        found = scanner(self, key, delimiter)
        if found is not None and found is not before:
            made.append(key)
        return found

    call = '{"name": "f", "parameters": {"code": "f\\"{x} and {y}\\"", "n": {"a": [1, {}]}}}; '
    text = call * 40 + '{"name": "g", "parameters": {}}<|eot_id|>'
    want = ref_parse_response(text, spec, prefix="")
    module.ResponseStream.scanner = counted
    try:
        for k in (64, 256):
            made.clear()
            parser = module.ResponseParser("")
            for i in range(0, len(text), k):
                parser.feed(text[i : i + k])
            assert parser.finalize()[0] == want
            assert made == [], (k, made)
    finally:
        module.ResponseStream.scanner = scanner


def test_the_pattern_past_the_start_drops_anchored_alternatives_only() -> None:
    from rtcompiler.automata import compile_regex

    late = compile_regex(r"(?:^\s*|;\s*)\{").late
    assert late is not None and late.prefilter.literals == (";",)
    # Nothing to drop, or nothing left: none.
    assert compile_regex(r";\s*\{").late is None
    assert compile_regex(r"^<think>").late is None
    # Without its anchored alternative the pattern would need a character where the
    # whole did not: a search's answer at the end of the text differs, so none.
    assert compile_regex(r"^|a").late is None


def test_failed_matches_of_a_form_that_reads_apart_count_in_a_row() -> None:
    # Qwen3-Coder's close "</function>\s*</tool_call>" reads apart (no loop reads "<"):
    # its failed matches count only in a row. A value full of its near-misses goes to
    # the scanner after 32 of them (it jumps over the literals faster than a try each);
    # Llama 3's nested objects fail a few times a call, each success starting the count
    # again (test_llama3_calls_take_no_python_step_in_a_whole_text_parse).
    spec = {
        "start_anchor": "<s>",
        "fields": {
            "tool_calls": {"open": "<tool_call>", "close_pattern": r"</function>\s*</tool_call>",
                           "repeats": True},
            "content": {"close": "<|im_end|>"},
        },
    }
    module = load_parser(load_template(spec))
    assert module.TABLE.by_name["tool_calls"].close.regex.form_runs
    failed = module.ResponseStream.failed_form
    tried = []
    module.ResponseStream.failed_form = lambda self, regex: tried.append(1) or failed(self, regex)
    try:
        for misses in (5, 200):
            tried.clear()
            text = (
                "<tool_call>" + "</function>\n</tool_cal x\n" * misses
                + "</function></tool_call>ok"
            )
            stream = module.ResponseStream(module.TABLE, "")
            message = stream.parse_whole(text)
            assert message == ref_parse_response(text, spec, prefix="")
            assert len(tried) == min(misses, 33), (misses, len(tried))
    finally:
        module.ResponseStream.failed_form = failed


def test_a_header_cut_with_a_literal_after_it_pends_without_a_scanner() -> None:
    # Kimi K2's call header "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|"
    # cut by the end of a long feed holds two literals of the open, each attempt a beginning
    # of a match: the first pends (the search of the beginnings says so), with no scanner.
    from rtcompiler.grammars import grammar

    spec = grammar("kimi_k2:strict").spec
    module = load_parser(load_template(spec))
    made = []
    scanner = module.ResponseStream.scanner

    def counted(self, key, delimiter):
        before = self.scanners.get(key)
        found = scanner(self, key, delimiter)
        if found is not None and found is not before:
            made.append(key)
        return found

    call = (
        "<|tool_call_begin|>functions.get_weather:{i}<|tool_call_argument_begin|>"
        '{{"city": "Paris"}}<|tool_call_end|>'
    )
    text = (
        "Let me check the weather in a few places for you, one after the other. " * 3
        + "<|tool_calls_section_begin|>" + "".join(call.format(i=i) for i in range(4))
        + "<|tool_calls_section_end|>Done.<|im_end|>"
    )
    want = ref_parse_response(text, spec, prefix="")
    module.ResponseStream.scanner = counted
    try:
        for offset in range(0, 256, 7):
            made.clear()
            parser = module.ResponseParser("")
            parser.feed(text[:offset])
            for i in range(offset, len(text), 256):
                parser.feed(text[i : i + 256])
            assert parser.finalize()[0] == want
            assert made == [], (offset, made)
    finally:
        module.ResponseStream.scanner = scanner


def test_a_path_through_dollar_is_left_to_the_scanner_in_a_stream() -> None:
    # The stream form writes $ as never holding. Where a path through $ comes first and
    # may hold when the output ends ("}\n \n" before "\}(?=\n)"; "}" before a final
    # newline), a match of the stream form is not the answer: streamed in any pieces,
    # the reference's message (a differential fuzz found these).
    cases = [
        (r"\{", r"\}$", ':,\\a:{"n":"bb", }\n'),
        (r"<t>", r"\}\s*(?:<e>|\Z)|\}(?=\n)", ":<t>\\}\n \n"),
        (r"\{", r"\}$", "a{b}\n"),
    ]
    for open_pattern, close_pattern, text in cases:
        spec = {
            "start_anchor": "<s>",
            "fields": {"t": {"open_pattern": open_pattern, "close_pattern": close_pattern,
                             "repeats": True}, "content": {"repeats": True}},
        }
        module = load_parser(load_template(spec))
        want = ref_parse_response(text, spec, prefix="")
        assert module.parse_response(text, prefix="") == want
        for k in range(1, len(text) + 1):
            parser = module.ResponseParser("")
            for i in range(0, len(text), k):
                parser.feed(text[i : i + k])
            assert parser.finalize()[0] == want, (text, k)


_START_ONLY = {
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {"open_pattern": r"^\s*(?=\[\w)|<\|python_start\|>\s*",
                       "close": ["<|python_end|>", "<|eot|>"]},
        "content": {"close": ["<|eot|>"]},
    },
}


def test_past_the_start_an_open_with_start_only_alternatives_is_its_literal() -> None:
    # Llama 4's open: a list at the start, or <|python_start|> anywhere. Past the start
    # the mode is read as if the open were "<|python_start|>" alone (RegionTable.start_modes):
    # prose fed 64 at a time takes the quick path, so the scanners step as much at 32K as
    # at 2K (only at the start), and a whole parse walks it with no Python step at all.
    module = load_parser(load_template(_START_ONLY))
    assert module.TABLE.start_modes == {None, "content"}
    steps = []
    for n in (2_000, 8_000, 32_000):
        prose = ("Some words, then a [bracket] and <b>markup</b>. " * (n // 48))[:n]
        for text in (prose + "<|eot|>", "  [x" + prose + "<|python_start|>[f]<|python_end|>"):
            want = ref_parse_response(text, _START_ONLY, prefix="")
            stream = module.ResponseStream(module.TABLE, "")
            assert stream.parse_whole(text) == want
            assert stream.steps == 0, (n, stream.steps)
            parser = module.ResponseParser("")
            for i in range(0, len(text), 64):
                parser.feed(text[i : i + 64])
            assert parser.finalize()[0] == want
            steps.append(parser._stream.steps)
            assert parser._stream.work <= 6 * len(text), (n, parser._stream.work / len(text))
    assert steps[0::2] == [steps[0]] * 3 and steps[1::2] == [steps[1]] * 3, steps
