"""Standalone sections: the runtime code a generated module copies.

A runtime module marks what generated parsers need with comment lines::

    ###{standalone NAME
    ...code...
    ###}

Sections are the unit of inclusion: a generated module contains only the
sections its template uses, in a fixed order, so the same template always
gives the same bytes.
"""

from __future__ import annotations

import importlib
import inspect
import re

_SECTION = re.compile(r"^###\{standalone (\w+)\n(.*?)^###\}\n", re.M | re.S)


def sections_of(module_name: str) -> dict[str, str]:
    """The named standalone sections of a runtime module, in file order."""
    source = inspect.getsource(importlib.import_module(module_name))
    found = {m.group(1): m.group(2) for m in _SECTION.finditer(source)}
    if not found:
        raise ValueError(f"{module_name} has no ###{{standalone sections")
    return found


def section(module_name: str, name: str) -> str:
    try:
        return sections_of(module_name)[name]
    except KeyError:
        raise KeyError(f"{module_name} has no standalone section {name!r}") from None
