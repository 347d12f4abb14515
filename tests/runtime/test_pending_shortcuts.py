"""Two ways the stream answers a pending delimiter without its full machinery.

- ``answer`` with short unsent text holding no whole literal: what pends is read from
  the literals' beginnings and the lead (``Prefilter.pending``), with no scanner; holding
  one, a complete match is found with the pattern's stdlib form where the lead run
  before the literal begins, with no scanner either.
- ``feed`` while the watcher that held the text still pends where it begins: only
  that watcher is asked (``held_by``), skipping the per-feed searches and the scan;
  once it no longer pends, the scan reuses its answer.
- ``scan`` over short unsent text: a watcher whose danger search finds nothing there
  is not asked; and after a delimiter commits, a short rest in which the new mode's
  danger search finds nothing is region text, with no second scan.

Both must change nothing but the work: the same template runs with and without
them, over texts built from pieces of the delimiters, cut into random chunks, and
the messages and events must be equal. (The differential suites hold the scanner
path to ``regex``.)
"""

from __future__ import annotations

import types

from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.codegen import generate_module
from rtcompiler.template import load_template

from ..sweeps import examples

# Patterns whose prefilter is "simple" (a lead loop then a literal, or a literal first).
TEMPLATES = [
    {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": "\\s*<tool_call>", "close_pattern": "</tool_call>\\s*",
            "repeats": True, "content": "text",
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
    {
        "tool_calls": {
            "open_pattern": "<\\|tool_call>call:(?P<name>[^{<]+)", "close": "<tool_call|>",
            "repeats": True, "content": "text",
            "transform": {"name": "{name}", "body": "{content}"},
        },
        "content": {"close": ["<turn|>", "<|tool_response>"], "content": "text"},
    },
    {
        "tool_calls": {
            "open_pattern": "\\s*<tool_call>\\s*<function=(?P<name>[^>\\n]+)>",
            "close_pattern": "</tool_call>\\s*", "repeats": True, "content": "text",
            "transform": {"name": "{name}", "body": "{content}"},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
    {
        # Channel headers sharing "<|channel|>": the tool-call literals run on
        # through the channel names, so the channel headers pend on the quick path.
        "reasoning_content": {
            "open": "<|channel|>analysis<|message|>", "close": "<|end|>", "content": "text",
        },
        "tool_calls": {
            "open_pattern": (
                "(?: to=(?P<name>\\w+)<\\|channel\\|>commentary"
                "|<\\|channel\\|>(?:commentary|analysis) to=(?P<name>\\w+))<\\|message\\|>"
            ),
            "close": "<|call|>", "repeats": True, "content": "text",
            "transform": {"name": "{name}", "body": "{content}"},
        },
        "content": {"open": ["<|channel|>final<|message|>", "<|channel|>commentary<|message|>"],
                    "close": "<|end|>", "content": "text"},
    },
    {
        # Qwen3's call close: an alternation with a lookahead of a literal, a simple
        # pattern (every attempt begins at a literal).
        "tool_calls": {
            "open_pattern": "\\s*<tool_call>",
            "close_pattern": "</tool_call>\\s*|(?=<\\|im_end\\|>)",
            "repeats": True, "content": "text",
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
    {
        # A branch that can fail at its literal (it needs a space after it), and the
        # lookahead first: where the forms do not settle it, the scanner does.
        "reasoning_content": {
            "open": "<think>", "close_pattern": "(?=<tool_call>)|</think>\\n", "content": "text",
        },
        "tool_calls": {
            "open": "<tool_call>", "close_pattern": "</tool_call>[\\n ]|(?=<\\|im_end\\|>)|<\\|",
            "repeats": True, "content": "text",
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
    {
        # Qwen3-Coder's call close: a simple pattern with no lead whose first literal
        # ("</function>") often fails, the match beginning at a later one.
        "tool_calls": {
            "open_pattern": "\\s*<function=(?P<name>[^>\\n]+)>\\n",
            "close_pattern": "</tool_call>\\s*|</function>\\s*<\\|im_end\\|>",
            "repeats": True, "content": "text",
            "transform": {"name": "{name}", "body": "{content}"},
        },
        "content": {"close": ["<|im_end|>", "<tool_call>"], "content": "text"},
    },
]
PIECES = [
    " ", "\n", "  ", "x", "ab", "<", "<t", "<tool_", "call>", "<tool_call>", "</tool_call>",
    "</", "<think>", "</think>", "<|im_end|>", "<|", "tool_call>", "call:", "get_", "w{",
    "<tool_call|>", "<turn|>", "<|tool_response>", "<function=", "f>", "{", ">",
    "<|channel|>", "analysis", "commentary", "comm", " to=", "f", "<|message|>", "<|mes",
    "<|end|>", "<|call|>", "final", "</tool_call>\n", "</think>\n", "</think>", "</function>",
    "</function>\n", "<function=f>\n", "</function>\n</tool_call>",
]


def _module(spec: dict, shortcuts: bool) -> types.ModuleType:
    template = load_template({"version": 1, "start_anchor": "<|start|>", "fields": spec})
    module = types.ModuleType("pending_shortcuts_test")
    exec(compile(generate_module(template), "<pending_shortcuts_test>", "exec"), module.__dict__)
    if not shortcuts:
        module._SHORT_HELD = -1  # answer: every non-literal watcher on its scanner
        module._FORM_HELD = -1  # and scan: no watcher skipped by its danger search
        module._FORM_READ = -1  # answer: no stdlib form tried on longer unsent text
        module._QUICK_PIECE = -1  # feed and process: no quick danger search of a piece
        module._PEND_STOPS_SCAN = False  # scan: every watcher asked after one pends at pos
        module._TRANSITION_HELD = -1  # process and feed: no transition remembered
        scan = module.ResponseStream.scan

        def scan_without_holder(self, watch, eos):
            found = scan(self, watch, eos)
            self.held_by = None  # feed and scan: every watcher asked, every time
            return found

        module.ResponseStream.scan = scan_without_holder
    return module


def _run(module: types.ModuleType, text: str, cuts: list[int]):
    parser = module.ResponseParser("")
    events, at = [], 0
    for cut in sorted(cuts) + [len(text)]:
        events += parser.feed(text[at:cut])
        at = cut
    try:
        message, final = parser.finalize()
    except ValueError as e:
        return ("error", str(e)), events
    return message, events + final


@settings(max_examples=examples(100, 300), deadline=None)
@given(
    which=st.integers(0, len(TEMPLATES) - 1),
    parts=st.lists(st.sampled_from(PIECES), max_size=30),
    data=st.data(),
)
def test_shortcuts_change_nothing_but_the_work(which, parts, data):
    text = "".join(parts)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=16))
    fast = _run(_module(TEMPLATES[which], shortcuts=True), text, cuts)
    slow = _run(_module(TEMPLATES[which], shortcuts=False), text, cuts)
    assert fast == slow


def test_a_pending_header_is_answered_by_its_watcher_alone():
    """While "<|tool_call>call:get_..." arrives, each feed asks only the open watcher:
    its scanner, caught up, and no scan of the other watchers."""
    module = _module(TEMPLATES[1], shortcuts=True)
    parser = module.ResponseParser("")
    stream = parser._stream
    assert parser.feed("hi <|tool_call>call:") == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "hi ", "dirty": False},
    ]
    assert stream.held_by is not None
    calls = []
    scan = module.ResponseStream.scan
    module.ResponseStream.scan = lambda self, watch, eos: calls.append(1) or scan(self, watch, eos)
    try:
        for piece in ("get", "_wea", "ther"):
            assert parser.feed(piece) == []
        assert calls == []
        events = parser.feed("{x}<tool_call|>")
    finally:
        module.ResponseStream.scan = scan
    # The header ended: the machine moved on, and the close, a literal that cannot grow,
    # committed where it ends the text.
    assert {"type": "region_open", "field": "tool_calls"} in events
    assert [e["type"] for e in events][-1] == "region_close"
    message, _ = parser.finalize()
    assert message["tool_calls"] == [{"name": "get_weather", "body": "{x}"}]


def test_short_unsent_text_without_a_literal_makes_no_scanner():
    module = _module(TEMPLATES[0], shortcuts=True)
    parser = module.ResponseParser("")
    parser.feed("Hello\n")  # "\n" may begin "\s*<tool_call>": it pends, unsent
    parser.feed("<tool")
    stream = parser._stream
    assert stream.end - stream.pos == len("\n<tool")
    assert ("open", "tool_calls") not in stream.scanners
    slow = _module(TEMPLATES[0], shortcuts=False).ResponseParser("")
    slow.feed("Hello\n")
    slow.feed("<tool")
    assert slow._stream.pos == stream.pos


def test_a_complete_match_in_short_text_is_found_without_a_scanner():
    """"<|tool_call>call:get_weather" is a complete match (it may still grow); then "{"
    ends it. Neither needs the scanner, and the name group comes from the stdlib form."""
    module = _module(TEMPLATES[1], shortcuts=True)
    parser = module.ResponseParser("")
    stream = parser._stream
    assert parser.feed("ok <|tool_call>call:get_weather") == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "ok ", "dirty": False},
    ]
    events = parser.feed("{x}<tool_call|>")
    assert ("open", "tool_calls") not in stream.scanners
    assert {"type": "region_open", "field": "tool_calls"} in events
    message, _ = parser.finalize()
    assert message["tool_calls"] == [{"name": "get_weather", "body": "{x}"}]
    # Hermes: the lead run before "<tool_call>" is part of the match, as regex finds it.
    text = "a \n <tool_call>{}</tool_call> b"
    module = _module(TEMPLATES[0], shortcuts=True)
    parser = module.ResponseParser("")
    events = parser.feed(text)
    assert ("open", "tool_calls") not in parser._stream.scanners
    assert {"type": "region_chunk", "field": "content", "text": "a", "dirty": False} in events
    assert _run(module, text, []) == _run(_module(TEMPLATES[0], shortcuts=False), text, [])


def test_a_completed_open_is_committed_with_one_scan():
    """"<thi" pends for "<think>"; when "nk>\n" completes it, the holder's answer from
    feed is reused, "<|im_end|>" (nothing of it in the text) is not asked, and the
    "\n" after the delimiter goes to the new region without a second scan."""
    module = _module(TEMPLATES[0], shortcuts=True)
    parser = module.ResponseParser("")
    assert parser.feed("<thi") == []
    asked, scans = [], []
    answer, scan = module.ResponseStream.answer, module.ResponseStream.scan
    module.ResponseStream.answer = (
        lambda self, watcher, delimiter, eos: asked.append(watcher)
        or answer(self, watcher, delimiter, eos)
    )
    module.ResponseStream.scan = lambda self, watch, eos: scans.append(1) or scan(self, watch, eos)
    try:
        events = parser.feed("nk>\n")
    finally:
        module.ResponseStream.answer, module.ResponseStream.scan = answer, scan
    assert events == [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_chunk", "field": "reasoning_content", "text": "\n", "dirty": False},
    ]
    assert asked == [("open", "reasoning_content"), ("open", "tool_calls")]
    assert len(scans) == 1


def test_a_partial_header_on_its_scanner_is_answered_without_a_match():
    """"<tool_call>\\n<function=get_" is alive, unmatched, on the open watcher's scanner:
    each feed steps the scanner through the piece and asks nothing else."""
    module = _module(TEMPLATES[2], shortcuts=True)
    parser = module.ResponseParser("")
    stream = parser._stream
    parser.feed("ok <tool_call>\n<func")
    assert ("open", "tool_calls") in stream.scanners
    assert stream.held_by is not None
    asked = []
    answer = module.ResponseStream.answer
    module.ResponseStream.answer = (
        lambda self, watcher, delimiter, eos: asked.append(watcher)
        or answer(self, watcher, delimiter, eos)
    )
    try:
        for piece in ("tion=", "get_", "weather"):
            assert parser.feed(piece) == []
        assert asked == []
        events = parser.feed(">\nbody</tool_call> done")
    finally:
        module.ResponseStream.answer = answer
    # The header matched: the machine moved on (a longer piece goes to the walk, which
    # finds the open at its landmark without asking the watchers).
    assert {"type": "region_open", "field": "tool_calls"} in events
    assert any(e["type"] == "region_close" and e["field"] == "tool_calls" for e in events)
    text = "ok <tool_call>\n<function=get_weather>\nbody</tool_call> done"
    cuts = [len("ok <tool_call>\n<func"), len("ok <tool_call>\n<function=get_wea")]
    assert _run(module, text, cuts) == _run(_module(TEMPLATES[2], shortcuts=False), text, cuts)


def test_a_literal_after_where_the_hold_search_pends_goes_to_the_scan():
    """In "a  <x>", the hold search's leftmost find is " <x>" at 2, the beginning of
    the literal " <x>z"; but "<x" is whole at 3, and "\\s*<x" matches from 1, before
    anything pends: the quick path must leave that to the scan, which commits it."""
    spec = {
        "reasoning_content": {"open": " <x>z", "close": "</x>", "content": "text"},
        "tool_calls": {"open_pattern": "\\s*<x", "close": "</y>", "content": "text"},
        "content": {"close": "<|im_end|>", "content": "text"},
    }
    module = _module(spec, shortcuts=True)
    parser = module.ResponseParser("")
    parser.feed("a")
    events = parser.feed("  <x>")
    assert {"type": "region_open", "field": "tool_calls"} in events
    # The same with a space already held (the lead of "\\s*<x"): the hold search
    # then runs first, over the held space and the piece.
    parser = module.ResponseParser("")
    parser.feed("a")
    assert parser.feed(" ") == []
    assert {"type": "region_open", "field": "tool_calls"} in parser.feed(" <x>")
    text = "a  <x>body</y>"
    for cuts in ([1], [1, 3], [1, 2], []):
        assert _run(module, text, cuts) == _run(_module(spec, shortcuts=False), text, cuts)


def test_a_watcher_pending_where_the_scan_starts_ends_the_scan():
    """"<|channel|>a" pends for the reasoning open, the first watcher, right at pos:
    nothing can commit, so the tool-call watcher is not asked (no scanner is made)."""
    spec = {
        "reasoning_content": {
            "open": "<|channel|>analysis<|message|>", "close": "<|end|>", "content": "text",
        },
        "tool_calls": {
            "open_pattern": (
                "(?: to=(?P<name>\\w+)<\\|channel\\|>commentary"
                "|<\\|channel\\|>(?:commentary|analysis\\w*) to=(?P<name>\\w+))<\\|message\\|>"
            ),
            # (``analysis\w*``: with plain strings only, the prefilter's literals would
            # run through the group, and "<|channel|>a" would pend on the quick path.)
            "close": "<|call|>", "repeats": True, "content": "text",
            "transform": {"name": "{name}", "body": "{content}"},
        },
        "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>",
                    "content": "text"},
    }
    module = _module(spec, shortcuts=True)
    parser = module.ResponseParser("")
    asked = []
    answer = module.ResponseStream.answer
    module.ResponseStream.answer = (
        lambda self, watcher, delimiter, eos: asked.append(watcher)
        or answer(self, watcher, delimiter, eos)
    )
    try:
        assert parser.feed("<|channel|>a") == []
    finally:
        module.ResponseStream.answer = answer
    assert asked == [("open", "reasoning_content")]
    assert ("open", "tool_calls") not in parser._stream.scanners
    text = (
        "<|channel|>analysis<|message|>think<|end|><|channel|>commentary to=f<|message|>"
        "{}<|call|><|channel|>final<|message|>done<|end|>"
    )
    for cuts in ([12], [3, 12, 20, 60], list(range(0, len(text), 4))):
        assert _run(module, text, cuts) == _run(_module(spec, shortcuts=False), text, cuts)


# Per template, a header its tool-call pattern pends on while it arrives.
HEADERS = [
    "\n<tool_call>", "<|tool_call>call:get_weather", "<tool_call>\n<function=get_weather>\n",
    "<|channel|>commentary to=f<|message|>", "\n<tool_call>{} </tool_call>\n",
    "<think>x</think>\n<tool_call>y</tool_call>\n",
    "<function=f>\nx\n</function>\n</tool_call>\n",
]


@settings(max_examples=examples(50, 150), deadline=None)
@given(which=st.integers(0, len(TEMPLATES) - 1), data=st.data())
def test_answers_a_regex_remembers_change_nothing_in_later_streams(which, data):
    """Streams after the first, on the same compiled table, meet answers the first
    ones left (``CompiledRegex.partials``): each must still equal a stream of a table
    without shortcuts. The first text comes back, cut as before and cut anew."""
    fast_module = _module(TEMPLATES[which], shortcuts=True)
    slow_module = _module(TEMPLATES[which], shortcuts=False)
    pieces = st.sampled_from(PIECES + [HEADERS[which]] * 8)
    texts = data.draw(st.lists(st.lists(pieces, max_size=12).map("".join), min_size=2,
                               max_size=4))
    runs = [
        (text, data.draw(st.lists(st.integers(0, len(text)), max_size=16))) for text in texts
    ]
    first_cuts = data.draw(st.lists(st.integers(0, len(texts[0])), max_size=16))
    # The first text again: cut as before (every answer met before), and cut anew.
    for text, cuts in runs + runs[:1] + [(texts[0], first_cuts)]:
        assert _run(fast_module, text, cuts) == _run(slow_module, text, cuts)


def test_a_header_met_before_makes_no_scanner():
    """The second stream with the same tool-call header, fed alike, is answered from
    what the regex remembered: no scanner is made for the header."""
    module = _module(TEMPLATES[2], shortcuts=True)
    text = "Hi\n<tool_call>\n<function=get_weather>\n{}</tool_call>"
    cuts = list(range(0, len(text), 3))
    first = _run(module, text, cuts)
    regex = module.TABLE.regions[0].open.regex
    assert regex.partials  # the first stream's partial answers, kept
    made = []
    scanner = module.ResponseStream.scanner
    module.ResponseStream.scanner = (
        lambda self, key, delimiter: made.append(key) or scanner(self, key, delimiter)
    )
    try:
        second = _run(module, text, cuts)
    finally:
        module.ResponseStream.scanner = scanner
    assert second == first
    assert ("open", "tool_calls") not in made
    assert second == _run(_module(TEMPLATES[2], shortcuts=False), text, cuts)


def test_the_remembered_answers_stay_few():
    module = _module(TEMPLATES[2], shortcuts=True)
    module._PARTIALS = 3
    for name in ("a", "bb", "ccc", "dddd"):
        _run(module, f"<tool_call>\n<function={name}>\n{{}}</tool_call>", list(range(40)))
        assert len(module.TABLE.regions[0].open.regex.partials) <= 3


def test_an_alternation_with_a_lookahead_is_answered_without_a_scanner():
    """Qwen3's call close ``</tool_call>\\s*|(?=<\\|im_end\\|>)``: a streamed call body,
    its close pending at the end, then whole, is answered with stdlib calls alone (what
    pends, from the literals' beginnings; a match, from the form at the literal)."""
    module = _module(TEMPLATES[4], shortcuts=True)
    regex = module.TABLE.regions[0].close.regex
    assert regex.branch_search
    parser = module.ResponseParser("")
    stream = parser._stream
    for piece in ("hi <tool_call>", '{"a": 1 < 2}', "</tool", "_call>", "\n", "ok"):
        parser.feed(piece)
    assert ("close", "tool_calls") not in stream.scanners
    message, _ = parser.finalize()
    assert message == _run(_module(TEMPLATES[4], shortcuts=False), "".join(
        ("hi <tool_call>", '{"a": 1 < 2}', "</tool_call>\nok")), [])[0]
    # A branch that fails at its literal ("</tool_call>" without its space yet) is
    # left to the scanner.
    module = _module(TEMPLATES[5], shortcuts=True)
    parser = module.ResponseParser("")
    parser.feed("<tool_call>x</tool_call>")
    stream = parser._stream
    regex = module.TABLE.regions[1].close.regex
    assert stream.text(stream.pos, stream.end) == "</tool_call>"
    watcher = ("close", "tool_calls")
    held, base = stream.held()
    s = stream.pos - base
    j = regex.prefilter.find(held, s, len(held))  # (as answer finds it)
    assert stream.branch_answer(regex, regex.prefilter, False, held, base, s, j) is module._SLOW
    assert stream.answer(watcher, module.TABLE.regions[1].close, False).partial


def test_a_later_literal_is_tried_where_the_first_fails():
    """Qwen3-Coder's close: at "</function>" neither branch matches (the text there
    does not even begin a match), so the match is looked for at the next literal,
    "</tool_call>", with no scanner."""
    module = _module(TEMPLATES[6], shortcuts=True)
    parser = module.ResponseParser("")
    text = "<function=f>\nx\n" + "</function>\n</tool_call>\nok"
    parser.feed(text[:15])
    parser.feed(text[15:])
    assert ("close", "tool_calls") not in parser._stream.scanners
    message, _ = parser.finalize()
    assert message == {"tool_calls": [{"name": "f", "body": "x\n</function>"}], "content": "ok"}
    assert _run(module, text, [15])[0] == _run(_module(TEMPLATES[6], shortcuts=False), text,
                                               [15])[0]


def test_a_delimiter_anchored_at_the_start_is_not_searched_for_after_it():
    """DeepSeek's reasoning open "^<think>" can match at the start of the text only: after
    it, it answers nothing without a scanner, in a stream and in a whole-text parse, as
    the reference does."""
    from transformers.utils.chat_parsing import parse_response as reference_parse

    spec = {
        "reasoning_content": {"open_pattern": "^<think>", "close": "</think>", "content": "text"},
        "content": {"close": "<|end|>", "content": "text"},
    }
    module = _module(spec, shortcuts=True)
    template = {"version": 1, "start_anchor": "<|start|>", "fields": spec}
    for text in ("<think>a</think>b<think>c", "hi <think>x</think>y", "<thi", ""):
        parser = module.ResponseParser("<|start|>")
        for ch in text:
            parser.feed(ch)
        assert ("open", "reasoning_content") not in parser._stream.scanners or text.startswith(
            "<thi")
        message, _ = parser.finalize()
        whole = module.parse_response(text, prefix="<|start|>")
        assert message == whole == reference_parse(text, template, prefix="<|start|>"), text
    # After the start, the open's watcher is not asked for a scanner, streamed or whole.
    asked = []
    scanner = module.ResponseStream.scanner
    module.ResponseStream.scanner = (
        lambda self, key, delimiter: asked.append((key, self.pos)) or scanner(self, key, delimiter)
    )
    try:
        parser = module.ResponseParser("<|start|>")
        for piece in ("hi ", "<thi", "nk>x", " <think>", "y"):
            parser.feed(piece)
        parser.finalize()
        module.parse_response("hi " + "<think>x " * 50, prefix="<|start|>")
    finally:
        module.ResponseStream.scanner = scanner
    assert not [pos for key, pos in asked if key == ("open", "reasoning_content") and pos > 0]


def test_a_delimiter_anchored_at_the_start_makes_no_scanner_there_either():
    """At the start, "^<think>" is answered by its stdlib form with \\A and the search of
    what follows ^ (whether the text begins a match): no scanner, at any cut, and the
    reference's message."""
    from transformers.utils.chat_parsing import parse_response as reference_parse

    spec = {
        "reasoning_content": {"open_pattern": "^<think>", "close": "</think>", "content": "text"},
        "content": {"close": "<|end|>", "content": "text"},
    }
    module = _module(spec, shortcuts=True)
    template = {"version": 1, "start_anchor": "<|start|>", "fields": spec}
    made = []
    scanner = module.ResponseStream.scanner
    module.ResponseStream.scanner = (
        lambda self, key, delimiter: made.append(key) or scanner(self, key, delimiter)
    )
    try:
        for text in ("<think>a</think>b", "<thinking", "hi <think>x", "<", ""):
            want = reference_parse(text, template, prefix="<|start|>")
            for k in (1, 2, 5, 64):
                parser = module.ResponseParser("<|start|>")
                for i in range(0, len(text), k):
                    parser.feed(text[i : i + k])
                assert parser.finalize()[0] == want, (text, k)
    finally:
        module.ResponseStream.scanner = scanner
    assert made == []


def test_a_close_beginning_at_the_end_of_a_call_body_is_held_without_a_scan():
    """Qwen3's call close, a lookahead among its branches, is a simple pattern: a token
    that ends with the close's beginning ("</too") is held by the quick path of feed
    (the hold search), with no pass over the watchers, as for a literal close."""
    from rtcompiler.codegen import load_parser
    from rtcompiler.grammars import grammar

    module = load_parser(load_template(grammar("qwen3").spec))
    # (The module may be shared with other tests: what their feeds taught it, a hold
    # replayed rather than made, is forgotten.)
    module.TABLE.transitions.clear()
    passes = []
    stream_class = module.ResponseStream
    process, replay = stream_class.process, stream_class.replay

    def counted(method):
        def wrapped(self, *args, **kwargs):
            passes.append(self.text(self.pos, self.end))
            return method(self, *args, **kwargs)
        return wrapped

    parser = module.ResponseParser("")
    for piece in ("<tool_call>\n", '{"name": "f", ', '"arguments": {}}'):
        parser.feed(piece)
    stream = parser._stream
    stream_class.process, stream_class.replay = counted(process), counted(replay)
    try:
        parser.feed("\n</too")
    finally:
        stream_class.process, stream_class.replay = process, replay
    assert stream.current == "tool_calls"
    assert stream.text(stream.pos, stream.end) == "</too"
    assert passes == []  # neither a pass over the watchers nor a replay of one
    parser.feed("l_call>")
    message, _ = parser.finalize()
    assert message["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": {}}}]
