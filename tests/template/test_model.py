"""The model's own promises: delimiter forms and order, regex sources our dialect reads,
the template hash, and that the model is independent of the spec it came from."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.dialect import parse_pattern
from rtcompiler.template import Delimiter, Field, TemplateError, load_template
from rtcompiler.template.load import MAX_DEPTH

from .reference import reference_outcome

QWEN: dict[str, Any] = {
    "start_anchor": "<|im_start|>assistant\n",
    "defaults": {"role": "assistant"},
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {},
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<parameter=(?P<key>\w+)>(?P<value>.*?)</parameter>"},
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
    },
}


def test_a_real_template() -> None:
    t = load_template(QWEN)
    assert [f.name for f in t.fields] == ["reasoning_content", "content", "tool_calls"]
    assert t.implicit == "content" and t.field("content").is_implicit
    assert t.defaults == {"role": "assistant"}
    calls = t.field("tool_calls")
    assert (
        calls.open is not None
        and calls.open.pattern == QWEN["fields"]["tool_calls"]["open_pattern"]
    )
    assert calls.open.group_names == ("name",) and calls.capture_names == ("name",)
    assert calls.close == Delimiter(literals=("</tool_call>",))
    assert calls.repeats and calls.optional and calls.content == "xml-inline"
    assert t.start_anchor.literals == ("<|im_start|>assistant\n",)
    with pytest.raises(KeyError):
        t.field("nope")


def test_literal_order_and_extension() -> None:
    d = Delimiter.from_literals(["<b>", "<tool", "<a>", "<tool", "<tool_call>"])
    # deduplicated, longest first, equal lengths in written order
    assert d.literals == ("<tool_call>", "<tool", "<b>", "<a>")
    assert d.can_extend  # "<tool" is a strict prefix of "<tool_call>"
    assert not Delimiter.from_literals(["<a>", "<a>", "<b>", "<tool>", "<tool_call>"]).can_extend
    assert d.regex_source == "<tool_call>|<tool|<b>|<a>"


def test_defaults_for_implicit_field() -> None:
    f = load_template({"start_anchor": "x", "fields": {"c": {}}}).field("c")
    assert f == Field(name="c", open=None, close=None)
    assert (f.content, f.content_args, f.repeats, f.join, f.optional) == (
        "text",
        {},
        False,
        None,
        True,
    )
    assert (f.transform, f.transform_each) == (None, False)


def test_delimiter_invariants() -> None:
    with pytest.raises(ValueError):
        Delimiter()
    with pytest.raises(ValueError):
        Delimiter(literals=("a",), pattern="a")
    with pytest.raises(ValueError):
        Delimiter(literals=("",))
    with pytest.raises(ValueError):
        Delimiter(literals=())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=5))
def test_literal_regex_source_is_in_the_dialect_and_matches_like_the_reference(
    literals: list[str],
) -> None:
    d = Delimiter.from_literals(literals)
    parse_pattern(d.regex_source)  # raises if our dialect cannot read it
    ref = reference_outcome({"start_anchor": literals, "fields": {"c": {}}}).template
    assert d.regex_source == ref.start_anchor_re.pattern
    compiled = regex.compile(d.regex_source, regex.DOTALL)
    for s in literals:
        assert compiled.fullmatch(s)
    # The first alternative that matches at a position is the longest literal there.
    for s in literals:
        m = compiled.match(s)
        assert m is not None
        assert m.group() == max((x for x in literals if s.startswith(x)), key=len)


def test_sha256_is_of_canonical_json() -> None:
    t = load_template(QWEN)
    canonical = json.dumps(QWEN, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert t.canonical_json == canonical
    assert t.sha256 == hashlib.sha256(canonical.encode()).hexdigest()
    reordered = {k: QWEN[k] for k in reversed(list(QWEN))}
    assert load_template(reordered).sha256 == t.sha256
    changed = json.loads(json.dumps(QWEN))
    changed["fields"]["reasoning_content"]["close"] = "</think>\n"
    assert load_template(changed).sha256 != t.sha256


def test_sha256_of_lone_surrogate() -> None:
    t = load_template({"start_anchor": "\ud800", "fields": {"c": {}}})
    assert len(t.sha256) == 64


def test_model_does_not_share_the_callers_spec() -> None:
    spec: dict[str, Any] = json.loads(json.dumps(QWEN))
    t = load_template(spec)
    before = t.sha256
    spec["fields"]["tool_calls"]["transform"]["type"] = "changed"
    spec["defaults"]["role"] = "user"
    assert t.field("tool_calls").transform["type"] == "function"
    assert t.defaults == {"role": "assistant"}
    # ...and the model's own dicts are not the raw spec's either.
    t.field("tool_calls").transform["type"] = "mutated"
    t.defaults["role"] = "mutated"
    assert t.sha256 == before


def test_field_order_is_declaration_order() -> None:
    names = ["z", "a", "m", "tool_calls", "b"]
    spec = {"start_anchor": "x", "fields": {n: {"open": f"<{n}>"} for n in names}}
    assert [f.name for f in load_template(spec).fields] == names
    assert load_template(spec).implicit is None


def test_depth_limit() -> None:
    deep: Any = "{content}"
    for _ in range(MAX_DEPTH + 10):
        deep = [deep]
    spec = {"start_anchor": "x", "fields": {"f": {"transform": deep}}}
    assert reference_outcome(spec).verdict == "accept"  # a documented difference
    with pytest.raises(TemplateError) as caught:
        load_template(spec)
    assert caught.value.path.startswith("fields.f.transform[0]")
    ok: Any = "{content}"
    for _ in range(MAX_DEPTH - 5):
        ok = [ok]
    load_template({"start_anchor": "x", "fields": {"f": {"transform": ok}}})
