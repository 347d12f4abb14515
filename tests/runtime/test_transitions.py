"""Transitions a table remembers (``RegionTable.transitions``, ``ResponseStream.feed``).

What a feed does depends only on the state it finds: the mode, whether its region has
text yet, the unsent text and, when a watched pattern reads it, the character before.
The table keeps what a feed did per state and piece (commits, where emitted text ends,
who holds the rest), the state named by that description or by a number the feed that
left it gave it; a later stream meeting the same state and piece replays it.
Replaying must change nothing but the work: later streams on one table must equal
streams of a table that remembers nothing, also when the character before the text
changes what a pattern (``\\b``) matches.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ..sweeps import examples
from .test_pending_shortcuts import HEADERS, PIECES, TEMPLATES, _module, _run

# "\b" reads the character before where the search starts: "call:f{" opens after a
# space, not after a letter, so "call:" held after "a" and after " " are different keys.
WORD_BOUNDARY = {
    "tool_calls": {
        "open_pattern": "\\bcall:(?P<name>\\w+)\\{", "close": "}", "repeats": True,
        "content": "text", "transform": {"name": "{name}", "body": "{content}"},
    },
    "content": {"close": "<|im_end|>", "content": "text"},
}
WORD_PIECES = ["a", " ", "call:", "cal", "l:", "f", "{", "}", "x}", "<|im_end|>", "\n"]


def _without_transitions(spec: dict):
    module = _module(spec, shortcuts=True)
    module._TRANSITION_HELD = -1
    return module


@settings(max_examples=examples(50, 150), deadline=None)
@given(which=st.integers(0, len(TEMPLATES)), data=st.data())
def test_replayed_transitions_change_nothing(which, data):
    """Several streams on one table, each text fed again with the same and with new
    cuts: every stream equals one on a table that remembers no transition."""
    if which == len(TEMPLATES):
        spec, pieces = WORD_BOUNDARY, st.sampled_from(WORD_PIECES)
    else:
        spec, pieces = TEMPLATES[which], st.sampled_from(PIECES + [HEADERS[which]] * 8)
    remembering = _module(spec, shortcuts=True)
    forgetting = _without_transitions(spec)
    texts = data.draw(st.lists(st.lists(pieces, max_size=14).map("".join), min_size=2,
                               max_size=4))
    runs = []
    for text in texts:
        runs.append((text, data.draw(st.lists(st.integers(0, len(text)), max_size=16))))
        runs.append((text, data.draw(st.lists(st.integers(0, len(text)), max_size=16))))
    for text, cuts in runs + runs:
        assert _run(remembering, text, cuts) == _run(forgetting, text, cuts)


def test_the_character_before_is_part_of_the_key():
    """"cal" after "a" is prose (no word boundary before it); after " " it may begin
    "call:": the first pass must not answer for the second."""
    module = _module(WORD_BOUNDARY, shortcuts=True)
    cuts = [1, 4, 5]
    for text in ("acal", " cal", "acall:f{x}", " call:f{x}"):
        assert _run(module, text, cuts) == _run(_without_transitions(WORD_BOUNDARY), text, cuts)
    message, _ = _run(module, " call:f{x}", cuts)
    assert message["tool_calls"] == [{"name": "f", "body": "x"}]


def test_a_header_met_before_is_replayed_without_a_scan():
    """The second stream fed the same tool-call output token by token runs no scan:
    each feed that needed one in the first stream is replayed."""
    module = _module(TEMPLATES[3], shortcuts=True)
    text = (
        "<|channel|>analysis<|message|>hm<|end|>"
        "<|channel|>commentary to=get_weather<|message|>{}<|call|>"
    )
    cuts = list(range(4, len(text), 4))
    scans = []
    scan = module.ResponseStream.scan
    module.ResponseStream.scan = (
        lambda self, watch, eos: scans.append(eos) or scan(self, watch, eos)
    )
    try:
        first = _run(module, text, cuts)
        assert False in scans  # the first stream scanned
        scans.clear()
        second = _run(module, text, cuts)
    finally:
        module.ResponseStream.scan = scan
    assert second == first
    assert False not in scans  # only finalize's pass (eos) scanned
    assert module.TABLE.transitions
    # Replayed, a pending header is held by its watcher where the unsent text begins,
    # as after a pass: the next feed asks that watcher alone.
    parser = module.ResponseParser("")
    middle = text.index(" to=") + 4
    assert middle % 4 == 0  # cut as before: the last piece, " to=", is replayed
    for at in range(0, middle, 4):
        parser.feed(text[at : at + 4])
    stream = parser._stream
    assert stream.held_by is not None and stream.held_by[1] == stream.pos
    assert stream.held_by[0][0] == "open" and stream.held_by[0][1].name == "tool_calls"
    # And so after the next piece, replayed in that watcher's state ("get_").
    pos = stream.pos
    parser.feed(text[middle : middle + 4])
    assert stream.pos == pos and stream.held_by is not None and stream.held_by[1] == pos
    assert stream.node is not None and stream.node[1] == stream.end
    assert first == _run(_module(TEMPLATES[3], shortcuts=False), text, cuts)


def test_the_remembered_transitions_stay_few():
    module = _module(TEMPLATES[0], shortcuts=True)
    module._TRANSITIONS = 3
    for name in ("a", "bb", "ccc", "dddd"):
        _run(module, f"x\n<tool_call>{name}</tool_call>\n<|im_end|>", list(range(40)))
        assert len(module.TABLE.transitions) <= 3


def test_a_state_number_holds_only_until_more_text_comes():
    """After "\\n" (held: it may begin "\\s*<tool_call>") the state has a number; "x"
    then empties the unsent text without a new one. "<tool_call>" from there is not
    the feed that followed "\\n" in the first stream."""
    module = _module(TEMPLATES[0], shortcuts=True)
    first = _run(module, "a\n<tool_call>{}</tool_call>", [1, 2])
    assert first[0]["tool_calls"] == ["{}"]
    text = "a\nx<tool_call>{}</tool_call>"
    assert _run(module, text, [1, 2, 3]) == _run(_without_transitions(TEMPLATES[0]), text,
                                                  [1, 2, 3])


def test_a_number_is_not_used_after_a_long_piece():
    """A piece too long to key moves the stream on without naming its state; the
    delimiter it leaves pending is then asked alone (held_by), and the old number
    must not key that feed: "k>" after "<thi" + "n" opened reasoning, after a
    pending "</thi" it closes it."""
    module = _module(TEMPLATES[0], shortcuts=True)
    first = _run(module, "<think>a</think>", [4, 5, 7])
    assert first[0]["reasoning_content"] == "a"
    text = "<think>" + "y" * 100 + "</think>"
    cuts = [4, 5, len(text) - 2]  # "<thi", "n", "k>yy...y</thin", "k>"
    assert _run(module, text, cuts) == _run(_without_transitions(TEMPLATES[0]), text, cuts)


def test_streams_in_threads_share_the_table_safely():
    """Streams of one parser in threads, switching as often as CPython allows, meet
    and keep transitions together: each must equal the same stream alone on a table
    that remembers nothing. (The numbers states get come from one itertools.count,
    whose next() cannot be split by a thread switch; a race on a plain counter is
    too narrow for this test to show.)"""
    import sys
    import threading

    module = _module(TEMPLATES[3], shortcuts=True)
    forgetting = _without_transitions(TEMPLATES[3])
    texts = [
        f"<|channel|>analysis<|message|>t{k}<|end|><|channel|>commentary to=f{k % 3}"
        f"<|message|>{{}}<|call|><|channel|>final<|message|>done {k}<|end|>"
        for k in range(6)
    ]
    runs = [(text, list(range(step, len(text), step))) for text in texts for step in (1, 3, 4)]
    expected = [_run(forgetting, text, cuts) for text, cuts in runs]
    failures = []

    def work(offset):
        for i in range(len(runs)):
            j = (i + offset) % len(runs)
            if _run(module, *runs[j]) != expected[j]:
                failures.append(runs[j])

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k * 5,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures
    assert module.TABLE.transitions


def test_a_held_beginning_of_a_literal_is_numbered_and_what_follows_replayed():
    """A token ending with the beginning of a literal ("</t" of "</think>"), with nothing
    held before, leaves a numbered state: the next stream replays the token after it.
    A held space is not numbered: a lookup costs more than the next token's search."""
    module = _module(TEMPLATES[0], shortcuts=True)
    text, cuts = "<think>ab x</think>ok\n<|im_end|>", [7, 11, 14, 19, 22]
    first = _run(module, text, cuts)
    parser = module.ResponseParser("")
    for piece in ("<think>", "ab x", "</t"):
        parser.feed(piece)
    stream = parser._stream
    assert stream.pos == stream.end - 3  # "</t" is held...
    assert stream.node is not None and stream.node[1] == stream.end  # ... in a numbered state
    parser.feed("hink>")
    assert stream.current == "content"
    assert first == _run(_without_transitions(TEMPLATES[0]), text, cuts)
    # In content, under "\s*<tool_call>", spaces are held, in a state not numbered.
    again = module.ResponseParser("")
    again.feed("ab\n\n")
    assert again._stream.pos == again._stream.end - 2
    assert again._stream.node is None or again._stream.node[1] != again._stream.end


# A call close that counts only outside the body's JSON strings (close-outside-strings):
# what a feed does there depends on the strings before it too, so a state's name says
# whether it is inside a string, and a pass gives the strings' text and the rest as one
# chunk, as its replay does.
STRINGS = {
    "version": 1, "extensions": ["close-outside-strings", "recover"],
    "start_anchor": "<|start|>",
    "fields": {
        "tool_calls": {
            "open_pattern": "\\s*<tool_call>",
            "close_pattern": "</tool_call>\\s*|(?=<\\|im_end\\|>)",
            "repeats": True, "content": "json", "recover": True,
            "close_outside_strings": True,
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}
STRING_PIECES = [
    '"', '\\', '\\"', "x", " ", "\n", "{", "}", '{"a": "', '"}', "<", "</", "</tool_",
    "call>", "</tool_call>", "<tool_call>", "\n<tool_call>", "<|im_", "end|>", "<|im_end|>",
    '{"a": 1}', ': "', '", "b": "',
]


def _strings_module(remember: bool):
    import types

    from rtcompiler.codegen import generate_module
    from rtcompiler.template import load_template

    module = types.ModuleType("transitions_strings_test")
    source = generate_module(load_template(STRINGS))
    exec(compile(source, "<transitions_strings_test>", "exec"), module.__dict__)
    if not remember:
        module._TRANSITION_HELD = -1
    return module


def _outcome(module, text: str, cuts: list[int]):
    try:
        return ("ok", _run(module, text, cuts))
    except ValueError as e:
        return ("error", str(e))


@settings(max_examples=examples(60, 200), deadline=None)
@given(data=st.data())
def test_replayed_transitions_in_a_string_tracking_region_change_nothing(data):
    remembering, forgetting = _strings_module(True), _strings_module(False)
    pieces = st.sampled_from(STRING_PIECES)
    texts = data.draw(st.lists(st.lists(pieces, max_size=14).map("".join), min_size=2,
                               max_size=4))
    runs = []
    for text in texts:
        for _ in range(2):
            runs.append((text, data.draw(st.lists(st.integers(0, len(text)), max_size=16))))
    for text, cuts in runs + runs:
        assert _outcome(remembering, text, cuts) == _outcome(forgetting, text, cuts)


def test_a_close_arriving_token_by_token_is_replayed_in_a_string_tracking_region():
    """The call's close, cut as in the stream before, is replayed: fewer scans than a
    table that remembers nothing makes. A close written inside an argument string is not
    a close, remembered or not."""
    text = '<tool_call>{"a": "</tool_call>"}</tool_call>'
    cuts = list(range(0, len(text), 3))
    scans = []
    outcomes = []
    for remember in (True, False):
        module = _strings_module(remember)
        first = _outcome(module, text, cuts)
        calls: list = []
        scan = module.ResponseStream.scan_outside_strings
        module.ResponseStream.scan_outside_strings = (
            lambda self, eos, events, calls=calls, scan=scan: (
                calls.append(eos) or scan(self, eos, events)
            )
        )
        try:
            second = _outcome(module, text, cuts)
        finally:
            module.ResponseStream.scan_outside_strings = scan
        assert second == first
        assert first[0] == "ok" and first[1][0]["tool_calls"] == [{"a": "</tool_call>"}]
        scans.append(len(calls))
        outcomes.append(second)
    assert outcomes[0] == outcomes[1]
    # (3 against 7: the feeds in the string and the end are scanned either way.)
    assert scans[0] < scans[1]
