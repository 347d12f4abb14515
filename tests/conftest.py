"""Suite-wide options: heavier sweeps are opt-in (``--runslow`` runs the tests marked slow)."""

from __future__ import annotations

import os

from hypothesis import Phase, settings

# The default run is reproducible: every property test draws the same examples on every
# machine, so CI answers for the code and not for the luck of a seed. Exploratory sweeps
# draw fresh examples: `python -m pytest -n 2 --hypothesis-profile explore`.
settings.register_profile("reproducible", derandomize=True)
settings.register_profile("explore", derandomize=False)
# The first failure as drawn, without shrinking it: for slow properties (parity).
settings.register_profile(
    "first-failure", derandomize=True, phases=[Phase.explicit, Phase.reuse, Phase.generate]
)
settings.load_profile("reproducible")


def pytest_addoption(parser):
    parser.addoption(
        "--roundtrip-examples", type=int, default=150,
        help="examples per bundled grammar in the round-trip tests (default 150; "
        "rtc check's own default is 300)",
    )
    parser.addoption(
        "--runslow", action="store_true",
        help="also run the tests marked slow (heavier sweeps, such as 200+ real-model generations) "
        "and give the property tests of tests/sweeps.py their full example counts",
    )


def pytest_configure(config):
    # Before any test module is imported, so that tests/sweeps.py sees it.
    if config.getoption("--runslow"):
        os.environ["RTC_FULL_SWEEPS"] = "1"


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
