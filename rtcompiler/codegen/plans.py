"""Per-field code: a field's content parser and transform, specialised and emitted.

For field ``i`` the generator writes a function ``_process_i(body, captures)``
that calls the runtime parser chosen by the field's ``content`` with arguments
prepared at compile time (``_ARGS_i...`` data), then the field's transform (a
pre-built node tree, ``_TRANSFORM_i``). Nested value parsers get functions of
their own; an ``xml-inline`` tag pattern becomes one more compiled regex.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..runtime import content as content_runtime
from ..runtime import transform as transform_runtime
from ..template import Field
from .literals import literal

if TYPE_CHECKING:
    from .generate import _Module

CONTENT = "rtcompiler.runtime.content"
TRANSFORM = "rtcompiler.runtime.transform"
TOOLS = "rtcompiler.runtime.tools"


def streamable(f: Field) -> bool:
    return f.content in content_runtime.STREAMABLE_PARSERS


def may_hold_tool_calls(f: Field) -> bool:
    # The reference types tool-call arguments in the value of any field when
    # tools are given, so every template carries the (small) typing code.
    return True


def tool_sections() -> list[tuple[str, str]]:
    return [(TOOLS, "tool_coercion")]


def field_function(
    name: str, index: int, f: Field, module: _Module
) -> tuple[str, list[tuple[str, str]]]:
    """Source of ``name(body, captures)`` for field ``f``, and the sections it uses."""
    plan = content_runtime.content_plan(f.content, f.content_args)
    sections = [(CONTENT, s) for s in plan.sections]
    content_fn = _content_function(f"_content_{index}", plan, module, sections)
    lines = [f"def {name}(body, captures):"]
    if f.transform is None:
        lines.append(f"    return {content_fn}(body)")
    else:
        node = f"_TRANSFORM_{index}"
        module.data.append(f"{node} = {literal(transform_runtime.transform_plan(f.transform))}\n")
        sections += [(TRANSFORM, s) for s in transform_runtime.transform_sections(f.transform_each)]
        if f.transform_each:
            lines.append(
                f"    return transform_each({content_fn}(body), captures, {node}, {literal(f.name)})"
            )
        else:
            lines.append(f"    return transform_content({content_fn}(body), captures, {node})")
    return "\n".join(lines) + "\n", sections


def _content_function(
    name: str, plan: content_runtime.ContentPlan, module: _Module, sections: list
) -> str:
    """Emit ``name(body)`` for ``plan`` (recursively for nested value parsers)."""
    args = f"_ARGS{name}"
    module.data.append(f"{args} = {literal(plan.args)}\n")
    call = f"{plan.function}(body, {args}"
    if plan.function in ("parse_xml_inline", "parse_kv_lines"):
        nested = "None"
        if plan.value_parser is not None:
            nested = _content_function(f"{name}_value", plan.value_parser, module, sections)
        if plan.function == "parse_xml_inline":
            finditer = "None"
            if plan.tag_pattern is not None:
                finditer = f"_REGEXES[{module.regex(plan.tag_pattern)}].finditer"
            call += f", {finditer}"
        call += f", {nested}"
    call += ")"
    module.functions.append(f"def {name}(body):\n    return {call}\n")
    for s in plan.sections:
        if (CONTENT, s) not in sections:
            sections.append((CONTENT, s))
    return name
