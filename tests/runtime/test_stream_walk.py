"""A stream's walk (ResponseStream.walk_step): text fed in pieces of tens or hundreds of
characters is walked from landmark to landmark, as a whole-text parse is, before the
watchers are asked one by one. These tests count what the walk saves (answers asked of
the watchers), bound what it reads, and check its commits against the reference at
random cuts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from transformers.utils.chat_parsing import ResponseParser as RefParser

from rtcompiler.codegen import load_parser
from rtcompiler.grammars import grammar
from rtcompiler.template import load_template

from .helpers import DIFFERENTIAL, assert_same, outcome

_MODULES: dict = {}


def _module(name):
    if name not in _MODULES:
        _MODULES[name] = load_parser(load_template(grammar(name).spec))
    return _MODULES[name]


def _harmony(calls):
    text = "<|channel|>analysis<|message|>Thinking about the weather first.<|end|>"
    for k in range(calls):
        text += (
            f"<|start|>assistant to=functions.get_weather<|channel|>commentary json"
            f'<|message|>{{"city": "Paris {k}", "days": {k % 9}}}<|call|>'
        )
    return text + "<|start|>assistant<|channel|>final<|message|>Done: it rains.<|return|>"


def _counting(module, name):
    """Wrap ``ResponseStream.<name>`` to count its calls; returns (counts, restore)."""
    counts = [0]
    original = getattr(module.ResponseStream, name)

    def counted(self, *args):
        counts[0] += 1
        return original(self, *args)

    setattr(module.ResponseStream, name, counted)
    return counts, lambda: setattr(module.ResponseStream, name, original)


def _stream(module, text, k):
    parser = module.ResponseParser("")
    for i in range(0, len(text), k):
        parser.feed(text[i : i + k])
    return parser, parser.finalize()[0]


def test_long_pieces_of_harmony_ask_few_watchers_per_commit() -> None:
    # Fed 256 characters at a time, 40 tool calls (three commits each: the header opens
    # the call, "<|call|>" closes it, the next header closes nothing) are walked: the
    # watchers of a mode are asked about once a feed, to say where the held text begins,
    # where they were asked two or three times a commit before.
    module = _module("gpt_oss:strict")
    text = _harmony(40)
    want = RefParser(grammar("gpt_oss:strict").spec, prefix="")
    want.feed(text)
    expected = want.finalize()[0]
    answers, restore = _counting(module, "answer")
    walks, restore_walk = _counting(module, "walk_step")
    try:
        parser, message = _stream(module, text, 256)
    finally:
        restore()
        restore_walk()
    assert message == expected
    assert len(message["tool_calls"]) == 40
    feeds = -(-len(text) // 256)
    commits = 2 * 40 + 4
    assert walks[0] >= commits
    assert answers[0] <= 2 * feeds, (answers[0], feeds, commits)


def test_a_close_with_nothing_open_leaves_the_region_as_it_is() -> None:
    # Between two calls, "<|start|>" closes the implicit region, which holds no text
    # yet: nothing is closed (the reference skips it too), and the stream does not go
    # through leaving and entering the same mode for it.
    module = _module("gpt_oss:strict")
    text = _harmony(40)
    want = RefParser(grammar("gpt_oss:strict").spec, prefix="")
    want.feed(text)
    expected = want.finalize()[0]
    for k in (1, 16, 256, len(text)):
        closes, restore = _counting(module, "close_current")
        try:
            parser, message = _stream(module, text, k)
        finally:
            restore()
        assert message == expected
        # The reasoning, 40 calls, the final answer, and the end of the output.
        assert closes[0] <= 1 + 40 + 1 + 1, (k, closes[0])


def test_what_the_walk_reads_does_not_grow_with_the_text() -> None:
    # Per character, the searches of a stream fed 64 or 256 characters at a time read
    # about as much at 40 calls as at 320 (a walk reads to the next landmark, and a
    # landmark it stops at, a header still arriving, is read again with the next piece
    # only); and a header left open for thousands of characters is not read again with
    # every piece.
    module = _module("gpt_oss:strict")
    for k in (64, 256):
        work = []
        for calls in (40, 320):
            text = _harmony(calls)
            parser, message = _stream(module, text, k)
            assert len(message["tool_calls"]) == calls
            work.append((parser._stream.examined + parser._stream.searched) / len(text))
        assert work[1] <= work[0] * 1.05 + 0.05, (k, work)
        assert work[1] <= 5, (k, work)
    open_header = "<|start|>assistant to=functions.f<|channel|>commentary json "
    work = []
    for n in (4_000, 32_000):
        text = "Hi" + open_header + "x " * n
        parser, _ = _stream(module, text, 48)
        work.append((parser._stream.examined + parser._stream.searched) / len(text))
    assert work[1] <= work[0] * 1.05 + 0.05, work


def test_a_close_written_in_an_argument_is_not_walked_into() -> None:
    # The bundled Harmony grammar counts "<|call|>" only outside the arguments' JSON
    # strings (close-outside-strings). Fed 256 characters at a time, the walk commits the
    # calls' real closes, and a close written inside a string stays argument text.
    module = _module("gpt_oss")
    call = (
        "<|start|>assistant to=functions.note<|channel|>commentary json<|message|>"
        '{"text": "end it with <|call|> then stop", "n": 1}<|call|>'
    )
    text = "<|channel|>analysis<|message|>Noting.<|end|>" + call * 30
    whole = module.parse_response(text, prefix="")
    closes = []
    walk = module.ResponseStream.walk_step

    def counted(self):
        found = walk(self)
        if (
            type(found) is tuple and found[0] == "close" and found[1].name == "tool_calls"
        ):
            closes.append(found[2].start)
        return found

    module.ResponseStream.walk_step = counted
    try:
        _, message = _stream(module, text, 256)
    finally:
        module.ResponseStream.walk_step = walk
    assert message == whole
    assert [c["function"]["arguments"]["text"] for c in message["tool_calls"]] == [
        "end it with <|call|> then stop"
    ] * 30
    assert len(closes) >= 20, closes
    assert all(text.startswith("<|call|><|start|>", c) or c == len(text) - 8 for c in closes)


_PIECES = {
    "gpt_oss:strict": (
        "<|channel|>analysis<|message|>", "<|channel|>final<|message|>", "<|end|>",
        "<|start|>assistant", "<|start|>assistant to=functions.f<|channel|>commentary json",
        "<|channel|>commentary to=functions.g <|constrain|>json", "<|message|>",
        '{"a": 1}', "<|call|>", "<|return|>", "<|cha", "<", "Hello there. ", "\n", " ",
    ),
    "qwen3:strict": (
        "<think>", "</think>", "<tool_call>", "</tool_call>", "\n", "  ",
        '{"name": "f", "arguments": {"a": 1}}', "<|im_end|>", "Hello there. ", "<tool_",
        "</think", "<",
    ),
    "qwen3_coder:strict": (
        "<think>", "</think>", "<tool_call>", "</tool_call>", "<function=get>\n",
        "<parameter=a>\n", "1\n</parameter>\n", "</function>", "\n", "<|im_end|>",
        "Hello there. ", "<func", "</tool_c",
    ),
    "gemma4:strict": (
        "<|channel>thought\n", "<channel|>", "<|tool_call>call:get{a:1}<tool_call|>",
        "<|tool_call>", "<tool_call|>", '<|"|>', "<turn|>", "{", "}", "Hello there. ", "\n",
        "<",
    ),
}


@DIFFERENTIAL
@given(data=st.data())
def test_long_pieces_give_the_references_stream(data) -> None:
    # Pieces of 16 to 256 characters of bundled formats, cut anywhere: the stream gives
    # the message the reference's stream gives for the same pieces.
    name = data.draw(st.sampled_from(sorted(_PIECES)))
    module = _module(name)
    text = "".join(data.draw(st.lists(st.sampled_from(_PIECES[name]), max_size=40)))
    sizes = data.draw(st.lists(st.integers(16, 256), min_size=1, max_size=20))
    pieces, i = [], 0
    for k in sizes * (1 + len(text) // 16):
        if i >= len(text):
            break
        pieces.append(text[i : i + k])
        i += k

    def ours():
        parser = module.ResponseParser("")
        for piece in pieces:
            parser.feed(piece)
        return parser.finalize()[0]

    def reference():
        parser = RefParser(grammar(name).spec, prefix="")
        for piece in pieces:
            parser.feed(piece)
        return parser.finalize()[0]

    assert_same(outcome(ours), outcome(reference))


def test_a_header_still_arriving_is_held_by_the_walk_without_asking_the_watchers() -> None:
    # Fed 64 characters at a time, a Harmony header ("<|start|>assistant to=functions.…
    # <|message|>", 73 characters) often ends a piece unfinished, right where the unsent
    # text begins. The walk finds its landmark there, and the search of the header's
    # beginnings (or, for a literal still being written, the literal) says it pends:
    # the text is held with no watcher asked, where the scan asked two (the reasoning
    # open, which cannot match there, then the header). The message and every event are
    # the reference's.
    module = _module("gpt_oss:strict")
    text = _harmony(40)
    want = RefParser(grammar("gpt_oss:strict").spec, prefix="")
    events = []
    for i in range(0, len(text), 64):
        events.extend(want.feed(text[i : i + 64]))
    expected, tail = want.finalize()
    scans, restore = _counting(module, "scan")
    try:
        parser = module.ResponseParser("")
        ours = []
        for i in range(0, len(text), 64):
            ours.extend(parser.feed(text[i : i + 64]))
        message, rest = parser.finalize()
    finally:
        restore()
    assert message == expected
    assert ours + rest == events + tail
    feeds = -(-len(text) // 64)
    # 22 scans for 77 feeds now, 6 of them holds at pos (a header's first characters,
    # before its landmark is whole); 66 before, 49 of them holds at pos.
    assert scans[0] <= feeds // 3, (scans[0], feeds)
