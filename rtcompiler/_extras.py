"""Optional dependencies, grouped in pip extras (pyproject.toml), and what a missing one says.

The base install compiles and parses; heavier parts need an extra: ``check``
(``rtc check``'s property tests), ``models`` (a model folder's tokenizer and weights,
``rtc check --model``), ``hf`` and ``batch`` (for the user's side of
``rtcompiler.hf`` and ``rtcompiler.batch``, which import neither). A command whose
extra is missing stops with :class:`MissingExtra`, which ``rtc`` prints as one line.

>>> require("rtc check", check=["json"])
>>> try:
...     require("rtc check --model", check=["json"], models=["no_such_module_here"])
... except MissingExtra as e:
...     print(e)
rtc check --model needs the 'models' extra: pip install 'rtcompiler[models]'
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable


class MissingExtra(ImportError):
    """What ``what`` needs is not installed; the message names the extras that bring it."""

    def __init__(self, what: str, extras: list[str]) -> None:
        self.what = what
        self.extras = extras
        names = " and ".join(f"'{extra}'" for extra in extras)
        noun = "extra" if len(extras) == 1 else "extras"
        super().__init__(
            f"{what} needs the {names} {noun}: pip install 'rtcompiler[{','.join(extras)}]'")


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:  # absent, or present but missing a dependency of its own
        return False
    return True


def require(what: str, **extras: Iterable[str]) -> None:
    """Raise :class:`MissingExtra` unless every module each extra names imports."""
    missing = [extra for extra, modules in extras.items()
               if not all(_importable(module) for module in modules)]
    if missing:
        raise MissingExtra(what, missing)
