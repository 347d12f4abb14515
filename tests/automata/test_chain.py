"""Tag patterns run as chains of literals (``rtcompiler/automata/chain.py``).

A chain gives ``regex.finditer``'s matches and groups, backreference pairs included,
in linear time: differential tests against ``regex`` on random chain-shaped patterns
(by both of its ways, the stdlib form and the walk), work counted on adversarial
texts (never timed), and the refusal of the backreferences it cannot run.
"""

from __future__ import annotations

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rtcompiler.automata import compile_regex, compile_tag_pattern
from rtcompiler.automata.chain import chain_plan
from rtcompiler.dialect import PatternError, parse_pattern
from rtcompiler.runtime.tag_chain import TagChain

from ..sweeps import examples

CHECK = settings(
    max_examples=examples(250, 600),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

GLM = r"<arg_key>\s*(?P<key>.*?)\s*</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>"
QWEN3_CODER = r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>"
PAIR = r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"
# transformers' own test of xml-inline (tests/utils/test_chat_parsing.py, the citation
# template): a backreference pair with spaces trimmed around the value.
PAIR_TRIMMED = r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>"


def _chain(pattern: str) -> TagChain:
    plan = chain_plan(parse_pattern(pattern, backreferences=True))
    assert plan is not None, pattern
    return TagChain(plan)


def _want(pattern: str, text: str) -> list:
    return [(m.span(), m.groupdict()) for m in regex.finditer(pattern, text, regex.DOTALL)]


def _got(matches) -> list:
    return [(m.span(), m.groupdict()) for m in matches]


def assert_same(pattern: str, chain: TagChain, text: str) -> None:
    want = _want(pattern, text)
    assert _got(chain.walk(text)) == want, (pattern, text)
    assert _got(chain.form.finditer(text)) == want, (pattern, text)
    assert _got(chain.finditer(text)) == want, (pattern, text)


# -- random chains ---------------------------------------------------------------------

LEADS = ["<a>", "<p=", "[", "<", "{{", "k:"]
LITERALS = ["=", ">", "</a>", ":", "]", "</p>", "ab", "\n", "}}", "<b>"]
RUNS = [r"\s*", r"\w+", r"[^>\n]+", r"\n?", r"[a-c]{1,2}", r"[0-9]*", r" ?", r"[xy]+"]
TRIMS = [r"\s*", r"\n?", r" *", r"[xy]*"]
PIECES = LEADS + LITERALS + ["a", "b", "x", "y", " ", "  ", "\n", "</", "<", ">", "1", "_"]


@st.composite
def chain_patterns(draw) -> str:
    parts = [regex.escape(draw(st.sampled_from(LEADS)))]
    names = iter(["k", "v", "w", "u", "z"])
    key_group = None
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["lit", "run", "run", "group", "span", "span"]))
        if kind == "lit":
            parts.append(regex.escape(draw(st.sampled_from(LITERALS))))
        elif kind == "run":
            parts.append(draw(st.sampled_from(RUNS)))
        elif kind == "group":
            name = next(names, None)
            if name is None:
                continue
            parts.append(f"(?P<{name}>{draw(st.sampled_from(RUNS[1:]))})")
            key_group = key_group or name
        else:
            name = next(names, None)
            span = ".*?" if name is None or draw(st.booleans()) else f"(?P<{name}>.*?)"
            trim = draw(st.sampled_from([""] + TRIMS))
            parts.append(span + trim + regex.escape(draw(st.sampled_from(LITERALS))))
    if key_group is not None and draw(st.booleans()):
        trim = draw(st.sampled_from([""] + TRIMS))
        ref = draw(st.sampled_from([f"(?P={key_group})", r"\1"]))
        parts.append(f"(?P<z>.*?){trim}</{ref}>")
    return "".join(parts)


@st.composite
def chain_texts(draw, pattern: str) -> str:
    pieces = PIECES + regex.findall(r"[a-z]+|[<>\[\]=:/{}]+", pattern)
    return "".join(draw(st.lists(st.sampled_from(pieces), max_size=16)))


@CHECK
@given(st.data())
def test_chains_give_regex_matches(data) -> None:
    pattern = data.draw(chain_patterns(), label="pattern")
    try:
        plan = chain_plan(parse_pattern(pattern, backreferences=True))
    except PatternError:
        assume(False)
        return
    assume(plan is not None)
    chain = TagChain(plan)
    for _ in range(4):
        assert_same(pattern, chain, data.draw(chain_texts(pattern), label="text"))


@pytest.mark.parametrize("pattern", [GLM, QWEN3_CODER, PAIR, PAIR_TRIMMED])
@pytest.mark.parametrize("text", [
    "",
    "get\n<arg_key> city </arg_key>\n<arg_value>Paris</arg_value>\n"
    "<arg_key>u</arg_key><arg_value>c",
    "<arg_key>   </arg_key><arg_value></arg_value><arg_key>a</arg_key>x<arg_key>b</arg_key>"
    "<arg_value>v</arg_value>",
    "<parameter=city>\nParis\n</parameter><parameter=a>\n\n</parameter><parameter=b></parameter",
    "<city> Paris </city><a><b>1</b></a><c>unclosed<d>x</d></c><e>1</e2></e>",
    "<cite source=set_alarm><label>1.50</label><hour>7</hour></cite>",
])
def test_bundled_and_reference_shapes(pattern: str, text: str) -> None:
    assert_same(pattern, _chain(pattern), text)


# -- linear time, counted ---------------------------------------------------------------

SIZES = (2_000, 8_000, 32_000)

ADVERSARIAL = [
    # (pattern, head, unit, tail): unit repeated to the size
    (GLM, "<tool_call>f\n<arg_key>", " ", "</tool_call>"),  # the cubic case
    (GLM, "", "<arg_key>a", ""),  # unclosed keys: each attempt would read to the end
    (GLM, "", "<arg_key>a</arg_key><arg_value>x", ""),  # values never closed
    (GLM, "<arg_key>a", " ", "b</arg_key><arg_value>v</arg_value>"),  # spaces in a key
    (GLM, "", "<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n", ""),  # many arguments
    (QWEN3_CODER, "", "<parameter=a>x", ""),
    (QWEN3_CODER, "<parameter=a>", "\n", "</parameter>"),
    (PAIR, "", "<a>v", ""),  # one key, never closed
    (PAIR_TRIMMED, "", "<a> v </b>", "</a>"),
]


def _distinct_keys(n: int) -> str:
    # Thousands of different keys, none closed: one scan indexes every closing tag.
    out, i = [], 0
    while sum(map(len, out)) < n:
        out.append(f"<k{i}>v")
        i += 1
    return "".join(out)


def _walk_work(chain: TagChain, text: str) -> float:
    steps, searched = chain.steps, chain.searched
    list(chain.walk(text))
    return (chain.steps - steps + chain.searched - searched) / len(text)


@pytest.mark.parametrize(("pattern", "head", "unit", "tail"), ADVERSARIAL)
def test_the_walk_does_bounded_work_per_character(pattern, head, unit, tail) -> None:
    chain = _chain(pattern)
    ratios = []
    for n in SIZES:
        text = head + unit * (n // len(unit)) + tail
        ratios.append(_walk_work(chain, text))
    assert max(ratios) <= 4, ratios
    assert ratios[-1] <= ratios[0] * 1.05 + 0.05, ratios


def test_distinct_unclosed_keys_cost_one_scan() -> None:
    chain = _chain(PAIR)
    ratios = [_walk_work(chain, _distinct_keys(n)) for n in SIZES]
    assert max(ratios) <= 4, ratios
    assert ratios[-1] <= ratios[0] * 1.05 + 0.05, ratios
    text = _distinct_keys(300)
    assert _got(chain.walk(text)) == _want(PAIR, text)


def test_the_form_runs_only_where_few_attempts_can_read_far() -> None:
    chain = _chain(GLM)
    before = chain.formed
    small = "<arg_key>k</arg_key><arg_value>v</arg_value>" * 3
    list(chain.finditer(small))
    assert chain.formed == before + 1
    many = "<arg_key>a" * (chain.FORM_ATTEMPTS + 1)
    list(chain.finditer(many))
    long = "<arg_key>k</arg_key><arg_value>" + "v" * 2 * chain.FORM_TEXT + "</arg_value>"
    list(chain.finditer(long))
    assert chain.formed == before + 1


# -- what is refused ---------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "column"), [
    (r"(a)\1", 3),  # no leading literal
    (r"<(?P<k>[^>]+)>(?P<v>.*?)</(?P=k)>", 26),  # the key may hold '<': pairs could overlap
    (r"<(?P<k>\w+)>(?P<v>.*?)</(?P=k)>x(?P<w>.*?)y", 24),  # the pair does not end it
    (r"<(?P<k>\w+)>(?P=k)", 12),  # a backreference outside a pair
    (r"(?P<k>a|b)(?P=k)", 10),
])
def test_other_backreferences_are_refused_naming_the_column(pattern: str, column: int) -> None:
    with pytest.raises(PatternError) as info:
        compile_tag_pattern(pattern)
    assert info.value.construct == "backreference"
    assert info.value.column == column
    assert "backreference" in str(info.value)


def test_backreferences_stay_refused_in_delimiters() -> None:
    with pytest.raises(PatternError, match="backreference"):
        compile_regex(PAIR)
