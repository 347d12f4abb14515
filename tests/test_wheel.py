"""rtcompiler as a user installs it: the wheel, in a fresh virtualenv, without extras.

The wheel is built from a copy of the package's sources (nothing is written into the
checkout) and installed with pip, its base dependencies coming from the package index
or pip's cache; then the README's user commands run from an empty folder with that
virtualenv's ``rtc`` and ``python`` first on ``PATH`` and no ``PYTHONPATH``, so that
nothing of this checkout can be imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ('<think>\nThe user wants an alarm.\n</think>\n\nSetting it now.\n<tool_call>\n'
          '{"name": "set_alarm", "arguments": {"hour": "7"}}\n</tool_call><|im_end|>')
MESSAGE = {"role": "assistant", "reasoning_content": "The user wants an alarm.",
           "content": "Setting it now.", "tool_calls": [{"type": "function", "function": {
               "name": "set_alarm", "arguments": {"hour": "7"}}}]}


def _run(argv: list, env: dict, cwd: Path, stdin: str = "", timeout: int = 600):
    return subprocess.run([str(a) for a in argv], input=stdin, capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


def _build_wheel(tmp: Path, env: dict) -> Path:
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "rtcompiler", source / "rtcompiler",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    done = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 "-w", tmp / "dist", source], env, tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = (tmp / "dist").glob("rtcompiler-*.whl")
    return wheel


def test_the_installed_wheel_runs_the_readme_commands(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    wheel = _build_wheel(tmp_path, env)
    files = set(zipfile.ZipFile(wheel).namelist())
    assert "rtcompiler/grammars/meta.schema.json" in files
    for name in ("response_template.json", "chat_template.jinja", "meta.json", "README.md"):
        assert f"rtcompiler/grammars/qwen3/{name}" in files

    venv = tmp_path / "venv"
    done = _run([sys.executable, "-m", "venv", venv], env, tmp_path)
    assert done.returncode == 0, done.stderr
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    done = _run([bin_dir / "python", "-m", "pip", "install", "--quiet", wheel], env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr

    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    work = tmp_path / "work"
    work.mkdir()

    def run(*argv: str, stdin: str = ""):
        return _run(list(argv), env, work, stdin)

    where = run("python", "-c", "import rtcompiler; print(rtcompiler.__file__)")
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(venv)), where.stdout  # the wheel, not this checkout

    compiled = run("rtc", "compile", "qwen3", "-o", "q.py")
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stderr.startswith("rtc: wrote q.py (")
    code = ("import json, q; print(json.dumps(q.parse_response("
            f"{OUTPUT!r}, prefix='<|im_start|>assistant\\n')))")
    parsed = run("python", "-S", "-c", code)  # the module needs no site-packages
    assert parsed.returncode == 0, parsed.stderr
    assert json.loads(parsed.stdout) == MESSAGE

    whole = run("rtc", "parse", "qwen3", stdin=OUTPUT)
    assert whole.returncode == 0, whole.stderr
    assert json.loads(whole.stdout) == MESSAGE

    streamed = run("rtc", "parse", "qwen3", "--stream", stdin=OUTPUT)
    assert streamed.returncode == 0, streamed.stderr
    events = [json.loads(line) for line in streamed.stdout.splitlines()]
    assert events[0] == {"type": "region_open", "field": "reasoning_content"}
    assert events[-1] == {"type": "message", "message": MESSAGE}

    listed = run("rtc", "list")
    assert listed.returncode == 0, listed.stderr
    table, _, note = listed.stdout.partition("\n\n")
    names = [line.split()[0] for line in table.splitlines()]
    rows = [name for name in names if not name.endswith(":strict")]  # a grammar's strict form
    assert "qwen3:strict" in names
    bundled = [p for p in (ROOT / "rtcompiler" / "grammars").iterdir() if p.is_dir()
               and (p / "response_template.json").is_file()]
    assert len(rows) == len(bundled) and "qwen3" in rows and "NAME:strict" in note

    shutil.copytree(ROOT / "rtcompiler" / "grammars" / "qwen3", work / "my_grammar")
    from_folder = run("rtc", "compile", "my_grammar")
    assert from_folder.returncode == 0, from_folder.stderr
    assert from_folder.stdout == (work / "q.py").read_text(encoding="utf-8")

    checked = run("rtc", "check", "qwen3")
    assert checked.returncode == 2
    assert checked.stderr == (
        "rtc: error: rtc check needs the 'check' extra: pip install 'rtcompiler[check]'\n")
