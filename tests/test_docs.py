"""The examples in the docs and docstrings run as written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import rtcompiler

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))
MODULES = sorted(m.name for m in pkgutil.walk_packages(rtcompiler.__path__, "rtcompiler."))


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_doc_examples(path):
    result = doctest.testfile(str(path), module_relative=False)
    assert result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
