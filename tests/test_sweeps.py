"""``--runslow`` gives the property tests of tests/sweeps.py their full example counts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .sweeps import examples

ROOT = Path(__file__).resolve().parent.parent


def test_the_counts_follow_the_environment(monkeypatch):
    monkeypatch.delenv("RTC_FULL_SWEEPS", raising=False)
    assert examples(10, 30) == 10
    monkeypatch.setenv("RTC_FULL_SWEEPS", "1")
    assert examples(10, 30) == 30


def test_runslow_sets_the_environment_before_tests_are_imported(tmp_path):
    # A test module outside the tree that records, at import, the count it would draw;
    # the suite's conftest is loaded as a plugin so that --runslow exists.
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "from tests.sweeps import examples\nCOUNT = examples(1, 2)\n\n"
        "def test_count():\n    print('COUNT', COUNT)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RTC_FULL_SWEEPS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    counts = []
    for extra in ([], ["--runslow"]):
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:xdist",
             "-p", "no:cacheprovider", "-q", "-s", "--rootdir", str(tmp_path), str(probe),
             *extra],
            cwd=tmp_path, capture_output=True, text=True, env=env,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        counts.append(int(out.stdout.split("COUNT ")[1].split()[0]))
    assert counts == [1, 2]
