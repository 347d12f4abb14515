"""Delta plans: how a template's fields feed OpenAI-style deltas, made at compile time.

:func:`openai_plan` is the *stream plan* the ``deltas`` section of
``rtcompiler/runtime/deltas.py`` (:class:`DeltaStream`) runs: which fields feed
``content``, ``reasoning_content`` and ``tool_calls``, and whether and how
tool-call arguments stream before their region closes.
"""

from __future__ import annotations

from typing import Any

from ..automata import compile_regex
from ..dialect import PatternError
from .content import content_plan
from .transform import transform_plan

OPENAI_KEYS = ("content", "reasoning_content", "tool_calls")


def openai_plan(template: Any) -> dict:
    """The stream plan of a template: which fields feed which delta key, and how.

    ``content`` / ``reasoning_content``: ``{"field", "kind", "strip", "join"}`` (and
    ``"pieces": True`` for a yielding field, and for a joined one in a template with a
    recovering field: an empty piece sends no separator)
    where kind ``"text"`` streams region chunks, ``"value"`` sends the parsed
    value at close (when it is a string) and ``None`` sends nothing (a
    repeating field without ``join`` parses to a list). ``tool_calls``:
    ``{"field", "stream"}`` where ``stream`` is ``None`` (arguments at close) or
    what :class:`DeltaStream` needs to stream them early.
    """
    fields = {f.name: f for f in template.fields}
    plan: dict[str, Any] = {}
    for key in OPENAI_KEYS:
        f = fields.get(key)
        if f is None:
            plan[key] = None
        elif key == "tool_calls":
            plan[key] = {"field": f.name, "stream": _tool_stream(f)}
        else:
            if f.repeats and f.join is None:
                kind = None
            elif f.content == "text" and f.transform is None:
                kind = "text"
            else:
                kind = "value"
            strip = bool(content_plan(f.content, f.content_args).args.get("strip", True)) \
                if kind == "text" else False
            plan[key] = {"field": f.name, "kind": kind, "strip": strip, "join": f.join}
            if f.yields:
                # A yielding field's pieces (docs/extensions.md, yield): the separator comes
                # before a piece's text when text came before it.
                plan[key]["join"] = f.yield_join
                plan[key]["pieces"] = True
            elif f.join is not None and any(g.recover for g in template.fields):
                # In a recovering template an empty piece joins nothing (docs/extensions.md,
                # recover), as a yielding field's does.
                plan[key]["pieces"] = True
    return plan


def _tool_stream(f: Any) -> dict | None:
    """How a tool-call field's arguments can stream before its close, or None."""
    if not isinstance(f.transform, dict):
        return None
    node = transform_plan(f.transform)
    members = dict(node[1])
    function = members.get("function")
    if function is None or function[0] != "dict":
        return None
    call_id = members.get("id")
    inner = dict(function[1])
    name, arguments = inner.get("name"), inner.get("arguments")
    if name is None or arguments is None or name[0] != "ref" or arguments[0] != "ref":
        return None
    captures = set(f.capture_names)
    each = bool(f.transform_each)

    def where(ref: list) -> list | None:
        _, _, root, keys = ref
        if each:
            # A transform_each scope is the captures overlaid by the element's keys:
            # a root that is also a capture is only known once the element is.
            return None if root in captures else ["path", [root, *keys]]
        if root == "content":
            return ["path", keys]
        return ["capture", root] if not keys else None

    name_at, args_at = where(name), where(arguments)
    if name_at is None or args_at is None or args_at[0] != "path":
        return None
    id_at = where(call_id) if call_id is not None and call_id[0] == "ref" else None
    if call_id is not None and (id_at is None or id_at[0] != "capture"):
        return None  # the call's id would only be known at its close
    plan = content_plan(f.content, f.content_args)
    if plan.function == "parse_json":
        args = plan.args
        delims = args["string_delims"]
        if args["allow_non_json"] or not _simple_delims(delims):
            return None
        spec = {"parser": "json", "each": each, "name": name_at, "arguments": args_at[1]}
        if id_at is not None:
            spec["id"] = id_at[1]
        if delims:
            spec["string_delims"] = [list(d) for d in delims]
        key_pattern = args["unquoted_key_pattern"]
        if key_pattern is not None:
            head, tail = "(?<=[{,])([", "]+):"
            if not (key_pattern.startswith(head) and key_pattern.endswith(tail)):
                return None
            spec["key_chars"] = key_pattern[len(head) - 1 : -len(tail) + 1]
        return spec
    if plan.function == "parse_xml_inline" and not each:
        if (
            plan.tag_pattern is None
            or plan.value_parser is not None
            or plan.args["merge_duplicates"]
            or name_at[0] != "capture"
            or args_at[1]
            or not _automaton_pattern(plan.tag_pattern)
        ):
            return None
        spec = {"parser": "xml", "each": False, "name": name_at, "arguments": [],
                "tag_pattern": plan.tag_pattern}
        if id_at is not None:
            spec["id"] = id_at[1]
        return spec
    return None


def _automaton_pattern(pattern: str) -> bool:
    """Whether a tag pattern compiles to automata, which streaming steps through; a
    backreference tag pattern only runs whole, as a chain (automata/chain.py)."""
    try:
        compile_regex(pattern)
    except PatternError:
        return False
    return True


def _simple_delims(delims: Any) -> bool:
    """At most one pair of non-empty string delimiters: what streaming rewrites."""
    if not isinstance(delims, list) or len(delims) > 1:
        return False
    return all(
        isinstance(d, (list, tuple)) and len(d) == 2 and all(isinstance(x, str) and x for x in d)
        for d in delims
    )

