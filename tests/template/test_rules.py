"""One test per validation rule: we raise ``TemplateError`` at the right path, and
transformers raises ``ValueError`` for the same spec.

Also pinned here: what the reference accepts although it looks wrong (we accept it
too), and the deliberate differences (the reference crashes, or accepts a pattern
or a value that we cannot take).
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from rtcompiler.template import Template, TemplateError, UnsupportedPatternError, load_template
from rtcompiler.template.load import CONTENT_PARSERS, FIELD_KEYS, TEMPLATE_KEYS

from .reference import REFERENCE_CONTENT_PARSERS, json_copy, path_agrees, reference_outcome


def spec(fields: Any = None, **top: Any) -> dict[str, Any]:
    """A minimal valid template, changed by ``top`` (top-level keys) and ``fields``."""
    out: dict[str, Any] = {"start_anchor": "<|assistant|>"}
    out["fields"] = {"content": {}} if fields is None else fields
    out.update(top)
    return out


def field(**keys: Any) -> dict[str, Any]:
    """A spec whose single field ``f`` has ``keys``."""
    return spec({"f": keys})


TOOL = {"open": "<tool_call>", "close": "</tool_call>", "content": "json"}

# (id, spec, path of the error)
RULES: list[tuple[str, Any, str]] = [
    # the template as a whole
    ("not-a-dict", ["fields"], ""),
    ("not-a-dict-null", None, ""),
    ("version-2", spec(version=2), "version"),
    ("version-string", spec(version="1"), "version"),
    ("version-null", spec(version=None), "version"),
    ("unknown-top-level-key", spec(start_anchors="x"), "start_anchors"),
    ("defaults-not-dict", spec(defaults=[["role", "assistant"]]), "defaults"),
    ("defaults-null", spec(defaults=None), "defaults"),
    ("fields-missing", {"start_anchor": "a"}, "fields"),
    ("fields-empty", spec({}), "fields"),
    ("fields-not-dict", spec(fields=[{"open": "a"}]), "fields"),
    # a field's shape
    ("field-not-dict", spec({"content": "text"}), "fields.content"),
    ("field-null", spec({"content": None}), "fields.content"),
    ("unknown-field-key", field(open="a", parser="json"), "fields.f.parser"),
    ("unknown-content-parser", field(content="yaml"), "fields.f.content"),
    ("content-parser-null", field(content=None), "fields.f.content"),
    ("content-parser-case", field(content="JSON"), "fields.f.content"),
    # delimiters
    ("open-and-open-pattern", field(open="a", open_pattern="a"), "fields.f"),
    ("close-and-close-pattern", field(close="a", close_pattern="a"), "fields.f"),
    ("literal-not-str-or-list", field(open={"text": "a"}), "fields.f.open"),
    ("literal-null", field(close=None), "fields.f.close"),
    ("literal-empty-list", field(open=[]), "fields.f.open"),
    ("literal-list-non-str", field(open=["a", 1]), "fields.f.open[1]"),
    ("literal-empty-string", field(close=""), "fields.f.close"),
    ("literal-empty-string-in-list", field(open=["a", ""]), "fields.f.open[1]"),
    ("invalid-regex", field(open_pattern="<tool_call(>"), "fields.f.open_pattern"),
    ("invalid-regex-repeat", field(close_pattern="a{4294967296}"), "fields.f.close_pattern"),
    ("invalid-regex-group-name", field(open_pattern="(?P<1>x)"), "fields.f.open_pattern"),
    # join, transform_each, transform
    ("join-not-str", field(open="a", repeats=True, join=1), "fields.f.join"),
    ("join-without-repeats", field(open="a", join="\n"), "fields.f"),
    ("join-with-falsy-repeats", field(open="a", join="\n", repeats=0), "fields.f"),
    (
        "transform-each-not-bool",
        field(transform="{content}", transform_each=1),
        "fields.f.transform_each",
    ),
    ("transform-each-null", field(transform_each=None), "fields.f.transform_each"),
    ("transform-each-without-transform", field(transform_each=True), "fields.f"),
    ("transform-each-null-transform", field(transform_each=True, transform=None), "fields.f"),
    (
        "mixed-placeholder",
        spec({"tool_calls": {**TOOL, "transform": {"function": {"name": "fn_{content.name}"}}}}),
        "fields.tool_calls.transform.function.name",
    ),
    ("mixed-two-placeholders", field(transform=["{a}{b}"]), "fields.f.transform[0]"),
    ("mixed-escaped-braces", field(transform="{{content}}"), "fields.f.transform"),
    ("mixed-unicode-digit", field(transform="{٣} x"), "fields.f.transform"),
    ("mixed-combining-mark", field(transform="{\u0300}!"), "fields.f.transform"),
    (
        "named-group-without-transform",
        field(open_pattern=r"<function=(?P<name>\w+)>"),
        "fields.f.open_pattern",
    ),
    (
        "named-group-in-close-without-transform",
        field(open="a", close_pattern=r"(?P<end>\.)"),
        "fields.f.close_pattern",
    ),
    (
        "named-group-with-null-transform",
        field(open_pattern=r"(?P<name>\w+):", transform=None),
        "fields.f.open_pattern",
    ),
    # across fields, and the start anchor
    ("two-implicit-fields", spec({"content": {}, "reasoning_content": {"close": "x"}}), "fields"),
    ("no-start-anchor", {"fields": {"content": {}}}, ""),
    ("both-start-anchors", spec(start_anchor_pattern="a"), ""),
    ("start-anchor-empty", spec(start_anchor=""), "start_anchor"),
    ("start-anchor-not-str", spec(start_anchor=1), "start_anchor"),
    ("start-anchor-empty-list", spec(start_anchor=[]), "start_anchor"),
    (
        "start-anchor-bad-regex",
        {"start_anchor_pattern": "[", "fields": {"c": {}}},
        "start_anchor_pattern",
    ),
    ("dotted-field-name-path", spec({"a.b": {"open": 0}}), 'fields["a.b"].open'),
]


@pytest.mark.parametrize(("spec_", "path"), [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_rule(spec_: Any, path: str) -> None:
    with pytest.raises(TemplateError) as caught:
        load_template(json_copy(spec_))
    error = caught.value
    assert not isinstance(error, UnsupportedPatternError)
    assert error.path == path
    assert str(error).startswith(f"{path or 'template'}: ")
    ref = reference_outcome(json_copy(spec_))
    assert ref.verdict == "reject", ref
    assert path_agrees(str(ref.error), error.path, spec_)


def test_error_message_names_rule_and_path() -> None:
    with pytest.raises(TemplateError) as caught:
        load_template(field(open="<a>", join=", "))
    assert str(caught.value) == "fields.f: 'join' requires 'repeats': true"


def test_first_broken_rule_is_the_references() -> None:
    # Broken twice: unknown content parser (checked first) and an empty open literal.
    broken = spec({"ok": {"open": "x"}, "bad": {"content": "yaml", "open": ""}}, version=1)
    with pytest.raises(TemplateError) as caught:
        load_template(broken)
    assert caught.value.path == "fields.bad.content"
    assert "Field 'bad': unknown content parser" in str(reference_outcome(broken).error)


def test_known_keys_and_parsers_match_the_reference() -> None:
    assert set(CONTENT_PARSERS) == REFERENCE_CONTENT_PARSERS
    assert TEMPLATE_KEYS == {
        "version",
        "defaults",
        "fields",
        "start_anchor",
        "start_anchor_pattern",
    }
    example = {
        "open": "a",
        "open_pattern": "a",
        "close": "b",
        "close_pattern": "b",
        "content": "json",
        "content_args": {"allow_non_json": True},
        "repeats": True,
        "join": "",
        "optional": False,
        "transform": "{content}",
        "transform_each": False,
    }
    assert set(example) == FIELD_KEYS
    for key, value in example.items():
        one = field(**{key: value}, **({"repeats": True} if key == "join" else {}))
        assert reference_outcome(one).verdict == "accept", key
        load_template(one)


# -- accepted although it looks wrong: the reference does not check these ---------------

SLOPPY_BUT_ACCEPTED = [
    ("version-true", spec(version=True)),
    ("version-float", spec(version=1.0)),
    ("repeats-string-no", field(open="a", repeats="no", join=",")),
    ("repeats-list", field(open="a", repeats=[0])),
    ("optional-number", field(optional=0)),
    ("content-args-number", field(content_args=5)),
    ("content-args-null", field(content_args=None)),
    ("xml-inline-without-tag-pattern", field(content="xml-inline")),
    ("xml-inline-bad-tag-pattern", field(content="xml-inline", content_args={"tag_pattern": "("})),
    (
        "value-parser-unknown",
        field(content="kv-lines", content_args={"value_parser": {"name": "?"}}),
    ),
    ("join-null", field(join=None)),
    ("transform-null", field(transform=None)),
    ("transform-each-false-without-transform", field(transform_each=False)),
    ("transform-keys-are-not-checked", field(transform={"x {content}": "{content}"})),
    ("transform-not-a-placeholder", field(transform=["{a.}", "{}", "{a b}", "{", "{-}"])),
    ("transform-number", field(transform=3)),
    ("transform-each-on-scalar-transform", field(transform="{content}", transform_each=True)),
    ("duplicate-literals", field(open=["<a>", "<a>", "<b>"])),
    ("empty-pattern", field(open_pattern="")),
    ("named-groups-in-start-anchor", {"start_anchor_pattern": "(?P<x>a)", "fields": {"c": {}}}),
    ("duplicate-group-names", field(open_pattern="(?P<a>x)|(?P<a>y)", transform="{a}")),
    ("defaults-anything", spec(defaults={"content": [1, {"x": None}], "": 2.5})),
    ("field-named-empty", spec({"": {}})),
    ("implicit-field-with-pattern-close", spec({"c": {"close_pattern": r"\n+"}})),
]


@pytest.mark.parametrize(
    "spec_", [s for _, s in SLOPPY_BUT_ACCEPTED], ids=[i for i, _ in SLOPPY_BUT_ACCEPTED]
)
def test_accepted_like_the_reference(spec_: Any) -> None:
    assert reference_outcome(json_copy(spec_)).verdict == "accept"
    assert isinstance(load_template(json_copy(spec_)), Template)


# -- deliberate differences -------------------------------------------------------------

REFERENCE_CRASHES = [
    ("content-list", field(content=[]), "fields.f.content", "TypeError"),
    ("content-object", field(content={"name": "json"}), "fields.f.content", "TypeError"),
    ("open-pattern-number", field(open_pattern=5), "fields.f.open_pattern", "TypeError"),
    (
        "close-pattern-null",
        field(open="a", close_pattern=None),
        "fields.f.close_pattern",
        "TypeError",
    ),
    ("open-pattern-list", field(open_pattern=["a"]), "fields.f.open_pattern", "TypeError"),
    (
        "start-anchor-pattern-null",
        {"start_anchor_pattern": None, "fields": {"c": {}}},
        "start_anchor_pattern",
        "TypeError",
    ),
    (
        "pattern-too-deep-for-regex",
        field(open_pattern="(" * 2000 + ")" * 2000),
        "fields.f.open_pattern",
        "RecursionError",
    ),
]


@pytest.mark.parametrize(
    ("spec_", "path", "crash"),
    [r[1:] for r in REFERENCE_CRASHES],
    ids=[r[0] for r in REFERENCE_CRASHES],
)
def test_reference_crash_is_our_template_error(spec_: Any, path: str, crash: str) -> None:
    ref = reference_outcome(spec_)
    assert ref.verdict == "crash" and type(ref.error).__name__ == crash
    with pytest.raises(TemplateError) as caught:
        load_template(spec_)
    assert caught.value.path == path


UNSUPPORTED = [
    ("lookbehind", r"(?<=x)y", "lookbehind", 0),
    ("backreference", r"<(a)>\1", "backreference", 5),
    ("atomic-group", r"x(?>ab)", "atomic group", 1),
    ("possessive", r"<a++>", "possessive quantifier", 2),
    ("unicode-property", r"\p{L}+", "Unicode property \\p", 0),
    ("multiline-flag", r"x(?m)^y", "inline flags not at the start of the pattern", 1),
]


@pytest.mark.parametrize(
    ("pattern", "construct", "column"),
    [u[1:] for u in UNSUPPORTED],
    ids=[u[0] for u in UNSUPPORTED],
)
@pytest.mark.parametrize("where", ["open_pattern", "close_pattern", "start_anchor_pattern"])
def test_pattern_outside_the_dialect(pattern: str, construct: str, column: int, where: str) -> None:
    if where == "start_anchor_pattern":
        s: dict[str, Any] = {"start_anchor_pattern": pattern, "fields": {"c": {}}}
        path = where
    else:
        s = field(**{where: pattern})
        path = f"fields.f.{where}"
    assert reference_outcome(s).verdict == "accept"  # a difference, not a shared rule
    with pytest.raises(UnsupportedPatternError) as caught:
        load_template(s)
    error = caught.value
    assert (error.path, error.construct, error.column, error.pattern) == (
        path,
        construct,
        column,
        pattern,
    )
    assert str(error).startswith(f"{path}: ")
    assert construct in str(error) and f"column {column}" in str(error)


def test_nesting_limits() -> None:
    # Our reader recurses more per group than regex's parser, so some depths are fine
    # for the reference and too deep for us: a dialect limit, named as such. Deeper
    # still, the reference crashes (RecursionError) and we report a TemplateError.
    seen = set()
    for depth in range(50, 1000, 25):
        s = field(open_pattern="(" * depth + "a" + ")" * depth)
        ref = reference_outcome(s)
        try:
            load_template(s)
            outcome = "accept"
        except UnsupportedPatternError as e:
            assert e.construct == "nesting too deep"
            outcome = "unsupported"
        except TemplateError:
            outcome = "error"
        seen.add((ref.verdict, outcome))
        assert (ref.verdict, outcome) in {
            ("accept", "accept"),
            ("accept", "unsupported"),
            ("crash", "error"),
        }
    assert ("accept", "accept") in seen and ("crash", "error") in seen


NOT_JSON = [
    ("bytes-pattern", field(open_pattern=b"<a>"), "fields.f.open_pattern"),
    ("tuple-in-transform", field(transform=("{content}",)), "fields.f.transform"),
    ("set-in-defaults", spec(defaults={"tags": {"a"}}), "defaults.tags"),
    ("int-field-name", spec({1: {}}), "fields"),
    ("object-value", field(content_args={"strip": object()}), "fields.f.content_args.strip"),
]


@pytest.mark.parametrize(("spec_", "path"), [n[1:] for n in NOT_JSON], ids=[n[0] for n in NOT_JSON])
def test_non_json_spec_is_refused(spec_: Any, path: str) -> None:
    # The reference accepts these Python values; no JSON file can hold them.
    assert reference_outcome(spec_).verdict == "accept"
    with pytest.raises(TemplateError) as caught:
        load_template(spec_)
    assert caught.value.path == path


def test_template_error_is_a_value_error_and_pickles() -> None:
    error = TemplateError("fields.x.join", "must be a string, got a number")
    assert isinstance(error, ValueError)
    again = pickle.loads(pickle.dumps(error))
    assert (again.path, again.rule, str(again)) == (error.path, error.rule, str(error))
    unsupported = UnsupportedPatternError("start_anchor_pattern", "lookbehind", 3, "abc(?<=x)")
    again_u = pickle.loads(pickle.dumps(unsupported))
    assert (again_u.construct, again_u.column, str(again_u)) == ("lookbehind", 3, str(unsupported))


def test_a_pattern_regex_itself_crashes_on_is_a_template_error():
    # regex 2026.5.9's optimiser raises AttributeError on this valid pattern; the
    # reference crashes the same way while loading; we say what is wrong instead.
    from rtcompiler.automata import compile_regex
    from rtcompiler.dialect import PatternError

    from .reference import reference_outcome

    pattern = r"(?i)(?:[\D]|(?:[\d]))"
    spec = {"start_anchor": "a", "fields": {"c": {"open_pattern": pattern}}}
    outcome = reference_outcome(spec)
    assert outcome.verdict == "crash" and isinstance(outcome.error, AttributeError)
    with pytest.raises(TemplateError, match="regex module crashes") as info:
        load_template(spec)
    assert info.value.path == "fields.c.open_pattern"
    with pytest.raises(PatternError, match="crashes"):
        compile_regex(pattern)
