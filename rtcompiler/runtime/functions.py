"""Python functions as tool JSON schemas, the way transformers' ``get_json_schema`` does.

The reference's ``ResponseParser`` takes tools as JSON schemas or as Python functions,
which it converts with ``get_json_schema``. That converter needs only the standard
library, so a generated module carries this one (the ``tool_schema`` section, inlined
with ``tool_coercion`` into every module: ``tools`` is a runtime argument, so any
parser may be handed a function). ``rtcompiler.tool_schema`` is the same function.
The schema must be exactly what ``transformers.utils.get_json_schema`` (5.23.0)
returns -- same dict, same key order -- so that a parser typed with it behaves as the
reference typed with the function.

What is read:

* the docstring (``inspect.getdoc``), Google style: a description (everything before
  the first ``Args:``, ``Returns:`` or ``Raises:``), an ``Args:`` block with one
  ``name: description`` entry per parameter (continuation lines indented deeper), an
  optional ``Returns:`` block; an argument description may end with
  ``(choices: [...])``, a JSON list that becomes the schema's ``enum``;
* the type hints: ``str``/``int``/``float``/``bool``/``None``/``Any``, ``list[X]``,
  ``tuple[X, Y]``, ``dict[K, V]``, unions and ``Optional`` (``nullable``),
  ``Literal`` and ``Enum`` classes (``enum``). Parameters with a default are not
  required; an untyped leading ``self``/``cls`` is skipped.

Errors are those of the reference, by the same names and with the same messages (code
written against transformers matches on them): :class:`DocstringParsingException`
(no docstring, an argument without a description) and
:class:`TypeHintParsingException` (a missing or unsupported hint).
"""

from __future__ import annotations

###{standalone tool_schema
import inspect as _inspect  # noqa: E402
import json as _json  # noqa: E402
import re as _re  # noqa: E402
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints


class TypeHintParsingException(Exception):
    """A parameter has no type hint, or one that has no JSON schema equivalent."""


class DocstringParsingException(Exception):
    """The docstring is missing, or does not describe every parameter."""


# Python types whose values can be written as JSON scalars, with their JSON type names:
# the only values an ``enum`` may list. Looked up by exact type (a bool is not an int).
_SCALAR_TYPE_NAMES: dict[type, str] = {
    int: "integer",
    float: "number",
    str: "string",
    bool: "boolean",
    type(None): "null",
}

# Bare (unparameterised) hints with a fixed schema, as (type, schema) pairs.
_BARE_SCHEMAS: tuple[tuple[Any, dict[str, str]], ...] = (
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (str, {"type": "string"}),
    (bool, {"type": "boolean"}),
    (type(None), {"type": "null"}),
    (list, {"type": "array"}),
    (tuple, {"type": "array"}),
    (dict, {"type": "object"}),
    (Any, {}),
)

# Types transformers maps only when the library defining them is installed (PIL
# images, torch tensors). Such a hint can only exist if that library is imported, so
# looking in _sys.modules decides exactly as transformers' availability checks do.
_OPTIONAL_LIBRARY_TYPES: tuple[tuple[str, str, str], ...] = (
    ("PIL.Image", "Image", "image"),
    ("torch", "Tensor", "audio"),
)

_KEYWORDS = ("Args:", "Returns:", "Raises:")
_CHOICES = _re.compile(r"\(choices:", _re.IGNORECASE)


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The tool JSON schema of ``fn``: ``{"type": "function", "function": {...}}``.

    >>> def multiply(x: float, y: float = 2.0):
    ...     '''Multiply two numbers.
    ...
    ...     Args:
    ...         x: The first number
    ...         y: The second number
    ...     '''
    >>> tool_schema(multiply)["function"]["parameters"]["required"]
    ['x']
    """
    doc = _inspect.getdoc(fn)
    name = getattr(fn, "__name__", "operation")
    if not doc:
        raise DocstringParsingException(
            f"Cannot generate JSON schema for {name} because it has no docstring!"
        )
    doc = doc.strip()
    description = _description(doc)
    arg_descriptions = _arg_descriptions(doc)
    returns_text = _returns(doc)

    parameters = _parameters_schema(fn, name)
    returns_schema = parameters["properties"].pop("return", None)
    if returns_schema is not None and returns_text is not None:
        returns_schema["description"] = returns_text
    for arg, schema in parameters["properties"].items():
        if arg not in arg_descriptions:
            raise DocstringParsingException(
                f"Cannot generate JSON schema for {name} because the docstring has no "
                f"description for the argument '{arg}'"
            )
        text = arg_descriptions[arg]
        choices = _choices(text)
        if choices is not None:
            start, payload = choices
            schema["enum"] = [c.strip() if isinstance(c, str) else c for c in _json.loads(payload)]
            text = text[:start].strip()
        schema["description"] = text

    function: dict[str, Any] = {"name": name, "description": description, "parameters": parameters}
    if returns_schema is not None:
        function["return"] = returns_schema
    return {"type": "function", "function": function}


# --- docstring ------------------------------------------------------------------------


def _first_keyword(text: str, start: int, keywords: tuple[str, ...]) -> int:
    """Index of the first occurrence of any keyword at or after ``start``, or len(text).

    Keywords are found anywhere, even inside a word, as transformers finds them.
    """
    hits = [i for i in (text.find(k, start) for k in keywords) if i != -1]
    return min(hits) if hits else len(text)


def _block_start(text: str, heading: str) -> int | None:
    """Where the first ``heading`` line's body begins, or ``None``.

    A heading counts when it is followed directly by a newline and preceded by a
    newline and whitespace only (so never on the docstring's first line).
    """
    marker = heading + "\n"
    at = text.find(marker)
    while at != -1:
        before = text[:at]
        gap = len(before) - len(before.rstrip())
        if "\n" in before[len(before) - gap :]:
            return at + len(marker)
        at = text.find(marker, at + 1)
    return None


def _description(doc: str) -> str:
    return doc[: _first_keyword(doc, 0, _KEYWORDS)].strip()


def _returns(doc: str) -> str | None:
    start = _block_start(doc, "Returns:")
    if start is None:
        return None
    return doc[start : _first_keyword(doc, start, ("Raises:",))].strip()


def _is_word_char(ch: str) -> bool:
    # The standard library's \w, which transformers' docstring patterns use.
    return ch.isalnum() or ch == "_"


def _entry_head(block: str, line_start: int) -> tuple[str, str, int] | None:
    """``(indent, name, end)`` if the line at ``line_start`` opens ``name:``.

    The indent is spaces and tabs, the name a run of word characters, and ``end``
    the index just after the colon.
    """
    i = line_start
    while i < len(block) and block[i] in " \t":
        i += 1
    j = i
    while j < len(block) and _is_word_char(block[j]):
        j += 1
    if j == i or j >= len(block) or block[j] != ":":
        return None
    return block[line_start:i], block[i:j], j + 1


def _arg_descriptions(doc: str) -> dict[str, str]:
    """Argument name -> description, from the first ``Args:`` block."""
    start = _block_start(doc, "Args:")
    if start is None:
        return {}
    block = doc[start : _first_keyword(doc, start, ("Returns:", "Raises:"))].rstrip()
    block = "\n".join(line for line in block.split("\n") if line.strip())

    found: dict[str, str] = {}
    line_start = 0
    while line_start <= len(block):
        head = _entry_head(block, line_start)
        if head is None:
            newline = block.find("\n", line_start)
            if newline == -1:
                break
            line_start = newline + 1
            continue
        indent, name, after_colon = head
        # The description starts after all whitespace following the colon, even
        # newlines, and runs up to the next line that opens an entry without being
        # indented deeper than this one, or to the end of the block.
        begin = after_colon
        while begin < len(block) and block[begin].isspace():
            begin += 1
        end = _entry_end(block, begin, indent)
        found[name] = _join_lines(block[begin:end].strip())
        if end >= len(block):
            break
        line_start = end + 1
    return found


def _entry_end(block: str, begin: int, indent: str) -> int:
    """Index of the newline ending the entry whose text starts at ``begin``."""
    newline = block.find("\n", begin)
    while newline != -1:
        rest = newline + 1
        after_indent = rest + len(indent)
        deeper = block.startswith(indent, rest) and block[after_indent : after_indent + 1] in (
            " ",
            "\t",
        )
        if not deeper and _entry_head(block, rest) is not None:
            return newline
        newline = block.find("\n", rest)
    return len(block)


def _join_lines(text: str) -> str:
    """Each run of whitespace that spans a line break becomes one space."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if not text[i].isspace():
            out.append(text[i])
            i += 1
            continue
        j = i
        while j < len(text) and text[j].isspace():
            j += 1
        run = text[i:j]
        out.append(" " if "\n" in run else run)
        i = j
    return "".join(out)


def _choices(text: str) -> tuple[int, str] | None:
    """``(start, json_text)`` of a trailing ``(choices: ...)``, or ``None``.

    The first ``(choices:`` (any case) counts, provided the description ends with
    ``)``; the JSON is what lies between, without leading whitespace.
    """
    if not text.endswith(")"):
        return None
    m = _CHOICES.search(text)
    if m is None:
        return None
    return m.start(), text[m.end() : -1].lstrip()


# --- type hints -----------------------------------------------------------------------


def _parameters_schema(fn: Callable[..., Any], name: str) -> dict[str, Any]:
    hints = get_type_hints(fn)
    signature = _inspect.signature(fn)
    params = signature.parameters
    # A method's receiver is recognised by name and by having no annotation.
    first = next(iter(params), None)
    receiver = (
        first
        if first in ("self", "cls") and params[first].annotation == _inspect.Parameter.empty
        else None
    )
    required = []
    for pname, param in params.items():
        if pname == receiver:
            continue
        if param.annotation == _inspect.Parameter.empty:
            raise TypeHintParsingException(
                f"Argument {pname} is missing a type hint in function {name}"
            )
        if param.default == _inspect.Parameter.empty:
            required.append(pname)

    properties: dict[str, Any] = {}
    for pname, hint in hints.items():
        if pname == receiver:
            continue
        if pname == "return":
            # Models never write the return value: an unconvertible return hint is
            # left out rather than failing the whole tool.
            try:
                properties[pname] = _hint_schema(hint)
            except TypeHintParsingException:
                pass
        else:
            properties[pname] = _hint_schema(hint)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _bare_schema(hint: Any) -> dict[str, Any] | None:
    # A dict look-up, like the reference's, so an unhashable hint raises TypeError.
    table = {t: s for t, s in _BARE_SCHEMAS}
    for module_name, attr, json_type in _OPTIONAL_LIBRARY_TYPES:
        module = _sys.modules.get(module_name)
        if module is not None and hasattr(module, attr):
            table[getattr(module, attr)] = {"type": json_type}
    found = table.get(hint)
    return dict(found) if found is not None else None


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    # Each JSON type present, once, in order of first appearance.
    names = list(dict.fromkeys(_SCALAR_TYPE_NAMES[type(v)] for v in values))
    return {"type": names[0] if len(names) == 1 else names, "enum": values}


def _hint_schema(hint: Any) -> dict[str, Any]:
    origin, args = get_origin(hint), get_args(hint)
    if origin is None:
        if isinstance(hint, type) and issubclass(hint, Enum):
            values = [member.value for member in hint]
            if not values:
                raise TypeHintParsingException(
                    f"The Enum {hint.__name__} has no members, so no value could ever match it."
                )
            if any(type(v) not in _SCALAR_TYPE_NAMES for v in values):
                raise TypeHintParsingException(
                    f"The Enum {hint.__name__} has member values that cannot be written as "
                    f"JSON scalars.\nValues: {values}\nEnum member values must be int, float, "
                    "str, bool or None to be converted to a JSON schema."
                )
            return _enum_schema(values)
        schema = _bare_schema(hint)
        if schema is None:
            raise TypeHintParsingException(
                f"Couldn't convert the type hint {hint!r} to a JSON schema, likely because it "
                "is a custom class or object. Supported type hints are basic types like int, "
                "float, str and bool, Enum classes, typing.Literal, and list, tuple, dict and "
                "Union types containing those. If you need a more complex schema than that, "
                "you can write the JSON schema for your tool by hand and pass that instead of "
                "the function."
            )
        return schema
    if origin is Union or origin is _types.UnionType:
        choices = [_hint_schema(a) for a in args if a is not type(None)]
        if len(choices) == 1:
            result = choices[0]
        elif all(c.keys() == {"type"} and isinstance(c["type"], str) for c in choices):
            # Plain types merge into a sorted list of names (duplicates dropped); any
            # choice with more to say (items, enum, ...) keeps the union as anyOf.
            names = sorted({c["type"] for c in choices})
            result = {"type": names[0] if len(names) == 1 else names}
        else:
            result = {"anyOf": choices}
        if type(None) in args:
            result["nullable"] = True
        return result
    if origin is Literal and args:
        if any(type(a) not in _SCALAR_TYPE_NAMES for a in args):
            raise TypeHintParsingException(
                "Only the valid python literals can be listed in typing.Literal."
            )
        return _enum_schema(list(args))
    if origin is list:
        return {"type": "array", "items": _hint_schema(args[0])} if args else {"type": "array"}
    if origin is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 1:
            raise TypeHintParsingException(
                f"The type hint {str(hint).replace('typing.', '')} is a Tuple with a single "
                "element, which we do not automatically convert to JSON schema as it is rarely "
                "necessary. If this input can contain more than one element, we recommend using "
                "a list[] type instead, or if it really is a single element, remove the tuple[] "
                "wrapper and just pass the element directly."
            )
        if ... in args:
            raise TypeHintParsingException(
                "Conversion of '...' is not supported in Tuple type hints. Use list[] types "
                "for variable-length inputs instead."
            )
        return {"type": "array", "prefixItems": [_hint_schema(a) for a in args]}
    if origin is dict:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = _hint_schema(args[1])
        return schema
    # Two arguments, as the reference raises it: its message is the pair's repr.
    raise TypeHintParsingException(
        "Couldn't parse this type hint, likely due to a custom class or object: ", hint
    )


###}
