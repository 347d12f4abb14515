"""Tool calls: where a template puts a call's name and arguments, and what the offered
tools allow there.

The calls field's ``transform`` says it: its ``function.name`` and ``function.arguments``
are placeholders naming a capture of the open (or close) delimiter, a path into the parsed
content, or -- with ``transform_each`` -- a key of each element of the parsed list. With
those places known, the grammar writes one of the offered tools' names where the name
goes and that tool's arguments where the arguments go. A template whose transform does not
show both places gets no tool constraint (generic calls), and the exporter says so.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from ..template import Template
from ..template.model import Field
from . import regex as rx

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class Place:
    """``where`` is ``"capture"`` (``path`` = (group name,)), ``"content"`` (a path into the
    parsed content; () is the content itself) or ``"element"`` (a path into each element of
    the parsed list)."""

    where: str
    path: tuple[str, ...]


@dataclass(frozen=True)
class CallShape:
    """Where the name and the arguments of a call are, for one calls field."""

    name: Place
    arguments: Place

    @property
    def per_element(self) -> bool:
        return self.arguments.where == "element"


@dataclass(frozen=True)
class Tool:
    name: str
    parameters: dict  # a JSON schema for the arguments object


def call_shape(field: Field) -> CallShape | None:
    """Where ``field``'s transform takes the function name and arguments from, or ``None``
    when it does not show both."""
    if field.transform is None:
        return None
    name = _locate(field, ("function", "name"))
    arguments = _locate(field, ("function", "arguments"))
    if name is None or arguments is None or arguments.where == "capture":
        return None
    if (name.where == "element") != (arguments.where == "element"):
        return None
    return CallShape(name, arguments)


def _locate(field: Field, path: tuple[str, ...]) -> Place | None:
    node = field.transform
    for i, key in enumerate(path + ("",)):
        if isinstance(node, str):
            m = _PLACEHOLDER.fullmatch(node)
            if m is None:
                return None
            ref = tuple(m.group(1).split(".")) + path[i:]
            if field.transform_each:
                if ref[0] in field.capture_names:
                    return Place("capture", ref[:1]) if len(ref) == 1 else None
                return Place("element", ref)
            if ref[0] == "content":
                return Place("content", ref[1:])
            if ref[0] in field.capture_names and len(ref) == 1:
                return Place("capture", ref)
            return None
        if i == len(path) or not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return None


def offered_tools(tools: list | None, choice: str) -> list[Tool]:
    """The tools a call may name, after ``--tool-choice`` (a tool's name keeps only it)."""
    out = []
    for i, tool in enumerate(tools or []):
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ValueError(f"tools[{i}]: expected {{'type': 'function', 'function': "
                             "{'name': …, 'parameters': …}}")
        params = fn.get("parameters")
        if params is None:
            params = {"type": "object", "properties": {}}
        if not isinstance(params, (dict, bool)):
            raise ValueError(f"tools[{i}].function.parameters: expected a JSON schema object")
        out.append(Tool(fn["name"], params if isinstance(params, dict) else {}))
    if choice not in ("auto", "required", "none"):
        chosen = [t for t in out if t.name == choice]
        if not chosen:
            names = ", ".join(t.name for t in out) or "none"
            raise ValueError(f"--tool-choice {choice!r}: no such tool among the offered ones "
                             f"({names})")
        return chosen
    return out


def calls_field(template: Template) -> Field | None:
    return next((f for f in template.fields if f.name == "tool_calls" and f.open is not None),
                None)


# -------------------------------------------------------------- schemas for %json


def json_string_safe(text: str) -> bool:
    """Whether ``text`` can occur as such inside a JSON string's raw text (no quote, no
    backslash, no control character: JSON escapes those)."""
    return not any(c in '"\\' or ord(c) < 0x20 for c in text)


def safe_schema(schema: dict | bool, avoid: list[str], bounds: Bounds | None) -> dict:
    """``schema`` made to keep the ``avoid`` literals out of every string and key (an
    argument string that holds a region's close delimiter would end the region early),
    and, with ``bounds``, small enough that a model finishes it.

    Only ever narrows what the schema allows.
    """
    defs: dict = {}
    pattern = rx.avoid_pattern(avoid) if avoid else None
    out = _Safe(pattern, bounds, defs).walk(copy.deepcopy(schema))
    if defs:
        out = {"$defs": {**out.pop("$defs", {}), **defs}, **out}
    if bounds is not None:
        # json.dumps' separators (or none), no other whitespace: a small model otherwise
        # indents forever.
        out = {"x-guidance": {"whitespace_flexible": False, "item_separator": ", ?",
                              "key_separator": ": ?"}, **out}
    return out


@dataclass(frozen=True)
class Bounds:
    """Limits that make a grammar finish under sampling (a small model otherwise writes
    forever): characters of free text, calls per turn, and the JSON size limits."""

    max_text: int = 40
    max_calls: int = 2
    max_items: int = 3
    number_range: int = 10**6


_ANY = "rtc_any"
_TEXT = "rtc_text"
_ANY_DEPTH = 4  # containers in a value of any type
_BOUNDED_KEY = "^[a-z][a-z0-9_]{0,11}$"


class _Safe:
    def __init__(self, pattern: str | None, bounds: Bounds | None, defs: dict) -> None:
        self.pattern = pattern
        self.bounds = bounds
        self.defs = defs

    def any_value(self, depth: int = 0) -> dict:
        """Any JSON value, nested at most ``_ANY_DEPTH`` containers deep: a recursive
        definition made llguidance's schema compiler fail ("Schema intersection stack level
        exceeded") as soon as an anyOf, allOf or patternProperties met it."""
        name = _ANY if depth == 0 else f"{_ANY}_{depth}"
        if name not in self.defs:
            self.defs[name] = {}  # reserve the name before recursing
            scalars: list = [{"type": "null"}, {"type": "boolean"},
                             self.walk({"type": "number"}), self.walk({"type": "string"})]
            if self.bounds is None and depth < _ANY_DEPTH:
                inner = self.any_value(depth + 1)
                containers = [{"type": "array", "items": inner}, self.free_object(inner)]
            elif self.bounds is None:
                containers = []
            else:  # nesting bounded: containers hold scalars only
                containers = [{"type": "array", "items": {"anyOf": scalars},
                               "maxItems": self.bounds.max_items},
                              self.free_object({"anyOf": scalars})]
            self.defs[name] = {"anyOf": scalars + containers}
        return {"$ref": f"#/$defs/{name}"}

    def free_object(self, values: dict) -> dict:
        out: dict = {"type": "object"}
        if self.bounds is not None:  # short identifier keys: nothing to avoid, and they end
            out["patternProperties"] = {_BOUNDED_KEY: values}
            out["additionalProperties"] = False
        elif self.pattern is not None:
            out["patternProperties"] = {self.pattern: values}
            out["additionalProperties"] = False
        else:
            out["additionalProperties"] = values
        if self.bounds is not None:
            out["maxProperties"] = self.bounds.max_items
        return out

    def walk(self, schema: dict | bool) -> dict:
        if schema is True or schema == {}:
            return self.any_value()
        if schema is False or not isinstance(schema, dict):
            return schema  # type: ignore[return-value]
        s = dict(schema)
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            if isinstance(s.get(key), list):
                s[key] = [self.walk(x) for x in s[key]]
        if isinstance(s.get("$defs"), dict):
            s["$defs"] = {k: self.walk(v) for k, v in s["$defs"].items()}
        if isinstance(s.get("properties"), dict):
            s["properties"] = {k: self.walk(v) for k, v in s["properties"].items()}
        if isinstance(s.get("items"), (dict, bool)):
            s["items"] = self.walk(s["items"])
        types = s.get("type")
        types = [types] if isinstance(types, str) else (types or [])
        typeless = not types and not any(k in s for k in ("anyOf", "oneOf", "allOf", "$ref",
                                                            "enum", "const"))
        if "string" in types and self.pattern is not None:
            # The pattern is long (it spells out every way to miss the literals): written
            # once, referred to from every string.
            self.defs.setdefault(_TEXT, {"pattern": self.pattern})
            s["allOf"] = s.get("allOf", []) + [{"$ref": f"#/$defs/{_TEXT}"}]
        if "object" in types or (typeless and "properties" in s):
            extra = s.get("additionalProperties", True)
            if extra is not False:
                if self.bounds is not None and s.get("properties"):
                    s["additionalProperties"] = False  # the declared keys are enough
                else:
                    values = self.any_value() if extra is True or extra == {} else self.walk(
                        extra)
                    key = _BOUNDED_KEY if self.bounds is not None else self.pattern
                    if key is not None:
                        s["patternProperties"] = {key: values}
                        s["additionalProperties"] = False
                    else:
                        s["additionalProperties"] = values
            if self.bounds is not None and not s.get("properties"):
                s["maxProperties"] = min(s.get("maxProperties", self.bounds.max_items),
                                         self.bounds.max_items)
        if self.bounds is not None:
            if "string" in types:
                s["maxLength"] = min(s.get("maxLength", self.bounds.max_text), self.bounds.max_text)
            if "integer" in types or "number" in types:
                s["minimum"] = max(s.get("minimum", -self.bounds.number_range),
                                   -self.bounds.number_range)
                s["maximum"] = min(s.get("maximum", self.bounds.number_range),
                                   self.bounds.number_range)
            if "array" in types:
                s["maxItems"] = min(s.get("maxItems", self.bounds.max_items), self.bounds.max_items)
                if "items" not in s:
                    s["items"] = self.any_value()
        if typeless and not s:
            return self.any_value()
        return s
