"""``rtcompiler/runtime/`` holds only the code that travels into generated modules.

Every ``runtime/*.py`` imports only standard-library modules and its sibling runtime
modules, anywhere in the file (sections or not, top level or inside a function): what
specialises a template at compile time lives in ``rtcompiler/codegen/``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import rtcompiler.runtime

RUNTIME = Path(rtcompiler.runtime.__file__).parent
SIBLINGS = {p.stem for p in RUNTIME.glob("*.py")}
FILES = sorted(RUNTIME.glob("*.py"))


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    """(relative level, module) of every import in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.module is None:  # from . import x
                found += [(node.level, alias.name) for alias in node.names]
            else:
                found.append((node.level, node.module))
    return found


def allowed(level: int, module: str) -> bool:
    if level == 1:
        return module.split(".")[0] in SIBLINGS
    if level > 1:
        return False
    if module.startswith("rtcompiler.runtime."):
        return module.split(".")[2] in SIBLINGS
    return module.split(".")[0] in sys.stdlib_module_names


def test_there_are_runtime_files() -> None:
    assert {"compiled_regex", "stream", "content"} <= SIBLINGS


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_runtime_imports_only_stdlib_and_siblings(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [(level, module) for level, module in imported(tree) if not allowed(level, module)]
    assert bad == [], f"{path.name} imports beyond the standard library: {bad}"


def test_the_check_refuses_a_package_import() -> None:
    tree = ast.parse("def f():\n    from rtcompiler.automata import compile_regex\n")
    assert [m for level, m in imported(tree) if not allowed(level, m)] == ["rtcompiler.automata"]
    tree = ast.parse("from ..dialect import charsets\nimport regex\n")
    assert [m for level, m in imported(tree) if not allowed(level, m)] == ["dialect", "regex"]
