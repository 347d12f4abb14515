"""The in-process API: compile a template once, parse many outputs.

>>> from rtcompiler import compile_template
>>> parser = compile_template({"start_anchor": "<|im_start|>assistant\\n",
...                            "fields": {"content": {"close": "<|im_end|>"}}})
>>> parser.parse_response("Hi<|im_end|>", prefix="<|im_start|>assistant\\n")
{'content': 'Hi'}

Tools are JSON schemas or Python functions (type hints and a Google-style docstring),
which the generated module converts as transformers' ``get_json_schema`` does.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

from .codegen import generate_module, load_parser
from .runtime.functions import tool_schema
from .template import Template, load_template


def _schemas(tools: list | None) -> list | None:
    """The tools with functions converted once, up front: for callers that hand the same
    tools to many parsers, or to workers that must get data, not code."""
    if tools is None:
        return None
    return [tool_schema(t) if inspect.isfunction(t) or inspect.ismethod(t) else t for t in tools]


class CompiledParser:
    """A compiled template: the generated module, run in-process."""

    def __init__(self, template: Template) -> None:
        self.template = template
        self.module: ModuleType = load_parser(template)

    @property
    def source(self) -> str:
        """The generated module's source, as ``rtc compile`` writes it."""
        return generate_module(self.template)

    def parse_response(
        self, text: str, *, prefix: str | None = None, tools: list | None = None
    ) -> dict:
        return self.module.parse_response(text, prefix=prefix, tools=tools)

    def response_parser(self, prefix: str | None = None, *, tools: list | None = None) -> Any:
        """A streaming parser (``initial_events``, ``feed``, ``finalize``)."""
        return self.module.ResponseParser(prefix, tools=tools)


def compile_template(template: dict | Template | str | Path) -> CompiledParser:
    """Compile a template given as a dict, a ``Template``, a file or folder path, or a grammar name
    (see :func:`rtcompiler.grammars.resolve_template`)."""
    if isinstance(template, Template):
        return CompiledParser(template)
    if isinstance(template, dict):
        return CompiledParser(load_template(template))
    from .grammars import resolve_template

    return CompiledParser(resolve_template(template))
