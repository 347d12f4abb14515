"""Tool-argument typing: cast parsed tool-call arguments with the tools' JSON schemas.

A model writes every argument as text in some formats (XML-ish tags, ``key: value``
lines), so ``"7"`` must become ``7`` when the tool's schema says ``integer``. Given
the ``tools`` of the request (as ``apply_chat_template`` takes them), each closed
region's value is walked for tool calls (``{"function": {"name": ..., "arguments":
{...}}}``, or lists of them) and each *string* argument -- or each string in a list
collected by ``merge_duplicates`` -- is cast to the first schema type it fits.

Behaviour is transformers 5.23.0's ``ResponseParser`` tool typing (``_schema_types``,
``_coerce``, ``_coerce_tool_calls``). A tool given as a Python function is converted
as the reference converts it with ``get_json_schema``, by ``tool_schema`` (the
``tool_schema`` section of ``runtime/functions.py``, which every module carries with
this one).

Everything is in the ``tool_coercion`` section (standard library only).
"""

from __future__ import annotations

###{standalone tool_coercion
import json as _json  # noqa: E402
import types as _types  # noqa: E402
from collections.abc import Callable, Iterable
from typing import Any


def tool_parameters(tools: "Iterable[Any] | None") -> dict:  # noqa: UP037
    """Tool name -> its parameters' ``properties`` (``{}`` when it has none).

    Tools may be wrapped (``{"type": "function", "function": {...}}``) or bare
    function schemas; entries that are neither are skipped, as the reference does.
    """
    params: dict = {}
    for tool in tools or []:
        # (Exact types first, as in coerce_tool_calls: every parser reads its tools.)
        if type(tool) is not dict:
            # inspect.isfunction/ismethod: the functions the reference converts.
            if isinstance(tool, (_types.FunctionType, _types.MethodType)):
                tool = tool_schema(tool)
            if not isinstance(tool, dict):
                continue
        spec = tool.get("function", tool)
        if type(spec) is not dict and not isinstance(spec, dict):
            continue
        name = spec.get("name")
        if type(name) is str or isinstance(name, str):
            parameters = spec.get("parameters")
            properties = (
                parameters.get("properties")
                if type(parameters) is dict or isinstance(parameters, dict) else None
            )
            params[name] = (
                properties if type(properties) is dict or isinstance(properties, dict) else {}
            )
    return params


def schema_types(schema: object) -> tuple:
    """The JSON types a schema admits, in the order to try them.

    ``type`` (a name or a list of names) first, then each ``anyOf``/``oneOf`` choice
    recursively, then ``null`` if the schema is ``nullable`` (how transformers'
    get_json_schema marks an Optional). Duplicates are kept: they are harmless.
    """
    if not isinstance(schema, dict):
        return ()
    declared = schema.get("type")
    found = [declared] if isinstance(declared, str) else []
    if isinstance(declared, list):
        found.extend(name for name in declared if isinstance(name, str))
    for union in ("anyOf", "oneOf"):
        # Iterated as written: a non-list value behaves as in the reference (a string
        # or dict contributes nothing, a number raises TypeError).
        for choice in schema.get(union) or []:
            found.extend(schema_types(choice))
    if schema.get("nullable") and "null" not in found:
        found.append("null")
    return tuple(found)


def coerce_argument(raw: str, types: tuple) -> object:
    """``raw`` as the first of ``types`` it is a valid spelling of; else ``raw``."""
    for name in types:
        # ValueError (json.JSONDecodeError included) means "not this type, try the
        # next"; anything else is a real error and propagates.
        try:
            if name == "integer":
                try:
                    return int(raw)
                except ValueError:
                    # JSON Schema integers include whole numbers written as floats: "3.0".
                    number = float(raw)
                    if number.is_integer():
                        return int(number)
                    continue
            if name == "number":
                number = float(raw)
                if number != number or number in (float("inf"), float("-inf")):
                    continue  # NaN and infinities are not JSON numbers
                # Keep an int when the text had no fractional part ("3", "1e3").
                return int(number) if number.is_integer() and "." not in raw else number
            if name == "boolean":
                word = raw.strip().lower()
                if word in ("true", "1", "false", "0"):
                    return word in ("true", "1")
            if name == "null" and raw.strip() in ("null", "None"):
                return None
            if name in ("object", "array"):
                decoded = _json.loads(raw)
                if isinstance(decoded, dict if name == "object" else list):
                    return decoded
        except ValueError:
            continue
        except RecursionError:
            # The reference crashes here; a bad output is a ValueError.
            raise ValueError(
                f"tools: an argument is nested too deeply to decode as {name} "
                "(Python's recursion limit)"
            ) from None
    # "string", unknown type names and failed casts all keep the text.
    return raw


_CASTS = frozenset(("integer", "number", "boolean", "null", "object", "array"))
# The keys with which a schema may admit more than its one "type" (see schema_types).
_UNIONS = frozenset(("anyOf", "oneOf", "nullable"))


def _cast_types(schema: object) -> tuple:
    """``schema_types(schema)`` without the names that cannot turn text into
    something else ("string", unknown names): those pass the text through."""
    if type(schema) is dict and type(schema.get("type")) is str and _UNIONS.isdisjoint(schema):
        # The usual schema, one declared type: schema_types would give just that.
        declared = schema["type"]
        return (declared,) if declared in _CASTS else ()
    return tuple([t for t in schema_types(schema) if t in _CASTS])


_UNREAD = object()


def _casts(properties: dict) -> "dict | None":  # noqa: UP037
    """Argument name -> the types to cast it to, for the properties that have some,
    or None when a schema cannot be read ahead (a malformed one raises only if its
    argument is passed: it is then read per argument, when met)."""
    try:
        found = {}
        for key, schema in properties.items():
            if type(schema) is dict:
                declared = schema.get("type")
                if type(declared) is str and _UNIONS.isdisjoint(schema):
                    # The usual schema, one declared type (_cast_types, written out).
                    if declared in _CASTS:
                        found[key] = (declared,)
                    continue
            types = _cast_types(schema)
            if types:
                found[key] = types
        return found
    except Exception:
        return None


def coerce_tool_calls(value: object, params: dict, known: "dict | None" = None) -> object:  # noqa: UP037
    """Type the arguments of the tool call(s) in ``value``, in place; returns ``value``.

    A list is walked item by item into a new list; a dict is a tool call when its
    ``function`` is a dict with a string ``name`` and dict ``arguments``. Only
    arguments named in the tool's properties, with a schema that admits some type,
    are touched; an argument already typed by the content parser is left alone.
    ``known``: per tool name, the types of its castable arguments (see ``_casts``),
    kept between calls of one parser: with it, the schemas are read once per tool,
    and a call of a tool with nothing to cast (all strings) costs one lookup.
    """
    # (Exact types first: the content parser makes plain dicts, lists and strings, and
    # a type test costs less than isinstance's call.)
    if type(value) is not dict:
        if isinstance(value, list):
            return [coerce_tool_calls(item, params, known) for item in value]
        if not isinstance(value, dict):
            return value
    function = value.get("function")
    if type(function) is not dict and not isinstance(function, dict):
        return value
    name, arguments = function.get("name"), function.get("arguments")
    if (
        type(name) is not str and not isinstance(name, str)
        or type(arguments) is not dict and not isinstance(arguments, dict)
    ):
        return value
    casts = None
    if known is not None:
        casts = known.get(name, _UNREAD)
        if casts is _UNREAD:
            properties = params.get(name)
            casts = known[name] = _casts(properties) if properties else {}
        if casts is not None:
            # A tool has few arguments to cast, if any (strings pass through): walk those.
            for key, types in casts.items():
                argument = arguments.get(key)
                if isinstance(argument, str):
                    arguments[key] = coerce_argument(argument, types)
                elif isinstance(argument, list) and "array" not in types:
                    arguments[key] = _coerced_items(argument, types)
            return value
    properties = params.get(name)
    if not properties:
        return value
    for key, argument in arguments.items():
        if key not in properties:
            continue
        types = _cast_types(properties[key])
        if not types:
            continue
        if isinstance(argument, str):
            arguments[key] = coerce_argument(argument, types)
        elif isinstance(argument, list) and "array" not in types:
            arguments[key] = _coerced_items(argument, types)
    return value


def _coerced_items(argument: list, types: tuple) -> list:
    """Several values for one key, collected by xml-inline's merge_duplicates: each cast."""
    return [coerce_argument(item, types) if isinstance(item, str) else item for item in argument]


def tool_coercer(tools: "Iterable[Any] | None") -> "Callable[[Any], Any] | None":  # noqa: UP037
    """A ``value -> value`` typing function for ``tools``, or ``None`` if nothing to do.

    ``None`` when no tool declares anything (the reference then skips typing).
    """
    if tools is None:
        return None
    params = tool_parameters(tools)
    if not params:
        return None
    known: dict = {}
    return lambda value: coerce_tool_calls(value, params, known)


###}


# In a generated module the tool_schema section stands before this one.
from .functions import tool_schema  # noqa: E402
