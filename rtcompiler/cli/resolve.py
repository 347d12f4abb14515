"""Find the template a command line names: a file, a model folder, or a bundled grammar."""

from __future__ import annotations

from pathlib import Path

from ..template import Template, TemplateError, load_template_file

GRAMMARS = Path(__file__).resolve().parent.parent.parent / "grammars"


def resolve_template(name: str) -> Template:
    path = Path(name)
    if path.exists():
        return load_template_file(path)
    bundled = GRAMMARS / name / "response_template.json"
    if bundled.exists():
        return load_template_file(bundled)
    known = sorted(p.name for p in GRAMMARS.iterdir() if p.is_dir()) if GRAMMARS.is_dir() else []
    hint = f"; bundled grammars: {', '.join(known)}" if known else ""
    raise TemplateError("", f"{name!r} is neither a file, a folder, nor a bundled grammar{hint}")


def grammar_dir(name: str) -> Path | None:
    """The bundled grammar folder ``name`` names (by name or by path), if any."""
    path = Path(name)
    if path.is_dir() and (path / "response_template.json").exists():
        return path
    if path.is_file() and path.name == "response_template.json":
        return path.parent
    folder = GRAMMARS / name
    return folder if (folder / "response_template.json").exists() else None
