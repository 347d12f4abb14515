"""Hypothesis strategies for response-template specs.

``valid_specs`` draws templates the reference accepts (using its sloppy corners on
purpose: ``repeats: "no"``, ``content_args: 5``, ``version: true``, ...). ``specs``
draws one of those and, most of the time, applies one random mutation that breaks a
rule (or nearly does, e.g. a random pattern that may or may not be valid regex).
Every spec is JSON data.
"""

from __future__ import annotations

from typing import Any

import regex
from hypothesis import strategies as st

JsonValue = Any

CONTENT_PARSERS = ["text", "int", "float", "bool", "json", "xml-inline", "kv-lines"]
FIELD_NAMES = ["content", "reasoning_content", "tool_calls", "x", "a.b", "é", "with space"]

LITERALS = ["<think>", "</think>", "<tool_call>", "<tool", "[TOOL_CALLS]", "\n", "a", "ab", "é€"]
PLAIN_PATTERNS = [
    r"<tool_call>",
    r"\s*<tool_call>\s*",
    r"<\|channel\|>commentary.*?<\|message\|>",
    r"(?i)<think>",
    r"[A-Z]+:",
    r"a|ab",
    r"\[TOOL_CALLS\]",
    r"",
    r"(?:x|y)+",
]
GROUP_PATTERNS = [
    r"<function=(?P<name>\w+)>",
    r"to=functions\.(?P<name>[\w.]+).*?<\|message\|>",
    r"(?P<a>x)(?P<a>y)",
    r"(?P<tool>\w+)\[ARGS\]",
]
# Valid for ``regex`` but outside rtcompiler's dialect.
UNSUPPORTED_PATTERNS = [r"(?<=x)y", r"(a)\1", r"(?>ab)", r"\p{L}+", r"a++", r"x(?m)^y"]
INVALID_PATTERNS = [r"(", r"(?P<a>x", "\\", r"a{2,1}", r"[", r"*a", r"(?P<1>x)", r"a{4294967296}"]
# Random pattern text: mostly broken or odd regexes, to fuzz the "invalid regex" rule.
RANDOM_PATTERN = st.text(alphabet="ab()[]|*+?\\{},.^$<>P=!:#-0123 ", max_size=10)

PLACEHOLDERS = ["{content}", "{content.args}", "{name}", "{é}", "{a_1.b2.c}", "{\u0300}", "{Ⅻ}"]
PLAIN_TRANSFORM_STRINGS = ["function", "", "{", "}", "{}", "{a.}", "{.a}", "{a b}", "{ a}", "{-}"]
MIXED_TRANSFORM_STRINGS = [
    "x {content}",
    "{a}{b}",
    "{{a}}",
    "{٣} x",
    "{content}.",
    "pre{\u200c}",
    "{a.b} {c}",
]
# Free text over brace-heavy characters: placeholder or not is for the rule to decide.
TRANSFORM_TEXT = st.text(alphabet="{}.a_é٣\u0300 -", max_size=8)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-5, max_value=5)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=4)
)
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)

_PLACEHOLDER = regex.compile(r"\{(?:\w+\.)*\w+\}")


def _not_mixed(text: str) -> bool:
    """Random text can spell a placeholder inside other text ("_{_}"): that is an
    invalid transform string, which only the mutations may produce."""
    return not _PLACEHOLDER.search(text) or bool(_PLACEHOLDER.fullmatch(text))


transform_strings = (
    st.sampled_from(PLACEHOLDERS)
    | st.sampled_from(PLAIN_TRANSFORM_STRINGS)
    | TRANSFORM_TEXT.filter(_not_mixed)
)
# Object keys are never substituted, so they may mix placeholders and text freely.
transform_keys = st.sampled_from(["type", "function", "name", "x {content}", "{k}"]) | st.text(
    max_size=3
)
transforms: st.SearchStrategy[JsonValue] = st.recursive(
    transform_strings | st.integers(0, 3) | st.none() | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(transform_keys, inner, max_size=3),
    max_leaves=8,
)

literal_values = st.sampled_from(LITERALS) | st.lists(
    st.sampled_from(LITERALS), min_size=1, max_size=4
)


@st.composite
def delimiters(draw: st.DrawFn, groups: bool) -> tuple[str, JsonValue]:
    """A (kind, value) delimiter: ``("literal", str | list)`` or ``("pattern", regex)``."""
    if draw(st.booleans()):
        return "literal", draw(literal_values)
    pool = PLAIN_PATTERNS + GROUP_PATTERNS if groups else PLAIN_PATTERNS
    return "pattern", draw(st.sampled_from(pool))


def truthy_values() -> st.SearchStrategy[JsonValue]:
    return st.sampled_from([True, 1, "yes", "no", [0], {"a": 1}, 2.5])


def falsy_values() -> st.SearchStrategy[JsonValue]:
    return st.sampled_from([False, 0, "", [], {}, None, 0.0])


@st.composite
def valid_fields(draw: st.DrawFn, implicit: bool) -> dict[str, JsonValue]:
    field: dict[str, JsonValue] = {}
    if draw(st.booleans()):
        field["content"] = draw(st.sampled_from(CONTENT_PARSERS))
    has_transform = draw(st.booleans())
    if not implicit:
        kind, value = draw(delimiters(groups=has_transform))
        field["open" if kind == "literal" else "open_pattern"] = value
    if draw(st.integers(0, 3)):
        kind, value = draw(delimiters(groups=has_transform))
        field["close" if kind == "literal" else "close_pattern"] = value
    if draw(st.booleans()):
        field["content_args"] = draw(
            st.sampled_from([{}, {"strip": False}, {"tag_pattern": "("}]) | json_values
        )
    repeats = draw(st.sampled_from(["absent", "truthy", "falsy"]))
    if repeats == "truthy":
        field["repeats"] = draw(truthy_values())
    elif repeats == "falsy":
        field["repeats"] = draw(falsy_values())
    if repeats == "truthy" and draw(st.booleans()):
        field["join"] = draw(st.sampled_from(["", "\n", ", "]))
    elif draw(st.integers(0, 5)) == 0:
        field["join"] = None  # null is as good as absent
    if draw(st.booleans()):
        field["optional"] = draw(truthy_values() | falsy_values())
    if has_transform:
        field["transform"] = draw(transforms.filter(lambda t: t is not None))
        if draw(st.booleans()):
            field["transform_each"] = draw(st.booleans())
    else:
        if draw(st.integers(0, 5)) == 0:
            field["transform"] = None
        if draw(st.integers(0, 3)) == 0:
            field["transform_each"] = False
    return field


@st.composite
def valid_specs(draw: st.DrawFn) -> dict[str, JsonValue]:
    spec: dict[str, JsonValue] = {}
    if draw(st.booleans()):
        spec["version"] = draw(st.sampled_from([1, 1.0, True]))
    if draw(st.booleans()):
        spec["defaults"] = draw(st.dictionaries(st.text(max_size=4), json_values, max_size=3))
    kind, value = draw(delimiters(groups=True))
    spec["start_anchor" if kind == "literal" else "start_anchor_pattern"] = value
    names = draw(st.lists(st.sampled_from(FIELD_NAMES), min_size=1, max_size=4, unique=True))
    implicit = draw(st.sampled_from([None, *names]))
    spec["fields"] = {name: draw(valid_fields(implicit=name == implicit)) for name in names}
    # Dict order is part of the spec (it is the fields' order): shuffle the top level too.
    keys = draw(st.permutations(list(spec)))
    return {k: spec[k] for k in keys}


# -- mutations --------------------------------------------------------------------------


def _field_name(draw: st.DrawFn, spec: dict[str, JsonValue]) -> str:
    return draw(st.sampled_from(sorted(spec["fields"])))


def _delimiter_key(draw: st.DrawFn, spec: dict[str, JsonValue]) -> tuple[dict[str, Any], str]:
    """A place for a literal delimiter: a field's open/close, or the start anchor."""
    where = draw(st.sampled_from(["open", "close", "start_anchor"]))
    if where == "start_anchor":
        spec.pop("start_anchor_pattern", None)
        return spec, "start_anchor"
    field = spec["fields"][_field_name(draw, spec)]
    field.pop(where + "_pattern", None)
    return field, where


def _pattern_key(draw: st.DrawFn, spec: dict[str, JsonValue]) -> tuple[dict[str, Any], str]:
    container, key = _delimiter_key(draw, spec)
    container.pop(key, None)
    return container, key + "_pattern"


@st.composite
def mutated_specs(draw: st.DrawFn) -> tuple[str, Any]:
    """A ``(mutation name, spec)`` pair; the name is for the test's statistics."""
    spec = draw(valid_specs())
    mutation = draw(
        st.sampled_from(
            [
                "not_a_dict",
                "version",
                "unknown_top_key",
                "defaults",
                "fields",
                "field_not_dict",
                "unknown_field_key",
                "content",
                "both_literal_and_pattern",
                "literal_type",
                "literal_empty_list",
                "literal_list_item",
                "literal_empty_string",
                "bad_pattern",
                "random_pattern",
                "pattern_type",
                "unsupported_pattern",
                "named_groups_without_transform",
                "mixed_placeholder",
                "two_implicit",
                "no_anchor",
                "both_anchors",
                "join_type",
                "join_without_repeats",
                "transform_each_type",
                "transform_each_without_transform",
                "none",  # last: sampled_from favours its first element
            ]
        )
    )
    fields = spec["fields"]
    if mutation == "not_a_dict":
        return mutation, draw(st.sampled_from([[], "template", None, 1, [spec]]))
    if mutation == "version":
        spec["version"] = draw(st.sampled_from([2, 0, "1", None, 1.5, [1], False]))
    elif mutation == "unknown_top_key":
        spec[draw(st.sampled_from(["Version", "field", "start", "extra", ""]))] = draw(json_values)
    elif mutation == "defaults":
        spec["defaults"] = draw(st.sampled_from([None, [], "x", 0, True, [["a", 1]]]))
    elif mutation == "fields":
        if draw(st.booleans()):
            del spec["fields"]
        else:
            spec["fields"] = draw(st.sampled_from([{}, [], None, "content", [{"open": "a"}]]))
    elif mutation == "field_not_dict":
        fields[_field_name(draw, spec)] = draw(st.sampled_from([None, [], "text", 0, True]))
    elif mutation == "unknown_field_key":
        key = draw(st.sampled_from(["opens", "Open", "pattern", "parser", "default", ""]))
        fields[_field_name(draw, spec)][key] = draw(json_values)
    elif mutation == "content":
        fields[_field_name(draw, spec)]["content"] = draw(
            st.sampled_from(["JSON", "xml", "", None, 0, True, [], {}, ["text"]])
        )
    elif mutation == "both_literal_and_pattern":
        where = draw(st.sampled_from(["open", "close", "start_anchor"]))
        target = spec if where == "start_anchor" else fields[_field_name(draw, spec)]
        target[where] = draw(literal_values)
        target[where + "_pattern"] = draw(st.sampled_from(PLAIN_PATTERNS))
    elif mutation == "literal_type":
        container, key = _delimiter_key(draw, spec)
        container[key] = draw(st.sampled_from([None, 0, True, {}, {"a": "b"}, 1.5]))
    elif mutation == "literal_empty_list":
        container, key = _delimiter_key(draw, spec)
        container[key] = []
    elif mutation == "literal_list_item":
        container, key = _delimiter_key(draw, spec)
        bad: JsonValue = draw(st.sampled_from([None, 1, ["a"], {}, False]))
        items: list[JsonValue] = draw(st.lists(st.sampled_from(LITERALS), max_size=3))
        items.insert(draw(st.integers(0, len(items))), bad)
        container[key] = items
    elif mutation == "literal_empty_string":
        container, key = _delimiter_key(draw, spec)
        if draw(st.booleans()):
            container[key] = ""
        else:
            items = draw(st.lists(st.sampled_from(LITERALS), max_size=3))
            items.insert(draw(st.integers(0, len(items))), "")
            container[key] = items
    elif mutation == "bad_pattern":
        container, key = _pattern_key(draw, spec)
        container[key] = draw(st.sampled_from(INVALID_PATTERNS))
    elif mutation == "random_pattern":
        container, key = _pattern_key(draw, spec)
        container[key] = draw(RANDOM_PATTERN)
    elif mutation == "pattern_type":
        container, key = _pattern_key(draw, spec)
        container[key] = draw(st.sampled_from([None, 0, True, [], ["a"], {"a": 1}]))
    elif mutation == "unsupported_pattern":
        container, key = _pattern_key(draw, spec)
        container[key] = draw(st.sampled_from(UNSUPPORTED_PATTERNS))
    elif mutation == "named_groups_without_transform":
        field = fields[_field_name(draw, spec)]
        where = draw(st.sampled_from(["open", "close"]))
        if where == "open" and "open" not in field and "open_pattern" not in field:
            where = "close"  # keep the implicit field implicit
        field.pop(where, None)
        field[where + "_pattern"] = draw(st.sampled_from(GROUP_PATTERNS))
        field.pop("transform_each", None)
        if draw(st.booleans()):
            field.pop("transform", None)
        else:
            field["transform"] = None
    elif mutation == "mixed_placeholder":
        field = fields[_field_name(draw, spec)]
        bad = draw(st.sampled_from(MIXED_TRANSFORM_STRINGS))
        shape = draw(st.sampled_from(["whole", "value", "item"]))
        if shape == "whole":
            field["transform"] = bad
        elif shape == "value":
            field["transform"] = {"ok": field.get("transform"), "bad": {"deep": bad}}
        else:
            field["transform"] = [field.get("transform"), [bad]]
    elif mutation == "two_implicit":
        names = sorted(fields)
        if len(names) < 2:
            fields["extra" if "extra" not in fields else "extra2"] = {}
            names = sorted(fields)
        for name in draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True)):
            if isinstance(fields[name], dict):
                fields[name].pop("open", None)
                fields[name].pop("open_pattern", None)
    elif mutation == "no_anchor":
        spec.pop("start_anchor", None)
        spec.pop("start_anchor_pattern", None)
    elif mutation == "both_anchors":
        spec["start_anchor"] = draw(literal_values)
        spec["start_anchor_pattern"] = draw(st.sampled_from(PLAIN_PATTERNS))
    elif mutation == "join_type":
        field = fields[_field_name(draw, spec)]
        field["repeats"] = True
        field["join"] = draw(st.sampled_from([0, 1, True, [], ["\n"], {}]))
    elif mutation == "join_without_repeats":
        field = fields[_field_name(draw, spec)]
        field["join"] = draw(st.sampled_from(["", "\n"]))
        if draw(st.booleans()):
            field.pop("repeats", None)
        else:
            field["repeats"] = draw(falsy_values())
    elif mutation == "transform_each_type":
        fields[_field_name(draw, spec)]["transform_each"] = draw(
            st.sampled_from([None, 0, 1, "true", [], {}])
        )
    elif mutation == "transform_each_without_transform":
        field = fields[_field_name(draw, spec)]
        field["transform_each"] = True
        if draw(st.booleans()):
            field.pop("transform", None)
        else:
            field["transform"] = None
    return mutation, spec


specs = mutated_specs()
