"""The bundled grammars' API: listing, every spelling of TEMPLATE, errors, zips, no CLI import."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from transformers.utils.chat_parsing.response_templates import load_response_template

import rtcompiler
from rtcompiler import compile_template, grammars
from rtcompiler.grammars import (
    GrammarError,
    bundled_grammar_of,
    grammar,
    names,
    resolve_grammar,
    resolve_template,
    strict_spec,
)
from rtcompiler.template import TemplateError

from ..cli.helpers import rtc_here

PACKAGE = Path(rtcompiler.__file__).resolve().parent
FOLDERS = PACKAGE / "grammars"


def test_names_are_the_folders_holding_a_response_template():
    on_disk = sorted(p.name for p in FOLDERS.iterdir() if (p / "response_template.json").is_file())
    assert list(grammars.names()) == on_disk
    assert len(on_disk) >= 16 and "qwen3" in on_disk


def test_a_grammar_reads_its_folders_files():
    qwen3 = grammar("qwen3")
    folder = FOLDERS / "qwen3"
    assert qwen3.spec == json.loads((folder / "response_template.json").read_text("utf-8"))
    assert qwen3.template.raw == qwen3.spec
    assert qwen3.chat_template == (folder / "chat_template.jinja").read_text("utf-8")
    assert qwen3.meta == json.loads((folder / "meta.json").read_text("utf-8"))
    assert qwen3.read_text("no such file") is None
    assert (qwen3.name, qwen3.strict, qwen3.spelling) == ("qwen3", False, "qwen3")


def _model_folder(where: Path, spec: dict) -> Path:
    where.mkdir()
    (where / "tokenizer_config.json").write_text(json.dumps({"response_template": spec}))
    return where


def test_every_spelling_of_template_resolves(tmp_path, monkeypatch):
    spec = grammar("qwen3").spec
    copy = tmp_path / "my_grammar"
    shutil.copytree(FOLDERS / "qwen3", copy)
    (tmp_path / "template.json").write_text(json.dumps(spec))
    model = _model_folder(tmp_path / "model", spec)
    monkeypatch.chdir(tmp_path)
    spellings = [
        "qwen3", str(FOLDERS / "qwen3"), "my_grammar", copy,
        copy / "response_template.json", "template.json", str(model),
        model / "tokenizer_config.json",
    ]
    for spelling in spellings:
        assert resolve_template(spelling).raw == spec, spelling
        assert compile_template(spelling).template.raw == spec, spelling


def test_strict_is_a_form_of_the_same_grammar():
    strict = grammar("qwen3:strict")
    assert (strict.name, strict.strict, strict.spelling) == ("qwen3", True, "qwen3:strict")
    # The same template without its robustness extensions: loadable by transformers.
    robust = grammar("qwen3").spec
    assert robust["extensions"] == [
        "recover", "close-outside-strings", "yield", "string-arguments"]
    assert strict.spec == strict_spec(robust)
    assert "extensions" not in strict.spec
    assert strict.spec["fields"]["tool_calls"] == {
        k: v for k, v in robust["fields"]["tool_calls"].items()
        if k not in ("recover", "close_outside_strings", "string_arguments")
    }
    assert strict.spec["fields"]["reasoning_content"] == {
        k: v for k, v in robust["fields"]["reasoning_content"].items() if k != "yield_to"
    }
    assert resolve_grammar("qwen3:strict") == strict
    assert resolve_template("qwen3:strict").raw == strict.spec
    assert compile_template("qwen3:strict").template.extensions == ()
    assert bundled_grammar_of(strict.spec) == strict
    load_response_template(strict.spec)
    with pytest.raises(ValueError):
        load_response_template(robust)


@pytest.mark.parametrize("name", names())
def test_every_strict_form_loads_and_keeps_what_is_not_robustness(name):
    robust, strict = grammar(name).spec, grammar(f"{name}:strict").spec
    assert strict == strict_spec(robust)
    assert not {"recover", "close-outside-strings"} & set(strict.get("extensions", []))
    assert [e for e in robust.get("extensions", []) if e in ("pythonic", "typed-values")] == (
        strict.get("extensions", []))
    compile_template(f"{name}:strict")


def test_a_grammar_folder_is_not_a_model_folder(tmp_path):
    copy = tmp_path / "qwen3_copy"
    shutil.copytree(FOLDERS / "qwen3", copy)
    found = resolve_grammar(copy)
    assert found is not None and not found.bundled and found.name == "qwen3_copy"
    assert found.chat_template == grammar("qwen3").chat_template
    assert found.meta == grammar("qwen3").meta
    run = rtc_here("compile", str(copy))
    assert run.code == 0, run.stderr
    assert run.stdout.decode() == rtc_here("compile", "qwen3").stdout.decode()
    # A folder without response_template.json is a model folder: its tokenizer config is read.
    (copy / "response_template.json").unlink()
    assert resolve_grammar(copy) is None
    with pytest.raises(TemplateError, match="tokenizer_config.json: no such file"):
        resolve_template(copy)


def test_a_path_that_exists_wins_over_a_bundled_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    other = {"start_anchor": "<s>", "fields": {"content": {}}}
    Path("qwen3").write_text(json.dumps(other))
    assert resolve_grammar("qwen3") is None
    assert resolve_template("qwen3").raw == other


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(TemplateError) as caught:
        resolve_template("qwen4")
    message = str(caught.value)
    assert "'qwen4' is neither a file, a folder, nor a bundled grammar" in message
    assert ", ".join(grammars.names()) in message
    with pytest.raises(GrammarError, match="no bundled grammar 'qwen4'; bundled grammars: "
                       "command_r7b, deepseek_r1"):
        grammar("qwen4")
    with pytest.raises(GrammarError, match="unknown form 'loose'.*write NAME or NAME:strict"):
        resolve_template("qwen3:loose")
    run = rtc_here("compile", "qwen4")
    assert run.code == 2
    assert run.error_lines() == [f"rtc: error: {message}"]


def test_the_grammars_load_from_a_zip(tmp_path):
    """importlib.resources, not paths beside the source: a zipped package finds its grammars."""
    archive = tmp_path / "rtcompiler.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(PACKAGE.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zipped.write(path, path.relative_to(PACKAGE.parent).as_posix())
    script = (
        "import json, rtcompiler\n"
        "from rtcompiler import grammars, compile_template\n"
        "assert rtcompiler.__file__.startswith(sys.argv[1]), rtcompiler.__file__\n"
        "parser = compile_template('qwen3')\n"
        "print(json.dumps([len(grammars.names()), grammars.meta('qwen3')['families'][0],\n"
        "    parser.parse_response('Hi!<|im_end|>', prefix='')]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(archive)}
    done = subprocess.run([sys.executable, "-c", "import sys\n" + script, str(archive)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        len(grammars.names()), "qwen3", {"role": "assistant", "content": "Hi!"}]


def _imports(path: Path) -> set[str]:
    """The absolute names a module imports (relative ones resolved against its package)."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_the_library_does_not_import_the_cli():
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        cli = sorted(name for name in _imports(path) if name.startswith("rtcompiler.cli"))
        assert not cli, f"{path.relative_to(PACKAGE.parent)} imports {cli}"
