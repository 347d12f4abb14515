"""Cutting the prompt after the start anchor's last match by ``rfind``.

When the anchor matches its literals and nothing else, and they never overlap,
its last match is the last occurrence of one of them (``anchor_literals``); when
it is a lookahead of literals only, its last (empty) match is where the last one
begins. That must cut every prompt where the search through all of it does.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rtcompiler.automata import compile_regex
from rtcompiler.runtime.regions import anchor_literals, truncate_at_last_anchor

ALPHABET = "ab<|"
WORDS = st.text(ALPHABET, min_size=1, max_size=4)
# Alternations of literals, some of which overlap (aa, aba) or begin one another,
# and patterns that are not literals only.
PATTERNS = st.one_of(
    st.lists(WORDS, min_size=1, max_size=3).map(
        lambda ws: "|".join(w.replace("|", "\\|") for w in ws)
    ),
    st.sampled_from(["a+b", "ab?<", "(?:a|b)<", "<\\|a", "(?i)ab", "a\\|*b"]),
    st.lists(WORDS, min_size=1, max_size=3).map(
        lambda ws: "(?=" + "|".join(w.replace("|", "\\|") for w in ws) + ")"
    ),
    st.sampled_from(["(?=a)b", "(?!a)", "(?=a+)", "a(?=b)"]),
)


@given(pattern=PATTERNS, prefix=st.text(ALPHABET, max_size=30))
def test_the_prompt_is_cut_where_the_search_cuts_it(pattern: str, prefix: str) -> None:
    anchor = compile_regex(pattern)
    literals = anchor_literals(anchor)
    searched = truncate_at_last_anchor(anchor, prefix)
    assert truncate_at_last_anchor(anchor, prefix, literals) == searched


def test_which_anchors_are_cut_by_rfind() -> None:
    assert anchor_literals(compile_regex("<\\|turn>model\\n|<tool_response\\|>")) == (
        ("<tool_response|>", 16), ("<|turn>model\n", 13),
    )
    assert anchor_literals(compile_regex("<|im_start|>assistant\n".replace("|", "\\|"))) == (
        ("<|im_start|>assistant\n", 22),
    )
    # A lookahead of literals (gpt_oss keeps "<|start|>assistant" for its parser).
    assert anchor_literals(compile_regex("(?=<\\|start\\|>assistant)")) == (
        ("<|start|>assistant", 0),
    )
    assert truncate_at_last_anchor(
        compile_regex("(?=ab)"), "xabyab!", anchor_literals(compile_regex("(?=ab)"))
    ) == "ab!"
    # Not a lookahead of literals only: more after it, a negative one, a loop in it.
    for pattern in ["(?=a)b", "(?!a)", "(?=a+)", "a(?=b)"]:
        assert anchor_literals(compile_regex(pattern)) is None, pattern
    # Not literals only: a loop, a case-insensitive match.
    for pattern in ["a+b", "(?i)ab"]:
        assert not (compile_regex(pattern).prefilter_facts or {}).get("exact"), pattern
        assert anchor_literals(compile_regex(pattern)) is None, pattern
    # Literals only, but occurrences can overlap: "aa" twice in "aaa", and "ab"
    # begins "abc" ("ab?" is "a" or "ab").
    for pattern in ["aa", "ab|abc", "ab|ba", "ab?"]:
        assert compile_regex(pattern).prefilter_facts["exact"], pattern
        assert anchor_literals(compile_regex(pattern)) is None, pattern
    assert truncate_at_last_anchor(compile_regex("aa"), "aaa") == "a"
