"""The README's examples run as written (the convention is in its last section).

Every fenced ``sh`` and ``python`` block runs, top to bottom, in one temporary directory
(later blocks use what earlier ones wrote, e.g. the compiled ``qwen3_parser.py``), with
shims for ``rtc`` and ``python`` first on ``PATH`` that run this checkout:

* ``sh``: a line ``$ CMD`` is a command, run by bash; the lines after it up to the next
  command are its expected output, stdout and stderr merged, compared exactly. Every
  command must exit with status 0. Without ``$ `` lines, every line is a command whose
  output is not compared.
* ``python``: a doctest (``python -m doctest``), run in the same directory.

Skipped on purpose, each with its reason in ``SKIPPED``: installing (the test runs inside
the installed environment) and running the test suite (it is the suite running this).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# Command prefix -> why the test does not run it. For "pip install ... && rest", the
# rest still runs.
SKIPPED = {
    "pip install": "the test runs inside the environment the install made",
    "python -m pytest": "that is the test suite, which is running this test",
}

_BLOCK = re.compile(r"^```(sh|python)\n(.*?)^```", re.S | re.M)


@dataclass
class Step:
    line: int  # README line of the command / block
    kind: str  # "sh" or "python"
    code: str
    expected: str | None = None  # sh: the output shown, or None if none is shown


def steps(text: str) -> list[Step]:
    out = []
    for block in _BLOCK.finditer(text):
        first = text.count("\n", 0, block.start(2)) + 1
        body = block[2]
        if block[1] == "python":
            out.append(Step(first, "python", body))
            continue
        lines = body.splitlines()
        if not any(line.startswith("$ ") for line in lines):
            out.extend(Step(first + i, "sh", line) for i, line in enumerate(lines)
                       if line.strip() and not line.startswith("#"))
            continue
        current: Step | None = None
        shown: list[str] = []
        for i, line in enumerate(lines):
            if line.startswith("$ "):
                if current is not None:
                    current.expected = "\n".join(shown) if shown else None
                    out.append(current)
                current, shown = Step(first + i, "sh", line[2:]), []
            else:
                assert current is not None, f"README line {first + i}: output before a command"
                shown.append(line)
        assert current is not None
        current.expected = "\n".join(shown) if shown else None
        out.append(current)
    return out


def runnable(command: str) -> str | None:
    """The part of ``command`` to run, or None when all of it is skipped."""
    for prefix in SKIPPED:
        if command.startswith(prefix):
            rest = command.partition("&&")[2].strip()
            return rest or None
    return command


def shims(directory: Path) -> dict[str, str]:
    """An environment whose ``rtc`` and ``python`` run this checkout with this interpreter."""
    bin_dir = directory / ".bin"
    bin_dir.mkdir()
    for name, command in (("rtc", f'"{sys.executable}" -m rtcompiler.cli.main'),
                          ("python", f'"{sys.executable}"')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = str(ROOT)
    env.pop("RTC_DEBUG", None)
    return env


def run(step: Step, cwd: Path, env: dict[str, str]) -> None:
    where = f"README.md line {step.line}"
    if step.kind == "python":
        block = cwd / f".readme_{step.line}.txt"
        block.write_text(step.code, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "doctest", "-o", "NORMALIZE_WHITESPACE", block.name],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, f"{where}: doctest failed\n{done.stdout}{done.stderr}"
        return
    command = runnable(step.code)
    if command is None:
        return
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    assert done.returncode == 0, f"{where}: `{command}` failed\n{done.stdout}"
    if step.expected is not None:
        printed = done.stdout.rstrip("\n")
        assert printed == step.expected, f"{where}: `{command}` printed\n{done.stdout}"


def test_readme_examples(tmp_path):
    env = shims(tmp_path)
    all_steps = steps(README.read_text(encoding="utf-8"))
    for step in all_steps:
        run(step, tmp_path, env)
    # What the examples leave behind is what they claim to make.
    assert (tmp_path / "qwen3_parser.py").is_file()
    assert (tmp_path / "qwen3.mmd").read_text().startswith("%% rtcompiler region automaton")


def test_the_convention_finds_the_examples():
    found = steps(README.read_text(encoding="utf-8"))
    commands = [s.code for s in found if s.kind == "sh"]
    # The two headline commands are there, and each is handled explicitly.
    assert "pip install -e '.[dev]' && rtc compile qwen3 -o qwen3_parser.py" in commands
    assert runnable(commands[0]) == "rtc compile qwen3 -o qwen3_parser.py"
    assert "python -m pytest -n 2" in commands and runnable("python -m pytest -n 2") is None
    # The 30-second example shows its output, and the module API is a doctest.
    assert any("rtc parse qwen3 --stream" in s.code and s.expected for s in found)
    assert any(s.kind == "python" and ">>> import qwen3_parser" in s.code for s in found)
    # Every command of every section is run: compile, parse, check, list.
    for command in ("rtc compile", "rtc parse", "rtc check", "rtc list"):
        assert any(command in c for c in commands), command


def test_steps_reads_commands_and_outputs():
    text = "\n".join([
        "```sh", "$ echo a", "a", "$ true", "```",
        "```sh", "ls", "# a comment", "pwd", "```",
        "```python", ">>> 1 + 1", "2", "```",
        "```text", "$ not run", "```",
    ]) + "\n"
    assert [(s.kind, s.code, s.expected) for s in steps(text)] == [
        ("sh", "echo a", "a"), ("sh", "true", None), ("sh", "ls", None), ("sh", "pwd", None),
        ("python", ">>> 1 + 1\n2\n", None),
    ]
