"""Values shaped by a JSON schema, in the syntax a format writes them.

Three syntaxes share one schema walk:

- ``json``: JSON as ``json.dumps`` writes it (the lark form's stand-in for ``%json``);
- ``python``: Python literals as the pythonic format writes them (``None``, ``True``,
  double-quoted strings with JSON escapes, ``"key": value`` dicts);
- ``gemma``: Gemma 4's near-JSON (bare keys, strings between ``<|"|>`` marks, no
  whitespace).

In the llguidance form, a ``json`` value is a ``%json`` schema instead (see
:func:`rtcompiler.export.tools.safe_schema`), which enforces every keyword. The walk here
enforces types, ``enum``/``const``, ``properties``/``required``, ``items`` and
``anyOf``/``oneOf``; other keywords (``pattern``, ``minimum``, ``format``, …) are not
enforced and say so through :meth:`Values.note`.

Every string (and key) keeps out ``avoid``: literals whose appearance would end the region
early.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..dialect import ast
from ..dialect.charsets import ANY, CharSet
from . import regex as rx
from .grammar import EMPTY, Alt, Expr, FreeText, Guarded, Json, Lit, Ref, Rep, Rx, UpTo, alt, seq
from .tools import Bounds, safe_schema

_ENFORCED = {"type", "enum", "const", "properties", "required", "items", "anyOf", "oneOf",
             "additionalProperties", "description", "title", "default", "examples", "$schema",
             "nullable", "maxLength", "maxProperties", "maxItems"}
# Enforced by narrowing where the range holds 0: at most as many digits as every number
# below the bound has.
_RANGES = {"minimum", "maximum"}
_DIGITS = ast.Chars(CharSet(((48, 57),)))
_NONZERO = ast.Chars(CharSet(((49, 57),)))
_JSON_WS = CharSet(((9, 10), (13, 13), (32, 32)))
_IDENT_START = CharSet(((65, 90), (95, 95), (97, 122)))
_IDENT = CharSet(((48, 57), (65, 90), (95, 95), (97, 122)))
GEMMA_QUOTE = '<|"|>'


def json_char() -> ast.Node:
    """One character of a JSON string's raw text, or one escape."""
    plain = ast.Chars(ANY.difference(CharSet.of('"\\')).difference(CharSet(((0, 0x1F),))))
    simple = rx.concat([rx.literal("\\"), ast.Chars(CharSet.of('"\\/bfnrt'))])
    hexd = ast.Chars(CharSet(((48, 57), (65, 70), (97, 102))))
    uni = rx.concat([rx.literal("\\u"), rx.repeat(hexd, 4, 4)])
    return ast.Alternation((plain, simple, uni))


class Values:
    """Builds value expressions, registering the recursive ones as rules of ``rules``."""

    def __init__(self, rules: dict[str, Expr], flavour: str, bounds: Bounds | None,
                 note: Callable[[str], None]) -> None:
        self.rules = rules
        self.flavour = flavour
        self.bounds = bounds
        self.note = note
        self.generic: dict[tuple, str] = {}

    # -- building blocks

    def ws(self, syntax: str) -> Expr:
        """Optional whitespace between tokens."""
        if syntax == "gemma":
            return EMPTY
        if self.bounds is not None:
            return Rx(rx.repeat(ast.Chars(CharSet.of(" ")), 0, 1))
        return Rx(rx.repeat(ast.Chars(_JSON_WS), 0, None))

    def sep(self, text: str, syntax: str) -> Expr:
        """``,`` or ``:`` with the whitespace the syntax allows (json.dumps' ``", "`` and
        ``": "`` when bounded)."""
        if syntax == "gemma":
            return Lit(text)
        if self.bounds is not None:
            return Rx(rx.concat([rx.literal(text), rx.repeat(ast.Chars(CharSet.of(" ")), 0, 1)]))
        ws = rx.repeat(ast.Chars(_JSON_WS), 0, None)
        return Rx(rx.concat([ws, rx.literal(text), ws]))

    def string(self, syntax: str, avoid: tuple[str, ...], others: tuple[ast.Node, ...] = (),
               longest: int | None = None) -> Expr:
        limit = _least(self.bounds.max_text if self.bounds else None, longest)
        if syntax == "gemma":
            quote = rx.literal(GEMMA_QUOTE)
            return seq(Lit(GEMMA_QUOTE), UpTo(quote, own=(quote,), others=tuple(
                rx.literal(a) for a in avoid) + others, max_len=limit))
        return seq(Lit('"'), Guarded(json_char(), avoid, 0, limit), Lit('"'))

    def key(self, name: str, syntax: str) -> Expr:
        if syntax == "gemma":
            return Lit(name)
        return Lit(json.dumps(name, ensure_ascii=False))

    def literal_value(self, value: object, syntax: str) -> Expr | None:
        """``value`` (from ``enum``/``const``) as the syntax writes it."""
        if value is None:
            return Lit({"python": "None"}.get(syntax, "null"))
        if isinstance(value, bool):
            return Lit(("True" if value else "False") if syntax == "python"
                       else ("true" if value else "false"))
        if isinstance(value, (int, float)):
            return Lit(json.dumps(value))
        if isinstance(value, str):
            if syntax == "gemma":
                return Lit(GEMMA_QUOTE + value + GEMMA_QUOTE)
            return Lit(json.dumps(value, ensure_ascii=False))
        if isinstance(value, list):
            items = [self.literal_value(v, syntax) for v in value]
            if any(i is None for i in items):
                return None
            parts: list[Expr] = [Lit("[")]
            for i, item in enumerate(items):
                if i:
                    parts.append(self.sep(",", syntax))
                parts.append(item)  # type: ignore[arg-type]
            return seq(*parts, Lit("]"))
        if isinstance(value, dict):
            parts = [Lit("{")]
            for i, (k, v) in enumerate(value.items()):
                item = self.literal_value(v, syntax)
                if item is None:
                    return None
                if i:
                    parts.append(self.sep(",", syntax))
                parts += [self.key(k, syntax), self.sep(":", syntax), item]
            return seq(*parts, Lit("}"))
        return None

    def integer(self, digits: tuple[int, int] | None = None) -> Expr:
        """``digits``: at most (below zero, above zero) digits, from the schema's range."""
        most = 6 if self.bounds is not None else None
        below, above = (most, most) if digits is None else (
            _least(most, digits[0]), _least(most, digits[1]))

        def magnitude(n: int | None) -> ast.Node | None:
            if n == 0:
                return None
            return rx.concat([_NONZERO, rx.repeat(_DIGITS, 0, None if n is None else n - 1)])

        options = [rx.literal("0")]
        if (positive := magnitude(above)) is not None:
            options.append(positive)
        if (negative := magnitude(below)) is not None:
            options.append(rx.concat([rx.literal("-"), negative]))
        return Rx(ast.Alternation(tuple(options)))

    def number(self, digits: tuple[int, int] | None = None) -> Expr:
        if self.bounds is not None:
            fraction = rx.repeat(rx.concat([rx.literal("."), rx.repeat(_DIGITS, 1, 3)]), 0, 1)
            return seq(self.integer(digits), Rx(fraction))
        if digits is not None:
            fraction = rx.repeat(rx.concat([rx.literal("."), rx.repeat(_DIGITS, 1, None)]), 0, 1)
            return seq(self.integer(digits), Rx(fraction))
        fraction = rx.repeat(rx.concat([rx.literal("."), rx.repeat(_DIGITS, 1, None)]), 0, 1)
        exponent = rx.repeat(rx.concat([ast.Chars(CharSet.of("eE")),
                                        rx.repeat(ast.Chars(CharSet.of("+-")), 0, 1),
                                        rx.repeat(_DIGITS, 1, None)]), 0, 1)
        return seq(self.integer(), Rx(rx.concat([fraction, exponent])))

    # -- by schema

    def value(self, schema: object, syntax: str, avoid: tuple[str, ...],
              name: str | None = None) -> Expr:
        """A value of ``schema``; ``name`` names the rule of its %json (llguidance)."""
        if self.flavour == "llguidance" and syntax == "json":
            return Json.of(safe_schema(schema if isinstance(schema, (dict, bool)) else {},
                                       list(avoid), self.bounds), name)
        return self._value(schema, syntax, avoid, depth=0)

    def _value(self, schema: object, syntax: str, avoid: tuple[str, ...], depth: int) -> Expr:
        if schema is True or schema == {} or not isinstance(schema, dict):
            return self.any_value(syntax, avoid)
        ranged = _digits(schema) is not None
        unenforced = sorted(set(schema) - _ENFORCED - {"$defs", "definitions"}
                            - (_RANGES if ranged else set()))
        if unenforced:
            self.note(f"schema keywords {', '.join(unenforced)} are not enforced in "
                      f"{syntax} values of the {self.flavour} form")
        if "const" in schema:
            found = self.literal_value(schema["const"], syntax)
            return found if found is not None else self.any_value(syntax, avoid)
        if isinstance(schema.get("enum"), list):
            options = [self.literal_value(v, syntax) for v in schema["enum"]]
            return alt(*[o for o in options if o is not None]) or self.any_value(syntax, avoid)
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return alt(*[self._value(s, syntax, avoid, depth + 1) for s in schema[key]]) \
                    or self.any_value(syntax, avoid)
        types = schema.get("type")
        types = [types] if isinstance(types, str) else list(types or [])
        if schema.get("nullable") and "null" not in types:
            types.append("null")
        if not types:
            if "properties" in schema:
                types = ["object"]
            else:
                return self.any_value(syntax, avoid)
        options = [self.typed(t, schema, syntax, avoid, depth) for t in types]
        return alt(*[o for o in options if o is not None]) or self.any_value(syntax, avoid)

    def typed(self, kind: str, schema: dict, syntax: str, avoid: tuple[str, ...],
              depth: int) -> Expr | None:
        if kind == "string":
            longest = schema.get("maxLength")
            return self.string(syntax, avoid, longest=longest if isinstance(longest, int)
                               and not isinstance(longest, bool) else None)
        if kind == "integer":
            return self.integer(_digits(schema))
        if kind == "number":
            return self.number(_digits(schema))
        if kind == "boolean":
            return alt(self.literal_value(True, syntax), self.literal_value(False, syntax))  # type: ignore[arg-type]
        if kind == "null":
            return self.literal_value(None, syntax)
        if kind == "array":
            items = schema.get("items", {})
            item = self._value(items, syntax, avoid, depth + 1)
            return self.array(item, syntax, most=_count(schema, "maxItems"))
        if kind == "object":
            return self.object(schema, syntax, avoid, depth)
        return None

    def array(self, item: Expr, syntax: str, at_least: int = 0, most: int | None = None
              ) -> Expr:
        limit = _least(self.bounds.max_items if self.bounds else None, most)
        if limit == 0:
            return seq(Lit("["), self.ws(syntax), Lit("]"))
        more = Rep(seq(self.sep(",", syntax), item), max(at_least - 1, 0),
                   None if limit is None else limit - 1)
        body = seq(item, more)
        inner = body if at_least else Rep(body, 0, 1)
        return seq(Lit("["), self.ws(syntax), inner, self.ws(syntax), Lit("]"))

    def object(self, schema: dict, syntax: str, avoid: tuple[str, ...], depth: int) -> Expr:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        if not props:
            extra = schema.get("additionalProperties", True)
            if extra is False:
                return seq(Lit("{"), self.ws(syntax), Lit("}"))
            if isinstance(extra, dict) and extra:
                return self._free_object(syntax, avoid,
                                         self._value(extra, syntax, avoid, depth + 1),
                                         _count(schema, "maxProperties"))
            if _count(schema, "maxProperties") is not None:
                return self._free_object(syntax, avoid, self.any_value(syntax, avoid),
                                         _count(schema, "maxProperties"))
            return self.any_object(syntax, avoid)
        required = set(schema.get("required") or [])
        members = [(name, name in required,
                    seq(self.key(name, syntax), self.sep(":", syntax),
                        self._value(sub, syntax, avoid, depth + 1)))
                   for name, sub in props.items()]
        return seq(Lit("{"), self.ws(syntax), self.members(members, syntax), self.ws(syntax),
                   Lit("}"))

    def members(self, members: list[tuple[str, bool, Expr]], syntax: str) -> Expr:
        """Members in order, each required one present, commas only between present ones."""
        # Written right to left: ``rest[i]`` is members i.. given one was already written.
        after: Expr = EMPTY
        first: Expr | None = EMPTY
        for _name, needed, member in reversed(members):
            with_comma = seq(self.sep(",", syntax), member, after)
            as_first = seq(member, after)
            if needed:
                after = with_comma
                first = as_first
            else:
                after = alt(with_comma, after) or EMPTY
                first = alt(as_first, first) if first is not None else as_first
        return first or EMPTY

    # -- generic values

    def any_value(self, syntax: str, avoid: tuple[str, ...]) -> Expr:
        key = ("value", syntax, avoid)
        if key not in self.generic:
            name = self._rule_name(f"{syntax}_value")
            self.generic[key] = name
            self.rules[name] = EMPTY  # reserved: the definition refers to itself
            scalars = [self.string(syntax, avoid), self.number(),
                       self.literal_value(True, syntax), self.literal_value(False, syntax),
                       self.literal_value(None, syntax)]
            if self.bounds is not None:  # bounded nesting: containers of scalars only
                inner = alt(*scalars)
                assert inner is not None
                containers = [self.array(inner, syntax), self._free_object(syntax, avoid, inner)]
            else:
                containers = [self.array(Ref(name), syntax), self.any_object(syntax, avoid)]
            self.rules[name] = alt(*scalars, *containers)  # type: ignore[arg-type]
        return Ref(self.generic[key])

    def any_object(self, syntax: str, avoid: tuple[str, ...]) -> Expr:
        if self.bounds is not None:
            scalars = alt(self.string(syntax, avoid), self.number(),
                          self.literal_value(True, syntax), self.literal_value(False, syntax),
                          self.literal_value(None, syntax))
            assert scalars is not None
            return self._free_object(syntax, avoid, scalars)
        key = ("object", syntax, avoid)
        if key not in self.generic:
            name = self._rule_name(f"{syntax}_object")
            self.generic[key] = name
            self.rules[name] = EMPTY
            self.rules[name] = self._free_object(syntax, avoid, self.any_value(syntax, avoid))
        return Ref(self.generic[key])

    def _free_object(self, syntax: str, avoid: tuple[str, ...], values: Expr,
                     most: int | None = None) -> Expr:
        if syntax == "gemma":
            longest = 11 if self.bounds else None
            key: Expr = Rx(rx.concat([ast.Chars(_IDENT_START),
                                      rx.repeat(ast.Chars(_IDENT), 0, longest)]))
        else:
            key = self.string(syntax, avoid)
        member = seq(key, self.sep(":", syntax), values)
        limit = _least(self.bounds.max_items if self.bounds else None, most)
        if limit == 0:
            return seq(Lit("{"), self.ws(syntax), Lit("}"))
        more = Rep(seq(self.sep(",", syntax), member), 0, None if limit is None else limit - 1)
        return seq(Lit("{"), self.ws(syntax), Rep(seq(member, more), 0, 1), self.ws(syntax),
                   Lit("}"))

    def _rule_name(self, base: str) -> str:
        name, n = base, 1
        while name in self.rules:
            n += 1
            name = f"{base}_{n}"
        return name


def _least(*limits: int | None) -> int | None:
    known = [n for n in limits if n is not None]
    return min(known) if known else None


def _count(schema: dict, key: str) -> int | None:
    n = schema.get(key)
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None


def _digits(schema: dict) -> tuple[int, int] | None:
    """At most how many digits a number below zero and one above zero may have so that
    every such number lies within ``minimum``..``maximum``; ``None`` unless both are given
    and the range holds 0 (then a shorter number is always inside)."""
    low, high = schema.get("minimum"), schema.get("maximum")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high)):
        return None
    if not low <= 0 <= high:
        return None

    def most(bound: float) -> int:
        # A number whose whole part has fewer digits than the bound's is below it.
        whole = int(bound)
        return len(str(whole)) - 1 if whole >= 1 else 0

    return most(-low), most(high)


def free_text(avoid: tuple[ast.Node, ...], bounds: Bounds | None, min_len: int = 0) -> Expr:
    """Text in which none of ``avoid`` matches."""
    return FreeText(avoid, min_len, bounds.max_text if bounds else None)


__all__ = ["Alt", "Values", "free_text", "json_char"]
