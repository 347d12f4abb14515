"""A command whose extra is missing says which one, in one line, and exits 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rtcompiler._extras import MissingExtra, require

from .helpers import rtc_here

# The modules of the extras (pyproject.toml); none may be imported by the base commands.
OPTIONAL = ["hypothesis", "transformers", "torch", "ray", "datasets", "mistral_common", "gguf",
            "accelerate", "llguidance"]


def _missing(monkeypatch, *modules: str) -> None:
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)  # its import now fails


@pytest.mark.parametrize("argv, missing, line", [
    (["check", "qwen3", "--examples", "1"], ["hypothesis"],
     "rtc check needs the 'check' extra: pip install 'rtcompiler[check]'"),
    (["check", "--model", "some_dir"], ["transformers"],
     "rtc check --model needs the 'models' extra: pip install 'rtcompiler[models]'"),
    (["check", "--model", "some_dir", "--generate", "2"], ["torch"],
     "rtc check --model needs the 'models' extra: pip install 'rtcompiler[models]'"),
    (["check", "qwen3", "--model", "smollm2", "--generate", "2", "--constrained"],
     ["llguidance"],
     "rtc check --model needs the 'models' extra: pip install 'rtcompiler[models]'"),
    (["check", "--model", "some_dir"], ["hypothesis", "transformers"],
     "rtc check --model needs the 'check' and 'models' extras: "
     "pip install 'rtcompiler[check,models]'"),
])
def test_a_missing_extra_is_one_line_naming_the_pip_command(monkeypatch, argv, missing, line):
    _missing(monkeypatch, *missing)
    run = rtc_here(*argv)
    assert run.code == 2
    assert run.error_lines() == [f"rtc: error: {line}"]


def test_require_imports_what_it_checks(monkeypatch):
    require("x", check=["json"])  # present: nothing raised
    _missing(monkeypatch, "json")
    with pytest.raises(MissingExtra) as caught:
        require("x", check=["json"])
    assert isinstance(caught.value, ImportError) and caught.value.extras == ["check"]


def test_the_library_says_which_extra_too():
    code = "import sys; sys.modules['hypothesis'] = None; import rtcompiler.roundtrip"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "rtcompiler._extras.MissingExtra: rtcompiler.roundtrip needs the 'check' extra: "
        "pip install 'rtcompiler[check]'")


def test_the_base_commands_import_no_optional_module(tmp_path):
    code = f"""
import contextlib, io, json, sys
from rtcompiler.cli.main import main
sys.stdin = io.TextIOWrapper(io.BytesIO(b"Hi<|im_end|>"))
codes = []
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    for argv in (["compile", "qwen3"], ["parse", "qwen3", "--stream"], ["list"],
                 ["compile", "qwen3:strict", "--emit", "automaton"]):
        codes.append(main(argv))
print(json.dumps([codes, sorted(m for m in {OPTIONAL!r} if m in sys.modules)]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[0, 0, 0, 0], []]
