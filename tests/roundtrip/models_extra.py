"""The tests that need the ``models`` extra (torch, llguidance, gguf, accelerate).

Locally, a missing package skips them with the install command; in CI (``$CI`` set, as
``.ci/run`` and hosted runners do), where everything is installed, it fails them.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

INSTALL = "pip install 'rtcompiler[models]'"


def require(*modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    message = f"needs the models extra ({', '.join(missing)} not installed): {INSTALL}"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
