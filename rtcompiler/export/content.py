"""What goes between a region's delimiters, by the field's content parser.

``text`` regions are written by the builder itself (their text and close form one
terminal). Here are the structured ones -- ``json``, ``xml-inline``, ``kv-lines``,
``pythonic`` -- and the typed scalars ``int``, ``float``, ``bool``. For a calls field whose
transform shows where the name and the arguments are (:mod:`.tools`), the body names one
of the offered tools and shapes its arguments by the tool's schema; otherwise it is
generic.

A body never contains its region's close delimiter: strings and free text inside it keep
the close's literals out (``avoid``), since the parser ends the region at the first match
whatever the body's structure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..dialect import ast, parse_pattern
from ..dialect.charsets import CharSet
from ..template.model import Field
from . import regex as rx
from .grammar import EMPTY, Expr, Lit, Rep, Rx, UpTo, alt, opt, seq
from .tools import Bounds, CallShape, Tool, json_string_safe
from .values import GEMMA_QUOTE, Values

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*", re.ASCII)
_DOTTED = re.compile(r"[A-Za-z_][\w.]*", re.ASCII)
_WORD = re.compile(r"\w+")


@dataclass
class Body:
    """A region's body: one expression, or one per tool when the tool's name is written
    by a delimiter (then each tool's delimiter and body go together)."""

    shared: Expr | None = None
    per_tool: list[tuple[Tool, Expr]] | None = None


class Bodies:
    def __init__(self, values: Values, bounds: Bounds | None, note,
                 call_keys: dict | None = None, call_keys_after: dict | None = None) -> None:
        self.values = values
        self.bounds = bounds
        self.note = note
        self.call_keys = call_keys or {}
        self.call_keys_after = call_keys_after or {}

    def body(self, field: Field, close: ast.Node | None, shape: CallShape | None,
             tools: list[Tool] | None, max_calls: int | None) -> Body:
        """``tools`` is None for a field that holds no calls (or generic calls)."""
        avoid = close_literals(close)
        kind = field.content
        if kind in ("int", "float", "bool"):
            return Body(shared=self.scalar(kind))
        if kind == "json":
            syntax = "gemma" if _gemma_like(field.content_args) else "json"
            return self.json(syntax, shape, tools, avoid, max_calls)
        if kind == "xml-inline":
            return self.xml_inline(field, close, shape, tools, avoid)
        if kind == "kv-lines":
            return self.kv_lines(field, close, shape, tools, avoid)
        if kind == "pythonic":
            return self.pythonic(shape, tools, avoid, max_calls)
        raise ValueError(f"content parser {kind!r} cannot be exported")

    # -- scalars

    def scalar(self, kind: str) -> Expr:
        ws = self.values.ws("json")
        if kind == "int":
            return seq(ws, self.values.integer(), ws)
        if kind == "float":
            return seq(ws, self.values.number(), ws)
        return seq(ws, alt(Lit("true"), Lit("false")) or EMPTY, ws)  # bool never fails

    # -- json

    def json(self, syntax: str, shape: CallShape | None, tools: list[Tool] | None,
             avoid: tuple[str, ...], max_calls: int | None) -> Body:
        v = self.values
        if shape is None or tools is None:
            if tools is not None:
                self.note("the calls' transform does not show where the name and arguments "
                          "are: calls are generic JSON")
            return Body(shared=v.value({}, syntax, avoid))
        if shape.name.where == "capture":
            per = [(t, v.value(t.parameters, syntax, avoid, _args(t))) for t in tools]
            if shape.arguments.path:
                per = [(t, self.nested(shape.arguments.path, value, syntax)) for t, value in per]
            return Body(per_tool=per)
        objects = [self.call_object(shape, t, syntax, avoid) for t in tools]
        one = alt(*objects)
        if one is None:
            raise ValueError("no tool can be called")
        if shape.per_element:
            return Body(shared=self.list_of(one, syntax, max_calls))
        return Body(shared=one)

    def list_of(self, item: Expr, syntax: str, max_calls: int | None) -> Expr:
        sep = self.values.sep(",", syntax)
        more = Rep(seq(sep, item), 0, None if max_calls is None else max_calls - 1)
        ws = self.values.ws(syntax)
        return seq(Lit("["), ws, item, more, ws, Lit("]"))

    def call_object(self, shape: CallShape, tool: Tool, syntax: str,
                    avoid: tuple[str, ...]) -> Expr:
        """The object holding a call, keys in the order chat templates write them (the name
        first), and ``{"`` at its start: a lookahead such as ``(?=\\{\\s*"name")`` in the
        open delimiter can then be proved."""
        name = self.values.key(tool.name, syntax) if syntax != "gemma" else Lit(
            GEMMA_QUOTE + tool.name + GEMMA_QUOTE)
        args = self.values.value(tool.parameters, syntax, avoid, _args(tool))
        tree: dict = {}
        # Keys the transform does not read but the chat template writes first (Command R7B's
        # "tool_call_id"), from the grammar's meta.
        for key, schema in self.call_keys.items():
            tree[key] = self.values.value(schema, syntax, avoid, key)
        _insert(tree, shape.name.path, name)
        _insert(tree, shape.arguments.path, args)
        # ... and those it writes after the arguments (Mistral v3's "id").
        for key, schema in self.call_keys_after.items():
            tree[key] = self.values.value(schema, syntax, avoid, key)
        return self.tree_object(tree, syntax)

    def tree_object(self, tree: dict, syntax: str) -> Expr:
        parts: list[Expr] = [Lit("{")]
        for i, (key, value) in enumerate(tree.items()):
            if i:
                parts.append(self.values.sep(",", syntax))
            sub = self.tree_object(value, syntax) if isinstance(value, dict) else value
            parts += [self.values.key(key, syntax), self.values.sep(":", syntax), sub]
        parts += [self.values.ws(syntax), Lit("}")]
        return seq(*parts)

    def nested(self, path: tuple[str, ...], inner: Expr, syntax: str) -> Expr:
        tree: dict = {}
        _insert(tree, path, inner)
        return self.tree_object(tree, syntax)

    # -- xml-inline

    def xml_inline(self, field: Field, close: ast.Node | None, shape: CallShape | None,
                   tools: list[Tool] | None, avoid: tuple[str, ...]) -> Body:
        args = field.content_args if isinstance(field.content_args, dict) else {}
        tag = parse_pattern(args["tag_pattern"]).root
        value_parser = args.get("value_parser")
        json_values = isinstance(value_parser, dict) and value_parser.get("name") == "json"
        if value_parser is not None and not json_values:
            raise ValueError("xml-inline with a value_parser other than json cannot be exported")
        closes = (close,) if close is not None else ()
        typed = _typed_keys(tag, args.get("typed_values"))
        typed_values = args.get("typed_values")
        entities = (
            typed_values.get("key_entities") or [] if isinstance(typed_values, dict) else []
        )
        if shape is None or tools is None or shape.per_element or shape.arguments.path:
            if tools is not None:
                self.note("xml-inline calls whose arguments are not the whole content are "
                          "written generically")
            return Body(shared=self.tag_list(tag, None, closes, avoid, json_values, typed))
        per = []
        for tool in tools:
            per.append((tool, self.tag_list(
                tag, tool, closes, avoid, json_values, typed, entities)))
        if shape.name.where == "capture":
            return Body(per_tool=per)
        return Body(shared=alt(*[b for _, b in per]))

    def tag_list(self, tag: ast.Node, tool: Tool | None, closes: tuple[ast.Node, ...],
                 avoid: tuple[str, ...], json_values: bool,
                 typed: tuple[str, dict[str, str | None]] | None = None,
                 entities: list | tuple = ()) -> Expr:
        """Tags for the tool's parameters, in order, with the text the parser skips between
        them (whitespace, see :meth:`gap`); each name written with ``entities`` (typed-values'
        ``key_entities``: the parser replaces each entity by its text, in order, so a name
        is written by the reverse, in the reverse order)."""
        head, tail = _split_at_group(tag, "value")
        key_group = _group(tag, "key")
        tail_literals = close_literals(tail) if tail is not None else ()
        value_avoid = tuple(dict.fromkeys(avoid + tail_literals))
        gap = first_gap = self.gap()

        def tag_for(key: Expr, schema: object) -> Expr:
            # With typed values (DeepSeek V3.2's string="true|false"), a string is written
            # as text and anything else as JSON, each under the group's value that says so.
            as_json = json_values
            groups = {"key": key}
            if typed is not None:
                group, keys = typed
                json_key = keys.get(_first_type(schema) or "string")
                as_json = _first_type(schema) not in ("string", None) and json_key is not None
                groups[group] = Lit(json_key if as_json else keys["string"])  # type: ignore[arg-type]
            value = self.xml_value(schema, tail, closes, value_avoid, as_json)
            return seq(_with_groups(self.bound(head), groups), value)

        if tool is None:
            key = Rx(self.bound(key_group.item))
            one = tag_for(key, {})
            more = Rep(seq(gap, one), 0, self.bounds.max_items - 1 if self.bounds else None)
            return seq(first_gap, opt(seq(one, more, gap)))
        tags: list[tuple[bool, Expr]] = []
        props = tool.parameters.get("properties") or {}
        required = set(tool.parameters.get("required") or [])
        for name, schema in props.items():
            written = name
            for entity, text in reversed(entities):
                written = written.replace(text, entity)
            if not _fullmatch(key_group.item, written):
                if name in required:
                    raise ValueError(f"tool {tool.name!r}: required parameter {name!r} "
                                     "cannot be written as an xml-inline key")
                self.note(f"parameter {name!r} of {tool.name!r} cannot be written as an "
                          "xml-inline key: left out")
                continue
            tags.append((name in required, tag_for(Lit(written), schema)))
        if not tags:
            return first_gap
        # Gaps between tags: the first tag follows the whitespace after the open, every
        # other one a gap; an optional tag takes its gap with it.
        out: list[Expr] = [first_gap]
        for i, (needed, t) in enumerate(tags):
            piece = t if i == 0 else seq(gap, t)
            out.append(piece if needed else opt(piece))
        out.append(gap)
        return seq(*out)

    def bound(self, node: ast.Node) -> ast.Node:
        if self.bounds is None:
            return node
        return rx.bounded(node, self.bounds.max_text, CharSet.of(" \n"))

    @property
    def _limit(self) -> int:
        return self.bounds.max_text if self.bounds else 0

    def gap(self) -> Expr:
        """Text between tags: whitespace, as the families write it. The parser skips any
        text there that holds no tag and no close; the text a family writes before the
        close (Qwen3-Coder's </function>) is the close's (see Builder.close_expr): free
        text here, a terminal of its own, ended where llguidance's greedy lexer could not
        tell it from the close."""
        if self.bounds is not None:
            return Rx(rx.repeat(ast.Chars(CharSet.of(" \n")), 0, 2))
        return Rx(rx.repeat(ast.Chars(rx.WHITESPACE), 0, None))

    def xml_value(self, schema: object, tail: ast.Node | None, closes: tuple[ast.Node, ...],
                  avoid: tuple[str, ...], json_values: bool,
                 typed: tuple[str, dict[str, str | None]] | None = None) -> Expr:
        full = tail if tail is not None else rx.EMPTY
        written = self.bound(full)
        limit = self.bounds.max_text if self.bounds else None
        kind = _first_type(schema)
        if kind in ("string", None) and not json_values:
            longest = schema.get("maxLength") if isinstance(schema, dict) else None
            if isinstance(longest, int) and not isinstance(longest, bool) and longest >= 0:
                # The raw text bounds the value the parser reads out of it.
                limit = longest if limit is None else min(limit, longest)
            return UpTo(written, own=(full,), others=closes, max_len=limit)
        value = self.values.value(schema if isinstance(schema, dict) else {}, "json", avoid,
                                  "value")
        text = rx.literal_text(written)
        return seq(value, Lit(text) if text is not None else Rx(written))

    # -- kv-lines

    def kv_lines(self, field: Field, close: ast.Node | None, shape: CallShape | None,
                 tools: list[Tool] | None, avoid: tuple[str, ...]) -> Body:
        args = field.content_args if isinstance(field.content_args, dict) else {}
        line_sep = args.get("line_sep", "\n")
        kv_sep = args.get("kv_sep", ":")
        if args.get("value_parser") is not None:
            raise ValueError("kv-lines with a value_parser cannot be exported")
        closes = (close,) if close is not None else ()
        sep_node = rx.literal(line_sep)
        limit = self.bounds.max_text if self.bounds else None
        if shape is None or tools is None or shape.per_element or shape.arguments.path:
            key = UpTo(rx.literal(kv_sep), own=(rx.literal(kv_sep),),
                       others=(sep_node,) + closes, max_len=limit)
            line = seq(key, UpTo(sep_node, own=(sep_node,), others=closes, max_len=limit))
            return Body(shared=seq(Lit(line_sep), Rep(line, 0, None)))
        per = []
        for tool in tools:
            props = tool.parameters.get("properties") or {}
            required = set(tool.parameters.get("required") or [])
            lines: list[Expr] = [Lit(line_sep)]
            for name, schema in props.items():
                if line_sep in name or kv_sep in name or name != name.strip():
                    if name in required:
                        raise ValueError(f"tool {tool.name!r}: parameter {name!r} cannot be "
                                         "a kv-lines key")
                    continue
                kind = _first_type(schema)
                if kind in ("string", None):
                    value: Expr = UpTo(sep_node, own=(sep_node,), others=closes, max_len=limit)
                else:
                    value = seq(self.values.value(schema, "json", avoid + (line_sep,)),
                                Lit(line_sep))
                line = seq(Lit(f"{name}{kv_sep} "), value)
                lines.append(line if name in required else opt(line))
            per.append((tool, seq(*lines)))
        if shape.name.where == "capture":
            return Body(per_tool=per)
        return Body(shared=alt(*[b for _, b in per]))

    # -- pythonic

    def pythonic(self, shape: CallShape | None, tools: list[Tool] | None,
                 avoid: tuple[str, ...], max_calls: int | None) -> Body:
        v = self.values
        if shape is None or tools is None or not shape.per_element:
            name: Expr = Rx(parse_pattern(r"[A-Za-z_][A-Za-z0-9_.]{0,30}").root)
            arg = seq(Rx(parse_pattern(r"[A-Za-z_][A-Za-z0-9_]{0,30}").root), Lit("="),
                      v.any_value("python", avoid))
            limit = self.bounds.max_items if self.bounds else None
            args = opt(seq(arg, Rep(seq(v.sep(",", "python"), arg), 0,
                                    None if limit is None else limit - 1)))
            call = seq(name, Lit("("), args, Lit(")"))
            return Body(shared=self.list_of(call, "python", max_calls))
        calls = []
        for tool in tools:
            if not _DOTTED.fullmatch(tool.name):
                self.note(f"tool {tool.name!r} is no Python name: pythonic calls cannot name it")
                continue
            props = tool.parameters.get("properties") or {}
            required = set(tool.parameters.get("required") or [])
            members = []
            for pname, schema in props.items():
                if not _IDENTIFIER.fullmatch(pname):
                    if pname in required:
                        raise ValueError(f"tool {tool.name!r}: parameter {pname!r} is no "
                                         "Python name")
                    continue
                members.append((pname, pname in required,
                                seq(Lit(pname + "="), v.value(schema, "python", avoid))))
            calls.append(seq(Lit(tool.name + "("), self._members(members), Lit(")")))
        one = alt(*calls)
        if one is None:
            raise ValueError("no offered tool can be written as a pythonic call")
        return Body(shared=self.list_of(one, "python", max_calls))

    def _members(self, members: list[tuple[str, bool, Expr]]) -> Expr:
        return self.values.members(members, "python")


def _args(tool: Tool) -> str:
    return f"{tool.name}_arguments"


def close_literals(close: ast.Node | None) -> tuple[str, ...]:
    """Literals to keep out of a body's strings so that the close cannot match inside it."""
    if close is None:
        return ()
    found = rx.required_literals(close, json_string_safe)
    if found is None:
        raise ValueError("the close delimiter has no literal that strings could be kept "
                         "from holding")
    return tuple(found)


def _gemma_like(args: object) -> bool:
    return isinstance(args, dict) and bool(args.get("unquoted_keys")) and bool(
        args.get("string_delims"))


def _first_type(schema: object) -> str | None:
    if not isinstance(schema, dict):
        return None
    t = schema.get("type")
    if isinstance(t, list):
        return t[0] if t else None
    if isinstance(t, str):
        return t
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _first_type(schema[key][0])
    return None


def _insert(tree: dict, path: tuple[str, ...], leaf: Expr) -> None:
    node = tree
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = leaf


def _group(node: ast.Node, name: str) -> ast.Group:
    found = _find_group(node, name)
    if found is None:
        raise ValueError(f"tag_pattern has no group {name!r}")
    return found


def _find_group(node: ast.Node, name: str) -> ast.Group | None:
    if isinstance(node, ast.Group) and node.name == name:
        return node
    for child in _children(node):
        found = _find_group(child, name)
        if found is not None:
            return found
    return None


def _children(node: ast.Node) -> tuple[ast.Node, ...]:
    if isinstance(node, ast.Concat):
        return node.items
    if isinstance(node, ast.Alternation):
        return node.alternatives
    if isinstance(node, (ast.Group, ast.Repeat, ast.Lookahead)):
        return (node.item,)
    return ()


def tag_head(field: Field) -> ast.Node | None:
    """An xml-inline field's tag up to its value: text holding none holds no tag."""
    args = field.content_args if isinstance(field.content_args, dict) else {}
    if field.content != "xml-inline" or "tag_pattern" not in args:
        return None
    return _split_at_group(parse_pattern(args["tag_pattern"]).root, "value")[0]


def _split_at_group(node: ast.Node, name: str) -> tuple[ast.Node, ast.Node | None]:
    """(what comes before group ``name``, what comes after) in a top-level concatenation."""
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    for i, item in enumerate(items):
        if isinstance(item, ast.Group) and item.name == name:
            return rx.concat(items[:i]), rx.concat(items[i + 1:])
    raise ValueError(f"tag_pattern: group {name!r} must be at the top level of the pattern")


def _typed_keys(tag: ast.Node, typed: object) -> tuple[str, dict[str, str | None]] | None:
    """``typed_values`` as (group, JSON type -> the group's text for it, ``None`` where no
    text says "JSON"), the key "string" for text; or None."""
    if not isinstance(typed, dict) or not isinstance(typed.get("group"), str):
        return None
    parsers = typed.get("parsers") or {}
    item = _group(tag, typed["group"]).item
    literals = [rx.literal_text(a) for a in rx.alternatives(item)]
    candidates = [v for v in literals if v is not None] + [
        "string", "number", "integer", "boolean", "null", "object", "array"]
    fits = [v for v in dict.fromkeys(candidates) if _fullmatch(item, v)]
    as_text = next((v for v in fits if v not in parsers), None)
    if as_text is None:
        raise ValueError("xml-inline typed_values without a value kept as text cannot be "
                         "exported")
    as_json = [v for v in fits if isinstance(parsers.get(v), dict)
               and parsers[v].get("name") == "json"]
    keys: dict[str, str | None] = {"string": as_text}
    for kind in ("number", "integer", "boolean", "null", "object", "array"):
        same = kind if kind in as_json else "number" if kind == "integer" and (
            "number" in as_json) else None
        keys[kind] = same or (as_json[0] if as_json else None)
    return typed["group"], keys


def _with_groups(node: ast.Node, values: dict[str, Expr]) -> Expr:
    """``node`` (group-free but for those named in ``values``) as an expression, each
    value in its group."""
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    out: list[Expr] = []
    for item in items:
        if isinstance(item, ast.Group) and item.name in values:
            out.append(values[item.name])
        else:
            text = rx.literal_text(item)
            out.append(Lit(text) if text is not None else Rx(item))
    return seq(*out)


def _fullmatch(node: ast.Node, text: str) -> bool:
    try:
        return re.fullmatch(rx.RegexWriter("lark").write(node), text) is not None
    except re.error:
        return False
