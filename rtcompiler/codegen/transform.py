"""Transform plans: which strings of a transform are placeholders, decided at compile time.

:func:`transform_plan` turns a transform into the node tree that the ``transform``
section of ``rtcompiler/runtime/transform.py`` walks; :func:`transform_expression`
writes the same tree as one Python expression for generated code. The reference's
notion of a placeholder uses the ``regex`` module's ``\\w``, which differs from the
standard library's; deciding it here keeps that exact without carrying a pattern
into generated modules.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..dialect.charsets import derive


@lru_cache(maxsize=1)
def _word_characters() -> Any:
    return derive(r"\w")


def _is_word(segment: str) -> bool:
    words = _word_characters()
    return bool(segment) and all(ord(ch) in words for ch in segment)


def _dotted_path(text: str) -> bool:
    """``text`` is one or more runs of word characters joined by single dots."""
    return all(_is_word(part) for part in text.split("."))


def placeholder_path(text: str) -> str | None:
    """The dotted path if ``text`` is exactly one placeholder, else ``None``."""
    if len(text) >= 3 and text[0] == "{" and text[-1] == "}" and _dotted_path(text[1:-1]):
        return text[1:-1]
    return None


def contains_placeholder(text: str) -> bool:
    """Whether a placeholder occurs anywhere in ``text``.

    After a ``{``, take the longest run of word characters and dots: a placeholder
    starts there exactly when that run is a dotted path and a ``}`` follows it (a
    shorter path would be followed by a word character or a dot, never ``}``).
    """
    start = text.find("{")
    while start != -1:
        end = start + 1
        while end < len(text) and (text[end] == "." or _is_word(text[end])):
            end += 1
        if end < len(text) and text[end] == "}" and _dotted_path(text[start + 1 : end]):
            return True
        start = text.find("{", start + 1)
    return False


def check_transform_strings(scope: str, transform: Any) -> None:
    """Refuse a string that mixes a placeholder with other text, as the loader does.

    Interpolation (``"call {name} now"``) is not supported; the reference raises
    ``ValueError`` when the template loads.
    """
    if isinstance(transform, dict):
        for child in transform.values():
            check_transform_strings(scope, child)
    elif isinstance(transform, list):
        for child in transform:
            check_transform_strings(scope, child)
    elif (
        isinstance(transform, str)
        and contains_placeholder(transform)
        and placeholder_path(transform) is None
    ):
        raise ValueError(
            f"{scope}: transform string {transform!r} mixes a {{placeholder}} with other "
            'text; write a whole-string placeholder such as "{content}" or a plain literal '
            "(string interpolation is not supported)"
        )


def transform_plan(transform: Any) -> list:
    """The node tree the runtime walks for ``transform``."""
    if isinstance(transform, dict):
        return ["dict", [[key, transform_plan(child)] for key, child in transform.items()]]
    if isinstance(transform, list):
        return ["list", [transform_plan(child) for child in transform]]
    if isinstance(transform, str):
        path = placeholder_path(transform)
        if path is not None:
            root, *keys = path.split(".")
            return ["ref", path, root, keys]
    return ["lit", transform]


def transform_expression(node: list, content: str, captures: str, literal: Any) -> str:
    """A Python expression that evaluates ``node`` directly, for generated code.

    ``content`` and ``captures`` name the variables holding the parsed value and
    the captures; ``literal`` writes a scalar as source. The expression builds the
    same fresh containers as :func:`apply_transform`, with plain subscripts for
    the lookups: where one fails (a missing name or key, a non-dict in the way)
    it raises ``KeyError`` or ``TypeError`` instead of the reference's errors, so
    generated code then runs the interpreted form, which raises them exactly.
    Content parsers produce plain JSON-like values: only a dict is subscriptable
    by a string, so wherever the expression succeeds the interpreter would too.
    """
    kind = node[0]
    if kind == "ref":
        _, _, root, keys = node
        # "content" is bound after the captures, so it wins over a capture of that name.
        source = content if root == "content" else f"{captures}[{literal(root)}]"
        return source + "".join(f"[{literal(key)}]" for key in keys)
    if kind == "dict":
        items = ", ".join(
            f"{literal(key)}: {transform_expression(child, content, captures, literal)}"
            for key, child in node[1]
        )
        return "{" + items + "}"
    if kind == "list":
        items = ", ".join(transform_expression(c, content, captures, literal) for c in node[1])
        return "[" + items + "]"
    return literal(node[1])
