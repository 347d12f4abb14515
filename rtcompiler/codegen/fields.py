"""Per-field code: a field's content parser and transform, specialised and emitted.

For field ``i`` the generator writes a function ``_process_i(body, captures)``
that calls the runtime parser chosen by the field's ``content`` with arguments
prepared at compile time (``_ARGS_i...`` data), then the field's transform: written
out as one expression (a dict display whose values are subscripts of the parsed value
and the captures, every key and literal emitted by ``literal``), with the pre-built
node tree ``_TRANSFORM_i`` interpreted instead when a lookup fails, so that errors
are the reference's, or always when the transform nests too deeply to be written as
one expression (see ``literals.MAX_NESTING``). Nested value parsers get functions of
their own; an ``xml-inline`` tag pattern becomes one more compiled regex.
"""

from __future__ import annotations

from ..automata import compile_tag_pattern
from ..automata.dfa import WorkBudget
from ..dialect.errors import PatternError
from ..template import Field, TemplateError
from . import content as content_plans
from . import transform as transform_plans
from .builder import ModuleBuilder
from .literals import MAX_NESTING, assignment, literal, nesting


def streamable(f: Field) -> bool:
    return f.content in content_plans.STREAMABLE_PARSERS


def field_function(name: str, index: int, f: Field, module: ModuleBuilder) -> str:
    """Source of ``name(body, captures)`` for field ``f`` (and of ``_decoded_{index}(content,
    captures)`` when the field is ``decodable``); the sections it uses go into ``module``."""
    plan = content_plans.content_plan(f.content, f.content_args, f.tags_only)
    # The content parser's call, written out in the field's function (no function of
    # its own: one Python call less per region closed).
    _, content_call = _content_function(
        f"_content_{index}", plan, module, f"fields.{f.name}.content_args",
        define=False,
    )
    if f.recover_tag_pattern is not None:
        # A body the tags do not read whole is read again with the field's second
        # pattern (slower, and only ever run on such a body) before it is given up.
        retry = content_plans.with_tag_pattern(plan, f.recover_tag_pattern)
        _, retry_call = _content_function(
            f"_content_{index}_retry", retry, module, f"fields.{f.name}.content_args",
            define=False, tag_where=f"fields.{f.name}.recover_tag_pattern",
        )
        module.functions.append(
            f"def _content_{index}(body):\n    try:\n        return {content_call}\n"
            f"    except ValueError:\n        return {retry_call}\n"
        )
        content_call = f"_content_{index}(body)"
    node = _transform_node(index, f, module)
    source = _with_transform(f"def {name}(body, captures):", content_call, f, node)
    if decodable(f, plan):
        # A close-outside-strings region whose body the walk has decoded, to prove its
        # close outside strings, gets that value: one decode per call, not two.
        source += _with_transform(f"def _decoded_{index}(content, captures):", "content", f, node)
    return source


def decodable(f: Field, plan: content_plans.ContentPlan | None = None) -> bool:
    """Whether ``json.loads`` of a body is the field's content value whenever it
    succeeds (plain JSON: no key repair, no string delimiters), so that a value decoded
    before the region closes can stand for its parse (see Region.decoded)."""
    if f.close_outside_strings is not True or f.recover_tag_pattern is not None:
        return False
    if plan is None:
        plan = content_plans.content_plan(f.content, f.content_args, f.tags_only)
    return plan.function == "parse_json" and plan.args["unquoted_key_pattern"] is None


def _transform_node(index: int, f: Field, module: ModuleBuilder) -> str | None:
    """The name of the field's transform tree (emitted once), or None without one."""
    if f.transform is None:
        return None
    node = f"_TRANSFORM_{index}"
    module.data.append(assignment(node, transform_plans.transform_plan(f.transform)))
    module.need("transform_each" if f.transform_each else "transform")
    return node


def _with_transform(header: str, content_call: str, f: Field, node: str | None) -> str:
    """A function ``header`` returning the field's value from ``content_call``, its
    content (an expression of the function's arguments)."""
    lines = [header]
    if node is None:
        lines.append(f"    return {content_call}")
    elif f.transform_each:
        lines.append(
            f"    return transform_each({content_call}, captures, {node}, {literal(f.name)})"
        )
    elif nesting(f.transform) >= MAX_NESTING:
        # Written out, it would nest as deeply as the transform: too deep for Python's
        # parser past 200 levels. The node tree, assigned in parts, is interpreted.
        lines.append(f"    return transform_content({content_call}, captures, {node})")
    else:
        # The transform written out as one expression (a dict literal, typically):
        # walking the node tree cost a few microseconds per tool call. The tree
        # stays for the errors, which only the interpreter words as the reference does.
        expression = transform_plans.transform_expression(
            transform_plans.transform_plan(f.transform), "content", "captures", literal
        )
        if content_call != "content":
            lines.append(f"    content = {content_call}")
        lines += [
            "    try:",
            f"        return {expression}",
            "    except (KeyError, TypeError):",
            f"        return transform_content(content, captures, {node})",
        ]
    return "\n".join(lines) + "\n"


def _check_tag_pattern(pattern: str, where: str, budget: WorkBudget) -> None:
    """An xml-inline tag pattern must be in our dialect, and matched in linear time
    (a backreference only in the tag-pair shape): refuse it when compiling.

    (transformers only fails when a region of the field is parsed, with
    ``regex.error``; a generated module cannot raise that type, and a template
    that can never parse such a region is better refused up front.) Its tables,
    which the module embeds, count towards the template's work budget.
    """
    try:
        tag = compile_tag_pattern(pattern)
        if tag.regex is not None:
            budget.build(tag.regex.dfa)
    except PatternError as e:
        # The pattern itself may be long (a size refusal): name the column, not the text.
        detail = f"{e.detail} at column {e.column}" if e.detail else str(e)
        raise TemplateError(where, detail) from None


def _content_function(
    name: str, plan: content_plans.ContentPlan, module: ModuleBuilder, where: str,
    define: bool = True, tag_where: str | None = None,
) -> tuple[str, str]:
    """The call that parses ``body`` for ``plan``, an expression of ``body``, with the
    data it needs emitted; with ``define``, also a function ``name(body)`` making it
    (what a nested value parser is passed as). Returns ``name`` and the call.
    ``tag_where`` names the tag pattern in errors (default: ``where``'s ``tag_pattern``)."""
    module.need(*plan.sections)
    if plan.function == "parse_text":
        # parse_text itself, written out: a text value costs no call.
        call = "body.strip()" if plan.args["strip"] else "body"
    else:
        args = f"_ARGS{name}"
        module.data.append(assignment(args, plan.args))
        function = plan.function
        if function == "parse_json" and (
            plan.args["string_delims"] == [] and plan.args["unquoted_key_pattern"] is None
        ):
            function = "parse_json_plain"  # (parse_json's checks cost half a small decode)
        call = f"{function}(body, {args}"
        if plan.function in ("parse_xml_inline", "parse_xml_typed", "parse_kv_lines"):
            nested = "None"
            if plan.value_parser is not None:
                nested, _ = _content_function(
                    f"{name}_value", plan.value_parser, module, where + ".value_parser.args",
                )
            if plan.function != "parse_kv_lines":
                finditer = "None"
                if plan.tag_pattern is not None:
                    _check_tag_pattern(
                        plan.tag_pattern, tag_where or where + ".tag_pattern", module.budget
                    )
                    finditer = f"_TAGS[{module.tag(plan.tag_pattern)}].group_finditer"
                    module.need("chain")
                call += f", {finditer}"
            call += f", {nested}"
            if content_plans.splits_tags(plan):
                call += f", _TAGS[{module.tag(plan.tag_pattern)}].group_split"
            if plan.function == "parse_xml_typed":
                call += f", {_typed_parsers(name, plan, module, where)}"
        call += ")"
    if define:
        module.functions.append(f"def {name}(body):\n    return {call}\n")
    return name, call


def _typed_parsers(
    name: str, plan: content_plans.ContentPlan, module: ModuleBuilder, where: str
) -> str:
    """The name of a module-level dict from each typing text to its value parser
    (``None``: the raw text), emitted after the parsers' own functions."""
    entries = []
    for k, (text, typed) in enumerate(plan.typed):
        parser = "None"
        if typed is not None:
            parser, _ = _content_function(
                f"{name}_typed_{k}", typed, module,
                f"{where}.typed_values.parsers[{literal(text)}].args",
            )
        entries.append(f"    {literal(text)}: {parser},\n")
    table = f"_TYPED{name}"
    module.functions.append(f"{table} = {{\n{''.join(entries)}}}\n")
    return table
