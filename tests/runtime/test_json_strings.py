"""JsonStrings, the string tracker of ``close-outside-strings`` (docs/extensions.md), against
a character-by-character reading of its rule: a ``"`` begins or ends a string unless an odd
run of backslashes comes right before it.

It counts quotes with ``str.count`` and ``str.find`` over stretches of any length; the
stretches here are random, so runs of backslashes and escaped quotes fall across their
edges.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rtcompiler.runtime.strings import JsonStrings


def inside_at(text: str) -> list[bool]:
    """Whether each position 0..len(text) is inside a string, one character at a time."""
    out = [False]
    inside = False
    run = 0
    for ch in text:
        if ch == '"' and run % 2 == 0:
            inside = not inside
        run = run + 1 if ch == "\\" else 0
        out.append(inside)
    return out


bodies = st.text(alphabet='\\"ab ', max_size=60)


@settings(max_examples=600, deadline=None)
@given(text=bodies, cuts=st.lists(st.integers(0, 60), max_size=8))
@example(text='"a\\"b"', cuts=[3])
@example(text='"a\\\\\\"b" "', cuts=[3, 4])
def test_advance_over_any_stretches_gives_the_state_at_every_stop(text, cuts):
    want = inside_at(text)
    strings = JsonStrings(0)
    for stop in sorted({min(c, len(text)) for c in cuts} | {len(text)}):
        strings.advance(text, 0, stop)
        assert strings.inside == want[stop], (text, stop)


@settings(max_examples=600, deadline=None)
@given(text=bodies, cuts=st.lists(st.integers(0, 60), max_size=8), base=st.integers(0, 5))
@example(text='"a\\"b"', cuts=[3], base=0)  # cut between a backslash and the quote it escapes
@example(text='"a\\\\"b"', cuts=[3], base=2)  # cut inside an even run: the quote ends it
def test_skip_finds_the_end_of_the_string_it_starts_in(text, cuts, base):
    # As the stream calls it: advanced to some place, then skipping while inside,
    # over a buffer that begins ``base`` characters after the body.
    want = inside_at(text)
    strings = JsonStrings(base)
    padded_base = base
    for stop in sorted({min(c, len(text)) for c in cuts} | {len(text)}):
        if strings.at - padded_base > stop:
            continue
        strings.advance(text, padded_base, padded_base + stop)
        if strings.inside:
            end, read = strings.skip(text, padded_base, padded_base + len(text))
            assert read >= 0
            closing = next(
                (i for i in range(stop, len(text)) if want[i] and not want[i + 1]), None)
            if closing is None:
                assert end is None, (text, stop)
                assert strings.inside == want[len(text)]
                return
            assert end == padded_base + closing + 1, (text, stop)
            assert not strings.inside
        assert strings.inside == want[strings.at - padded_base], (text, stop)


def test_a_call_body_streamed_token_by_token_is_read_for_its_strings_once():
    """Tokens given to a string-tracking region are not read for their strings as they
    come (no close can begin in them); the close's pass reads the body once, from the
    region's own text (ResponseStream.strings_read)."""
    from .test_transitions import _strings_module

    module = _strings_module(True)
    body = '{"text": "' + 'a \\" b, ' * 200 + '"}'
    parser = module.ResponseParser("<|start|>")
    parser.feed("<tool_call>")
    stream = parser._stream
    calls = []
    advance = module.JsonStrings.advance
    module.JsonStrings.advance = lambda self, held, base, stop: (
        calls.append(stop - max(self.at, base)) or advance(self, held, base, stop)
    )
    try:
        for i in range(0, len(body), 3):
            parser.feed(body[i : i + 3])
        assert calls == []  # nothing read yet
        parser.feed("</tool_call>")
    finally:
        module.JsonStrings.advance = advance
    assert sum(calls) <= len(body) + len("</tool_call>")  # each character once
    message, _ = parser.finalize()
    assert message["tool_calls"] == [{"text": 'a " b, ' * 200}]
    assert stream.strings is None  # the region closed
