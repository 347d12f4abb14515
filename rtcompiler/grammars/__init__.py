"""The bundled grammars: package data, listed and resolved by name.

Each folder of this package is one model family's grammar (docs/grammars.md): its
``response_template.json``, the ``chat_template.jinja`` that renders the family's
conversations, a ``meta.json`` and a ``README.md``. The folders are read through
:mod:`importlib.resources`, so they are found the same way in a checkout, in an
installed wheel and in a zip.

``meta.json`` follows one schema, ``meta.schema.json`` beside this module, which
refuses unknown keys: :func:`validate_meta` checks a grammar's (and ``rtc check
--meta``'s) against it, :func:`validate_normalise` its ``normalise`` part alone.

A grammar is named ``NAME``, or ``NAME:strict`` for its strict form: the reference's
exact behaviour, its template without the robustness extensions it opts in to
(:func:`strict_spec`; docs/extensions.md).

>>> "qwen3" in names()
True
>>> strict = grammar("qwen3:strict")
>>> strict.name, strict.strict, strict.spelling
('qwen3', True, 'qwen3:strict')
>>> resolve_template("qwen3").implicit
'content'
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..template import Template, TemplateError, load_template, load_template_file
from ..template.load import EXTENSIONS_KEY, ROBUSTNESS, ROBUSTNESS_OPTIONS, child_path

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

TEMPLATE_FILE = "response_template.json"
CHAT_TEMPLATE_FILE = "chat_template.jinja"
META_FILE = "meta.json"
SCHEMA_FILE = "meta.schema.json"
STRICT = "strict"
# The forms a bundled grammar's name may name after a colon.
FORMS = (STRICT,)
# What ``rtc list`` says of them.
FORMS_NOTE = ("Each grammar NAME is also NAME:strict: the reference's exact behaviour, "
              "without the robustness extensions (recover, close-outside-strings, yield, "
              "json-end, extend, string-arguments) NAME opts in to (docs/extensions.md).")


def strict_spec(spec: Any) -> Any:
    """``spec`` without the robustness extensions: their names dropped from
    ``extensions`` (the key itself when nothing is left) and their keys from every
    field. Anything else, ``pythonic`` included, stays; ``spec`` is not modified.

    >>> strict_spec({"extensions": ["recover", "pythonic"],
    ...              "fields": {"t": {"open": "<t>", "recover": True}, "content": {}}})
    {'extensions': ['pythonic'], 'fields': {'t': {'open': '<t>'}, 'content': {}}}
    """
    if not isinstance(spec, dict) or EXTENSIONS_KEY not in spec:
        return spec
    out = dict(spec)
    extensions = out[EXTENSIONS_KEY]
    if isinstance(extensions, list):
        kept = [e for e in extensions if e not in ROBUSTNESS]
        if kept:
            out[EXTENSIONS_KEY] = kept
        else:
            del out[EXTENSIONS_KEY]
    fields = out.get("fields")
    if isinstance(fields, dict):
        keys = {*ROBUSTNESS.values(), *ROBUSTNESS_OPTIONS}
        out["fields"] = {
            name: {k: v for k, v in field.items() if k not in keys}
            if isinstance(field, dict) else field
            for name, field in fields.items()
        }
    return out


class GrammarError(ValueError):
    """An unknown grammar name or form (one line, naming the known ones)."""


class MetaError(GrammarError):
    """A ``meta.json`` that breaks the schema: names the file, the place and the rule."""


def _root() -> Traversable:
    return resources.files(__name__)


@cache
def names() -> tuple[str, ...]:
    """The bundled grammars' names, sorted."""
    return tuple(sorted(
        entry.name for entry in _root().iterdir()
        if entry.is_dir() and (entry / TEMPLATE_FILE).is_file()
    ))


@dataclass(frozen=True)
class Grammar:
    """A grammar folder: a bundled one (``bundled``), or one on disk named by its path."""

    name: str
    folder: Traversable
    strict: bool = False
    bundled: bool = True

    @property
    def spelling(self) -> str:
        """How a command line names this grammar (``qwen3``, ``qwen3:strict``)."""
        return f"{self.name}:{STRICT}" if self.strict else self.name

    def read_text(self, file: str) -> str | None:
        """The text of one of the folder's files, or None when the folder has no such file."""
        entry = self.folder / file
        if not entry.is_file():
            return None
        try:
            return entry.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise GrammarError(f"{entry}: not UTF-8 text (byte {e.start})") from None

    @property
    def spec(self) -> Any:
        """The folder's ``response_template.json`` as JSON data, not validated; for
        the strict form, without its robustness extensions (:func:`strict_spec`)."""
        spec = json.loads((self.folder / TEMPLATE_FILE).read_text(encoding="utf-8"))
        return strict_spec(spec) if self.strict else spec

    @property
    def template(self) -> Template:
        if self.strict:
            return load_template(self.spec)
        return _template(self.folder)

    @property
    def chat_template(self) -> str | None:
        return self.read_text(CHAT_TEMPLATE_FILE)

    @property
    def meta(self) -> dict[str, Any] | None:
        """The folder's ``meta.json``, or None when it has none."""
        text = self.read_text(META_FILE)
        if text is None:
            return None
        return _meta(text, str(self.folder / META_FILE))


def _template(folder: Traversable) -> Template:
    if isinstance(folder, Path):
        # A file on disk: its errors name the file, as for any template file.
        return load_template_file(folder / TEMPLATE_FILE)
    return load_template(json.loads((folder / TEMPLATE_FILE).read_text(encoding="utf-8")))


def _meta(text: str, source: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as e:
        raise MetaError(f"{source}: not valid JSON: {e}") from None
    return validate_meta(data, source)


# -- the meta.json schema ---------------------------------------------------------------


@cache
def meta_schema() -> dict[str, Any]:
    """``meta.schema.json``: the JSON Schema every ``meta.json`` follows."""
    return json.loads((_root() / SCHEMA_FILE).read_text(encoding="utf-8"))


@cache
def _validator(definition: str | None) -> Any:
    # Imported here: only what reads a meta.json pays for jsonschema.
    from jsonschema import Draft202012Validator

    schema = meta_schema()
    if definition is not None:
        schema = {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(schema)


def validate_meta(data: Any, source: str) -> dict[str, Any]:
    """``data``, a whole ``meta.json`` read from ``source``, if the schema allows it."""
    if not isinstance(data, dict):
        raise MetaError(f"{source}: expected a JSON object")
    _check(_validator(None), data, source, ())
    return data


def validate_normalise(data: Any, source: str = "normalise") -> dict[str, Any]:
    """``data``, a ``meta.json``'s ``normalise`` object, if the schema allows it."""
    _check(_validator("normalise"), data, source, ("normalise",))
    return data


def _check(validator: Any, data: Any, source: str, root: tuple[str, ...]) -> None:
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(data))
    if error is None:
        return
    place = [*root, *error.absolute_path]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        unknown = sorted(key for key in error.instance if key not in known)[0]
        rule = f"unknown key {unknown!r}; known: {', '.join(sorted(known))}"
    elif error.validator == "oneOf":
        choices = [" and ".join(map(repr, s.get("required", []))) for s in error.validator_value]
        rule = f"give exactly one of {' or '.join(choices)}"
    else:
        rule = error.message
    where = ""
    for step in place:
        where = child_path(where, step)
    raise MetaError(f"{source}: {where}: {rule}" if where else f"{source}: {rule}")


def _known() -> str:
    return ", ".join(names())


def grammar(name: str) -> Grammar:
    """The bundled grammar ``name`` (``qwen3``, ``qwen3:strict``)."""
    base, colon, form = name.partition(":")
    if base not in names():
        raise GrammarError(f"no bundled grammar {base!r}; bundled grammars: {_known()}")
    if colon and form not in FORMS:
        raise GrammarError(
            f"{name!r}: unknown form {form!r} of a bundled grammar; "
            f"write NAME or {', '.join(f'NAME:{f}' for f in FORMS)}")
    return Grammar(name=base, folder=_root() / base, strict=form == STRICT)


def meta(name: str) -> dict[str, Any]:
    """The bundled grammar ``name``'s ``meta.json``."""
    found = grammar(name).meta
    assert found is not None, f"the bundled grammar {name} has no {META_FILE}"
    return found


def resolve_grammar(spec: str | os.PathLike[str]) -> Grammar | None:
    """The grammar ``spec`` names, if it names one.

    ``spec`` names a grammar when it is a grammar's own folder (it holds a
    ``response_template.json``: not a model folder, which holds a
    ``tokenizer_config.json``), such a folder's ``response_template.json``, or, when no
    file or folder has that name, a bundled grammar's name. Any other existing path
    (a template file, a ``tokenizer_config.json``, a model folder) names no grammar.
    """
    path = Path(spec)
    if path.is_dir() and (path / TEMPLATE_FILE).is_file():
        return Grammar(name=path.resolve().name, folder=path, bundled=False)
    if path.is_file() and path.name == TEMPLATE_FILE:
        return Grammar(name=path.resolve().parent.name, folder=path.parent, bundled=False)
    if path.exists():
        return None
    text = os.fspath(spec)
    if text.partition(":")[0] in names():
        return grammar(text)
    return None


def resolve_template(spec: str | os.PathLike[str]) -> Template:
    """The template ``spec`` names: a template file, a ``tokenizer_config.json``, a
    model folder, a grammar's own folder, or a bundled grammar's name (``NAME``,
    ``NAME:strict``)."""
    found = resolve_grammar(spec)
    if found is not None:
        return found.template
    path = Path(spec)
    if path.exists():
        return load_template_file(path)
    text = os.fspath(spec)
    raise TemplateError(
        "", f"{text!r} is neither a file, a folder, nor a bundled grammar; "
        f"bundled grammars: {_known()}")


def bundled_grammar_of(spec: Any) -> Grammar | None:
    """The bundled grammar whose response template is ``spec`` (a template dict), if any."""
    if spec is None:
        return None
    for name in names():
        for spelling in (name, f"{name}:{STRICT}"):
            found = grammar(spelling)
            if found.spec == spec:
                return found
    return None
