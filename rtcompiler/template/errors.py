"""The one exception the template stage raises.

A template author fixes a template by going to a place in the JSON, so every error
carries that place as a dotted path (``fields.tool_calls.join``) and reads
``"<path>: <rule>"``.

>>> err = TemplateError("fields.tool_calls", "'join' requires 'repeats': true")
>>> str(err)
"fields.tool_calls: 'join' requires 'repeats': true"
>>> isinstance(err, ValueError), err.path
(True, 'fields.tool_calls')
"""

from __future__ import annotations

from typing import Any

# How the message names the template itself when the error concerns the whole of it.
ROOT_LABEL = "template"


class TemplateError(ValueError):
    """An invalid response template (or template file).

    It is a ``ValueError`` because that is what transformers raises for the same
    templates, so code written against the reference keeps catching it.

    ``path`` is where the problem is: ``""`` for the template as a whole, a top-level
    key (``"version"``, ``"start_anchor"``), or a dotted path into a field
    (``"fields.content.open"``, ``"fields.tool_calls.transform.function.name"``; list
    items as ``[i]``). For a problem with a file it is the file's name. ``rule`` is
    the broken rule, in words.
    """

    def __init__(self, path: str, rule: str) -> None:
        self.path = path
        self.rule = rule
        super().__init__(f"{path or ROOT_LABEL}: {rule}")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # The default pickling would call __init__ with the message alone.
        return (type(self), (self.path, self.rule))


class UnsupportedPatternError(TemplateError):
    """A valid ``regex`` pattern that rtcompiler's dialect does not support.

    transformers accepts such a template; we cannot compile it without changing its
    meaning, so we refuse it and say which construct, at which column of the pattern.
    """

    def __init__(self, path: str, construct: str, column: int, pattern: str) -> None:
        self.construct = construct
        self.column = column
        self.pattern = pattern
        super().__init__(
            path,
            f"pattern {pattern!r} uses {construct} at column {column}, "
            "which rtcompiler does not support",
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), (self.path, self.construct, self.column, self.pattern))
