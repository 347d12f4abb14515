"""``tags_only`` and ``recover_tag_pattern``, the ``recover`` extension's options for
``xml-inline`` fields (docs/extensions.md), and how a recovered body is cut at the
implicit field's closes.

* A body its tags do not read whole (text between them, a key given twice, a tag that
  swallowed the opening of another) fails and is recovered, whole and split anywhere.
* Where the body is tags and whitespace only, the result is the reference's
  (hypothesis, against transformers).
* The second pattern runs only on a body the first did not read whole; the work of each
  is counted, never timed.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler import compile_template
from rtcompiler.codegen import load_parser
from rtcompiler.grammars import strict_spec
from rtcompiler.template import TemplateError, load_template

from .test_recover import assert_everywhere, call, run

TAG = r"<parameter=(?P<key>\w+)>(?P<value>.*?)</parameter>"
# Also ends a value at the next tag's opening or at the end of the body.
SECOND = r"<parameter=(?P<key>\w+)>(?P<value>.*?)(?:</parameter>|(?=<parameter=)|\Z)"

SPEC = {
    "extensions": ["recover"],
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open_pattern": r"\s*<function=(?P<name>\w+)>", "close": "</function>",
            "content": "xml-inline", "content_args": {"tag_pattern": TAG},
            "repeats": True, "recover": True, "tags_only": True,
            "transform": {"type": "function",
                          "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": ["<|im_end|>", "<marker>"], "repeats": True, "join": "\n\n"},
    },
}


def module_of(spec: dict) -> Any:
    return load_parser(load_template(spec))


def with_field(**keys: Any) -> dict:
    spec = copy.deepcopy(SPEC)
    field = spec["fields"]["tool_calls"]
    for key, value in keys.items():
        if value is None:
            field.pop(key, None)
        else:
            field[key] = value
    return spec


MODULE = module_of(SPEC)
STRICT = module_of(strict_spec(SPEC))
SECOND_MODULE = module_of(with_field(recover_tag_pattern=SECOND))


# -- what tags_only refuses -------------------------------------------------------------


def test_text_between_the_tags_fails_and_the_body_is_recovered():
    text = "a<function=f><parameter=x>1</parameter> oops </function>b<|im_end|>"
    assert_everywhere(MODULE, text, {"content": "a\n\n<parameter=x>1</parameter> oops\n\nb"})
    # The reference (the strict form) returns a call that drops the text without a word.
    assert STRICT.parse_response(text, prefix="") == {
        "content": "a\n\nb", "tool_calls": [call("f", x="1")]}


def test_text_before_the_first_tag_or_after_the_last_fails():
    for body in ("x<parameter=a>1</parameter>", "<parameter=a>1</parameter>x"):
        text = f"<function=f>{body}</function>"
        assert_everywhere(MODULE, text, {"content": body})
        assert STRICT.parse_response(text, prefix="") == {"tool_calls": [call("f", a="1")]}


def test_whitespace_and_stray_closing_tags_between_tags_are_no_text():
    text = ("<function=f>\n <parameter=a>1</parameter>\n</parameter>\n"
            "<parameter=b>2</parameter></parameter>\n</function>")
    assert_everywhere(MODULE, text, {"tool_calls": [call("f", a="1", b="2")]})


def test_a_body_without_tags_fails_unless_blank():
    assert_everywhere(MODULE, "<function=f>no tags</function>", {"content": "no tags"})
    assert_everywhere(MODULE, "<function=f> \n </function>", {"tool_calls": [call("f")]})


def test_a_key_given_twice_fails_unless_duplicates_merge():
    text = "<function=f><parameter=a>1</parameter><parameter=a>2</parameter></function>"
    assert_everywhere(MODULE, text, {
        "content": "<parameter=a>1</parameter><parameter=a>2</parameter>"})
    merged = with_field(content_args={"tag_pattern": TAG, "merge_duplicates": True})
    assert_everywhere(module_of(merged), text, {"tool_calls": [call("f", a=["1", "2"])]})


def test_a_tag_that_swallowed_the_opening_of_another_fails():
    # The first tag's value runs over the second tag's opening: every character is
    # read by a tag, but two tags open and one was read.
    text = "<function=f><parameter=a>1<parameter=b>2</parameter></function>"
    assert STRICT.parse_response(text, prefix="") == {
        "tool_calls": [call("f", a="1<parameter=b>2")]}
    assert_everywhere(MODULE, text, {"content": "<parameter=a>1<parameter=b>2</parameter>"})


def test_the_failure_says_what_is_wrong():
    cases = {
        "<parameter=a>1</parameter>zz": "xml-inline: text outside the tags at 26: 'zz'",
        "<parameter=a>1</parameter><parameter=a>2</parameter>": "xml-inline: 'a' given twice",
        "<parameter=a><parameter=b>2</parameter>":
            "xml-inline: 2 tags open ('<parameter='), 1 read: a tag's text holds the "
            "opening of another",
    }
    for body, error in cases.items():
        _, events = run(MODULE, f"<function=f>{body}</function>")
        closes = [e for e in events if e["type"] == "region_close" and e["field"] == "tool_calls"]
        assert closes == [{"type": "region_close", "field": "tool_calls", "value": None,
                           "error": error}]


def test_typed_values_are_held_to_it_too():
    spec = with_field(content_args={
        "tag_pattern": r'<arg key="(?P<key>\w+)" json="(?P<json>[01])">(?P<value>.*?)</arg>',
        "typed_values": {"group": "json", "parsers": {"1": {"name": "json"}}}})
    spec["extensions"] = ["recover", "typed-values"]
    module = module_of(spec)
    good = '<function=f><arg key="a" json="1">[1]</arg> <arg key="b" json="0">x</arg></function>'
    assert_everywhere(module, good, {"tool_calls": [call("f", a=[1], b="x")]})
    bad = '<function=f><arg key="a" json="1">[1]</arg> b </function>'
    assert_everywhere(module, bad, {"content": '<arg key="a" json="1">[1]</arg> b'})


# -- recover_tag_pattern ------------------------------------------------------------------


def _counting(module: Any) -> list[int]:
    """Wrap each tag pattern's finditer and split of ``module`` to count their calls."""
    calls = [0] * len(module._TAGS)
    for k, tag in enumerate(module._TAGS):
        for name in ("group_finditer", "group_split"):
            read = getattr(tag, name)

            def counted(body: str, k: int = k, read: Any = read) -> Any:
                calls[k] += 1
                return read(body)

            setattr(tag, name, counted)
    return calls


def test_the_second_pattern_reads_a_body_the_first_did_not_read_whole():
    text = "<function=f><parameter=a>1<parameter=b>2</function>x<|im_end|>"
    assert_everywhere(SECOND_MODULE, text, {
        "tool_calls": [call("f", a="1", b="2")], "content": "x"})
    # What the second pattern cannot read whole either is recovered.
    bad = "<function=f><parameter=a>1</parameter> b </function>"
    assert_everywhere(SECOND_MODULE, bad, {"content": "<parameter=a>1</parameter> b"})


def test_the_second_pattern_runs_only_on_a_body_the_first_did_not_read_whole():
    module = module_of(with_field(recover_tag_pattern=SECOND))
    calls = _counting(module)
    good = "<function=f><parameter=a>1</parameter></function>" * 5
    assert module.parse_response(good, prefix="") == {"tool_calls": [call("f", a="1")] * 5}
    assert sorted(calls) == [0, 5]  # one split of each body
    calls[:] = [0] * len(calls)
    bad = "<function=f><parameter=a>1<parameter=b>2</function>" * 5
    assert module.parse_response(bad, prefix="") == {"tool_calls": [call("f", a="1", b="2")] * 5}
    # The first pattern's split, then its loop (which finds the failure), then the second.
    assert calls == [10, 5]


SIZES = (2_000, 8_000, 32_000)


def test_reading_a_long_body_again_costs_linear_work():
    # Every tag but the last lacks its close: the first pattern's values swallow the
    # other openings, the second pattern (run by our automata, lookahead and all)
    # reads the body once more.
    module = module_of(with_field(recover_tag_pattern=SECOND))
    regex = module._TAGS[1]
    per = []
    for n in SIZES:
        tags = n // 20
        body = "".join(f"<parameter=k{i}>value" for i in range(tags)) + "</parameter>"
        before = regex.live_steps + regex.walk_steps
        message = module.parse_response(f"<function=f>{body}</function>", prefix="")
        assert len(message["tool_calls"][0]["function"]["arguments"]) == tags
        per.append((regex.live_steps + regex.walk_steps - before) / len(body))
    assert max(per) <= 12, per
    assert per[2] <= per[0] * 1.1 + 0.5, per


# -- the recovered body -------------------------------------------------------------------


def test_a_recovered_body_is_cut_where_the_implicit_close_matches_in_it():
    text = "a<function=f><marker> x <marker><marker>y <parameter=a>1</function>b"
    assert_everywhere(MODULE, text, {"content": "a\n\nx\n\ny <parameter=a>1\n\nb"})
    _, events = run(MODULE, text)
    recovered = [e for e in events if e["type"] == "region_chunk" and e["field"] == "content"]
    assert [e["text"] for e in recovered] == ["a", " x ", "y <parameter=a>1", "b"]


# -- against the reference ----------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "city", "x_1"])
BLANK = st.sampled_from(["", " ", "\n", " \n\t"])


@st.composite
def tag_bodies(draw: Any) -> str:
    keys = draw(st.lists(KEYS, unique=True, max_size=4))
    value = st.text(st.characters(exclude_characters="<", exclude_categories=("Cs",)),
                    max_size=8)
    return draw(BLANK) + "".join(
        f"<parameter={k}>{draw(value)}</parameter>" + draw(BLANK) for k in keys)


@settings(max_examples=150, deadline=None)
@given(bodies=st.lists(tag_bodies(), min_size=1, max_size=3),
       before=st.sampled_from(["", "hi ", "x\n"]))
def test_where_the_body_is_tags_and_whitespace_the_message_is_the_references(bodies, before):
    text = before + "".join(f"<function=f>{b}</function>" for b in bodies) + "<|im_end|>"
    plain = {k: v for k, v in strict_spec(SPEC).items() if k != "extensions"}
    want = ref_parse_response(text, plain, prefix="")
    assert MODULE.parse_response(text, prefix="") == want
    assert run(MODULE, text, list(text))[0] == want


# -- the template stage -------------------------------------------------------------------


@pytest.mark.parametrize(("keys", "extensions", "message"), [
    ({"tags_only": True}, [], "'tags_only' is part of the rtcompiler extension 'recover'"),
    ({"tags_only": "yes"}, ["recover"], "must be true or false, got a string"),
    ({"tags_only": True, "content": "json", "content_args": {}}, ["recover"],
     "needs 'content': 'xml-inline', got 'json'"),
    ({"tags_only": True, "recover": False}, ["recover"], "needs 'recover': true"),
    ({"tags_only": None, "recover_tag_pattern": SECOND}, ["recover"],
     "must be a tag pattern (a string), on a field with 'tags_only': true"),
    ({"recover_tag_pattern": 3}, ["recover"], "must be a tag pattern (a string)"),
])
def test_the_template_stage_refuses_a_misuse_naming_the_key(keys, extensions, message):
    spec = with_field(**keys)
    spec["extensions"] = extensions
    if not extensions:
        spec["fields"]["tool_calls"].pop("recover")
    with pytest.raises(TemplateError) as info:
        load_template(spec)
    assert message in str(info.value)
    assert "fields.tool_calls." in str(info.value)


def test_the_strict_form_has_neither_key():
    spec = with_field(recover_tag_pattern=SECOND)
    field = strict_spec(spec)["fields"]["tool_calls"]
    assert not {"recover", "tags_only", "recover_tag_pattern"} & set(field)
    assert "extensions" not in strict_spec(spec)


def test_a_second_pattern_outside_our_dialect_is_refused_by_its_name():
    with pytest.raises(TemplateError) as info:
        compile_template(with_field(recover_tag_pattern=r"<p=(?P<key>\w+)>(?<=x)"))
    assert str(info.value).startswith("fields.tool_calls.recover_tag_pattern: unsupported "
                                      "lookbehind")


# -- one split of the body, where it reads the body whole ------------------------------------
# A body that passes the checks is read from one C call (the tag pattern's split), not a
# Python step per tag; any other falls back to the loop, which says what is wrong.

SPLIT_PATTERNS = [
    TAG,
    r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)(?:\n?</parameter>|\n</function>)",
    r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>",  # a chain (a backreference)
    r"<flag=(?P<key>\w+)/>",  # no value group: each value is ""
]
PIECES = st.sampled_from([
    "<parameter=a>1</parameter>", "<parameter=b>x y</parameter>", "<parameter=a>2</parameter>",
    "<parameter=c>\nv\n</parameter>", "<parameter=d>", "</parameter>", "</function>", "<a>1</a>",
    "<b>2</b>", "<flag=a/>", "<flag=b/>", " ", "\n", "zz", "</para", "meter>", "<parameter=",
])


def _outcome(read: Any, body: str) -> Any:
    try:
        return read(body)
    except (ValueError, TypeError) as exc:
        return type(exc), str(exc)


@settings(max_examples=300, deadline=None)
# Two gaps that would make up a closing tag if they were joined end to end.
@example(pattern=TAG, pieces=["</para", "<parameter=a>1</parameter>", "meter>"], merge=False)
@given(pattern=st.sampled_from(SPLIT_PATTERNS), pieces=st.lists(PIECES, max_size=8),
       merge=st.booleans())
def test_the_split_gives_what_the_loop_gives(pattern, pieces, merge):
    from rtcompiler.automata import compile_tag_pattern
    from rtcompiler.codegen.content import content_plan, splits_tags
    from rtcompiler.runtime.content import parse_xml_inline

    plan = content_plan(
        "xml-inline", {"tag_pattern": pattern, "merge_duplicates": merge}, tags_only=True)
    assert splits_tags(plan)
    tag = compile_tag_pattern(pattern)
    body = "".join(pieces)
    split = _outcome(
        lambda b: parse_xml_inline(b, plan.args, tag.group_finditer, None, tag.group_split), body)
    loop = _outcome(lambda b: parse_xml_inline(b, plan.args, tag.group_finditer, None), body)
    assert split == loop


def test_a_body_of_tags_is_read_without_the_loop(monkeypatch):
    from rtcompiler.codegen.content import build_parser, content_plan
    from rtcompiler.runtime import content as runtime

    plan = content_plan("xml-inline", {"tag_pattern": TAG}, tags_only=True)
    read = build_parser(plan)
    body = "<parameter=a>1</parameter>\n<parameter=b>2</parameter></parameter>\n"
    looped = []
    real = runtime._xml_inline_tags_only
    monkeypatch.setattr(runtime, "_xml_inline_tags_only",
                        lambda *a: looped.append(a) or real(*a))
    assert read(body) == {"a": "1", "b": "2"}
    assert looped == []
    # A body that fails a check is read again by the loop, which names the failure.
    with pytest.raises(ValueError, match="text outside the tags"):
        read(body + "zz")
    assert len(looped) == 1


def test_closing_tags_with_whitespace_are_never_split():
    from rtcompiler.codegen.content import content_plan, splits_tags

    spaced = r"<p (?P<key>\w+)>(?P<value>.*?)</p >"
    plan = content_plan("xml-inline", {"tag_pattern": spaced}, tags_only=True)
    assert plan.args["tags_closers"] == ["</p >"]
    assert not splits_tags(plan)


def test_the_generated_module_splits_a_tags_only_body():
    source = compile_template(SPEC).source
    assert "].group_split)" in source
    assert "].group_split)" not in compile_template(strict_spec(SPEC)).source
