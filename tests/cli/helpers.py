"""Running ``rtc`` in this process, with bytes in and bytes out, as a terminal would see them."""

from __future__ import annotations

import dataclasses
import io
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

from rtcompiler.cli.main import main

# What must never reach a terminal raw: C0 and C1 controls (ESC among them), DEL, the line
# and paragraph separators, bidirectional controls, lone surrogates.
RAW_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                         "\ud800-\udfff]")


@dataclasses.dataclass
class Run:
    code: int
    stdout: bytes
    stderr: str

    def error_lines(self) -> list[str]:
        assert self.stderr.endswith("\n") or not self.stderr, self.stderr
        return self.stderr[:-1].split("\n") if self.stderr else []


def rtc_here(*argv: str, stdin: bytes = b"") -> Run:
    """``main(argv)`` with stdin, stdout and stderr replaced; any exception escapes."""
    out = io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with redirect_stdout(stdout), redirect_stderr(stderr):
            code = main(list(argv))
    finally:
        sys.stdin = saved
    stdout.flush()
    return Run(code, out.getvalue(), stderr.getvalue())


def rtc_process(*argv: str, stdin: bytes = b"", env: dict | None = None) -> Run:
    """``rtc`` as a user runs it, in its own process."""
    run = subprocess.run([sys.executable, "-m", "rtcompiler.cli.main", *argv], input=stdin,
                         capture_output=True, env=env, timeout=300)
    return Run(run.returncode, run.stdout, run.stderr.decode("utf-8", "backslashreplace"))


def assert_one_error_line(run: Run, code: int = 2, *fragments: str) -> str:
    """One line on stderr, an rtc error, nothing a terminal would act on; that line."""
    assert run.code == code, (run.code, run.stderr)
    lines = run.error_lines()
    assert len(lines) == 1, run.stderr
    line = lines[0]
    assert line.startswith(("rtc: error: ", "rtc: parse error: ")), line
    assert "Traceback" not in run.stderr and "internal error" not in line
    assert not RAW_CONTROL.search(line), line
    for fragment in fragments:
        assert fragment in line, line
    return line
