"""Whole-text parsing reads the text once for every delimiter's literals (``_landmarks``).

The shortcut is taken only when ``finditer`` over the literals' alternation meets every
occurrence of every literal (no literal begins inside another or itself, none begins
another) and sre searches the alternation fast (one first character). Its answers must
be those of a search per delimiter, and the reference's.
"""

from __future__ import annotations

import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response as reference_parse
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler.automata import compile_regex
from rtcompiler.codegen import generate_module
from rtcompiler.runtime.regions import _shortest
from rtcompiler.template import load_template


def _spec(reasoning_open, reasoning_close, tool_open, tool_close, content_close):
    return {
        "version": 1,
        "start_anchor": "<|start|>assistant",
        "fields": {
            "reasoning_content": {
                "open": reasoning_open, "close": reasoning_close, "content": "text",
            },
            "tool_calls": {
                "open_pattern": tool_open, "close": tool_close, "repeats": True,
                "content": "text",
                "transform": {
                    "type": "function", "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {"close": content_close, "content": "text"},
        },
    }


SPEC = _spec("<think>", "</think>", r"\s*<call (?P<name>\w+)>", "</call>", ["<end>", "<eos>"])
NAME = r"(?P<name>\w*)"


def _module(spec, landmarks: bool):
    module = types.ModuleType("landmarks_test")
    source = generate_module(load_template(spec))
    exec(compile(source, "<landmarks_test>", "exec"), module.__dict__)
    if not landmarks:
        module.TABLE.landmarks = None
        module.TABLE.walks = module.TABLE.stream_walks = {}  # (made from the landmarks)
    return module


def _outcome(run):
    try:
        return "ok", run()
    except Exception as e:  # the same exception type is what parity asks
        return "error", type(e)


def _agrees(module, other, reference, text, prefix):
    """``module`` parses ``text`` as ``other`` does, and as the reference does (an error
    of a related type where it raises)."""
    ours = _outcome(lambda: module.parse_response(text, prefix=prefix))
    assert ours == _outcome(lambda: other.parse_response(text, prefix=prefix))
    ref = _outcome(lambda: reference_parse(text, reference, prefix=prefix))
    if ours[0] == ref[0] == "error":
        assert issubclass(ours[1], ref[1]) or issubclass(ref[1], ours[1])
    else:
        assert ours == ref


def test_which_literal_sets_get_landmarks():
    assert _module(SPEC, True).TABLE.landmarks is not None
    # A literal that begins inside another or itself, or one whose end begins another:
    # finditer could step over an occurrence, so no landmarks. (One that begins another
    # is found by the shorter one's landmark: OVERLAP below.)
    for spec in (
        _spec("<t<", "</think>", "<call>" + NAME, "</call>", "<end>"),
        _spec("<think>", "</think>", "<call>" + NAME, "</call>", ["<end<", "<eos>"]),
        _spec("<think>", "<th", "<call>" + NAME, "</call>", "<end>"),
    ):
        assert _module(spec, True).TABLE.landmarks is None, spec
    # Two first characters: a search for each (see LandmarkSearch below), unless one is
    # a letter, a digit or a space (a search that stops at every word).
    two = _spec("<think>", "</think>", r"\s*(?:<call>|%call)" + NAME, "</call>", "<end>")
    assert type(_module(two, True).TABLE.landmarks).__name__ == "LandmarkSearch"
    word = _spec("<think>", "</think>", r"\s*(?:<call>|xcall)" + NAME, "</call>", "<end>")
    assert _module(word, True).TABLE.landmarks is None


WITH, WITHOUT = _module(SPEC, True), _module(SPEC, False)

# Literals that begin others: "<end>" and "<end>x" (one close), "<call>" and the
# reasoning's "<call>think>" (two delimiters), "<th" and "<think>".
OVERLAP = _spec("<think>", "<th", "<call>" + NAME, "</call>", ["<end>", "<end>x"])
del OVERLAP["fields"]["reasoning_content"]["open"]
OVERLAP["fields"]["reasoning_content"]["open_pattern"] = "<call>think>+"  # not a fixed one
OVERLAP_WITH, OVERLAP_WITHOUT = _module(OVERLAP, True), _module(OVERLAP, False)
OVERLAP_REFERENCE = load_response_template(OVERLAP)
OVERLAP_PIECES = ["<call>", "<call>think>", "<call>f", "think>", "<th", "<think>", "</call>",
                  "<end>", "<end>x", "<end", "x", "<", " ", "{}"]


def test_a_literal_that_begins_another_takes_its_landmark():
    table = OVERLAP_WITH.TABLE
    assert table.landmarks is not None
    assert table.landmark_of["<end>x"] == "<end>"
    assert table.landmark_of["<call>think"] == "<call>"


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(OVERLAP_PIECES), max_size=30), prefix=st.sampled_from(
    ["", "<|start|>assistant", "<|start|>assistant<call>think>", "<|start|>assistant<call>f"]
))
def test_shorter_landmarks_answer_as_a_search_per_delimiter_and_the_reference(parts, prefix):
    text = "".join(parts)
    _agrees(OVERLAP_WITH, OVERLAP_WITHOUT, OVERLAP_REFERENCE, text, prefix)
REFERENCE = load_response_template(SPEC)

PIECES = [
    "<think>", "</think>", "<call f>", "<call g>", "</call>", "<end>", "<eos>", "<", "<e",
    "<th", "</", "call", " ", "\n", "x", "{", ">", "<call >", "</thi", "nk>", "<en", "d>",
]


def test_the_parse_uses_landmarks_and_succeeds():
    text = "<think>a<call f>x</think>b</call>c\n<call g>{}</call><eos>"
    message = WITH.parse_response(text, prefix="")
    assert message["content"] == "b</call>c"  # a close outside its region is text
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["g"]
    assert message == reference_parse(text, REFERENCE, prefix="")


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(PIECES), max_size=30), prefix=st.sampled_from(
    ["", "<|start|>assistant", "<|start|>assistant<think>", "<|start|>assistant<ca"]
))
def test_whole_text_answers_match_a_search_per_delimiter_and_the_reference(parts, prefix):
    text = "".join(parts)
    _agrees(WITH, WITHOUT, REFERENCE, text, prefix)


# Every delimiter begins with its literal (no lead): whole_pass walks the landmarks.
# A name may hold a landmark ("<call </call>>"): the walk skips those it has passed.
LEADLESS = _spec("<think>", "</think>", r"<call (?P<name>[^>]+)>", "</call>", ["<end>", "<eos>"])


def _walking(spec, walks: bool):
    module = _module(spec, True)
    if not walks:
        module.TABLE.walks = {}
    return module


WALKS, NO_WALKS = _walking(LEADLESS, True), _walking(LEADLESS, False)
LEADLESS_REFERENCE = load_response_template(LEADLESS)
LEADLESS_PIECES = PIECES + [
    "<call >", "<call f", "<call  g>", "<call h>", "<eos", "<end>x", "<call </call>>",
    "<call <eos>",
]


def test_which_modes_are_walked():
    # A lead (the \s* before "<call ") keeps the outer mode out of the walk when a
    # literal holds a lead character (the space of "<call "): a run of them could hide
    # a landmark.
    assert set(WITH.TABLE.walks) == {"reasoning_content", "tool_calls"}
    assert set(LEADING.TABLE.walks) == {None, "content", "reasoning_content", "tool_calls"}
    assert set(WALKS.TABLE.walks) == {None, "content", "reasoning_content", "tool_calls"}
    assert [e[1].name for e in WALKS.TABLE.walks["content"]["<call "][0]] == ["tool_calls"]


# A lead, and no literal holding a lead character: walked, from the run before the literal.
# (Content is not stripped: the run must go to the open, not to the text before it.)
LEAD = _spec("<think>", "</think>", r"\s*<call:(?P<name>[^>]*)>", "</call>", ["<end>", "<eos>"])
LEAD["fields"]["content"]["content_args"] = {"strip": False}
LEADING, LEADING_LOOP = _walking(LEAD, True), _walking(LEAD, False)
LEAD_REFERENCE = load_response_template(LEAD)
LEAD_PIECES = PIECES + ["<call:f>", "<call:>", "<call:", " <call:g>", "\n\n", "<call:</call>>"]


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(LEAD_PIECES), max_size=30), prefix=st.sampled_from(
    ["", "<|start|>assistant", "<|start|>assistant<think>", "<|start|>assistant<call:x>"]
))
def test_a_walk_with_a_lead_answers_as_the_loop_and_the_reference(parts, prefix):
    text = "".join(parts)
    _agrees(LEADING, LEADING_LOOP, LEAD_REFERENCE, text, prefix)


def test_a_match_begins_at_the_run_of_lead_characters():
    # The spaces before "<call:" belong to the open: content is "a", not "a \n ".
    text = "a \n <call:f>{}</call>"
    stream = LEADING.ResponseStream(LEADING.TABLE, "")
    message = stream.parse_whole(text)
    assert stream.whole == {}  # walked to the end: no watcher was asked
    assert message == {"content": "a", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    assert message == LEADING_LOOP.parse_response(text, prefix="")
    assert message == reference_parse(text, LEAD_REFERENCE, prefix="")


def test_failed_matches_leave_the_rest_to_the_loop_with_the_same_message():
    # More failed stdlib matches than complete allows: the walk stops there.
    text = "<call >" * 40 + "a<call f>{}</call>b<eos>"
    stream = WALKS.ResponseStream(WALKS.TABLE, "")
    message = stream.parse_whole(text)
    assert stream.failures > 32
    # The loop went on from there, and left the watcher to its scanner.
    assert stream.whole[("open", "tool_calls")] is WALKS._SLOW
    assert message == NO_WALKS.parse_response(text, prefix="")
    assert message == reference_parse(text, LEADLESS_REFERENCE, prefix="")
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["f"]


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(LEADLESS_PIECES), max_size=30), prefix=st.sampled_from(
    ["", "<|start|>assistant", "<|start|>assistant<think>", "<|start|>assistant<call x>"]
))
def test_the_walk_answers_as_the_loop_and_the_reference(parts, prefix):
    text = "".join(parts)
    _agrees(WALKS, NO_WALKS, LEADLESS_REFERENCE, text, prefix)


def test_at_one_landmark_the_earliest_start_wins_before_the_longer_match():
    # Reasoning opens with "\s*<a>", a tool call with "<a>NAME>": after a space, the
    # reasoning's match begins one character earlier, and wins though it is shorter.
    spec = _spec("<a>", "</a>", r"<a>(?P<name>\w+)>", "</call>", ["<end>", "<eos>"])
    spec["fields"]["reasoning_content"] = {
        "open_pattern": r"\s*<a>", "close": "</a>", "content": "text",
    }
    walks, loop = _walking(spec, True), _walking(spec, False)
    assert None in walks.TABLE.walks
    reference = load_response_template(spec)
    for text in (" <a>xyz>q</call>", "<a>f>y</call>", "x <a>f>y</call></a>z"):
        message = walks.parse_response(text, prefix="")
        assert message == loop.parse_response(text, prefix="")
        assert message == reference_parse(text, reference, prefix="")
    assert walks.parse_response(" <a>xyz>q</call>", prefix="") == {
        "reasoning_content": "xyz>q</call>",
    }


def test_a_landmark_two_regions_open_with_goes_to_the_longer_match():
    # "<a>" opens reasoning and begins a tool call: both match at one start.
    spec = _spec("<a>", "</a>", r"<a>(?P<name>\w*)>", "</call>", ["<end>", "<eos>"])
    walks, loop = _walking(spec, True), _walking(spec, False)
    opened = [entry[1].name for entry in walks.TABLE.walks[None]["<a>"][0]]
    assert opened == ["reasoning_content", "tool_calls"]
    reference = load_response_template(spec)
    for text in ("<a>f>x</call>y", "<a>x</a>z", "<a>>q</call>", "<a>x</a><a>g>{}</call><eos>"):
        message = walks.parse_response(text, prefix="")
        assert message == loop.parse_response(text, prefix="")
        assert message == reference_parse(text, reference, prefix="")
    assert walks.parse_response("<a>f>x</call>y", prefix="")["tool_calls"][0]["function"] == {
        "name": "f", "arguments": "x",
    }


# Qwen3's call close: "</call>" and the spaces after it, or nothing where the turn ends
# (a lookahead). The zero-width match ends before its landmark does, where the next
# mode's close begins: the walk searches for landmarks again from there.
AHEAD = _spec("<think>", "</think>", r"<call (?P<name>[^>]+)>", "</call>", ["<end>", "<eos>"])
del AHEAD["fields"]["tool_calls"]["close"]
AHEAD["fields"]["tool_calls"]["close_pattern"] = r"</call>\s*|(?=<eos>)"
AHEADS, AHEAD_LOOP = _walking(AHEAD, True), _walking(AHEAD, False)
AHEAD_REFERENCE = load_response_template(AHEAD)


def test_a_close_ending_at_a_lookahead_is_walked_and_lets_the_turn_end_there():
    assert "tool_calls" in AHEADS.TABLE.walks
    # Only the landmarks of the close with a lookahead search again after a commit.
    assert AHEADS.TABLE.walks["tool_calls"]["<eos>"][3] is True
    assert AHEADS.TABLE.walks["tool_calls"]["</call>"][3] is True  # (per delimiter)
    assert AHEADS.TABLE.walks[None]["<call "][3] is False
    text = "a<call f>{}</call>\n b<call g>[1]<eos>"
    stream = AHEADS.ResponseStream(AHEADS.TABLE, "")
    message = stream.parse_whole(text)
    assert stream.whole == {}  # walked to the end: no watcher was asked
    assert message == {"content": "b", "tool_calls": [  # (content does not repeat)
        {"type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"type": "function", "function": {"name": "g", "arguments": "[1]"}},
    ]}
    assert message == AHEAD_LOOP.parse_response(text, prefix="")
    assert message == reference_parse(text, AHEAD_REFERENCE, prefix="")


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(LEADLESS_PIECES), max_size=30), prefix=st.sampled_from(
    ["", "<|start|>assistant", "<|start|>assistant<call x>"]
))
def test_a_walk_through_lookahead_closes_answers_as_the_loop_and_the_reference(parts, prefix):
    text = "".join(parts)
    _agrees(AHEADS, AHEAD_LOOP, AHEAD_REFERENCE, text, prefix)


# Literals beginning with two or three characters (Mistral's "[TOOL_CALLS]" and "</s>"):
# one stdlib search per first character, their occurrences merged in order.
HEADS = _spec("[THINK]", "[/THINK]", r"\[CALL (?P<name>\w+)\]", "[/CALL]", ["</s>", "{eos}"])
MERGED, MERGED_LOOP = _walking(HEADS, True), _walking(HEADS, False)
HEADS_REFERENCE = load_response_template(HEADS)
HEADS_PIECES = [
    "[THINK]", "[/THINK]", "[CALL f]", "[CALL g]", "[/CALL]", "</s>", "{eos}", "[", "[/",
    "<", "{", "{eo", "[CALL ]", " ", "\n", "x", "}", "]", "[/CA", "LL]", "</", "s>",
]


def test_literals_with_three_first_characters_get_one_search_each():
    search = MERGED.TABLE.landmarks
    assert type(search).__name__ == "LandmarkSearch"
    assert [s.pattern[:2] for s in search.searches] == ["</", r"\[", r"\{"]
    assert set(MERGED.TABLE.walks) == {None, "content", "reasoning_content", "tool_calls"}
    four = dict(HEADS, fields=dict(HEADS["fields"]))
    four["fields"]["content"] = {"close": ["</s>", "{eos}", "#end"], "content": "text"}
    assert _module(four, True).TABLE.landmarks is None  # four passes: not worth it


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(HEADS_PIECES), max_size=30), lo=st.integers(0, 8))
def test_the_merged_search_meets_every_occurrence_in_order(parts, lo):
    text = "".join(parts)
    search = MERGED.TABLE.landmarks
    literals = ("[THINK]", "[/THINK]", "[CALL ", "[/CALL]", "</s>", "{eos}")
    expected = sorted(
        (i, s) for s in literals for i in range(lo, len(text)) if text.startswith(s, i)
    )
    assert [(m.start(), m.group()) for m in search.finditer(text, lo)] == expected
    first = search.search(text, lo, len(text))
    assert (None if first is None else (first.start(), first.group())) == (
        expected[0] if expected else None
    )
    hi = len(text) // 2
    within = [e for e in expected if e[0] + len(e[1]) <= hi]
    first = search.search(text, lo, hi)
    assert (None if first is None else (first.start(), first.group())) == (
        within[0] if within else None
    )


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(HEADS_PIECES), max_size=30), prefix=st.sampled_from(
    ["", "<|start|>assistant", "<|start|>assistant[CALL x]"]
))
def test_a_walk_over_merged_searches_answers_as_the_loop_and_the_reference(parts, prefix):
    text = "".join(parts)
    _agrees(MERGED, MERGED_LOOP, HEADS_REFERENCE, text, prefix)


# Literal delimiters that share a landmark all match it from end to end: which one wins
# there (an open before a close, then the region's rank) is known when the table is
# made, and the walk takes it without comparing. Qwen3's content ends at "<think>",
# which opens the reasoning.
SHARED = _spec("<think>", "</think>", r"<call (?P<name>\w+)>", "</call>", ["<end>", "<think>"])
SHARING, SHARING_LOOP = _walking(SHARED, True), _walking(SHARED, False)
SHARED_REFERENCE = load_response_template(SHARED)


def test_literals_sharing_a_landmark_have_their_winner_in_the_table():
    entries, single, _, _ = SHARING.TABLE.walks[None]["<think>"]
    assert sorted(entry[0] for entry in entries) == ["close", "open"]
    assert single[:2] == ("open", SHARING.TABLE.by_name["reasoning_content"])
    # A delimiter with a lead is walked without comparing too: from the run before it.
    _, single, _, _ = LEADING.TABLE.walks[None]["<call:"]
    assert single[0] == "open" and single[3] is not None


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(PIECES + ["<think>", "x<think>y"]), max_size=30),
       prefix=st.sampled_from(["", "<|start|>assistant", "<|start|>assistant<think>"]))
def test_a_walk_through_shared_landmarks_answers_as_the_loop_and_the_reference(parts, prefix):
    text = "".join(parts)
    _agrees(SHARING, SHARING_LOOP, SHARED_REFERENCE, text, prefix)


# A form whose literal at the landmark is longer than it, beside literals that are the
# landmark: where the form matches, its match is the longer and wins; elsewhere the
# literals' winner does, with no match tried where the form's literal is not there.
# Gemma 4's "<|tool_call>" opens a call before "call:" and ends the content elsewhere.
BESIDE = _spec("<think>", "</think>", r"<a>call:(?P<name>\w+)>", "</call>", ["<end>", "<a>"])
BESIDES, BESIDE_LOOP = _walking(BESIDE, True), _walking(BESIDE, False)
BESIDE_REFERENCE = load_response_template(BESIDE)
BESIDE_PIECES = PIECES + ["<a>", "<a>call:f>", "<a>call:>", "<a>call", "x<a>y", "</call>"]


def test_a_longer_form_beside_literals_has_its_fallback_in_the_table():
    _, single, longer, _ = BESIDES.TABLE.walks[None]["<a>"]
    kind, region, form, lead, named, literals, otherwise = single
    assert (kind, region.name, lead, named) == ("open", "tool_calls", None, True)
    assert literals == ("<a>call:",) and otherwise[0] == "close"
    # Where "call:" does not follow, no match is tried: none fails.
    stream = BESIDES.ResponseStream(BESIDES.TABLE, "")
    message = stream.parse_whole("x<a>y" * 50 + "<a>call:f>{}</call>")
    assert stream.failures == stream.missed == 0 and stream.whole == {}
    assert message == BESIDE_LOOP.parse_response("x<a>y" * 50 + "<a>call:f>{}</call>", prefix="")


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(BESIDE_PIECES), max_size=30),
       prefix=st.sampled_from(["", "<|start|>assistant", "<|start|>assistant<think>"]))
def test_a_walk_past_a_longer_form_answers_as_the_loop_and_the_reference(parts, prefix):
    text = "".join(parts)
    _agrees(BESIDES, BESIDE_LOOP, BESIDE_REFERENCE, text, prefix)


# A form whose literal is the landmark itself, beside literals that are the landmark too,
# but which matches nothing that short: where it matches, its match is the longer and
# wins; elsewhere the literals' winner does. Magistral's "[TOOL_CALLS]" opens a call
# before a name and "[ARGS]", and ends a piece of the content elsewhere.
OVER = _spec(
    "<think>", "</think>", r"(?:<a>\s*)?<f=(?P<name>\w+)>", "</call>", ["<end>", "<a>"]
)
OVERS, OVER_LOOP = _walking(OVER, True), _walking(OVER, False)
OVER_REFERENCE = load_response_template(OVER)
OVER_PIECES = PIECES + ["<a>", "<a><f=g>", "<a>\n<f=g>", "<f=g>", "<a><f=>", "<a> x", "</call>"]


def test_a_form_that_only_begins_with_the_landmark_has_its_fallback_in_the_table():
    _, single, longer, _ = OVERS.TABLE.walks[None]["<a>"]
    kind, region, form, lead, named, literals, otherwise = single
    assert longer is None and (kind, region.name, lead, named) == ("open", "tool_calls", None, True)
    assert literals is None and otherwise[0] == "close"
    text = "x<a>y" * 20 + "<a>\n<f=g>{}</call>"
    stream = OVERS.ResponseStream(OVERS.TABLE, "")
    message = stream.parse_whole(text)
    assert message == OVER_LOOP.parse_response(text, prefix="")
    assert message == reference_parse(text, OVER_REFERENCE, prefix="")
    assert message["tool_calls"][0]["function"]["name"] == "g"


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(OVER_PIECES), max_size=30),
       prefix=st.sampled_from(["", "<|start|>assistant", "<|start|>assistant<think>"]))
def test_a_walk_past_a_form_longer_than_its_landmark_answers_as_the_loop_and_the_reference(
    parts, prefix
):
    text = "".join(parts)
    _agrees(OVERS, OVER_LOOP, OVER_REFERENCE, text, prefix)


def test_a_form_that_may_match_the_landmark_alone_is_compared_there():
    # The content's close "<a>y?" matches "<a>" alone, as long as the reasoning's open
    # "<a>": at a tie the open wins, so the table cannot take the close's form for the
    # winner wherever it matches; best_at compares them.
    spec = _spec("<a>", "</think>", r"<call (?P<name>\w+)>", "</call>", ["<end>"])
    spec["fields"]["content"] = {"close_pattern": "<a>y?", "content": "text"}
    walks, loop = _walking(spec, True), _walking(spec, False)
    reference = load_response_template(spec)
    entries, single, _, _ = walks.TABLE.walks[None]["<a>"]
    assert len(entries) == 2 and single is None
    for text in ("q<a>r</think>z", "q<a>yr</think>z"):
        message = walks.parse_response(text, prefix="")
        assert message == loop.parse_response(text, prefix="")
        assert message == reference_parse(text, reference, prefix="")


@pytest.mark.parametrize(
    ("pattern", "shortest"),
    [
        (r"(?:<tool_call>\s*)?<function=(?P<name>[^>\n]+)>\n", 13),
        (r"a*", 0),
        (r"ab|c", 1),
        (r"(?=xy)x", 1),  # a lookahead reads none of the match
        (r"\bfoo\b", 3),
        (r"x{3,5}y?", 3),
        (r"(?:ab)+c", 3),
    ],
)
def test_shortest_counts_the_characters_of_the_shortest_match(pattern, shortest):
    assert _shortest(compile_regex(pattern).nfa) == shortest


def test_a_form_that_may_stop_before_its_literal_is_compared_at_the_landmark():
    # An open "(?=<a>call:)" matches nothing, before its literal: the content's literal
    # close "<a>" is the longer match there and wins, as in the reference; the table
    # does not take the form for the winner.
    spec = _spec("<think>", "</think>", r"<call (?P<name>\w+)>", "</call>", ["<end>", "<a>"])
    spec["fields"]["reasoning_content"] = {
        "open_pattern": r"(?=<a>call:)", "close": "</think>", "content": "text",
    }
    walks, loop = _walking(spec, True), _walking(spec, False)
    reference = load_response_template(spec)
    entries, single, _, _ = walks.TABLE.walks[None]["<a>"]
    assert len(entries) == 2 and single is None
    for text in ("x<a>call:y", "a<a>b<a>call:z</think>q", "<a>call:</think><a>"):
        message = walks.parse_response(text, prefix="")
        assert message == loop.parse_response(text, prefix="")
        assert message == reference_parse(text, reference, prefix="")
