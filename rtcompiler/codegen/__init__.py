"""Stage 4: code generation -- a template becomes a standalone parser module.

>>> from rtcompiler.template import load_template
>>> t = load_template({"start_anchor": "<|im_start|>assistant\\n",
...                    "fields": {"content": {"close": "<|im_end|>"}}})
>>> parser = load_parser(t)
>>> parser.parse_response("Hi!<|im_end|>", prefix="")
{'content': 'Hi!'}
"""

from __future__ import annotations

import sys
import types

from ..automata import compile_regex
from ..template import Template
from .module import generate_module

_loaded: dict[str, types.ModuleType] = {}


def load_parser(template: Template) -> types.ModuleType:
    """The generated module for ``template``, executed in-process (cached by hash).

    In-process use runs exactly the code ``rtc compile`` writes to disk.
    """
    module = _loaded.get(template.sha256)
    if module is None:
        source = generate_module(template)
        name = f"rtcompiler_generated_{template.sha256[:16]}"
        module = types.ModuleType(name)
        module.__file__ = f"<{name}>"
        sys.modules[name] = module  # dataclass-free code, but keeps tracebacks readable
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        _loaded[template.sha256] = module
    return module


def automaton_data(template: Template) -> dict:
    """The region automaton as JSON-able data (``rtc compile --emit automaton``)."""
    delimiters: list[dict] = []
    index: dict[str, int] = {}

    def slot(d) -> int:
        source = d.regex_source
        if source not in index:
            index[source] = len(delimiters)
            delimiters.append(
                {
                    "source": source,
                    "literals": list(d.literals) if d.is_literal else None,
                    "can_extend": d.can_extend,
                    "automaton": compile_regex(source).to_data(),
                }
            )
        return index[source]

    outside = [
        {"kind": "open", "field": f.name, "delimiter": slot(f.open)}
        for f in template.fields
        if f.open is not None
    ]
    implicit = next((f for f in template.fields if f.open is None), None)
    if implicit is not None and implicit.close is not None:
        outside.append({"kind": "close", "field": implicit.name, "delimiter": slot(implicit.close)})
    modes = [{"mode": implicit.name if implicit else None, "explicit": False, "watch": outside}]
    by_name = {f.name: f for f in template.fields}
    for f in template.fields:
        if f.open is not None:
            watch = [] if f.close is None else [
                {"kind": "close", "field": f.name, "delimiter": slot(f.close)}
            ]
            # The yield extension: another field's region may open inside this one, and
            # its close comes back here rather than to the outside mode.
            watch += [
                {"kind": "yield", "field": name, "delimiter": slot(by_name[name].open)}
                for name in f.yields
            ]
            modes.append({"mode": f.name, "explicit": True, "watch": watch})
    return {
        "format": "rtcompiler.regions/1",
        "template_sha256": template.sha256,
        "priority": ["earliest start", "longest", "open before close", "field name"],
        "modes": modes,
        "start_anchor": slot(template.start_anchor),
        "delimiters": delimiters,
    }


__all__ = ["automaton_data", "generate_module", "load_parser"]
