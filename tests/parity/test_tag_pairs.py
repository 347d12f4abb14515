"""Backreference tag patterns in xml-inline: the reference's answers, in linear time.

``<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>`` (or ``</\\1>``) is the natural way to
write shallow XML, and transformers' own tests use it. The generated parser runs
such a pattern as a chain of literals (rtcompiler/automata/chain.py); these tests
compare it with transformers on random tag-pair templates and bodies, run the
reference's own test case, and check that a backreference we cannot match in
linear time is refused when the template compiles, naming the field and column.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler.codegen import generate_module, load_parser
from rtcompiler.template import TemplateError, load_template

CHECK = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

PAIRS = [
    r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>",
    r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>",
    r"\[(?P<key>[a-z_]+)\]\n?(?P<value>.*?)\n?\[/(?P=key)\]",
    r"<arg name=(?P<key>[\w.]+)>(?P<value>.*?)</arg:\1>",
]
KEYS = ["city", "a", "b", "unit", "x_1", "é", "a.b"]


def _template(pattern: str, merge: bool, value_parser: bool) -> dict:
    args: dict = {"tag_pattern": pattern}
    if merge:
        args["merge_duplicates"] = True
    if value_parser:
        args["value_parser"] = {"name": "json", "args": {"allow_non_json": True}}
    return {
        "start_anchor": "<s>",
        "fields": {
            "call": {"open": "<x>", "close": "</x>", "content": "xml-inline", "content_args": args},
            "content": {},
        },
    }


def _tag(pattern: str, key: str, closing: bool) -> str:
    if pattern.startswith("\\["):
        return f"[/{key}]" if closing else f"[{key}]"
    if pattern.startswith("<arg"):
        return f"</arg:{key}>" if closing else f"<arg name={key}>"
    return f"</{key}>" if closing else f"<{key}>"


@st.composite
def bodies(draw, pattern: str) -> str:
    """Tags of a few keys, closed, unclosed, mismatched or nested, around values."""
    parts = []
    for _ in range(draw(st.integers(0, 6))):
        key = draw(st.sampled_from(KEYS))
        how = draw(st.sampled_from(["pair", "pair", "pair", "open", "close", "text"]))
        value = draw(st.sampled_from(["7", " Paris ", "\n1.5\n", "", "  ", '{"a": 1}', "x<y", "<"]))
        if how == "pair":
            parts.append(_tag(pattern, key, False) + value + _tag(pattern, key, True))
        elif how == "open":
            parts.append(_tag(pattern, key, False) + value)
        elif how == "close":
            parts.append(value + _tag(pattern, key, True))
        else:
            parts.append(value)
    return "".join(parts)


def _outcome(parse, text: str):
    try:
        return "ok", parse(text)
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return "error", type(e).__name__


@CHECK
@given(st.data())
def test_tag_pairs_parse_as_the_reference(data) -> None:
    pattern = data.draw(st.sampled_from(PAIRS), label="pattern")
    spec = _template(pattern, data.draw(st.booleans()), data.draw(st.booleans()))
    module = load_parser(load_template(spec))
    body = data.draw(bodies(pattern), label="body")
    text = f"before<x>{body}</x>after"
    ours = _outcome(lambda t: module.parse_response(t, prefix=""), text)
    ref = _outcome(lambda t: ref_parse_response(t, spec, prefix=""), text)
    assert ours == ref, (pattern, text)


def test_the_references_own_backreference_case() -> None:
    # transformers' tests/utils/test_chat_parsing.py, test_non_tool_call_regions_are_untouched.
    spec = {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "citation": {
                "open_pattern": r"<cite source=(?P<name>\w+)>",
                "close": "</cite>",
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": r"<(?P<key>\w+)>\s*(?P<value>.*?)\s*</\1>",
                    "value_parser": {"name": "json", "args": {"allow_non_json": True}},
                },
                "transform": {"source": "{name}", "fields": "{content}"},
            },
        },
    }
    text = "<cite source=set_alarm><label>1.50</label><hour>7</hour></cite>"
    module = load_parser(load_template(spec))
    ours = module.parse_response(text, prefix="")
    assert ours == ref_parse_response(text, spec, prefix="")
    assert ours["citation"] == {"source": "set_alarm", "fields": {"label": 1.5, "hour": 7}}


def test_a_backreference_outside_the_pair_shape_is_refused_at_compile() -> None:
    spec = _template(r"<(?P<key>[^>]+)>(?P<value>.*?)</(?P=key)>", False, False)
    with pytest.raises(TemplateError) as info:
        generate_module(load_template(spec))
    message = str(info.value)
    assert message.startswith("fields.call.content_args.tag_pattern:")
    assert "backreference" in message and "column 32" in message
