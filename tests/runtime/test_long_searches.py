"""Delimiter searches that go a long way before they settle cost a bounded amount of
Python work per parse, whatever the length: counted, never timed.

Two shapes were slower in ours than in the reference (issue 18):

- a tool-call header whose lazy ``.*?<|message|>`` stays open for ``n`` characters:
  the DFA stayed in one state for the whole stretch, stepped a character at a time in
  Python, and the groups were then read by the thread machine over the same stretch;
- Qwen3-Coder XML whose parameter value holds ``n / 25`` near-misses of the two-tag
  close ``</function>\\s*</tool_call>``: each failed a stdlib match, and past
  ``_WHOLE_FAILURES`` of them the close was handed to its scanner, stepped in Python.

``steps`` counts DFA steps taken in Python, ``looped`` the characters scanners passed
over at C speed in a state that stays put (``CompiledRegex.loop_exit``), ``walked`` the
characters the thread machine read for groups (``CompiledRegex.groups_at``).
"""

from __future__ import annotations

import pytest
from transformers.utils.chat_parsing import ResponseParser as RefParser
from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler.codegen import load_parser
from rtcompiler.template import load_template

from ..codegen.test_linear_stream import HARMONY

SIZES = (2_000, 8_000, 32_000)

HARMONY_HEAD = "Checking.<|channel|>commentary to=functions.get_weather "
HARMONY_TAIL = '<|message|>{"city": "Paris"}<|call|>'

CODER_XML = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>[^>\n]+)>",
            "close_pattern": r"</function>\s*</tool_call>", "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>"},
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {"close": "<|im_end|>"},
    },
}
CODER_HEAD = "<tool_call>\n<function=write_file>\n<parameter=content>\n"
CODER_UNIT = "</function>\n</tool_cal x\n"
CODER_TAIL = "\n</parameter>\n</function>\n</tool_call>Done.<|im_end|>"


def _harmony(n: int, unit: str = "json x ") -> str:
    return HARMONY_HEAD + (unit * (n // len(unit) + 1))[:n] + HARMONY_TAIL


def _coder(n: int) -> str:
    return CODER_HEAD + CODER_UNIT * (n // len(CODER_UNIT)) + CODER_TAIL


def _regexes(module) -> list:
    found = {}
    for region in module.TABLE.regions:
        for delimiter in (region.open, region.close):
            if delimiter is not None:
                found[id(delimiter.regex)] = delimiter.regex
    return list(found.values())


def _whole(module, text):
    regexes = _regexes(module)
    walked = sum(r.walked for r in regexes)
    stream = module.ResponseStream(module.TABLE, "")
    message = stream.parse_whole(text)
    return message, stream, sum(r.walked for r in regexes) - walked


def _fed(module, text, step):
    regexes = _regexes(module)
    walked = sum(r.walked for r in regexes)
    looped = sum(r.looped for r in regexes)
    parser = module.ResponseParser("")
    for i in range(0, len(text), step):
        parser.feed(text[i : i + step])
    message = parser.finalize()[0]
    return (message, parser._stream, sum(r.looped for r in regexes) - looped,
            sum(r.walked for r in regexes) - walked)


def test_a_lazy_header_left_open_is_passed_over_in_a_whole_text_parse():
    module = load_parser(load_template(HARMONY))
    steps = []
    for n in SIZES:
        text = _harmony(n)
        message, stream, walked = _whole(module, text)
        assert message == ref_parse_response(text, HARMONY, prefix="")
        assert message["tool_calls"] == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]
        # The header's literal is jumped, a few characters are stepped until the state
        # stays put, and the stretch is passed over in one search; the groups are read
        # up to the end of the name, where no capture can change any more.
        steps.append(stream.steps)
        assert walked <= len("to=functions.get_weather "), (n, walked)
        assert stream.searched + stream.examined <= 1.1 * len(text) + 64, n
    # The name and a few characters on each side: the same at every length.
    assert max(steps) <= 48 and len(set(steps)) == 1, steps


def test_groups_read_before_are_looked_up_not_walked():
    # Streamed: a whole-text parse reads this header's groups with the stdlib form of
    # its head (test_a_lazy_header_left_open_is_passed_over_in_a_whole_text_parse).
    module = load_parser(load_template(HARMONY))
    regex = module.TABLE.by_name["tool_calls"].open.regex
    regex.settled_at.clear()
    regex.settled_lengths.clear()
    walked = []
    for name in ("get_weather", "get_weather", "search_web", "get_weather", "search_web"):
        text = _harmony(2_000).replace("get_weather", name)
        message, _, _, w = _fed(module, text, 64)
        assert message == ref_parse_response(text, HARMONY, prefix="")
        assert message["tool_calls"][0]["name"] == name
        walked.append(w)
    # Each header is walked the first time it is met, up to where its threads settle.
    assert walked == [25, 0, 24, 0, 0], walked
    # A name that only begins like a known one settles later: it is walked.
    text = _harmony(2_000).replace("get_weather", "get_weather_today")
    message, _, _, w = _fed(module, text, 64)
    assert message["tool_calls"][0]["name"] == "get_weather_today" and w > 0


@pytest.mark.parametrize("step", [16, 64, 256])
def test_a_lazy_header_left_open_is_passed_over_when_streamed(step):
    module = load_parser(load_template(HARMONY))
    per_char = []
    for n in SIZES:
        text = _harmony(n)
        message, stream, looped, walked = _fed(module, text, step)
        ref = RefParser(HARMONY, "")
        for i in range(0, len(text), step):
            ref.feed(text[i : i + step])
        assert message == ref.finalize()[0]
        assert walked <= len("to=functions.get_weather "), (n, walked)
        assert looped >= n * (1 - 8 / step) - 64, (n, looped)
        per_char.append(stream.steps / n)
    # Each feed steps a few characters in Python until the state stays put for
    # _LOOP_RUN of them, then passes over the rest of the piece.
    assert max(per_char) <= 8 / step + 0.02, per_char
    assert per_char[2] <= per_char[0] * 1.05 + 0.01, per_char


def test_a_lazy_header_over_text_that_may_begin_another_header_stays_linear():
    # Every `t` may begin another `to=functions.` attempt: the state leaves its loop
    # there and comes back, so the stretch is passed over from one `t` to the next.
    module = load_parser(load_template(HARMONY))
    per_char = []
    for n in SIZES:
        text = _harmony(n, unit="the state of this attempt is kept ")
        message, stream, walked = _whole(module, text)
        assert message == ref_parse_response(text, HARMONY, prefix="")
        assert walked <= len("to=functions.get_weather "), (n, walked)
        per_char.append((stream.steps / n, (stream.searched + stream.examined) / n))
    steps = [s for s, _ in per_char]
    searched = [e for _, e in per_char]
    # Eight `t`s in the unit's 34 characters leave runs too short to pass over: each
    # character is stepped at most once, and searched at most about once more.
    assert max(steps) <= 1.0, steps
    assert steps[2] <= steps[0] * 1.05 + 0.01, steps
    assert max(searched) <= 1.5, searched


def test_near_misses_of_a_two_tag_close_stay_in_the_stdlib_search():
    module = load_parser(load_template(CODER_XML))
    per_char, steps = [], []
    for n in SIZES:
        text = _coder(n)
        message, stream, walked = _whole(module, text)
        assert message == ref_parse_response(text, CODER_XML, prefix="")
        assert message["tool_calls"][0]["arguments"]["content"].count(CODER_UNIT) == n // 25
        # No scanner steps the value: one stdlib search (its form reads apart, so a
        # search trying every start is linear) goes over all the near-misses.
        steps.append(stream.steps)
        assert walked == 0
        per_char.append((stream.searched + stream.examined) / n)
    assert max(steps) <= 16, steps
    assert max(per_char) <= 3.5, per_char
    assert per_char[2] <= per_char[0] * 1.05 + 0.05, per_char


def test_feeds_of_a_few_hundred_characters_find_headers_with_the_stdlib_form():
    # Unsent text longer than _FORM_HELD holding a tool-call header was left to the
    # header's scanner, stepped in Python (0.15 steps a character with 256-character
    # feeds); up to _FORM_READ it is tried with the stdlib form first, as a
    # whole-text parse does: the steps left are headers cut by a feed's end.
    from rtcompiler import grammars

    module = load_parser(grammars.grammar("gpt_oss").template)
    call = ('<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>'
            '{"city": "Paris", "days": 3}<|call|>')
    preamble = ("<|start|>assistant<|channel|>commentary<|message|>"
                + "Checking the weather for you now. " * 6 + "<|end|>")
    steps, read = [], []
    for k in (10, 40, 160):
        text = (preamble + call) * k
        parser = module.ResponseParser("<|start|>assistant")
        for i in range(0, len(text), 256):
            parser.feed(text[i : i + 256])
        message = parser.finalize()[0]
        assert len(message["tool_calls"]) == k
        stream = parser._stream
        steps.append(stream.steps / len(text))
        read.append((stream.searched + stream.examined) / len(text))
    # The preamble is text outside every region (gpt_oss's content is its implicit
    # field), where the headers' opens are watched too: a few steps more per header.
    assert max(steps) <= 0.3 and steps[2] <= steps[0], steps
    # The open watchers outside every region are asked again after each piece of markup
    # in a feed; the text they know to hold no literal is not read again (6.6 a
    # character; 8.6 when it was, 11.8 when pending also read all the text).
    assert max(read) <= 7.5 and read[2] <= read[0] * 1.05, read


# Calls whose close is an alternation with a lookahead of a literal: streamed, the body
# of each call was stepped in Python (0.98 DFA steps a character at every feed size),
# since the lookahead left the close with no prefilter.
CALL_BODY = ('{"name": "write_file", "arguments": {"path": "a.py", "content": "'
             + "def f(x):\\n    return x + 1\\n" * 30 + '"}}')
LOOKAHEAD_CLOSES = {
    "qwen3:strict": ("<|im_start|>assistant\n", "<think>hm</think>Let me.\n",
                     "<tool_call>\n{}\n</tool_call>\n", "<|im_end|>"),
    "mistral:strict": ("[/INST]", "Sure", "[TOOL_CALLS]write_file[ARGS]{}", "</s>"),
}


@pytest.mark.parametrize("step", [1, 4, 64, 256])
@pytest.mark.parametrize("name", sorted(LOOKAHEAD_CLOSES))
def test_calls_closed_by_a_lookahead_alternation_are_searched_at_c_speed(name, step):
    from rtcompiler import grammars

    grammar = grammars.grammar(name)
    module = load_parser(grammar.template)
    prefix, head, call, tail = LOOKAHEAD_CLOSES[name]
    body = CALL_BODY if name.startswith("qwen3") else CALL_BODY[CALL_BODY.index("{", 1):-1]
    per_char = []
    for calls in (1, 4, 16):
        text = head + call.format(body) * calls + tail
        parser = module.ResponseParser(prefix)
        ref = RefParser(grammar.spec, prefix)
        for i in range(0, len(text), step):
            piece = text[i : i + step]
            assert parser.feed(piece) == ref.feed(piece), (calls, i)
        message = parser.finalize()
        assert message == ref.finalize()
        assert len(message[0]["tool_calls"]) == calls
        per_char.append(parser._stream.steps / (calls * len(body)))
    # The prefilter finds the next '</tool_call>' or '<|im_end|>' ('</s>' or
    # '[TOOL_CALLS]'); the DFA steps only from there.
    assert max(per_char) <= 0.05, per_char
    assert per_char[2] <= per_char[0] * 1.05 + 0.01, per_char


def test_groups_remembered_are_those_of_the_same_context():
    # A match's groups are remembered where its threads settled, keyed by the text up to
    # there and the context before its start (CompiledRegex.groups_at). The key took the
    # context of a later character (the loop's own `prev`), so a match read after "-"
    # answered, from memory, one after "a" where `\b` makes the other branch capture.
    from rtcompiler.automata.search import compile_regex
    from rtcompiler.runtime.compiled_regex import regex_from_data

    regex = regex_from_data(compile_regex(r"(?:\b(?P<a>x)|(?P<b>x))yy.*?z").to_data())
    regex.captures = None  # the thread machine, as for a pattern without a stdlib form
    assert regex.groups_at("-xyyabcz", 1, 8, False) == {"a": "x", "b": None}
    assert regex.settled_at  # remembered
    assert regex.groups_at("axyyabcz", 1, 8, False) == {"a": None, "b": "x"}
    assert regex.groups_at("-xyyabcz", 1, 8, False) == {"a": "x", "b": None}
