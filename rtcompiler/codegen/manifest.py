"""The manifest: every runtime section a generated module may copy, in module order.

A runtime module marks the code generated parsers need with comment lines::

    ###{standalone NAME
    ...code...
    ###}

Each section is listed here once, as ``Section(module, name, depends)``: the runtime
module holding it (``rtcompiler/runtime/<module>.py``), its name, and the sections its
code calls into. A generated module holds the sections its template needs plus their
dependencies, in the order of this list, so the same template always gives the same
bytes. Every section comes after the ones it depends on.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    module: str  # a module of rtcompiler/runtime/
    name: str
    depends: tuple[str, ...] = ()

    @property
    def module_path(self) -> str:
        return f"rtcompiler.runtime.{self.module}"


SECTIONS: tuple[Section, ...] = (
    Section("pikevm", "pikevm"),
    Section("dfa", "dfa"),
    Section("match", "match"),
    Section("prefilter", "prefilter"),
    Section("scanner", "scanner", ("pikevm", "match")),
    Section("compiled_regex", "compiled_regex", ("pikevm", "dfa", "match", "prefilter", "scanner")),
    Section("tag_chain", "chain", ("compiled_regex", "match", "prefilter")),
    Section("content", "content_error"),
    Section("content", "text"),
    Section("content", "int", ("text",)),
    Section("content", "float", ("text",)),
    Section("content", "bool", ("text",)),
    Section("content", "json", ("text",)),
    Section("content", "xml_inline"),
    Section("content", "xml_typed"),
    Section("content", "xml_tags_only"),
    Section("content", "kv_lines", ("text",)),
    Section("content", "pythonic"),
    Section("transform", "transform"),
    Section("transform", "transform_each", ("transform",)),
    Section("functions", "tool_schema"),
    Section("tools", "tool_coercion", ("tool_schema",)),
    Section("regions", "regions", ("compiled_regex",)),
    Section("strings", "json_strings"),
    Section("strings", "value_spans", ("json_strings",)),
    Section("whole", "whole", ("compiled_regex", "json_strings")),
    Section("memo", "memo", ("whole",)),
    Section("answers", "answers", ("regions", "whole")),
    Section("stream_walk", "stream_walk", ("whole", "json_strings")),
    Section("string_regions", "string_regions", ("json_strings",)),
    Section("region_values", "region_values", ("string_regions", "whole", "json_strings")),
    Section(
        "stream", "stream",
        ("regions", "whole", "memo", "answers", "stream_walk", "string_regions", "region_values"),
    ),
    Section("lenient", "lenient"),
    Section("json_tokens", "json_tokens"),
    Section("deltas", "deltas", ("stream", "tool_coercion", "json_tokens")),
)

BY_NAME: dict[str, Section] = {s.name: s for s in SECTIONS}


def closure(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` plus every section they depend on, in manifest order."""
    wanted: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(BY_NAME[name].depends)
    return tuple(s.name for s in SECTIONS if s.name in wanted)


_SECTION = re.compile(r"^###\{standalone (\w+)\n(.*?)^###\}\n", re.M | re.S)


def sections_of(module_path: str) -> dict[str, str]:
    """The named standalone sections of a runtime module, in file order."""
    source = inspect.getsource(importlib.import_module(module_path))
    found = {m.group(1): m.group(2) for m in _SECTION.finditer(source)}
    if not found:
        raise ValueError(f"{module_path} has no ###{{standalone sections")
    return found


def code(name: str) -> str:
    """The code of section ``name``, as its runtime module holds it."""
    section = BY_NAME[name]
    try:
        return sections_of(section.module_path)[name]
    except KeyError:
        raise KeyError(f"{section.module_path} has no standalone section {name!r}") from None
