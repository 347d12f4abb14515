"""Transforms: reshape a field's parsed value with a template of placeholders.

A transform is JSON-like data in which a string that is *exactly* a placeholder --
``"{name}"`` or a dotted path ``"{content.a.b}"`` -- is replaced by the value it names;
every other value is kept as written. The scope holds the open/close pattern's named
captures and ``content`` (the parsed body), or, with ``transform_each``, the captures
and the keys of each element of the parsed list.

Which strings are placeholders is decided once, at compile time: :func:`transform_plan`
turns the transform into a tree of nodes (plain data) and the runtime only walks it.
That keeps the reference's notion of a placeholder exact -- it uses the ``regex``
module's ``\\w``, which differs from the standard library's -- without carrying a
pattern into generated modules. Node forms::

    ["lit", value]                 value, returned as is
    ["ref", path, root, [keys]]    the placeholder "{path}", path == ".".join([root, *keys])
    ["dict", [[key, node], ...]]   a new dict, values transformed in order
    ["list", [node, ...]]          a new list

Behaviour is transformers 5.23.0's ``_apply_transform`` / ``process_field``: an
undefined root is a ``KeyError``; indexing into a non-dict or a missing key is a
``ValueError``; a ``transform_each`` value that is not a list of dicts is a
``ValueError``.
"""

from __future__ import annotations


###{standalone transform
def apply_transform(node: list, scope: dict) -> object:
    kind = node[0]
    if kind == "ref":
        _, path, root, keys = node
        if root not in scope:
            # Exactly the reference's message: a KeyError shows its argument quoted,
            # so nothing can follow it.
            raise KeyError(
                f"transform placeholder '{{{path}}}' is not defined. Available: {sorted(scope)}"
            )
        value = scope[root]
        for key in keys:
            if not isinstance(value, dict):
                raise ValueError(
                    f"transform placeholder '{{{path}}}' cannot index into "
                    f"{type(value).__name__} at '{key}'"
                )
            if key not in value:
                raise ValueError(
                    f"transform placeholder '{{{path}}}' is missing key '{key}'. "
                    f"Available: {sorted(value)}"
                )
            value = value[key]
        # The value itself, not a copy: "{content}" hands the parsed value on.
        return value
    if kind == "dict":
        # Fresh containers on every call: callers may mutate what they get back.
        return {key: apply_transform(child, scope) for key, child in node[1]}
    if kind == "list":
        return [apply_transform(child, scope) for child in node[1]]
    return node[1]


def transform_content(value: object, captures: dict, node: list) -> object:
    """The field's transform applied once, with ``content`` bound to ``value``."""
    scope = dict(captures)
    scope["content"] = value
    return apply_transform(node, scope)


###}


###{standalone transform_each
def transform_each(value: object, captures: dict, node: list, field_name: str) -> list:
    """The field's transform applied to each element of a list of dicts.

    An element's keys enter the scope next to the captures, and win over them.
    """
    if not isinstance(value, list):
        raise ValueError(
            f"Field '{field_name}': transform_each requires the parsed content to be a list, "
            f"got {type(value).__name__}."
        )
    out = []
    for item in value:
        if not isinstance(item, dict):
            raise ValueError(
                f"Field '{field_name}': transform_each requires each list element to be a "
                f"dict, got {type(item).__name__}."
            )
        scope = dict(captures)
        scope.update(item)
        out.append(apply_transform(node, scope))
    return out


###}
