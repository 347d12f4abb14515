"""The ``typed-values`` extension's parser: xml-inline whose tags say how to read their value.

``parse_xml_typed`` is ``parse_xml_inline`` with the value parser picked per tag by the
text of one named group. So, on any body:

* with every text mapped to the field's own ``value_parser`` it gives exactly what
  transformers' ``xml-inline`` gives (the reference is the oracle);
* with texts mapped to ``json`` it gives each tag's value read by that parser, and the
  others raw;
* the work it adds to the tag search is one parser call per tag, over that tag's value
  only: counted, never timed.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing.content_parsers import parse_content

from rtcompiler.automata import compile_regex
from rtcompiler.codegen.content import build_parser, content_plan
from rtcompiler.runtime.content import parse_xml_typed

TAG = r'<p name="(?P<key>[^"]*)" kind="(?P<kind>[a-z]*)">(?P<value>.*?)</p>'
KINDS = ["raw", "json", "num", ""]


def plan(value_parser=None, parsers=None, merge=False):
    args = {"tag_pattern": TAG, "merge_duplicates": merge,
            "typed_values": {"group": "kind", "parsers": parsers or {}}}
    if value_parser is not None:
        args["value_parser"] = value_parser
    return content_plan("xml-inline", args)


values = st.one_of(
    st.text(alphabet='ab 1"<>/\n', max_size=6),
    st.builds(json.dumps, st.one_of(st.integers(), st.booleans(), st.none(),
                                    st.lists(st.integers(), max_size=2))),
)
tags = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(KINDS), values)
bodies = st.tuples(st.lists(tags, max_size=6), st.text(alphabet="x \n<", max_size=4))


def render(parts):
    items, junk = parts
    return junk.join(f'<p name="{k}" kind="{kind}">{v}</p>' for k, kind, v in items)


@settings(max_examples=300, deadline=None, database=None)
@given(bodies, st.sampled_from([None, {"name": "text"}, {"name": "json",
                                                          "args": {"allow_non_json": True}}]),
       st.booleans())
def test_one_parser_for_every_text_is_the_references_xml_inline(parts, value_parser, merge):
    body = render(parts)
    same = {kind: value_parser for kind in KINDS[:2]}
    ours = build_parser(plan(value_parser, same, merge))
    args = {"tag_pattern": TAG, "merge_duplicates": merge}
    if value_parser is not None:
        args["value_parser"] = value_parser
    try:
        want = ("ok", parse_content(body, "xml-inline", args))
    except ValueError as e:
        want = ("error", type(e).__name__)
    try:
        got = ("ok", ours(body))
    except ValueError as e:
        got = ("error", type(e).__name__)
    assert json.dumps(got) == json.dumps(want)


@settings(max_examples=300, deadline=None, database=None)
@given(bodies)
def test_each_tag_is_read_by_its_own_parser(parts):
    body = render(parts)
    parse = build_parser(plan(None, {"json": {"name": "json"}, "num": {"name": "float"}}))
    want: dict = {}
    outcome = None
    for key, kind, value in parts[0]:
        try:
            want[key] = json.loads(value) if kind == "json" else (
                float(value.strip()) if kind == "num" else value)
        except ValueError:
            outcome = "error"
    if outcome == "error" or "</p" in "".join(v for _, _, v in parts[0]):
        return  # a value that fails, or one the tag pattern cuts short: covered elsewhere
    assert parse(body) == want


def test_the_added_work_is_one_call_per_tag_over_its_value():
    finditer = compile_regex(TAG).group_finditer
    for n in (200, 800, 3200):
        body = "".join(f'<p name="k{i}" kind="{KINDS[i % 3]}">{i}</p>\n' for i in range(n))
        seen = {"calls": 0, "chars": 0}

        def counted(read, seen=seen):
            def parse(text):
                seen["calls"] += 1
                seen["chars"] += len(text)
                return read(text)
            return parse

        out = parse_xml_typed(
            body, {"tag_pattern": TAG, "merge_duplicates": False, "typed_group": "kind"},
            finditer, counted(str), {"json": counted(json.loads), "num": counted(float)})
        assert len(out) == n
        assert seen["calls"] == n
        assert seen["chars"] == sum(len(str(i)) for i in range(n)) < len(body)


# Kimi K3 escapes attribute values: "&" as "&amp;", then '"' as "&quot;". Its grammar
# decodes a key with key_entities, in the reverse order.
KIMI_ENTITIES = [["&quot;", '"'], ["&amp;", "&"]]


def _kimi_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")


def test_key_entities_are_replaced_in_order():
    args = {"tag_pattern": TAG, "merge_duplicates": False,
            "typed_values": {"group": "kind", "parsers": {}, "key_entities": KIMI_ENTITIES}}
    parse = build_parser(content_plan("xml-inline", args))
    body = '<p name="a&quot;b&amp;c" kind="raw">1</p><p name="&amp;quot;" kind="raw">2</p>'
    # "&amp;quot;" is an escaped "&quot;": decoded "&quot;" first, it stays "&amp;quot;"
    # until "&amp;" gives "&quot;" back, as written.
    assert parse(body) == {'a"b&c': "1", "&quot;": "2"}
    without = dict(args, typed_values={"group": "kind", "parsers": {}})
    assert build_parser(content_plan("xml-inline", without))(body) == {
        "a&quot;b&amp;c": "1", "&amp;quot;": "2"}


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.text(alphabet='ab"&;qutmp', min_size=1, max_size=8), max_size=4, unique=True))
def test_an_escaped_key_comes_back_as_it_was(keys):
    args = {"tag_pattern": r'<p name="(?P<key>[^"]*)" kind="(?P<kind>[a-z]*)">(?P<value>.*?)</p>',
            "merge_duplicates": False,
            "typed_values": {"group": "kind", "parsers": {}, "key_entities": KIMI_ENTITIES}}
    parse = build_parser(content_plan("xml-inline", args))
    body = "".join(f'<p name="{_kimi_escape(k)}" kind="raw">{i}</p>' for i, k in enumerate(keys))
    assert parse(body) == {k: str(i) for i, k in enumerate(keys)}
