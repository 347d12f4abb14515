"""A one-character piece outside every mode's first characters is quiet.

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

from rtcompiler.codegen import bundled, generate_module
from rtcompiler.template import load_template_file

NAMES = bundled.grammar_names()


def _module(name: str) -> types.ModuleType:
    template = load_template_file(bundled.GRAMMARS / name / "response_template.json")
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
