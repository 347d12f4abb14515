"""Validate a response-template spec and build the :class:`Template` model.

The rules are those of transformers 5.23.0 (``load_response_template``): a spec that
it rejects with ``ValueError`` we reject with :class:`TemplateError`, and a spec that
it accepts we accept, including what it accepts without looking (``content_args``,
``defaults`` values, the type of ``repeats`` and ``optional``). The checks run in the
reference's order, so that when a spec breaks several rules the one reported is the
one transformers reports. We refuse more only where the reference cannot be followed:

* a spec that is not JSON data (the reference takes e.g. a ``bytes`` pattern, a tuple
  inside a transform, or a non-string field name; none can come from a JSON file);
* where the reference crashes with ``TypeError``/``RecursionError`` instead of
  validating (a non-string pattern, an unhashable ``content``, a pattern nested too
  deeply for ``regex``); we say what is wrong instead;
* a valid ``regex`` pattern that rtcompiler's dialect does not support
  (:class:`UnsupportedPatternError`, naming the construct and its column);
* a template too large to compile in reasonable time and space: more than
  ``MAX_FIELDS`` fields, or a delimiter whose automaton is too large (too many NFA
  states, checked on its syntax tree before anything is built; or DFA tables past
  their work budget, refused as soon as it is spent). See docs/template-format.md.

>>> t = load_template({
...     "start_anchor": "<|im_start|>assistant\\n",
...     "fields": {
...         "reasoning_content": {"open": "<think>", "close": "</think>"},
...         "content": {},
...         "tool_calls": {"open": "<tool_call>", "close": "</tool_call>",
...                        "content": "json", "repeats": True},
...     },
... })
>>> [f.name for f in t.fields], t.implicit
(['reasoning_content', 'content', 'tool_calls'], 'content')
>>> load_template({"start_anchor": "a", "fields": {"c": {"join": ","}}})
Traceback (most recent call last):
...
rtcompiler.template.errors.TemplateError: fields.c: 'join' requires 'repeats': true
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import regex

from ..automata import compile_regex
from ..automata.dfa import WorkBudget
from ..automata.nfa import check_size
from ..dialect import PatternError, parse_pattern, read_pattern
from .errors import TemplateError, UnsupportedPatternError
from .model import Delimiter, Field, Template, ValueDelimiters

TEMPLATE_KEYS = frozenset({"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"})
# rtcompiler's own top-level key (docs/extensions.md). transformers knows no such key and
# refuses a template that has it, which is what should happen: it cannot parse one.
EXTENSIONS_KEY = "extensions"
# Extension name -> the content parser it enables.
EXTENSION_PARSERS = {"pythonic": "pythonic"}
# Extension name -> (content parser, the content_args key it adds to that parser).
EXTENSION_CONTENT_ARGS = {"typed-values": ("xml-inline", "typed_values")}
# Robustness extensions (docs/extensions.md): name -> the field key it enables. A bundled
# grammar's strict form is its template without them.
ROBUSTNESS = {
    "recover": "recover", "close-outside-strings": "close_outside_strings", "yield": "yield_to",
    "json-end": "json_end",
    "extend": "extend",
    "string-arguments": "string_arguments",
}
# Those of them whose key is true or false.
_BOOLEAN_ROBUSTNESS = ("recover", "close-outside-strings")
EXTENSIONS = sorted({*EXTENSION_PARSERS, *EXTENSION_CONTENT_ARGS, *ROBUSTNESS})
FIELD_KEYS = frozenset(
    {
        "open",
        "open_pattern",
        "close",
        "close_pattern",
        "content",
        "content_args",
        "repeats",
        "join",
        "optional",
        "transform",
        "transform_each",
    }
)
# A field key that a robustness extension adds besides its own (name -> extension).
ROBUSTNESS_OPTIONS = {"tags_only": "recover", "recover_tag_pattern": "recover"}
EXTENSION_FIELD_KEYS = frozenset({*ROBUSTNESS.values(), *ROBUSTNESS_OPTIONS})
# What a close of a close_outside_strings field must never consume: it would end a string.
_STRING_CHARACTERS = '"\\'
CONTENT_PARSERS = ("bool", "float", "int", "json", "kv-lines", "text", "xml-inline")
SUPPORTED_VERSION = 1
# Objects and arrays nested deeper than this are refused (real templates nest ~5 deep).
MAX_DEPTH = 100
# Templates with more fields than this are refused (real ones have at most a handful):
# every field brings delimiters, tables and functions to compile, emit and import.
MAX_FIELDS = 256
# Value delimiters (close_outside_strings) past these are refused (real ones: a few tags
# of a few characters): a parser's plan holds every beginning of every delimiter.
MAX_VALUE_DELIMITERS = 64
MAX_VALUE_DELIMITER_LENGTH = 256

# A transform placeholder: a brace-enclosed dotted path of word runs ("{content.args}").
# \w is the ``regex`` module's (Unicode) one, the module transformers matches with.
_PLACEHOLDER = regex.compile(r"\{(?:\w+\.)*\w+\}")
# Keys that read well after a dot in a path; anything else is written as ["..."].
_PLAIN_KEY = regex.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


# -- paths and messages ---------------------------------------------------------------


def child_path(path: str, key: str | int) -> str:
    """The path of ``key`` inside the value at ``path``.

    >>> child_path("", "fields"), child_path("fields", "tool_calls")
    ('fields', 'fields.tool_calls')
    >>> child_path("fields.x.open", 2), child_path("fields", "a.b")
    ('fields.x.open[2]', 'fields["a.b"]')
    """
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _kind(value: object) -> str:
    """The JSON name of a value's type, as a template author would say it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _quoted(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)


# -- the template -----------------------------------------------------------------------


def load_template(spec: Any) -> Template:
    """Check ``spec`` against every template rule and build its :class:`Template`.

    Raises :class:`TemplateError` (a ``ValueError``) naming the first broken rule and
    where it is. ``spec`` is not modified; the result holds a deep copy of it.
    """
    if not isinstance(spec, dict):
        raise TemplateError("", f"a response template must be a JSON object, got {_kind(spec)}")
    _require_json_data(spec)
    # Validate and build from a private copy; keep another untouched one as ``raw``, so
    # that nothing done to the model's dicts can change what the hash says.
    raw = copy.deepcopy(spec)
    spec = copy.deepcopy(spec)

    # Equality, not identity or type: the reference lets 1.0 and true through as 1.
    version = spec.get("version", SUPPORTED_VERSION)
    if version != SUPPORTED_VERSION:
        raise TemplateError(
            "version", f"only version {SUPPORTED_VERSION} is defined, got {version!r}"
        )
    unknown = sorted(set(spec) - TEMPLATE_KEYS - {EXTENSIONS_KEY})
    if unknown:
        raise TemplateError(
            unknown[0],
            f"unknown top-level key(s) {_quoted(unknown)}; "
            f"a template has only {_quoted(sorted(TEMPLATE_KEYS))} "
            f"(and rtcompiler's {EXTENSIONS_KEY!r})",
        )
    extensions = _load_extensions(spec.get(EXTENSIONS_KEY, []))
    defaults = spec.get("defaults", {})
    if not isinstance(defaults, dict):
        raise TemplateError("defaults", f"must be an object, got {_kind(defaults)}")
    raw_fields = spec.get("fields", {})
    if not isinstance(raw_fields, dict) or not raw_fields:
        raise TemplateError(
            "fields", "must be a non-empty object mapping each field name to its spec"
        )
    if len(raw_fields) > MAX_FIELDS:
        raise TemplateError(
            "fields", f"{len(raw_fields)} fields, more than rtcompiler's limit of {MAX_FIELDS}"
        )

    budget = WorkBudget()  # for the tables of all the delimiters together
    fields = tuple(
        _load_field(name, field_spec, extensions, budget)
        for name, field_spec in raw_fields.items()
    )

    implicit = [f.name for f in fields if f.open is None]
    if len(implicit) > 1:
        raise TemplateError(
            "fields",
            "at most one field may have neither 'open' nor 'open_pattern' (it takes the text "
            f"outside every other region); found {len(implicit)}: {_quoted(implicit)}",
        )

    _check_yields(fields)
    names = {f.name for f in fields}
    for f in fields:
        if f.json_end and not implicit and not isinstance(f.recover, str):
            raise TemplateError(
                child_path(child_path("fields", f.name), "json_end"),
                "the text after the value needs an implicit field (one without 'open') "
                "to go to, or a 'recover' naming the field that keeps it",
            )
        if not f.recover:
            continue
        where = child_path(child_path("fields", f.name), "recover")
        if f.recover is True:
            if not implicit:
                raise TemplateError(
                    where,
                    "a recovering field needs an implicit field (one without 'open') to keep "
                    "a failed region's text, or the name of the field that keeps it",
                )
        elif f.recover not in names:
            raise TemplateError(where, f"no field named {f.recover!r} to keep the text")
        elif f.recover == f.name:
            raise TemplateError(where, "a field cannot keep its own failed region's text")
        elif next(g for g in fields if g.name == f.recover).recover:
            raise TemplateError(
                where, f"{f.recover!r} recovers too: a failed region's text would have no "
                "sure place to go")

    start_anchor = _load_delimiter("", spec, "start_anchor", "start_anchor_pattern", budget)
    if start_anchor is None:
        raise TemplateError(
            "",
            "one of 'start_anchor' or 'start_anchor_pattern' is required "
            "(it marks where the assistant message starts in the prompt)",
        )

    return Template(
        defaults=defaults,
        fields=fields,
        implicit=implicit[0] if implicit else None,
        start_anchor=start_anchor,
        raw=raw,
        extensions=extensions,
    )


def _load_extensions(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TemplateError(
            EXTENSIONS_KEY, f"must be an array of extension names, got {_kind(value)}"
        )
    for i, name in enumerate(value):
        if name not in EXTENSIONS:
            raise TemplateError(
                child_path(EXTENSIONS_KEY, i),
                f"unknown rtcompiler extension {name!r}; "
                f"known: {_quoted(sorted(EXTENSIONS))}",
            )
    return tuple(sorted(set(value)))


def _require_json_data(spec: dict[Any, Any]) -> None:
    """Refuse anything ``json.load`` could not have produced, or nested absurdly deep.

    The model keeps the spec as data and hashes its canonical JSON, so it has to be
    JSON. The depth bound keeps every later recursive walk (copying, hashing, the
    compiler's) far from Python's recursion limit; the reference itself crashes with
    ``RecursionError`` on a deep enough transform.
    """
    stack: list[tuple[str, Any, int]] = [("", spec, 0)]
    while stack:
        path, value, depth = stack.pop()
        if value is None or isinstance(value, (str, bool, int, float)):
            continue
        if depth >= MAX_DEPTH:
            raise TemplateError(path, f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise TemplateError(
                        path, f"object keys must be strings, found {type(key).__name__} {key!r}"
                    )
                stack.append((child_path(path, key), item, depth + 1))
        elif isinstance(value, list):
            stack.extend((child_path(path, i), item, depth + 1) for i, item in enumerate(value))
        else:
            raise TemplateError(path, f"{type(value).__name__} is not JSON data")


# -- fields -----------------------------------------------------------------------------


def _load_field(
    name: str, raw: Any, extensions: tuple[str, ...], budget: WorkBudget
) -> Field:
    path = child_path("fields", name)
    if not isinstance(raw, dict):
        raise TemplateError(path, f"a field spec must be an object, got {_kind(raw)}")
    unknown = sorted(set(raw) - FIELD_KEYS - EXTENSION_FIELD_KEYS)
    if unknown:
        raise TemplateError(
            child_path(path, unknown[0]),
            f"unknown field key(s) {_quoted(unknown)}; a field has only "
            f"{_quoted(sorted(FIELD_KEYS))} (and rtcompiler's extension keys "
            f"{_quoted(sorted(EXTENSION_FIELD_KEYS))})",
        )
    content = raw.get("content", "text")
    # The isinstance test comes first: the reference looks an unhashable value up in a
    # dict and crashes with TypeError; any non-string is an unknown parser to us.
    if isinstance(content, str) and content in EXTENSION_PARSERS.values():
        if not any(EXTENSION_PARSERS.get(e) == content for e in extensions):
            raise TemplateError(
                child_path(path, "content"),
                f"{content!r} is an rtcompiler extension, not a transformers content parser: "
                f'declare it with "{EXTENSIONS_KEY}": ["{content}"] at the top of the '
                "template (transformers will then refuse the template; see docs/extensions.md)",
            )
    elif not isinstance(content, str) or content not in CONTENT_PARSERS:
        raise TemplateError(
            child_path(path, "content"),
            f"unknown content parser {content!r}; known: {_quoted(list(CONTENT_PARSERS))}",
        )
    _check_content_args_extensions(path, content, raw.get("content_args"), extensions)
    open_ = _load_delimiter(path, raw, "open", "open_pattern", budget)
    close = _load_delimiter(path, raw, "close", "close_pattern", budget)

    # An explicit null is the same as leaving a key out, for join and transform alike.
    join = raw.get("join")
    if join is not None and not isinstance(join, str):
        raise TemplateError(child_path(path, "join"), f"must be a string, got {_kind(join)}")
    repeats = raw.get("repeats", False)
    if join is not None and not repeats:
        raise TemplateError(path, "'join' requires 'repeats': true")

    transform_each = raw.get("transform_each", False)
    if not isinstance(transform_each, bool):
        raise TemplateError(
            child_path(path, "transform_each"),
            f"must be true or false, got {_kind(transform_each)}",
        )
    transform = raw.get("transform")
    if transform_each and transform is None:
        raise TemplateError(path, "'transform_each': true requires a 'transform'")
    if transform is not None:
        _check_transform(child_path(path, "transform"), transform)
    else:
        _forbid_unused_captures(path, raw, open_, close)

    recover, outside_strings = _robustness(path, raw, extensions, content, open_, close)
    extend = _extend(path, raw, extensions, open_, repeats, transform_each)
    yields, yield_join = _yield_to(path, raw, extensions, content, open_, close, repeats)
    json_end = _json_end(path, raw, extensions, content, open_)
    string_arguments = _string_arguments(path, raw, extensions, transform)
    tags_only = _tags_only(path, raw, extensions, content, recover)
    recover_tag_pattern = raw.get("recover_tag_pattern")
    if recover_tag_pattern is not None and not (
        tags_only and isinstance(recover_tag_pattern, str)
    ):
        raise TemplateError(
            child_path(path, "recover_tag_pattern"),
            "must be a tag pattern (a string), on a field with 'tags_only': true",
        )
    return Field(
        name=name,
        open=open_,
        close=close,
        content=content,
        content_args=raw.get("content_args", {}),
        # The reference only ever asks these for their truth value.
        repeats=bool(repeats),
        join=join,
        optional=bool(raw.get("optional", True)),
        transform=transform,
        transform_each=transform_each,
        recover=recover,
        close_outside_strings=outside_strings,
        yields=yields,
        yield_join=yield_join,
        json_end=json_end,
        tags_only=tags_only,
        recover_tag_pattern=recover_tag_pattern,
        extend=extend,
        string_arguments=string_arguments,
    )


def _undeclared(where: str, key: str, extension: str) -> TemplateError:
    """The error for a field key that belongs to an extension the template does not declare."""
    return TemplateError(
        where,
        f"{key!r} is an rtcompiler extension: declare it with "
        f'"{EXTENSIONS_KEY}": ["{extension}"] at the top of the template '
        "(transformers will then refuse the template; see docs/extensions.md)",
    )


def _extend(
    path: str, raw: dict[str, Any], extensions: tuple[str, ...], open_: Delimiter | None,
    repeats: Any, transform_each: bool,
) -> bool:
    """The field's ``extend`` (docs/extensions.md): a later region's list of calls is
    added to the earlier ones' instead of replacing them."""
    if "extend" not in raw:
        return False
    where = child_path(path, "extend")
    if "extend" not in extensions:
        raise _undeclared(where, "extend", "extend")
    value = raw["extend"]
    if not isinstance(value, bool):
        raise TemplateError(where, f"must be true or false, got {_kind(value)}")
    if value and not transform_each:
        raise TemplateError(where, "needs 'transform_each': true (a region gives a list)")
    if value and repeats:
        raise TemplateError(
            where, "a repeating field keeps each region's list apart; drop 'repeats'")
    if value and open_ is None:
        raise TemplateError(where, "the implicit field has one region: nothing to extend")
    return value


def _string_arguments(
    path: str, raw: dict[str, Any], extensions: tuple[str, ...], transform: Any,
) -> bool:
    """The field's ``string_arguments`` (docs/extensions.md): a call's arguments written
    as a JSON string holding a JSON object are that object."""
    if "string_arguments" not in raw:
        return False
    where = child_path(path, "string_arguments")
    if "string-arguments" not in extensions:
        raise _undeclared(where, "string_arguments", "string-arguments")
    value = raw["string_arguments"]
    if not isinstance(value, bool):
        raise TemplateError(where, f"must be true or false, got {_kind(value)}")
    function = transform.get("function") if isinstance(transform, dict) else None
    if value and not (isinstance(function, dict) and "arguments" in function):
        raise TemplateError(
            where, "needs a 'transform' that writes tool calls (function.arguments)"
        )
    return value


def _yield_to(
    path: str, raw: dict[str, Any], extensions: tuple[str, ...], content: str,
    open_: Delimiter | None, close: Delimiter | None, repeats: Any,
) -> tuple[tuple[str, ...], str]:
    """The field's ``yield_to`` (docs/extensions.md), checked on the field alone: the
    names it gives are checked against the other fields by ``_check_yields``."""
    if "yield_to" not in raw:
        return (), ""
    where = child_path(path, "yield_to")
    if "yield" not in extensions:
        raise _undeclared(where, "yield_to", "yield")
    value = raw["yield_to"]
    if not isinstance(value, dict) or set(value) != {"fields", "join"}:
        raise TemplateError(
            where, 'must be an object with exactly "fields" (a list of names) and "join"'
        )
    names, join = value["fields"], value["join"]
    if (
        not isinstance(names, list) or not names
        or not all(isinstance(n, str) for n in names)
    ):
        raise TemplateError(
            child_path(where, "fields"), "must be a non-empty list of field names"
        )
    if not isinstance(join, str):
        raise TemplateError(child_path(where, "join"), f"must be a string, got {_kind(join)}")
    if open_ is None or close is None:
        raise TemplateError(where, "needs a field with an open and a close: a region to yield from")
    if content != "text" or repeats and raw.get("join") != join:
        raise TemplateError(
            where, "needs a 'text' field that does not repeat, or repeats with the same "
            "'join' as yield_to's: its pieces join into one string"
        )
    return tuple(dict.fromkeys(names)), join


def _json_end(
    path: str, raw: dict[str, Any], extensions: tuple[str, ...], content: str,
    open_: Delimiter | None,
) -> bool | str:
    """The field's ``json_end`` (docs/extensions.md): true, or the literal that follows
    the JSON value and belongs to the region (what its open left open)."""
    if "json_end" not in raw:
        return False
    where = child_path(path, "json_end")
    if "json-end" not in extensions:
        raise _undeclared(where, "json_end", "json-end")
    value = raw["json_end"]
    if not (value is True or value is False or isinstance(value, str) and value.strip()):
        raise TemplateError(
            where,
            "must be true, false or the literal that follows the value (not blank), "
            f"got {_kind(value)}",
        )
    if not value:
        return False
    if content != "json":
        raise TemplateError(where, f"needs 'content': 'json', got {content!r}")
    if open_ is None:
        raise TemplateError(
            where, "the implicit field cannot end at its value: the text after goes to it"
        )
    args = raw.get("content_args", {})
    if isinstance(args, dict) and (args.get("string_delims") or args.get("allow_non_json")):
        raise TemplateError(
            where, "needs JSON's own parsing: drop 'string_delims' and 'allow_non_json'"
        )
    return value


def _check_yields(fields: tuple[Field, ...]) -> None:
    """Each field a ``yield_to`` names is another explicit field, which yields to none."""
    by_name = {f.name: f for f in fields}
    for f in fields:
        for k, name in enumerate(f.yields):
            where = child_path(child_path(child_path(child_path("fields", f.name), "yield_to"),
                                          "fields"), k)
            other = by_name.get(name)
            if other is None:
                raise TemplateError(where, f"no field {name!r}")
            if other is f or other.open is None:
                raise TemplateError(
                    where, f"{name!r} cannot be yielded to: it must be another field with an open"
                )
            if other.yields:
                raise TemplateError(where, f"{name!r} yields itself: regions nest one deep")


def _tags_only(
    path: str, raw: dict[str, Any], extensions: tuple[str, ...], content: str, recover: bool
) -> bool:
    """``tags_only`` (docs/extensions.md, ``recover``): an xml-inline body read whole by
    its tags, or a failure to recover from."""
    if "tags_only" not in raw:
        return False
    where = child_path(path, "tags_only")
    if "recover" not in extensions:
        raise TemplateError(
            where,
            "'tags_only' is part of the rtcompiler extension 'recover': declare it with "
            f'"{EXTENSIONS_KEY}": ["recover"] at the top of the template (transformers will '
            "then refuse the template; see docs/extensions.md)",
        )
    value = raw["tags_only"]
    if not isinstance(value, bool):
        raise TemplateError(where, f"must be true or false, got {_kind(value)}")
    if value and content != "xml-inline":
        raise TemplateError(where, f"needs 'content': 'xml-inline', got {content!r}")
    if value and not recover:
        raise TemplateError(
            where, "needs 'recover': true (a body the tags do not read whole is recovered)"
        )
    return value


def _robustness(
    path: str, raw: dict[str, Any], extensions: tuple[str, ...], content: str,
    open_: Delimiter | None, close: Delimiter | None,
) -> tuple[bool | str, bool | ValueDelimiters]:
    """The field's robustness keys (docs/extensions.md), checked: each needs its
    extension declared, and a field it can work on."""
    found = []
    for extension in _BOOLEAN_ROBUSTNESS:
        key = ROBUSTNESS[extension]
        if key not in raw:
            found.append(False)
            continue
        where = child_path(path, key)
        if extension not in extensions:
            raise _undeclared(where, key, extension)
        value = raw[key]
        if key == "recover" and isinstance(value, str) and value:
            found.append(value)  # the field that keeps the text; checked once all are known
            continue
        if key == "close_outside_strings" and isinstance(value, dict):
            found.append(_value_delimiters(where, value))
            continue
        if not isinstance(value, bool):
            expected = (
                "true, false or a field name" if key == "recover"
                else "true, false or {\"open\": [...], \"close\": [...]}"
            )
            raise TemplateError(where, f"must be {expected}, got {_kind(value)}")
        found.append(value)
    recover, outside_strings = found
    if recover and open_ is None:
        raise TemplateError(
            child_path(path, "recover"),
            "the implicit field cannot recover: a failed region's text goes to it",
        )
    if isinstance(outside_strings, ValueDelimiters):
        where = child_path(path, "close_outside_strings")
        if content == "json":
            raise TemplateError(
                where, "a JSON body's strings are JSON's: write true, not value delimiters"
            )
        if close is None:
            raise TemplateError(where, "needs a 'close' or 'close_pattern' to apply to")
    elif outside_strings:
        where = child_path(path, "close_outside_strings")
        if content != "json":
            raise TemplateError(where, f"needs 'content': 'json', got {content!r}")
        if close is None:
            raise TemplateError(where, "needs a 'close' or 'close_pattern' to apply to")
        args = raw.get("content_args", {})
        if isinstance(args, dict) and args.get("string_delims"):
            raise TemplateError(
                where, "only JSON's own \"...\" strings are tracked; drop 'string_delims'"
            )
        if _can_consume(close, _STRING_CHARACTERS):
            key = "close" if close.is_literal else "close_pattern"
            raise TemplateError(
                child_path(path, key),
                "a close that can consume '\"' or '\\' could end a JSON string as well as "
                "the region; 'close_outside_strings' refuses it",
            )
    return recover, outside_strings


def _value_delimiters(path: str, raw: dict[str, Any]) -> ValueDelimiters:
    """``close_outside_strings`` written as the literals that begin and end a value."""
    unknown = sorted(set(raw) - {"open", "close"})
    if unknown:
        raise TemplateError(path, f"unknown key {unknown[0]!r}; known: close, open")
    lists = []
    for key in ("open", "close"):
        where = child_path(path, key)
        value = raw.get(key)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value:
            got = "missing" if key not in raw else _kind(value)
            raise TemplateError(where, f"must be a string or a non-empty list of strings, "
                                       f"got {got}")
        if len(value) > MAX_VALUE_DELIMITERS:
            raise TemplateError(where, f"at most {MAX_VALUE_DELIMITERS} delimiters, "
                                       f"got {len(value)}")
        for i, literal in enumerate(value):
            if not isinstance(literal, str) or not literal:
                raise TemplateError(child_path(where, i),
                                    f"must be a non-empty string, got {_kind(literal)}")
            if len(literal) > MAX_VALUE_DELIMITER_LENGTH:
                raise TemplateError(child_path(where, i), f"at most "
                                    f"{MAX_VALUE_DELIMITER_LENGTH} characters, got {len(literal)}")
        lists.append(tuple(dict.fromkeys(value)))
    opens, closes = lists
    both = sorted(set(opens) & set(closes))
    if both:
        raise TemplateError(
            path, f"{both[0]!r} both begins and ends a value: a delimiter is one or the other"
        )
    # (So the delimiter written last is the one that ends last: see ValueSpans.)
    for inner in (*opens, *closes):
        for outer in (*opens, *closes):
            if inner != outer and inner in outer:
                raise TemplateError(
                    path, f"{inner!r} is written inside {outer!r}: no delimiter may be part of "
                    "another"
                )
    return ValueDelimiters(opens, closes)


def _can_consume(delimiter: Delimiter, characters: str) -> bool:
    """Whether a match of ``delimiter`` can consume one of ``characters`` (what a
    lookahead reads is not consumed)."""
    if delimiter.literals is not None:
        return any(c in s for s in delimiter.literals for c in characters)
    from ..automata.nfa import ASSERT, CHAR, LOOK, SAVE, SPLIT, compile_nfa

    nfa = compile_nfa(delimiter.regex_source)
    codes = [ord(c) for c in characters]
    seen = set()
    stack = [nfa.start]
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        node = nfa.states[state]
        if node[0] == CHAR:
            if any(code in nfa.charsets[node[1]] for code in codes):
                return True
            stack.append(node[2])
        elif node[0] == SPLIT:
            stack.extend(node[1])
        elif node[0] in (ASSERT, SAVE):
            stack.append(node[2])
        elif node[0] == LOOK:
            stack.append(node[3])  # past the lookahead, not into its body
    return False
def _check_content_args_extensions(
    path: str, content: Any, content_args: Any, extensions: tuple[str, ...]
) -> None:
    """A content_args key that an extension adds is used only where it is declared,
    and only as that extension defines it.

    transformers ignores content_args keys it does not know, so an undeclared one
    would parse differently there without a word: it is refused instead. Nested
    value parsers are left alone when the extension is not declared (both parsers
    ignore the key there); when it is, a nested use is refused, as it would do
    nothing.
    """
    if not isinstance(content_args, dict):
        return
    for extension, (parser, key) in EXTENSION_CONTENT_ARGS.items():
        declared = extension in extensions
        where = child_path(child_path(path, "content_args"), key)
        if key in content_args:
            if not declared:
                raise TemplateError(
                    where,
                    f"{key!r} is an rtcompiler extension, not a transformers content_args "
                    f'key: declare it with "{EXTENSIONS_KEY}": ["{extension}"] at the top of '
                    "the template (transformers will then refuse the template; see "
                    "docs/extensions.md)",
                )
            if content != parser:
                raise TemplateError(where, f"{key!r} applies to {parser!r} fields only")
            _check_typed_values(where, content_args.get("tag_pattern"), content_args[key])
        if declared:
            nested = content_args.get("value_parser")
            at = child_path(path, "content_args")
            while isinstance(nested, dict) and isinstance(nested.get("args"), dict):
                at = child_path(child_path(at, "value_parser"), "args")
                if key in nested["args"]:
                    raise TemplateError(
                        child_path(at, key),
                        f"{key!r} works on a field's own {parser!r} parser, not on a "
                        "nested value_parser",
                    )
                nested = nested["args"].get("value_parser")


def _check_typed_values(path: str, tag_pattern: Any, spec: Any) -> None:
    """``{"group": NAME, "parsers": {TEXT: {"name": PARSER, "args": {...}} or null}}``,
    NAME a named group of the tag pattern other than key and value, and optionally
    ``"key_entities": [[ENTITY, TEXT], ...]``, non-empty strings."""
    if not isinstance(spec, dict):
        raise TemplateError(
            path, f"must be an object with 'group' and 'parsers', got {_kind(spec)}"
        )
    unknown = sorted(set(spec) - {"group", "parsers", "key_entities"})
    if unknown:
        raise TemplateError(
            child_path(path, unknown[0]),
            f"unknown key(s) {_quoted(unknown)}; typed_values has only 'group', 'parsers' "
            "and 'key_entities'",
        )
    entities = spec.get("key_entities", [])
    if not isinstance(entities, list) or not all(
        isinstance(pair, list) and len(pair) == 2
        and all(isinstance(s, str) and s for s in pair) for pair in entities
    ):
        raise TemplateError(
            child_path(path, "key_entities"),
            "must be a list of [entity, text] pairs of non-empty strings, in the order they "
            f"are replaced, got {entities!r}",
        )
    group = spec.get("group")
    if not isinstance(group, str):
        raise TemplateError(
            child_path(path, "group"), f"must name a group of the tag_pattern, got {_kind(group)}"
        )
    if not isinstance(tag_pattern, str):
        raise TemplateError(path, "needs a 'tag_pattern' string beside it")
    try:
        groups = regex.compile(tag_pattern, regex.DOTALL).groupindex
    except (regex.error, RecursionError, AttributeError, TypeError, IndexError):
        groups = None  # compiling the parser reports the pattern itself
    if groups is not None and (group not in groups or group in ("key", "value")):
        raise TemplateError(
            child_path(path, "group"),
            f"{group!r} must be a named group of the tag_pattern other than 'key' and "
            f"'value'; the pattern has {_quoted(sorted(groups))}",
        )
    parsers = spec.get("parsers")
    if not isinstance(parsers, dict):
        raise TemplateError(
            child_path(path, "parsers"),
            f"must be an object from a text of the group to a value parser, got {_kind(parsers)}",
        )
    for text, parser in parsers.items():
        where = child_path(child_path(path, "parsers"), text)
        if parser is None:
            continue
        if not isinstance(parser, dict) or set(parser) - {"name", "args"}:
            raise TemplateError(
                where, 'must be null (the raw text) or a value parser {"name": ..., "args": {...}}'
            )
        name = parser.get("name", "text")
        if not isinstance(name, str) or name not in CONTENT_PARSERS:
            raise TemplateError(
                child_path(where, "name"),
                f"unknown content parser {name!r}; known: {_quoted(list(CONTENT_PARSERS))}",
            )
        args = parser.get("args", {})
        if not isinstance(args, dict):
            raise TemplateError(child_path(where, "args"), f"must be an object, got {_kind(args)}")
        if "typed_values" in args:
            raise TemplateError(
                child_path(child_path(where, "args"), "typed_values"),
                "'typed_values' works on a field's own 'xml-inline' parser, not on a "
                "nested value parser",
            )


def _check_transform(path: str, transform: Any) -> None:
    """A transform string is either one whole placeholder or plain text, never a mix.

    Only object values and array items are looked at, as in the reference: object keys
    are never substituted, so they may contain anything.
    """
    stack: list[tuple[str, Any]] = [(path, transform)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            # Reversed so that the first offending string in document order is reported.
            stack.extend((child_path(where, k), v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend(reversed([(child_path(where, i), v) for i, v in enumerate(value)]))
        elif (
            isinstance(value, str)
            and _PLACEHOLDER.search(value)
            and not _PLACEHOLDER.fullmatch(value)
        ):
            raise TemplateError(
                where,
                f"{value!r} mixes a {{placeholder}} with other text; a transform string "
                "is either exactly one placeholder or plain text (no interpolation)",
            )


def _forbid_unused_captures(
    path: str, raw: dict[str, Any], open_: Delimiter | None, close: Delimiter | None
) -> None:
    """Named groups reach the output only through a transform; without one they are lost."""
    for key, delimiter in (("open_pattern", open_), ("close_pattern", close)):
        if delimiter is not None and delimiter.group_names:
            raise TemplateError(
                child_path(path, key),
                f"named group(s) {_quoted(list(delimiter.group_names))} need a 'transform' "
                "to use them (without one their text is silently dropped); add a transform "
                "or make the groups unnamed",
            )


# -- delimiters -------------------------------------------------------------------------


def _load_delimiter(
    path: str, container: dict[str, Any], literal_key: str, pattern_key: str, budget: WorkBudget
) -> Delimiter | None:
    """The delimiter given by ``literal_key`` or ``pattern_key`` of ``container``, if any."""
    if literal_key in container and pattern_key in container:
        raise TemplateError(
            path, f"'{literal_key}' and '{pattern_key}' are mutually exclusive; give only one"
        )
    if literal_key in container:
        return _literal_delimiter(child_path(path, literal_key), container[literal_key], budget)
    if pattern_key in container:
        return _pattern_delimiter(child_path(path, pattern_key), container[pattern_key], budget)
    return None


def _literal_delimiter(path: str, value: Any, budget: WorkBudget) -> Delimiter:
    if isinstance(value, str):
        if value == "":
            raise TemplateError(path, "an empty literal would match everywhere")
        delimiter = Delimiter.from_literals([value])
        _check_automaton(path, delimiter.regex_source, value, budget)
        return delimiter
    if not isinstance(value, list):
        raise TemplateError(path, f"must be a string or an array of strings, got {_kind(value)}")
    if not value:
        raise TemplateError(path, "an empty array of literals can never match; give at least one")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise TemplateError(child_path(path, i), f"literals must be strings, got {_kind(item)}")
    for i, item in enumerate(value):
        if item == "":
            raise TemplateError(child_path(path, i), "an empty literal would match everywhere")
    delimiter = Delimiter.from_literals(value)
    _check_automaton(path, delimiter.regex_source, value, budget)
    return delimiter


def _pattern_delimiter(path: str, value: Any, budget: WorkBudget) -> Delimiter:
    if not isinstance(value, str):
        # The reference hands this to regex.compile and crashes with TypeError.
        raise TemplateError(path, f"a pattern must be a string, got {_kind(value)}")
    # Sized before regex compiles it: regex expands counted repetitions, and
    # x{1000000000} would take it (and the reference) gigabytes.
    tree = read_pattern(value)
    if tree is not None:
        try:
            check_size(tree)
        except PatternError as e:
            raise TemplateError(path, e.detail) from None
    try:
        regex.compile(value, regex.DOTALL)
    except regex.error as e:
        where = f" at position {e.pos}" if isinstance(e.pos, int) else ""
        raise TemplateError(path, f"invalid regex {value!r}: {e.msg}{where}") from None
    except RecursionError:
        # regex's own parser is recursive; the reference crashes here.
        raise TemplateError(path, "regex nested too deeply to compile") from None
    except (AttributeError, TypeError, IndexError) as e:
        # A bug inside regex on a valid pattern ((?i)(?:[\D]|[\d]) -> AttributeError);
        # the reference crashes with the same exception.
        raise TemplateError(
            path,
            f"the regex module crashes compiling {value!r} ({type(e).__name__}: {e}); "
            "transformers cannot load it either -- rewrite the pattern",
        ) from None
    try:
        parse_pattern(value)
    except PatternError as e:
        raise UnsupportedPatternError(path, e.construct, e.column, value) from None
    except RecursionError:
        raise UnsupportedPatternError(path, "nesting too deep", 0, value) from None
    _check_automaton(path, value, value, budget)
    return Delimiter.from_pattern(value)


def _check_automaton(path: str, source: str, written: Any, budget: WorkBudget) -> None:
    """Compile the delimiter's automaton, complete DFA tables included, or refuse it.

    Its size is checked on the syntax tree before anything is built; the tables are
    refused as soon as their work budget, or what is left of the template's, is spent.
    Compiling is cached, so the code generator reuses what this builds.
    """
    try:
        budget.build(compile_regex(source).dfa)
    except PatternError as e:
        if e.detail:  # a size limit, worded for the template author
            raise TemplateError(path, e.detail) from None
        raise UnsupportedPatternError(path, e.construct, e.column, written) from None


# -- files ------------------------------------------------------------------------------

TOKENIZER_CONFIG = "tokenizer_config.json"


def load_template_file(path: str | os.PathLike[str]) -> Template:
    """Load a template from disk.

    ``path`` is a template JSON file, a ``tokenizer_config.json`` with a
    ``response_template`` key, or a model folder holding such a
    ``tokenizer_config.json``. File problems are :class:`TemplateError` whose ``path``
    is the file's name; problems inside the template have template paths, as from
    :func:`load_template`.
    """
    file = Path(path)
    if file.is_dir():
        file = file / TOKENIZER_CONFIG
    name = str(file)
    try:
        # utf-8-sig: a byte-order mark in front of the JSON is harmless; tolerate it.
        text = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TemplateError(name, "no such file") from None
    except UnicodeDecodeError as e:
        raise TemplateError(name, f"not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise TemplateError(name, f"cannot read the file: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise TemplateError(
            name, f"not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}"
        ) from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise TemplateError(name, f"not valid JSON: {e}") from None
    except RecursionError:
        raise TemplateError(name, "JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise TemplateError(name, f"expected a JSON object, got {_kind(data)}")
    spec = data.get("response_template")
    if spec is not None:
        return load_template(spec)
    # transformers writes no key, or null, for a tokenizer without a template.
    if file.name == TOKENIZER_CONFIG or "fields" not in data:
        raise TemplateError(
            name,
            "no 'response_template' here: neither a tokenizer config holding one "
            "nor a response template (which has 'fields')",
        )
    return load_template(data)
