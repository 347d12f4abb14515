"""Prints the conformance corpus's per-family and per-category counts after a run that
collected its tests (under xdist too: the controller computes them, which is cheap)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    ran = any(
        "tests/conformance/" in getattr(report, "nodeid", "").replace("\\", "/")
        for reports in terminalreporter.stats.values() for report in reports
    )
    if not ran:
        return
    from .corpus import CASES, summary

    terminalreporter.section("conformance corpus")
    terminalreporter.write_line(summary(CASES))
