"""A one-character piece outside every mode's first characters is quiet, and so is
any piece without a mode's gate (its one first character, when it has only one).

``feed`` skips the danger search for a one-character piece, with nothing held, that
is not among the mode's first characters (``_first_characters``: a literal's first
character or a lead character). That is exact only if the danger pattern finds
nothing in any other single character; checked here for every mode of every bundled
grammar, over the characters that matter to them and a spread of others.
"""

from __future__ import annotations

import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rtcompiler import grammars
from rtcompiler.codegen import generate_module

NAMES = grammars.names()


def _module(name: str) -> types.ModuleType:
    template = grammars.grammar(name).template
    module = types.ModuleType(f"first_characters_{name}")
    exec(compile(generate_module(template), f"<{name}>", "exec"), module.__dict__)
    return module


MODULES = {name: _module(name) for name in NAMES}
# Grammars with a mode whose watched delimiters all have a danger pattern (some, such as
# llama3_json's lookahead-led patterns, have none: every piece goes to the scan).
QUICK = [
    name for name, module in MODULES.items()
    if any(q is not None and q[4] is not None for q in module.TABLE.quiet.values())
]


def test_the_bundled_formats_have_first_characters():
    assert {"qwen3", "qwen3_coder", "gpt_oss", "gemma4"} <= set(QUICK)


@pytest.mark.parametrize("name", QUICK)
def test_a_character_left_out_is_one_the_danger_search_finds_nothing_in(name):
    table = MODULES[name].TABLE
    checked = 0
    for quick in table.quiet.values():
        if quick is None or quick[4] is None:
            continue
        danger, first = quick[0], quick[4]
        # Every ASCII and Latin-1 character, the Unicode spaces, and some others.
        for code in [*range(0x100), 0x1680, *range(0x2000, 0x200C), 0x2028, 0x2029, 0x202F,
                     0x205F, 0x3000, 0x4E2D, 0x1F600]:
            ch = chr(code)
            if ch not in first:
                assert danger(ch) is None, (name, ch)
                checked += 1
        for ch in first:
            assert danger(ch) is not None, (name, ch)  # nothing listed needlessly
    assert checked


@given(name=st.sampled_from(QUICK), ch=st.characters())
def test_any_character(name, ch):
    for quick in MODULES[name].TABLE.quiet.values():
        if quick is not None and quick[4] is not None and ch not in quick[4]:
            assert quick[0](ch) is None


# Pieces with nothing held are checked for the mode's one first character (``gate``)
# instead of searched, when there is only one: every find begins with it.
GATED = [
    name for name, module in MODULES.items()
    if any(q is not None and q[5] is not None for q in module.TABLE.quiet.values())
]


def test_gemma_gpt_oss_and_qwen3_are_gated_by_one_character():
    assert {"gemma4", "gpt_oss", "qwen3", "qwen3_coder"} <= set(GATED)
    table = MODULES["gpt_oss"].TABLE
    assert table.quiet["content"][5] == "<"  # outside the messages: "<|end|>", "<|channel|>", ...
    assert table.quiet["content"][6] is None  # no lead characters
    # Qwen3's content watches "\s*<tool_call>": its gate comes with the spaces.
    content = MODULES["qwen3"].TABLE.quiet["content"]
    assert content[5] == "<" and {" ", "\n", "\t"} <= set(content[6])


@given(name=st.sampled_from(GATED or ["gemma4"]), data=st.data())
def test_a_piece_without_the_gate_character_is_quiet(name, data):
    for quick in MODULES[name].TABLE.quiet.values():
        if quick is None or quick[5] is None:
            continue
        gate, spaces = quick[5], quick[6]
        text = data.draw(
            st.text(max_size=40)
            | st.lists(st.sampled_from(["<|channel|>", "<", "[TOOL_CALLS]", "[", " to=", " ",
                                        "\n", "|", ">", "end|", "call:", "x"]),
                       max_size=10).map("".join)
        ).replace(gate, "")
        if spaces is not None:
            # Lead characters anywhere but at the end are region text.
            text = text.rstrip("".join(spaces))
            for space in spaces:
                assert quick[0](text + space) is not None
        assert quick[0](text) is None, (name, text)
        assert quick[0](text + gate) is not None  # (the gate itself begins a literal)


def test_words_after_held_spaces_are_region_text_with_no_search_or_key():
    """Qwen3's reasoning yields to ``\\s*<tool_call>``, so a token ending in a space holds
    it. The next token passing the gate, with the held space, is judged as a piece fed
    with nothing held: region text up to its own trailing spaces, with no danger or
    hold search and no transition remembered. A space run that a pass of the scan
    holds (after "<think>\\n") names no holder: the pieces after it go the same way."""
    module = MODULES["qwen3"]
    stream_class = module.ResponseStream
    names = ("remember_transition", "process", "described")
    originals = {name: getattr(stream_class, name) for name in names}
    counted = dict.fromkeys(names, 0)

    def counting(name):
        def wrapper(self, *args, **kwargs):
            counted[name] += 1
            return originals[name](self, *args, **kwargs)
        return wrapper

    words = ["Value ", "returns ", "it  ", "forecast\n", "city ", "model"] * 20
    prefix = "<|im_start|>assistant\n"
    for first in ("<think>\nSo", "<think>\n"):
        parser = module.ResponseParser(prefix)
        events = list(parser.feed(first))
        try:
            for name in names:
                setattr(stream_class, name, counting(name))
            for word in words:
                events += parser.feed(word)
        finally:
            for name, original in originals.items():
                setattr(stream_class, name, original)
        assert counted == dict.fromkeys(names, 0), first
        message, final = parser.finalize()
        text = "".join(e["text"] for e in events + final if e["type"] == "region_chunk")
        assert text == first.removeprefix("<think>") + "".join(words)
        assert message == module.parse_response(first + "".join(words), prefix=prefix)
