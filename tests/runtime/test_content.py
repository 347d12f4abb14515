"""Differential tests: our content parsers against transformers' ``parse_content``.

Each test draws a body and ``content_args`` (well-formed and malformed), runs the
reference and our specialised plan, and requires the same value -- same types all the
way down -- or an exception of the same type. xml-inline runs its tag pattern with
our own regex engine (what a generated module embeds), so it checks the engine's
``finditer`` against ``regex.finditer`` too.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from transformers.utils.chat_parsing.content_parsers import parse_content

from rtcompiler.automata import compile_regex
from rtcompiler.codegen import content as content_plans
from rtcompiler.codegen import manifest
from rtcompiler.codegen.content import ContentPlan, build_parser, content_plan
from rtcompiler.runtime import content

from .helpers import DIFFERENTIAL, Raised, assert_same, outcome, same


@functools.cache
def _finditer(pattern: str):
    return compile_regex(pattern).finditer


def ours(content: str, args: Any, body: Any) -> Any:
    return outcome(lambda: build_parser(content_plan(content, args), _finditer)(body))


def reference(content: str, args: Any, body: Any) -> Any:
    return outcome(lambda: parse_content(body, content, args))


def check(content: str, args: Any, body: Any) -> None:
    ref = reference(content, args, body)
    assert_same(ours(content, args, body), ref)


# --- building blocks ------------------------------------------------------------------

# Characters where Python's and regex's notions differ: combining marks and connector
# punctuation are \w for regex only, superscripts and vulgar fractions for re only;
# Arabic-Indic digits are digits for int(); odd whitespace for strip().
TRICKY = [
    "a",
    "Z",
    "_",
    "0",
    "7",
    "é",
    "\u0301",  # combining acute: \w for regex, not for re
    "\u203f",  # undertie (Pc): \w for regex, not for re
    "²",  # superscript two: \w for re, not for regex
    "½",
    "\u0663",  # Arabic-Indic three
    "中",
    "\u00a0",
    "\u2028",
    "\x1c",
    " ",
    "\t",
    "\n",
    "\r",
]
SYNTAX = list('{}[]:,"') + ["<", ">", "/", "=", "'", "\\", ".", "-", "+", "e"]
SENTINELS = ["\x01", "\x02"]

flags = st.one_of(st.booleans(), st.sampled_from([None, 0, 1, "", "yes", [], [0]]))


def maybe(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``{key: value}`` or ``{}``: an absent key must behave as its default."""
    return st.one_of(st.just({}), values.map(lambda v: {key: v}))


def merged(*parts: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(*parts).map(lambda ds: {k: v for d in ds for k, v in d.items()})


noise = st.text(alphabet=st.sampled_from(TRICKY + SYNTAX), max_size=12)

# --- scalars ----------------------------------------------------------------------------

NUMBER_SPELLINGS = [
    "3",
    " 3 ",
    "\t-3\n",
    "+7",
    "1_000",
    "1__0",
    "_1",
    "3.0",
    "3.5",
    ".5",
    "5.",
    "1e3",
    "1E-3",
    "1e400",
    "-1e400",
    "inf",
    "-Infinity",
    "nan",
    "NaN",
    "\u0663",
    "\u0661\u0662",
    "²",
    "0x10",
    "0o7",
    "010",
    "00",
    "-0",
    "True",
    "true",
    "1",
    "0",
    "FALSE",
    " yes ",
    "",
    "  ",
    "\u00a03\u00a0",
    "9" * 5000,
]
numbers = st.one_of(
    st.sampled_from(NUMBER_SPELLINGS),
    st.text(alphabet=st.sampled_from(list("0123456789_.+-eE infatyTRU") + TRICKY), max_size=8),
    st.integers().map(str),
    st.floats().map(repr),
)
scalar_args = st.one_of(maybe("strip", flags), st.sampled_from([[], None, "strip", 3]))


@pytest.mark.parametrize("content", ["text", "int", "float", "bool"])
@DIFFERENTIAL
@given(body=numbers, args=scalar_args)
def test_scalar_parsers(content: str, body: str, args: Any) -> None:
    check(content, args, body)


# --- json -------------------------------------------------------------------------------

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True),
        st.text(alphabet=st.sampled_from(TRICKY + SYNTAX + SENTINELS), max_size=6),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.text(alphabet=st.sampled_from(TRICKY), max_size=4), children, max_size=3
        ),
    ),
    max_leaves=8,
)
# Bare keys as models write them, including non-ASCII word characters and marks.
bare_keys = st.text(alphabet=st.sampled_from(TRICKY[:13] + ["-", "$"]), min_size=1, max_size=5)
DELIMS = [
    [["<<", ">>"]],
    [["'", "'"]],
    [['<|"|>', '<|"|>']],  # Gemma 4's; one delimiter both ways takes a shortcut
    [("'", "'")],
    [["<", ">"], ["[", "]"]],
    [["[", "]"], ["<", ">"]],
    [["«", "»"]],
    [["", ""]],
    [["<", ""]],
    [["", ">"]],
    ["<>"],
    [("<", ">")],
    "<>",
    [],
    None,
    5,
    [5],
    [[1, 2]],
    [["<", ">", "x"]],
    [["<", None]],
    {"<>": 1},
]
json_args = merged(
    maybe("unquoted_keys", flags),
    maybe("string_delims", st.sampled_from(DELIMS)),
    maybe("allow_non_json", flags),
    maybe("strip", flags),
)


@st.composite
def near_json(draw: st.DrawFn) -> str:
    """JSON, JSON with bare keys, JSON with custom string delimiters, or noise."""
    kind = draw(st.sampled_from(["json", "bare", "delims", "noise", "splice"]))
    if kind == "json":
        return json.dumps(draw(json_values), ensure_ascii=draw(st.booleans()))
    if kind == "bare":
        items = draw(st.lists(st.tuples(bare_keys, json_values), max_size=4))
        sep = draw(st.sampled_from([",", ", ", ",\n"]))
        inner = sep.join(f"{k}: {json.dumps(v)}" for k, v in items)
        return draw(st.sampled_from(["{", "{ ", "[{"])) + inner + "}"
    if kind == "delims":
        opener, closer = draw(st.sampled_from(
            [("<<", ">>"), ("'", "'"), ("<", ">"), ("«", "»"), ('<|"|>', '<|"|>')]
        ))
        items = draw(st.lists(st.tuples(bare_keys, noise), max_size=3))
        inner = ",".join(f'"{k}": {opener}{v}{closer}' for k, v in items)
        return "{" + inner + "}"
    if kind == "noise":
        return draw(st.text(alphabet=st.sampled_from(TRICKY + SYNTAX + SENTINELS), max_size=20))
    # JSON with a piece of noise spliced in somewhere.
    text = json.dumps(draw(json_values))
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(noise) + text[at:]


@DIFFERENTIAL
@given(body=near_json(), args=json_args)
def test_json(body: str, args: dict[str, Any]) -> None:
    check("json", args, body)


@pytest.fixture
def park_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decode with stand-ins for every parked string, however short (see _loads_parked)."""
    import rtcompiler.runtime.content as content

    monkeypatch.setattr(content, "_PARKED_DIRECT", 0)


@DIFFERENTIAL
@given(body=near_json(), args=json_args)
def test_json_parked_shortcut(body: str, args: dict[str, Any]) -> None:
    import rtcompiler.runtime.content as content

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(content, "_PARKED_DIRECT", 0)
        check("json", args, body)


def test_json_parked_shortcut_cases(park_always: None) -> None:
    delims = {"string_delims": [["<<", ">>"]], "unquoted_keys": True}
    cases = [
        '{a: <<x>>, b: [<<y>>, 1, {c: <<z>>}]}',
        '{<<k>>: 1}',  # a parked key: the shortcut gives up
        '{"k": 1, <<k>>: 2, "k": 3}',  # duplicate keys across the two spellings
        '{a: <<x>>, b: "\\u0001"}',  # an escape of the marker character itself
        '{a: "\\u00010\\u0002", b: <<x>>}',
        '{a: pre<<x>>post}',
        '{a: "in <<x>> side"}',
        '<<x>>',
        '[<<x>>, <<y>>]',
        '[' * 50 + '<<x>>' + ']' * 50,
        '{a: <<x>>',
    ]
    for body in cases:
        check("json", delims, body)
    assert ours("json", delims, '[<<x>>, <<y>>]') == ["x", "y"]


def test_json_empty_open_delimiter_parks_with_find(monkeypatch: pytest.MonkeyPatch) -> None:
    # With an empty open delimiter every position opens a string. The reference's
    # re.sub of "(.*?)>>" tries an attempt at every start, each reading to the end when
    # no close follows: quadratic. Ours finds each close once, with no regex at all.
    def no_regex(source: str) -> Any:
        raise AssertionError(f"a regex ran: {source}")

    monkeypatch.setattr(content, "_json_pattern", no_regex)
    args = {"string_delims": [["", ">>"]], "allow_non_json": True}
    for body in ['{"a": 1}', "x>>", ">>>>", '"a">>', "a" * 100, "[>> 1, 2]", "x>>>y>>z"]:
        check("json", args, body)


def test_json_strings_in_place_cases() -> None:
    """One delimiter both ways (Gemma 4's <|"|>): the strings are put between quotes
    where they stand unless one needs an escape or is left open; the same value as
    parking them, either way."""
    delims = {"string_delims": [['<|"|>', '<|"|>']], "unquoted_keys": True}
    q = '<|"|>'
    cases = [
        f"{{city:{q}Kraków{q},days:14,units:{q}imperial{q}}}",
        f"{{a:{q}x,b:1{q}}}",  # a key-like run inside a string stays text
        f"{{a:{q}say \"hi\\\"{q}}}",  # a quote and a backslash: written out by json
        f'{{a:{q}tab\\tthere{q},"b":2}}',  # a quote outside the strings is JSON's own
        f"{{a:{q}line\nbreak{q}}}",  # a raw newline needs an escape
        f"{{a:{q}open}}",  # a string left open
        f'["abc{q}]',  # left open, its delimiter's quote would close the "abc" of the text
        f"{{{q}k{q}:1}}",  # a string as a key
        f"[{q}{q},{q}{q}]",
        f"{{a:{q}x{q}{q}y{q}}}",
        "{a:1,b:[2,3]}",
        # Parked, from the split: strings needing escapes, short and long in all.
        f"{{a:{q}x{q},b:{q}line\nbreak{q},c:[{q}y{q},{q}\\{q}]}}",
        f"{{content:{q}" + "def f():\n    return 1\n" * 20 + f"{q},path:{q}a.py{q}}}",
        # Beyond ASCII: in place when it decodes; a failure quotes the reference's text,
        # which json.dumps escapes; surrogates are not in place (an escaped pair is one
        # character).
        f"{{a:{q}café{q} x}}",
        f"{{a:{q}中文{q},b:[{q}é{q}}}",
        f"{{a:{q}\ud83d\ude00{q}}}",
        f"{{a:{q}\udc00{q},b:{q}é{q}}}",
    ]
    for body in cases:
        check("json", delims, body)
    assert ours("json", delims, cases[0]) == {"city": "Kraków", "days": 14, "units": "imperial"}
    assert ours("json", delims, cases[-2]) == {"a": "\U0001f600"}  # as the reference: one
    # The first case is decoded in place, beyond ASCII as it is; exact, it is parked.
    key_pattern = content_plans.unquoted_key_pattern()
    assert content._strings_in_place(cases[0], q, key_pattern)[1] is None
    assert content._strings_in_place(cases[0], q, key_pattern, True)[1] == ["Kraków", "imperial"]


# Word characters by one engine or the other: letters of each case kind, marks, the
# zero-width joiner (Join_Control), connector punctuation, numbers of each kind.
WORDISH = ["a", "Z", "_", "0", "é", "\u0301", "\u0300", "\u203f", "²", "\u0663", "中", "ǅ"]
WORDISH += ["\u200d", "\u2160", "\u00aa", "\u02b0", "\U0001d400", "\U0001f600"]


@DIFFERENTIAL
@given(
    keys=st.lists(
        st.text(alphabet=st.sampled_from(WORDISH), min_size=1, max_size=4), min_size=1, max_size=4
    ),
    sep=st.sampled_from([",", ", "]),
)
def test_json_unquoted_unicode_keys(keys: list[str], sep: str) -> None:
    """Keys made only of word-ish characters: where re's and regex's \\w disagree."""
    body = "{" + sep.join(f"{k}:{i}" for i, k in enumerate(keys)) + "}"
    check("json", {"unquoted_keys": True}, body)


def test_json_specific_cases() -> None:
    cases = [
        ("{ca\u0301fe\u0301: 1}", {"unquoted_keys": True}),  # combining marks: a key
        ("{x\u203fy: 1}", {"unquoted_keys": True}),  # undertie: a key for regex only
        ("{x²: 1}", {"unquoted_keys": True}),  # superscript: not a key for regex
        ('{"a": <<x>>}', {"string_delims": [["<<", ">>"]]}),
        ('{"a": <<x\x01>>}', {"string_delims": [["<<", ">>"]]}),  # sentinel: ValueError
        ("{\x01}", {}),  # no string_delims: sentinels are not special
        ('{"a": [<x>]}', {"string_delims": [["<", ">"], ["[", "]"]]}),
        # Parking with str.find: an opening without a close ends the rewriting, later
        # openings included; a close before any opening is text; open == close pairs up.
        ('{"a": <<x>>, "b": <<y, "c": <<z>>}', {"string_delims": [["<<", ">>"]]}),
        ('{"a": >>x<<, "b": <<y>>}', {"string_delims": [["<<", ">>"]]}),
        ("{'a': 'x', 'b': 'y'}", {"string_delims": [["'", "'"]]}),
        ("{'a': 'x', 'b': 'y}", {"string_delims": [["'", "'"]]}),
        ('{"a": <<<x>>>}', {"string_delims": [["<<", ">>"]]}),
        ('{"a": [<x]>]}', {"string_delims": [["[", "]"], ["<", ">"]]}),
        ("{a:<<q: 1, b:2>>, c:3}", {"string_delims": [["<<", ">>"]], "unquoted_keys": True}),
        ("{a:1,{b:2}", {"unquoted_keys": True}),
        ("[{a:1},{b:[{c:2}]}]", {"unquoted_keys": True}),
        ("[" + "9" * 5000 + "]", {"allow_non_json": True}),  # int digit limit: not a fallback
        ("not json", {"allow_non_json": True, "strip": False}),
        (" not json ", {"allow_non_json": True}),
    ]
    for body, args in cases:
        check("json", args, body)


def test_json_nested_too_deeply_is_a_value_error_where_the_reference_crashes() -> None:
    # docs/deviations.md: not a fallback for allow_non_json either.
    for args in ({}, {"allow_non_json": True}):
        ref = reference("json", args, "[" * 100000)
        assert isinstance(ref, Raised) and ref.type is RecursionError
        mine = ours("json", args, "[" * 100000)
        assert isinstance(mine, Raised) and mine.type is ValueError
        assert "nested too deeply" in mine.message


# --- xml-inline -------------------------------------------------------------------------

TAG_PATTERNS = [
    r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
    r"<(?P<key>[a-z]+)>(?P<value>[^<]*)</[a-z]+>",
    r"(?P<key>\w+)=(?P<value>\w*)",
    r"<k>(?P<key>.*?)</k>(?:<v>(?P<value>.*?)</v>)?",
    r"<p>(?P<value>.*?)</p>",
    r"(?:<a>(?P<key>\w+)</a>)|<b>",
    r"(?P<key>\w*)",
    r"\[(?P<key>[^\]=]+)=(?P<value>[^\]]*)\]",
    r"<k>(?P<key>.*?)</k>",
]
TAG_FRAGMENTS = [
    "<parameter=city>London</parameter>",
    "<parameter=n>\n 42 \n</parameter>",
    "<parameter=é\u0301>[1, 2]</parameter>",
    "<parameter=city>Paris</parameter>",
    "<a>1</a>",
    "<a>x</a>",
    "<b>",
    "<k>x</k>",
    "<k>x</k><v> 2 </v>",
    "<k>y</k><v>true</v>",
    "<p>v</p>",
    "[a=1]",
    "[a=b: 2]",
    "x=1",
    "x=",
    "\n",
    " ",
]
VALUE_PARSERS = [
    None,
    {"name": "json", "args": {"allow_non_json": True}},
    {"name": "json"},
    {"name": "int"},
    {"name": "bool"},
    {"name": "text", "args": {"strip": False}},
    {},
    {"name": "kv-lines", "args": {"kv_sep": "="}},
    {"name": "xml-inline", "args": {"tag_pattern": r"(?P<key>[a-z])(?P<value>\d)"}},
    {"name": "xml-inline", "args": {}},
    {"name": "xml-inline", "args": {"tag_pattern": 5}},
    "json",
    0,
    {"name": "nope"},
    {"name": ["x"]},
    {"name": "text", "args": None},
]
xml_bodies = st.lists(st.one_of(st.sampled_from(TAG_FRAGMENTS), noise), max_size=6).map("".join)
xml_args = merged(
    st.one_of(
        st.sampled_from(TAG_PATTERNS).map(lambda p: {"tag_pattern": p}),
        st.sampled_from([{}, {"tag_pattern": None}, {"tag_pattern": 3}]),
    ),
    maybe("value_parser", st.sampled_from(VALUE_PARSERS)),
    maybe("merge_duplicates", flags),
)


@DIFFERENTIAL
@given(body=xml_bodies, args=xml_args)
def test_xml_inline(body: str, args: dict[str, Any]) -> None:
    check("xml-inline", args, body)


def test_xml_inline_non_participating_value() -> None:
    """An optional value group that did not match gives None, not ""."""
    args = {"tag_pattern": r"<k>(?P<key>.*?)</k>(?:<v>(?P<value>.*?)</v>)?"}
    check("xml-inline", args, "<k>a</k>")
    assert ours("xml-inline", args, "<k>a</k>") == {"a": None}
    for value_parser in VALUE_PARSERS:
        check("xml-inline", {**args, "value_parser": value_parser}, "<k>a</k>")


# --- kv-lines ---------------------------------------------------------------------------

KV_LINES = ["name: alice", "age: 30", " a : 1 ", "a:2", "x=1", "url: http://h:80", ":", "k:", ":v"]
kv_bodies = st.lists(
    st.one_of(st.sampled_from(KV_LINES), noise),
    max_size=6,
).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n", ";", " ; "]).map(lambda sep: sep.join(lines))
)
kv_args = merged(
    maybe("line_sep", st.sampled_from(["\n", ";", "\r\n", "", None, 5, "::"])),
    maybe("kv_sep", st.sampled_from([":", "=", "::", "", None, 5])),
    maybe("strip", flags),
    maybe("value_parser", st.sampled_from(VALUE_PARSERS)),
)


@DIFFERENTIAL
@given(body=kv_bodies, args=kv_args)
def test_kv_lines(body: str, args: dict[str, Any]) -> None:
    check("kv-lines", args, body)


def test_kv_lines_empty_body_with_bad_kv_sep() -> None:
    # No line reaches the kv_sep test, so even a non-string kv_sep is harmless.
    check("kv-lines", {"kv_sep": 5}, "")
    check("kv-lines", {"kv_sep": 5}, "a")


# --- content_args that are not a dict ---------------------------------------------------


@pytest.mark.parametrize(
    "content", ["text", "int", "float", "bool", "json", "xml-inline", "kv-lines"]
)
@pytest.mark.parametrize("args", [None, [], [1], "strip", 0])
def test_content_args_not_a_dict(content: str, args: Any) -> None:
    check(content, args, "<k>1</k>")


# --- plans ------------------------------------------------------------------------------


def test_plan_sections_are_closed_and_ordered() -> None:
    plan = content_plan(
        "xml-inline",
        {
            "tag_pattern": r"(?P<key>\w)(?P<value>\w)",
            "value_parser": {"name": "kv-lines", "args": {"value_parser": {"name": "json"}}},
        },
    )
    assert plan.sections == ("text", "json", "xml_inline", "kv_lines")
    assert plan.value_parser is not None and plan.value_parser.value_parser is not None
    assert plan.value_parser.value_parser.function == "parse_json"
    for section in manifest.SECTIONS:
        closure = manifest.closure([section.name])
        assert closure[-1] == section.name
        for dep in section.depends:
            assert closure.index(dep) < closure.index(section.name)


def test_plan_args_are_plain_data() -> None:
    """The generator writes args as literals: they must survive a JSON round trip."""
    plans = [
        content_plan("json", {"unquoted_keys": True, "string_delims": [["<", ">"]]}),
        content_plan("kv-lines", {"value_parser": {"name": "float"}}),
        content_plan("xml-inline", {"tag_pattern": "(?P<key>a)", "merge_duplicates": 1}),
        content_plan("text", []),
    ]

    def walk(plan: ContentPlan | None) -> None:
        if plan is None:
            return
        assert json.loads(json.dumps(plan.args)) == plan.args
        walk(plan.value_parser)

    for plan in plans:
        walk(plan)


def test_unknown_content_is_a_compile_error() -> None:
    with pytest.raises(ValueError):
        content_plan("yaml", {})


@pytest.mark.parametrize(
    ("pattern", "body"),
    [
        ("", ""),  # one empty match, and no key group: ValueError even on empty text
        ("", "ab"),
        ("(?P<key>)", "ab"),  # empty key at every position, collapsed into one entry
        ("(?P<key>)(?P<value>x)?", "xab"),
        (r"(?P<key>a)|(?P<value>b)", "ba"),  # key group not taking part: ValueError
        (r"(?P<key>a)|(?P<value>b)", "aa"),
    ],
)
def test_xml_inline_edge_patterns(pattern: str, body: str) -> None:
    check("xml-inline", {"tag_pattern": pattern}, body)
    check("xml-inline", {"tag_pattern": pattern, "merge_duplicates": True}, body)


def test_json_ascii_key_class_agrees_with_the_full_class() -> None:
    """ASCII text has its bare keys found with the key class cut to ASCII (sre reads a
    short class faster); every ASCII character, in and around a key, gets the same
    verdict as the full class."""
    pattern = content_plans.unquoted_key_pattern()
    full = re.compile(pattern, re.DOTALL)
    for code in range(128):
        c = chr(code)
        for text in (f"{{a{c}b:1}}", f"{{{c}:1,{c}{c}:2}}", f"[{{x:{c}}},{c}y:3]"):
            assert text.isascii()
            assert content._quote_keys(text, pattern) == full.sub(r'"\1":', text), repr(text)
    assert content._key_splitters[pattern][True] is not None  # the ASCII form was used


_JSON_PIECES = st.sampled_from(
    ['{', '}', '[', ']', ':', ',', '"', '"a"', '1', '-0.5e3', 'true', 'null', 'NaN', ' ', '\n',
     '\ufeff', '\\', '\\u00e9', 'x', '1e400', '"\\ud800"', '\t', '\r', '\x0b', '\xa0']
)


@given(st.lists(_JSON_PIECES, max_size=20).map("".join) | st.text(max_size=30))
@example("\ufeff{}")
@example('{"a": 1} [')
@example(" ")
@example("\t1\r\n")
@example("\xa01")
def test_json_loads_shortcut_is_json_loads(text):
    """``_json_loads`` skips json.loads' Python frames: same value, same error."""

    def run(loads):
        try:
            return "value", loads(text)
        except ValueError as exc:
            return type(exc), str(exc)

    ours, stdlib = run(content._json_loads), run(json.loads)
    if ours[0] == "value" and stdlib[0] == "value":
        assert json.dumps(ours[1]) == json.dumps(stdlib[1])  # NaN != NaN
    else:
        assert ours == stdlib


@given(
    body=st.lists(_JSON_PIECES, max_size=20).map("".join) | near_json(),
    allow_non_json=st.booleans(), strip=st.booleans(),
)
@example(body="[" * 100_000, allow_non_json=False, strip=True)
@example(body="1" * 5000, allow_non_json=False, strip=True)
def test_json_plain_is_parse_json(body: str, allow_non_json: bool, strip: bool) -> None:
    """``parse_json_plain`` (what a module calls for JSON with no repair) gives
    parse_json's value, or its error: type and words."""
    args = content_plan("json", {"allow_non_json": allow_non_json, "strip": strip}).args
    assert args["string_delims"] == [] and args["unquoted_key_pattern"] is None

    def run(parse: Any) -> tuple[Any, Any]:
        try:
            return "value", parse(body, args)
        except Exception as exc:  # noqa: BLE001 -- the exception is the observation
            return type(exc), str(exc)

    ours, general = run(content.parse_json_plain), run(content.parse_json)
    if ours[0] == "value" and general[0] == "value":
        assert same(ours[1], general[1])
    else:
        assert ours == general
