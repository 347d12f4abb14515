"""The whole-text walk through a region whose close counts only outside strings.

A tool-call body of a ``close-outside-strings`` field is walked from landmark to
landmark like any other region: at each landmark of its close, the body's strings are
read up to there (``JsonStrings``, by counting quotes), and a landmark outside every
string is taken as usual. A landmark inside a string (a close written in an argument)
leaves the rest to the loop, which gives the string to the region and looks on after it,
or inside it when it never ends. The walk must answer as that loop and as a stream.

At the first landmark of its close, a plain-JSON body is decoded instead (Region.decode):
a body that decodes ends outside every string, and its value is the region's, so a
well-formed call is decoded once and its strings are never counted. A body that does not
decode there is read for its strings from then on, and never decoded again before it
closes: one attempt per region keeps the walk linear.
"""

from __future__ import annotations

import collections
import types

from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.codegen import generate_module
from rtcompiler.template import load_template

from ..sweeps import examples

SPEC = {
    "version": 1, "extensions": ["close-outside-strings", "recover"],
    "start_anchor": "<|start|>assistant",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<call>", "close_pattern": "</call>\\s*", "repeats": True,
            "content": "json", "recover": True, "close_outside_strings": True,
        },
        "content": {"close": "<end>", "content": "text"},
    },
}
PIECES = [
    "<call>", "</call>", "<think>", "</think>", "<end>", '{"a": "', '"}', '"', "\\", '\\"',
    "x", " ", "\n", "{", "}", "[1]", ': "', '", "b": ', "</ca", "ll>",
]


def _module(walks: bool) -> types.ModuleType:
    module = types.ModuleType("string_walk_test")
    exec(compile(generate_module(load_template(SPEC)), "<string_walk_test>", "exec"),
         module.__dict__)
    if not walks:
        module.TABLE.walks = {}
    return module


WALKED, LOOPED = _module(True), _module(False)


def _counted() -> tuple[types.ModuleType, collections.Counter]:
    """A walked module whose tool-call region counts its decodes, parses and reuses."""
    module, calls = _module(True), collections.Counter()
    region = module.TABLE.by_name["tool_calls"]

    def counted(name, function):
        def call(*args):
            calls[name] += 1
            return function(*args)
        return call

    for name in ("decode", "process", "decoded"):
        setattr(region, name, counted(name, getattr(region, name)))
    return module, calls


def _outcome(run):
    try:
        return "ok", run()
    except ValueError as e:
        return "error", str(e)


def _streamed(module, text):
    parser = module.ResponseParser("<|start|>assistant")
    for ch in text:
        parser.feed(ch)
    return parser.finalize()[0]


def test_string_regions_are_walked():
    assert "tool_calls" in WALKED.TABLE.walks and "tool_calls" in WALKED.TABLE.string_modes


def test_a_body_whose_close_is_outside_strings_is_walked_to_the_end():
    text = 'Hi<call>{"a": "b \\" c"}</call>then<call>[1]</call>'
    stream = WALKED.ResponseStream(WALKED.TABLE, "<|start|>assistant")
    message = stream.parse_whole(text)
    assert stream.whole == {}  # walked to the end: no watcher was asked
    assert message == {"content": "then", "tool_calls": [{"a": 'b " c'}, [1]]}
    assert message == LOOPED.parse_response(text, prefix="<|start|>assistant")


def test_a_well_formed_body_is_decoded_once_and_its_strings_never_read():
    module, calls = _counted()
    body = '{"a": "' + 'x \\" y ' * 500 + '", "b": [1, 2]}'
    message = module.parse_response(f"Hi<call>{body}</call><call>[3]</call>ok",
                                    prefix="<|start|>assistant")
    assert message["tool_calls"] == [{"a": "x \" y " * 500, "b": [1, 2]}, [3]]
    assert calls == {"decode": 2, "decoded": 2}  # each body decoded once, at its close


def test_a_body_that_does_not_decode_at_its_close_is_decoded_once():
    module, calls = _counted()
    # 300 closes written in the string: the first one ends no JSON; the strings are
    # read from then on, not decoded at each later landmark.
    body = '{"a": "' + "then </call> " * 300 + '"}'
    text = f"<call>{body}</call>ok"
    message = module.parse_response(text, prefix="<|start|>assistant")
    assert message == {"content": "ok", "tool_calls": [{"a": "then </call> " * 300}]}
    assert calls["decode"] == 1
    assert message == LOOPED.parse_response(text, prefix="<|start|>assistant")
    # A malformed body: the strings decide where it closes, the region recovers.
    module, calls = _counted()
    text = '<call>{"a": "b" "c"}</call>ok'
    assert module.parse_response(text, prefix="<|start|>assistant") == LOOPED.parse_response(
        text, prefix="<|start|>assistant")
    assert calls["decode"] == 1 and calls["decoded"] == 0


def test_a_close_inside_a_string_leaves_the_rest_to_the_loop():
    text = '<call>{"a": "close with </call> then"}</call>ok'
    stream = WALKED.ResponseStream(WALKED.TABLE, "<|start|>assistant")
    message = stream.parse_whole(text)
    assert stream.whole  # the loop asked the close's watcher
    assert message == {"content": "ok", "tool_calls": [{"a": "close with </call> then"}]}
    assert message == LOOPED.parse_response(text, prefix="<|start|>assistant")
    assert message == _streamed(WALKED, text)
    # A string that never ends: its first close counts after all, as in the loop.
    text = '<call>{"a": "b</call>tail'
    walked = _outcome(lambda: WALKED.parse_response(text, prefix="<|start|>assistant"))
    assert walked == _outcome(lambda: LOOPED.parse_response(text, prefix="<|start|>assistant"))
    assert walked == _outcome(lambda: _streamed(WALKED, text))
    assert walked[1]["content"].endswith("tail")


@settings(max_examples=examples(150, 400), deadline=None)
@given(parts=st.lists(st.sampled_from(PIECES), max_size=30),
       prefix=st.sampled_from(["", "<|start|>assistant", "<|start|>assistant<call>",
                               '<|start|>assistant<call>{"a": "']))
def test_the_walk_answers_as_the_loop_and_a_stream(parts, prefix):
    text = "".join(parts)
    walked = _outcome(lambda: WALKED.parse_response(text, prefix=prefix))
    assert walked == _outcome(lambda: LOOPED.parse_response(text, prefix=prefix))

    def streamed():
        parser = WALKED.ResponseParser(prefix)
        for ch in text:
            parser.feed(ch)
        return parser.finalize()[0]

    assert walked == _outcome(streamed)


def _fed(module, text, sizes, prefix="<|start|>assistant"):
    parser = module.ResponseParser(prefix)
    i = k = 0
    while i < len(text):
        step = sizes[k % len(sizes)]
        parser.feed(text[i : i + step])
        i += step
        k += 1
    return parser.finalize()[0]


def test_a_call_streamed_in_long_pieces_is_decoded_once_and_not_parsed_again():
    # A piece that holds the whole close: the stream's walk decodes the body up to it
    # instead of reading its strings, and the close takes that content.
    module, calls = _counted()
    body = '{"a": "' + 'x \\" y ' * 20 + '", "b": [1, 2]}'
    text = f"Hi<call>{body}</call><call>[3]</call>ok<end>"
    message = _fed(module, text, [64, len(text)])  # the last piece holds both closes
    assert message == LOOPED.parse_response(text, prefix="<|start|>assistant")
    assert message["tool_calls"] == [{"a": "x \" y " * 20, "b": [1, 2]}, [3]]
    assert calls == {"decode": 2, "decoded": 2}
    # Fed a character at a time, the walk never holds a whole close, but the feed that
    # brings a close's first character names its state, which needs the strings up to
    # there: the body is decoded for it instead of read (strings_keyed), and the close
    # takes that content too.
    module, calls = _counted()
    assert _fed(module, text, [1]) == message
    assert calls == {"decode": 2, "decoded": 2}


def test_a_feed_keyed_after_a_quote_or_a_backslash_knows_where_strings_are():
    # The feed's key needs the strings where the piece begins. Decoded up to the close,
    # the body ends outside strings there, and each quote between toggles: the state
    # where the piece begins is known, and the close takes the decoded value. After a
    # backslash, a quote may be escaped: the strings are read instead.
    # (The body comes in a piece of its own, as a token: given to the region unread.)
    for text, decodes in (
        ('<call>{"a": 1, "b": "x"}</call>ok<end>', True),
        ('<call>{"a": 1, "b": "x\\"}"}</call>ok<end>', False),
    ):
        cut = text.index('"}')
        for rest in (len(text) - cut, 6, 1):
            module, calls = _counted()
            message = _fed(module, text, [6, cut - 6, rest, 64])
            assert message == LOOPED.parse_response(text, prefix="<|start|>assistant")
            assert message["content"] == "ok" and len(message["tool_calls"]) == 1
            if decodes or rest == 1:  # (fed one by one, the close comes after "}")
                assert calls == {"decode": 1, "decoded": 1}, (text, rest)
            else:
                assert calls == {"process": 1}, (text, rest)


def test_a_stream_decodes_a_body_once_when_the_walk_stops_after_it():
    # "</call>\s*" at the end of the text may still grow: the walk stops there, and the
    # pieces of whitespace after it do not decode the body again.
    module, calls = _counted()
    body = '{"a": "' + "z" * 200 + '"}'
    parser = module.ResponseParser("<|start|>assistant")
    parser.feed(f"<call>{body}</call>")
    for _ in range(50):
        parser.feed(" " * 10)  # (long enough for the walk to be asked again)
    parser.feed("ok<end>")
    message = parser.finalize()[0]
    assert message == {"content": "ok", "tool_calls": [{"a": "z" * 200}]}
    assert calls["decode"] == 1


def test_a_close_in_a_string_of_a_long_piece_is_region_text():
    # The body up to the first close does not decode (the close is in a string): its
    # strings are read, and the close after the string ends the call.
    for text in ('<call>{"a": "x </call> y"}</call>ok<end>',
                 '<call>{"a": "x </call> y", "b": "</call>"}</call>ok<end>',
                 '<call>{"a": "x </call>'):
        looped = _outcome(
            lambda text=text: LOOPED.parse_response(text, prefix="<|start|>assistant"))
        for sizes in ([len(text)], [3, len(text)], [12]):
            fed = _outcome(lambda text=text, sizes=sizes: _fed(WALKED, text, sizes))
            assert fed == looped, (text, sizes)


@settings(max_examples=examples(150, 400), deadline=None)
@given(parts=st.lists(st.sampled_from(PIECES), max_size=30),
       sizes=st.lists(st.integers(1, 80), min_size=1, max_size=6),
       prefix=st.sampled_from(["", "<|start|>assistant", "<|start|>assistant<call>",
                               '<|start|>assistant<call>{"a": "']))
def test_a_stream_in_any_pieces_answers_as_the_loop(parts, sizes, prefix):
    text = "".join(parts)
    looped = _outcome(lambda: LOOPED.parse_response(text, prefix=prefix))
    assert _outcome(lambda: _fed(WALKED, text, sizes, prefix)) == looped


def test_a_close_whose_body_a_key_decoded_is_walked_without_reading_strings():
    # A short piece bringing the close's first character is keyed: the body decodes up
    # to there, so that place is outside every string. The text before it is then given
    # to the region, and a longer piece brings the rest of the close: its key and the
    # walk know the strings there without reading that text again.
    module, calls = _counted()
    reads = collections.Counter()
    strings = module.JsonStrings
    original = strings.advance

    def advance(self, held, base, stop):
        read = original(self, held, base, stop)
        reads["characters"] += read
        return read

    strings.advance = advance
    try:
        text = '<call>{"a": 1, "b": "x y"}</call>and the rest<end>'
        at = text.index("</call>")
        # ('"}</' is keyed: '"}' is then given to the region, "</" held.)
        message = _fed(module, text, [6, at - 8, 4, len(text)])
    finally:
        strings.advance = original
    assert message == LOOPED.parse_response(text, prefix="<|start|>assistant")
    assert calls == {"decode": 1, "decoded": 1}
    assert reads["characters"] == 0
