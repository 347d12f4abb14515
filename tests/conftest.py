"""Suite-wide options: heavier sweeps are opt-in."""

from __future__ import annotations


def pytest_addoption(parser):
    parser.addoption(
        "--roundtrip-examples", type=int, default=300,
        help="examples per bundled grammar in the round-trip tests (default 300)",
    )
