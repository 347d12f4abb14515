"""Stage 7: a template's output language as a constrained-decoding grammar.

``export_grammar(template, ...)`` writes what a model of the template's family writes --
its regions in the family's order, their delimiters translated from the dialect's syntax
trees, each region's content by its content parser, tool calls naming the offered tools
with arguments shaped by their schemas, the end of turn -- as a grammar in lark syntax
(``lark.Lark`` loads it) or in llguidance's (vLLM and SGLang structured outputs; ``%json``
for schemas, special tokens as token references).

Every string the grammar accepts parses without error with the template's parser: what a
form cannot express exactly is narrowed, never widened, and each such narrowing is named
in ``Export.notes`` (and in the grammar as a comment).

Modules: :mod:`.turn` (the order of regions), :mod:`.regex` (syntax trees as grammar
regexes, lookahead proofs), :mod:`.delimiters` (a delimiter as written and as avoided),
:mod:`.tools` (call shapes and tool schemas), :mod:`.values` and :mod:`.content` (region
bodies), :mod:`.build` (the rules), :mod:`.grammar` (the grammar and its two writers).

>>> from rtcompiler.template import load_template
>>> t = load_template({"start_anchor": "<s>", "fields": {
...     "reasoning_content": {"open": "<think>", "close": "</think>"},
...     "content": {"close": "</s>"}}})
>>> print(export_grammar(t).text.split("\\n\\n")[1])
start: REASONING_CONTENT_OPEN after_reasoning_content | CONTENT_THEN_END_OF_TURN
after_reasoning_content: CONTENT_THEN_END_OF_TURN
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..template import Template
from .build import Builder, ExportError, ExportOptions
from .grammar import write
from .tools import Bounds

FORMATS = ("lark", "llguidance")


@dataclass
class Export:
    """An exported grammar: its ``text`` and the approximations it makes (``notes``)."""

    text: str
    notes: list[str]
    format: str


def export_grammar(
    template: Template,
    *,
    tools: list | None = None,
    tool_choice: str = "auto",
    format: str = "lark",
    prefix: str | None = None,
    special_tokens: Mapping[str, int | None] | None = None,
    bounds: Bounds | None = None,
    meta: dict | None = None,
    turn: str | None = None,
    end_of_turn: Sequence[str] | None = None,
    name: str | None = None,
) -> Export:
    """The grammar of ``template``'s outputs in ``format`` (``lark`` or ``llguidance``).

    ``tools`` are JSON schemas as ``apply_chat_template`` takes them (``None``: calls
    name any function, with any arguments); ``tool_choice`` is ``auto``, ``required``,
    ``none`` or a tool's name. ``prefix`` is the prompt the model continues (default: the
    meta's ``generation_prompt``): a prompt that opens a region starts the grammar inside
    it. ``special_tokens`` maps the target tokenizer's special tokens to their ids (or
    ``None`` for a ``<…>``-shaped one, written by name); llguidance only. ``bounds`` caps
    text, calls and JSON sizes, for generation. ``meta`` is the grammar's ``meta.json``
    (its ``turn``, ``end_of_turn`` and generation prompt); ``turn`` and ``end_of_turn``
    override it. Raises :class:`ExportError` when no grammar can be written.
    """
    if format not in FORMATS:
        raise ExportError(f"unknown grammar format {format!r} (lark or llguidance)")
    options = ExportOptions(tools=tools, tool_choice=tool_choice, flavour=format, prefix=prefix,
                            special_tokens=dict(special_tokens or {}), bounds=bounds, turn=turn,
                            end_of_turn=end_of_turn)
    template = _as_written(template, meta)
    builder = Builder(template, options, _export_meta(meta))
    grammar = builder.build()
    grammar.header = _header(template, builder, options, name)
    return Export(write(grammar, format), list(grammar.notes), format)


def _as_written(template: Template, meta: dict | None) -> Template:
    """``template`` with the delimiter patterns of meta's ``export.written_patterns``: a
    bundled grammar's patterns also read outputs that lack a marker or hold a stray one
    (a close that looks ahead for a section end, an optional ``[ARGS]``); the grammar
    writes the family's own form, which those patterns read too."""
    export = (meta or {}).get("export")
    written = export.get("written_patterns") if isinstance(export, dict) else None
    if not written:
        return template
    import copy

    from ..template import load_template

    raw = copy.deepcopy(template.raw)
    for field, patterns in written.items():
        raw["fields"][field].update(patterns)
    return load_template(raw)


def _export_meta(meta: dict | None) -> dict:
    """A grammar meta.json's keys that concern export: ``generation_prompt``,
    ``normalise.end_of_turn``, and its ``export`` object (``turn``, ``end_of_turn``,
    ``call_keys``, ``call_keys_after``)."""
    meta = meta or {}
    out: dict = {}
    if isinstance(meta.get("generation_prompt"), str):
        out["generation_prompt"] = meta["generation_prompt"]
    if isinstance(meta.get("normalise"), dict):
        out["normalise"] = meta["normalise"]
    export = meta.get("export")
    if isinstance(export, dict):
        for key in ("turn", "end_of_turn", "call_keys", "call_keys_after"):
            if key in export:
                out[key] = export[key]
    return out


def _header(template: Template, builder: Builder, options: ExportOptions,
            name: str | None) -> list[str]:
    from .. import __version__
    from .turn import show

    tools = builder.tools
    if tools is None:
        offered = "any (no --tools: generic calls)"
    else:
        offered = ", ".join(t.name for t in tools) or "none"
    lines = [
        f"rtc grammar {name or 'TEMPLATE'} ({options.flavour} form), rtcompiler {__version__}",
        f"template sha256 {template.sha256}",
        f"turn: {show(builder.turn)}; end of turn: "
        f"{', '.join(json.dumps(m, ensure_ascii=False) for m in builder.markers) or 'none'}",
        f"tools: {offered}; tool choice: {options.tool_choice}",
        "start: " + (f"inside {builder.inside} (opened by the prompt)" if builder.inside
                     else "outside every region"),
    ]
    if options.bounds is not None:
        b = options.bounds
        lines.append(f"bounded for generation: text <= {b.max_text} characters, "
                     f"<= {b.max_calls} calls, JSON arrays and objects <= {b.max_items} items")
    return lines


def tokenizer_special_tokens(path: str | Path) -> dict[str, int | None]:
    """The special tokens of a ``tokenizer.json`` (or of the folder holding one), as
    llguidance sees them: every added token marked special, and every added token shaped
    ``<…>``. A ``<…>`` token is written by name, any other by id."""
    path = Path(path)
    if path.is_dir():
        path = path / "tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, int | None] = {}
    for token in data.get("added_tokens", []):
        text = token.get("content")
        if not isinstance(text, str) or not text:
            continue
        angled = text.startswith("<") and text.endswith(">") and len(text) > 2
        if token.get("special") or angled:
            out[text] = None if angled and " " not in text else token.get("id")
    return out


__all__ = ["FORMATS", "Bounds", "Export", "ExportError", "export_grammar",
           "tokenizer_special_tokens"]
