"""Code generation: a validated template becomes one standalone Python module.

The module is assembled from four kinds of parts, in this order:

1. a header naming the template (its SHA-256), the compiler version, and the
   region automaton in words;
2. the runtime sections the template needs, copied verbatim from
   ``rtcompiler/runtime/`` (the regex engine and the region machine always;
   content parsers, transforms and tool typing only when used);
3. the compiled data: every delimiter's automaton (``Regex.to_data()``), the
   per-field content arguments, transforms and defaults -- all emitted through
   :func:`rtcompiler.codegen.literals.literal`, so nothing a template contains
   can become code;
4. per-field functions specialised to the field's content parser and transform,
   the region table, and the public API (``parse_response``, ``ResponseParser``).

The same template always yields the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import __version__
from ..automata import compile_regex, compile_tag_pattern
from ..automata.dfa import WorkBudget
from ..template import Field, Template
from . import plans
from .literals import MAX_NESTING, assignment, literal, nesting
from .sections import section, sections_of

ENGINE = "rtcompiler.runtime.engine"
STREAM = "rtcompiler.runtime.stream"
OPENAI = "rtcompiler.runtime.openai"


@dataclass
class _Module:
    """The pieces of a module being assembled."""

    runtime: dict[tuple[str, str], str] = field(default_factory=dict)  # (module, section) -> code
    regexes: dict[str, int] = field(default_factory=dict)  # pattern source -> table slot
    tags: list[str] = field(default_factory=list)  # xml-inline tag patterns, index = slot
    data: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    # The template's DFA work budget: its delimiters' tables (counted when it loaded)
    # and then the tag patterns' (see plans._check_tag_pattern).
    budget: WorkBudget = field(default_factory=WorkBudget)

    def need(self, module: str, name: str) -> None:
        key = (module, name)
        if key not in self.runtime:
            self.runtime[key] = section(module, name)

    def regex(self, source: str) -> int:
        return self.regexes.setdefault(source, len(self.regexes))

    def tag(self, source: str) -> int:
        if source not in self.tags:
            self.tags.append(source)
        return self.tags.index(source)


def generate_module(template: Template, *, openai: bool = False) -> str:
    """The source of a standalone parser module for ``template``.

    ``openai`` adds the OpenAI delta adapter (``openai_stream``); without it the
    output is what it always was, byte for byte.
    """
    module = _Module()
    for delimiter in _delimiters(template):
        module.budget.build(compile_regex(delimiter.regex_source).dfa)
    module.need(ENGINE, "engine")
    anchor = module.regex(template.start_anchor.regex_source)
    regions = [_region_source(module, index, f) for index, f in enumerate(template.fields)]
    uses_tools = any(plans.may_hold_tool_calls(f) for f in template.fields)
    for module_name, name in plans.tool_sections():
        module.need(module_name, name)
    module.need(STREAM, "stream")
    del uses_tools  # tool typing applies to any field, as in the reference
    extra = []
    if openai:
        module.need(OPENAI, "openai")
        extra.append(_openai_api(template, module))
    return "\n".join(
        [
            _header(template),
            "from __future__ import annotations\n",
            *(_runtime_block(mod, name, code) for (mod, name), code in _ordered(module.runtime)),
            _regex_tables(module),
            *module.data,
            *module.functions,
            _table(template, regions, anchor),
            _api(),
            *extra,
        ]
    )


def _delimiters(template: Template) -> list:
    """The template's delimiters in the order it loads them: fields, then the anchor."""
    found = [d for f in template.fields for d in (f.open, f.close) if d is not None]
    return found + [template.start_anchor]


def _ordered(runtime: dict[tuple[str, str], str]) -> list[tuple[tuple[str, str], str]]:
    """Runtime sections in a fixed order: engine, the rest by module, stream, openai."""

    def rank(key: tuple[str, str]) -> tuple[int, str, int, str]:
        mod, name = key
        order = {ENGINE: 0, STREAM: 2, OPENAI: 3}
        # The engine's sections in file order: the engine before the tag chains it serves.
        within = list(sections_of(mod)).index(name) if mod == ENGINE else 0
        return (order.get(mod, 1), mod, within, name)

    return sorted(runtime.items(), key=lambda item: rank(item[0]))


def _runtime_block(module_name: str, name: str, code: str) -> str:
    bar = "# " + "-" * 78
    return f"{bar}\n# runtime: {module_name} [{name}]\n{bar}\n{code}"


def _header(template: Template) -> str:
    lines = [
        '"""Response parser generated by rtcompiler -- do not edit.',
        "",
        f"Compiler: rtcompiler {__version__}",
        f"Template: sha256 {template.sha256}",
        "",
        "API: parse_response(text, *, prefix, tools=None) -> dict and",
        "ResponseParser(prefix, *, tools=None) with .initial_events, .feed(text),",
        ".finalize() -> (message, events). Standard library only.",
    ]
    if template.extensions:
        lines += [
            "",
            f"Extensions: {', '.join(template.extensions)} (rtcompiler only: transformers",
            "will not load this template).",
        ]
    lines += [
        '"""',
        "",
        "# Region automaton (modes, and the delimiters each one watches, by priority):",
    ]
    outside = [
        f"open {f.name!r} on {_describe(f.open)}" for f in template.fields if f.open is not None
    ]
    implicit = next((f for f in template.fields if f.open is None), None)
    if implicit is not None and implicit.close is not None:
        outside.append(f"close {implicit.name!r} on {_describe(implicit.close)}")
    where = (
        f"in implicit field {implicit.name!r}" if implicit is not None else "outside (null sink)"
    )
    lines.append(f"#   {where}:")
    lines += [f"#     {line}" for line in outside] or ["#     (nothing: text stays here)"]
    for f in template.fields:
        if f.open is None:
            continue
        close = f"close on {_describe(f.close)}" if f.close is not None else "(runs to the end)"
        lines.append(f"#   in {f.name!r}: {close}")
    lines.append(f"#   the prompt prefix is cut after the last {_describe(template.start_anchor)}")
    return "\n".join(lines) + "\n"


def _describe(delimiter) -> str:
    if delimiter.is_literal:
        return " | ".join(repr(s) for s in delimiter.literals)
    return f"pattern {delimiter.pattern!r}"


def _regex_tables(module: _Module) -> str:
    body = ",\n".join(
        f"    # {i}: {source!r}\n    {literal(compile_regex(source).to_data(), 4)}"
        for i, source in enumerate(module.regexes)
    )
    out = (
        "# Compiled delimiters: NFA, character classes and complete DFA tables per pattern.\n"
        f"_REGEX_DATA = [\n{body},\n]\n"
        "_REGEXES = [regex_from_data(data) for data in _REGEX_DATA]\n"
    )
    if module.tags:
        tags = ",\n".join(
            f"    # {i}: {source!r}\n    {literal(compile_tag_pattern(source).to_data(), 4)}"
            for i, source in enumerate(module.tags)
        )
        out += (
            "# xml-inline tag patterns: a chain of literals (see TagChain) or a compiled regex.\n"
            f"_TAG_DATA = [\n{tags},\n]\n"
            "_TAGS = [tag_from_data(data) for data in _TAG_DATA]\n"
        )
    return out


def _region_source(module: _Module, index: int, f: Field) -> str:
    process_name = f"_process_{index}"
    code, sections = plans.field_function(process_name, index, f, module)
    for module_name, name in sections:
        module.need(module_name, name)
    module.functions.append(code)

    def delimiter(d) -> str:
        if d is None:
            return "None"
        slot = module.regex(d.regex_source)
        literals = f", {literal(list(d.literals))}" if d.is_literal else ""
        return f"Delimiter(_REGEXES[{slot}], {d.is_literal!r}, {d.can_extend!r}{literals})"

    return (
        f"Region({literal(f.name)}, {delimiter(f.open)}, {delimiter(f.close)}, "
        f"{plans.streamable(f)!r}, {bool(f.repeats)!r}, {literal(f.join)}, "
        f"{bool(f.optional)!r}, {process_name})"
    )


def _table(template: Template, regions: list[str], anchor: int) -> str:
    rows = "".join(f"        {r},\n" for r in regions)
    defaults, before = literal(template.defaults, 4), ""
    if nesting(template.defaults) >= MAX_NESTING:  # assigned in parts (see assignment)
        defaults, before = "_DEFAULTS", assignment("_DEFAULTS", template.defaults)
    return (
        f"{before}TABLE = RegionTable(\n"
        f"    [\n{rows}    ],\n"
        f"    {literal(template.implicit)},\n"
        f"    {defaults},\n"
        f"    _REGEXES[{anchor}],\n"
        ")\n"
    )


def _api() -> str:
    return '''

def parse_response(text, *, prefix=None, tools=None):
    """Parse a complete generation; ``prefix`` is the chat prompt before it."""
    return ResponseStream(TABLE, prefix, tool_coercer(tools)).parse_whole(text)


class ResponseParser:
    """Streaming parse of one generation: ``feed`` chunks, then ``finalize``."""

    def __init__(self, prefix=None, *, tools=None):
        self._stream = ResponseStream(TABLE, prefix, coerce=tool_coercer(tools))
        self.initial_events = self._stream.initial_events
        self.feed = self._stream.feed  # one call less per token

    def feed(self, text):
        """Add generated text (None adds nothing); returns the events it caused."""
        return self._stream.feed(text)

    def finalize(self):
        """End of generation: returns ``(message, final_events)``."""
        return self._stream.finalize()


__all__ = ["ResponseParser", "parse_response"]
'''


def _openai_api(template: Template, module: _Module) -> str:
    """``openai_stream``: the delta adapter bound to this template's stream plan."""
    from ..runtime.openai import openai_plan

    plan = openai_plan(template)
    stream = (plan.get("tool_calls") or {}).get("stream") or {}
    patterns = [stream["tag_pattern"]] if "tag_pattern" in stream else []
    regexes = "".join(f"    {literal(p)}: _REGEXES[{module.regex(p)}],\n" for p in patterns)
    return f'''
# OpenAI deltas: which fields feed which delta key, and how tool arguments stream.
OPENAI_PLAN = {literal(plan, 0)}
_OPENAI_REGEXES = {{
{regexes}}}


def openai_stream(prefix=None, *, tools=None, call_id=None, ensure_ascii=False):
    """Chat-completion chunk deltas for one generation: ``initial_deltas``,
    ``feed(text) -> deltas``, ``finish() -> deltas`` (then ``message`` and
    ``finish_reason``). ``call_id(index)`` names tool calls (default: random).
    """
    return DeltaStream(ResponseParser(prefix, tools=tools), OPENAI_PLAN, tools,
                       call_id=call_id, ensure_ascii=ensure_ascii,
                       regex=_OPENAI_REGEXES.__getitem__)


__all__ += ["DeltaStream", "arguments_json", "openai_stream"]
'''
