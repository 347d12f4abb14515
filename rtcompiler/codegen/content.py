"""Content plans: a field's ``content``/``content_args``, specialised at compile time.

:func:`content_plan` turns them into a :class:`ContentPlan` (the runtime function to
call in ``rtcompiler/runtime/content.py`` and its prepared, JSON-like arguments), and
:func:`build_parser` turns a plan into a Python callable in-process (what the tests
and the in-process CLI run; a generated module builds the same call from the plan).

The reference does not validate ``content_args`` when a template loads: a bad value
only fails when a region of that field is parsed, so a plan reproduces that failure at
parse time (see :func:`content_plan`) instead of refusing the template.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..automata import compile_tag_pattern
from ..dialect import PatternError, ast, parse_pattern
from ..dialect.charsets import derive
from ..runtime import content as content_runtime
from ..runtime.content import Finditer
from . import manifest

# Content parser name -> (runtime function, its section).
PARSERS: dict[str, tuple[str, str]] = {
    "text": ("parse_text", "text"),
    "int": ("parse_int", "int"),
    "float": ("parse_float", "float"),
    "bool": ("parse_bool", "bool"),
    "json": ("parse_json", "json"),
    "xml-inline": ("parse_xml_inline", "xml_inline"),
    "kv-lines": ("parse_kv_lines", "kv_lines"),
    "pythonic": ("parse_pythonic", "pythonic"),
}

# The xml-inline content_args key of the ``typed-values`` extension (docs/extensions.md),
# honoured on a field's own parser only (a nested value parser ignores it, as the
# reference ignores every key it does not know).
TYPED_VALUES = "typed_values"

# Parsers that are rtcompiler extensions, each usable only in a template that declares
# it (docs/extensions.md); transformers refuses such a template.
EXTENSION_PARSERS = frozenset({"pythonic"})

# Parsers whose chunks are part of the final value, streamed with dirty=False.
STREAMABLE_PARSERS = frozenset({"text", "int", "float", "bool"})


@dataclass(frozen=True)
class ContentPlan:
    """A content parser specialised to one field's (or nested value parser's) arguments.

    ``parser`` is the content name as written; ``function`` the runtime function to
    call; ``args`` its prepared, JSON-like arguments. ``tag_pattern`` (xml-inline
    only) is the pattern to compile into the ``finditer`` argument, ``None`` when the
    template gives none (the parser then fails at parse time, like the reference).
    ``value_parser`` is the nested plan of xml-inline and kv-lines, if any.
    ``typed`` (the ``typed-values`` extension) pairs each text of the tag pattern's
    typing group with the plan of its values (``None``: the raw text), in the
    template's order. ``sections`` is the dependency-closed set of runtime sections
    the plan needs, nested plans included, in manifest order.
    """

    parser: str
    function: str
    args: dict[str, Any]
    sections: tuple[str, ...]
    tag_pattern: str | None = None
    value_parser: ContentPlan | None = field(default=None)
    typed: tuple[tuple[str, ContentPlan | None], ...] = ()

    @property
    def streamable(self) -> bool:
        return self.parser in STREAMABLE_PARSERS


def _error_plan(parser: str, error: str, message: object) -> ContentPlan:
    return ContentPlan(
        parser=parser,
        function="parse_content_error",
        args={"error": error, "message": message},
        sections=("content_error",),
    )


def content_plan(content: str, content_args: Any, tags_only: bool = False) -> ContentPlan:
    """Specialise a field's parser ``content`` to ``content_args`` (as written in the
    template); see :func:`_plan`. Only here, on a field's own parser, does an
    xml-inline ``typed_values`` take effect (the template stage refuses it unless the
    template declares the ``typed-values`` extension). ``tags_only`` is the field's
    key of that name (``recover``): the xml-inline parser then refuses a body its tags
    do not read whole."""
    plan = _plan(content, content_args, field_level=True)
    if tags_only and plan.parser == "xml-inline" and "merge_duplicates" in plan.args:
        plan = replace(
            plan, args={**plan.args, "tags_only": True, **_tags_only_args(plan.tag_pattern)},
            sections=manifest.closure([*plan.sections, "xml_tags_only"]),
        )
    return plan


def _tags_only_args(pattern: str | None) -> dict[str, Any]:
    """What ``tags_only`` reads off the tag pattern: its leading literal and the closing
    tags it writes (a stray one between tags is no text)."""
    if pattern is None:
        return {"tags_leads": [], "tags_closers": []}
    return {"tags_leads": leading_literals(pattern), "tags_closers": closing_tags(pattern)}


def closing_tags(pattern: str) -> list[str]:
    """The closing tags (``</name>``) written literally in tag pattern ``pattern``."""
    try:
        root = parse_pattern(pattern, backreferences=True).root
    except PatternError:
        return []
    runs: list[str] = []

    def walk(node: ast.Node) -> None:
        if isinstance(node, ast.Concat):
            run: list[str] = []
            for item in node.items:
                char = _literal_char(item)
                if char is not None:
                    run.append(char)
                    continue
                runs.append("".join(run))
                run = []
                walk(item)
            runs.append("".join(run))
        elif isinstance(node, ast.Alternation):
            for item in node.alternatives:
                walk(item)
        elif isinstance(node, (ast.Group, ast.Repeat)):
            walk(node.item)
        else:
            char = _literal_char(node)
            if char is not None:
                runs.append(char)

    walk(root)
    found = {tag for run in runs for tag in re.findall(r"</[^<>]+>", run)}
    return sorted(found)


def _literal_char(node: ast.Node) -> str | None:
    if isinstance(node, ast.Chars) and len(node.chars.ranges) == 1:
        lo, hi = node.chars.ranges[0]
        if lo == hi:
            return chr(lo)
    return None


def with_tag_pattern(plan: ContentPlan, pattern: str) -> ContentPlan:
    """``plan`` (a field's xml-inline plan) reading its tags with ``pattern`` instead."""
    args = {**plan.args, "tag_pattern": pattern}
    if args.get("tags_only"):
        args.update(_tags_only_args(pattern))
    return replace(plan, tag_pattern=pattern, args=args)


def leading_literals(pattern: str, most: int = 8) -> list[str]:
    """The literals one of which every match of tag pattern ``pattern`` begins with, as
    far as the pattern begins with literal characters, optional ones (``<｜DSML｜ ?p``
    gives ``<｜DSML｜p`` and ``<｜DSML｜ p``) and alternations of literals, keeping at
    most ``most`` of them, none inside another ([] when there is no such literal, or
    when the pattern is not in our dialect: compiling it reports that)."""
    try:
        root = parse_pattern(pattern, backreferences=True).root
    except PatternError:
        return []
    leads, best = [""], [""]
    for node in root.items if isinstance(root, ast.Concat) else (root,):
        options = _literal_options(node)
        if options is None or len(leads) * len(options) > most:
            break
        leads = sorted(set(lead + option for lead in leads for option in options))
        if not any(a != b and a in b for a in leads for b in leads):
            best = leads
    return [] if best == [""] else best


def _literal_options(node: ast.Node) -> list[str] | None:
    """The texts ``node`` can match when it matches only literal texts, else None."""
    char = _literal_char(node)
    if char is not None:
        return [char]
    if isinstance(node, ast.Group):
        return _literal_options(node.item)
    if isinstance(node, ast.Concat):
        out = [""]
        for item in node.items:
            options = _literal_options(item)
            if options is None:
                return None
            out = [a + b for a in out for b in options]
        return out
    if isinstance(node, ast.Alternation):
        out = []
        for item in node.alternatives:
            options = _literal_options(item)
            if options is None:
                return None
            out += options
        return out
    if isinstance(node, ast.Repeat) and node.min == 0 and node.max == 1:
        options = _literal_options(node.item)
        return None if options is None else [*options, ""]
    return None


def _plan(content: str, content_args: Any, field_level: bool = False) -> ContentPlan:
    """Specialise parser ``content`` to ``content_args`` (as written in the template).

    ``content`` must be a known parser name (the template stage has checked it);
    anything else raises ``ValueError``. A ``content_args`` with which the reference
    fails on every parse of the region -- not a dict, a ``tag_pattern`` that is not a
    string, a ``value_parser`` that is not a dict or names an unknown parser -- gives a
    plan that raises the reference's exception type when called (the nested case only
    when a value is actually parsed, exactly where the reference raises).
    """
    if content not in PARSERS:
        raise ValueError(f"unknown content parser {content!r}; known: {sorted(PARSERS)}")
    if not isinstance(content_args, Mapping):
        # Every reference parser starts with content_args.get(...).
        return _error_plan(
            content,
            "AttributeError",
            f"{type(content_args).__name__!r} object has no attribute 'get' "
            f"({content}: content_args must be a dict)",
        )
    function, section = PARSERS[content]
    strip = bool(content_args.get("strip", True))
    nested: ContentPlan | None = None
    tag_pattern: str | None = None
    if content in ("text", "int", "float", "bool", "pythonic"):
        args: dict[str, Any] = {"strip": strip}
    elif content == "json":
        delims = content_args.get("string_delims", [])
        args = {
            "string_delims": delims,
            "unquoted_key_pattern": (
                unquoted_key_pattern() if content_args.get("unquoted_keys", False) else None
            ),
            "allow_non_json": bool(content_args.get("allow_non_json")),
            "strip": strip,
            "same_delimiter": _same_delimiter(delims),
        }
    elif content == "kv-lines":
        args = {
            "line_sep": content_args.get("line_sep", "\n"),
            "kv_sep": content_args.get("kv_sep", ":"),
            "strip": strip,
        }
        nested = _value_parser_plan(content_args.get("value_parser"))
    else:  # xml-inline
        pattern = content_args.get("tag_pattern")
        if pattern is not None and not isinstance(pattern, str):
            # regex.finditer refuses a pattern that is not a string.
            return _error_plan(
                content,
                "TypeError",
                "first argument must be a string or compiled pattern "
                f"(xml-inline: tag_pattern is a {type(pattern).__name__}, not a string)",
            )
        tag_pattern = pattern
        args = {
            "tag_pattern": pattern,
            "merge_duplicates": bool(content_args.get("merge_duplicates", False)),
        }
        nested = _value_parser_plan(content_args.get("value_parser"))
        if field_level and TYPED_VALUES in content_args:
            return _typed_plan(content_args[TYPED_VALUES], args, tag_pattern, nested)
    needed = [section] + (list(nested.sections) if nested is not None else [])
    return ContentPlan(
        parser=content,
        function=function,
        args=args,
        sections=manifest.closure(needed),
        tag_pattern=tag_pattern,
        value_parser=nested,
    )


def _typed_plan(
    spec: Any, args: dict[str, Any], tag_pattern: str | None, nested: ContentPlan | None
) -> ContentPlan:
    """The ``typed-values`` form of an xml-inline plan (the template stage has checked
    ``spec``: ``{"group": NAME, "parsers": {TEXT: value parser or null}}``)."""
    if (
        not isinstance(spec, Mapping)
        or not isinstance(spec.get("group"), str)
        or not isinstance(spec.get("parsers"), Mapping)
        or tag_pattern is None
    ):
        raise ValueError(f"{TYPED_VALUES}: not a checked typed-values spec: {spec!r}")
    typed = tuple(
        (text, None if parser is None else _value_parser_plan(parser))
        for text, parser in spec["parsers"].items()
    )
    needed = ["xml_typed"] + [s for p in (nested, *(p for _, p in typed)) if p for s in p.sections]
    return ContentPlan(
        parser="xml-inline",
        function="parse_xml_typed",
        args={
            **args, "typed_group": spec["group"],
            **({"key_entities": tuple(tuple(p) for p in spec["key_entities"])}
               if spec.get("key_entities") else {}),
        },
        sections=manifest.closure(needed),
        tag_pattern=tag_pattern,
        value_parser=nested,
        typed=typed,
    )


def _same_delimiter(delims: Any) -> str | None:
    """The delimiter of ``string_delims`` when it is one pair of one non-empty string
    (Gemma 4's ``<|"|>`` both ends): parse_json then rewrites strings in place."""
    if type(delims) is list and len(delims) == 1:
        pair = delims[0]
        if (
            type(pair) in (list, tuple) and len(pair) == 2 and type(pair[0]) is str and pair[0]
            and pair[0] == pair[1]
        ):
            return pair[0]
    return None


def _value_parser_plan(spec: Any) -> ContentPlan | None:
    """The plan of a nested ``{"name": ..., "args": ...}`` value parser."""
    if spec is None:
        return None
    if not isinstance(spec, Mapping):
        # The reference calls spec.get(...) on the first value it parses.
        return _error_plan(
            "value_parser",
            "AttributeError",
            f"{type(spec).__name__!r} object has no attribute 'get' "
            "(value_parser must be a dict like {'name': 'json'})",
        )
    name = spec.get("name", "text")
    try:
        known = name in PARSERS and name not in EXTENSION_PARSERS
    except TypeError:  # an unhashable name: the reference's table lookup raises this
        return _error_plan(
            "value_parser",
            "TypeError",
            f"unhashable type: {type(name).__name__!r} (value_parser name must be a string)",
        )
    if not known:
        return _error_plan(
            "value_parser",
            "KeyError",
            # The reference's KeyError holds the name alone; a KeyError shows its
            # argument quoted, so no detail can follow.
            name,
        )
    return _plan(name, spec.get("args", {}))


def unquoted_key_pattern() -> str:
    r"""The stdlib ``re`` pattern for a bare JSON object key, as the reference finds it.

    The reference matches ``(?<=[{,])(\w+):`` with the ``regex`` module, whose ``\w``
    is not the standard library's (combining marks and connector punctuation are word
    characters there, superscript digits are not). The class is therefore spelled out
    as code point ranges taken from ``regex`` itself.
    """
    return "(?<=[{,])([" + class_body(derive(r"\w").ranges) + "]+):"


def class_body(ranges: Iterable[tuple[int, int]]) -> str:
    """The inside of a stdlib ``re`` character class for inclusive code point ranges.

    Every endpoint is written as an escape, so the pattern is ASCII and no character
    can be read as class syntax.
    """
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_escape_code_point(lo))
        else:
            parts.append(f"{_escape_code_point(lo)}-{_escape_code_point(hi)}")
    return "".join(parts)


def _escape_code_point(cp: int) -> str:
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


FinditerFactory = Callable[[str], Finditer]


def splits_tags(plan: ContentPlan) -> bool:
    """Whether a ``tags_only`` xml-inline body is read by one split of its tag pattern
    first (see runtime/content.py, ``_xml_tags_split``): when its closing tags hold no
    whitespace, so that the gaps between tags, joined by a space, make up none."""
    return (
        plan.function == "parse_xml_inline" and plan.tag_pattern is not None
        and bool(plan.args.get("tags_only"))
        and not any(c.isspace() for closer in plan.args["tags_closers"] for c in closer)
    )


def _engine_finditer(pattern: str) -> Finditer:
    return compile_tag_pattern(pattern).group_finditer


def build_parser(
    plan: ContentPlan, compile_pattern: FinditerFactory | None = None
) -> Callable[[Any], Any]:
    """The plan as an in-process callable ``body -> value``.

    ``compile_pattern`` turns a tag pattern into a ``finditer``; by default our own
    regex engine (the one generated modules embed).
    """
    engine = compile_pattern is None
    compile_pattern = compile_pattern or _engine_finditer
    function = getattr(content_runtime, plan.function)
    args = plan.args
    nested = build_parser(plan.value_parser, compile_pattern) if plan.value_parser else None
    if engine and splits_tags(plan):
        tag = compile_tag_pattern(plan.tag_pattern)
        return lambda body: function(body, args, tag.group_finditer, nested, tag.group_split)
    if plan.function == "parse_xml_inline":
        finditer = compile_pattern(plan.tag_pattern) if plan.tag_pattern is not None else None
        return lambda body: function(body, args, finditer, nested)
    if plan.function == "parse_xml_typed":
        finditer = compile_pattern(plan.tag_pattern)
        typed = {text: build_parser(p, compile_pattern) if p else None for text, p in plan.typed}
        return lambda body: function(body, args, finditer, nested, typed)
    if plan.function == "parse_kv_lines":
        return lambda body: function(body, args, nested)
    return lambda body: function(body, args)
