"""Importing a generated module costs work in proportion to the template.

The module builds its region table at import: whether the delimiters' literals can
overlap (``_apart``, for the whole-text landmarks and the start anchor's ``rfind``), and
which modes a whole-text parse may walk from landmark to landmark (``_walks``). Both
compared every literal (or every lead) with every other: 10,000 literal fields took
more than 300 s to import. The work is counted here as Python lines executed.
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.codegen import generate_module
from rtcompiler.runtime import regions
from rtcompiler.template import load_template


def _lines_run(function, *args, code: str = regions.__file__) -> int:
    """Python lines executed by ``function(*args)`` in the file ``code``."""
    count = [0]

    def trace(frame, event, arg):
        if frame.f_code.co_filename != code:
            return None
        if event == "line":
            count[0] += 1
        return trace

    sys.settrace(trace)
    try:
        function(*args)
    finally:
        sys.settrace(None)
    return count[0]


def _pairwise_apart(literals) -> bool:
    """The definition: no literal begins another, none begins inside another or itself."""
    for a in literals:
        for b in literals:
            if a != b and a.startswith(b):
                return False
            for k in range(1, len(a)):
                tail = a[k:]
                if b.startswith(tail) or tail.startswith(b):
                    return False
    return True


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(alphabet="<|ab>", min_size=1, max_size=5), min_size=1, max_size=6))
def test_apart_is_the_pairwise_definition(literals):
    assert regions._apart(literals) == _pairwise_apart(literals)


def test_apart_reads_each_literal_a_bounded_number_of_times():
    def tags(n: int) -> list[str]:
        return [f"<f{i}>" for i in range(n)] + [f"</f{i}>" for i in range(n)]

    work = [_lines_run(regions._apart, tags(n)) for n in (250, 1000)]
    total = sum(len(s) for s in tags(1000))
    assert regions._apart(tags(1000))
    # Linear: four times the literals, about four times the work (pairs: sixteen).
    assert work[1] <= 5 * work[0], work
    assert work[1] <= 20 * total, (work, total)  # a few lines per character


def _fields(n: int, lead: bool = False) -> dict:
    def opening(i: int) -> dict:
        return {"open_pattern": f"\\s*<f{i}>"} if lead else {"open": f"<f{i}>"}

    return {
        "start_anchor": "<s>",
        "fields": {f"f{i}": {**opening(i), "close": f"</f{i}>"} for i in range(n)},
    }


@pytest.mark.parametrize("lead", [False, True], ids=["literals", "leads"])
def test_the_region_table_is_built_with_work_in_proportion(lead):
    """The table of 4n fields costs about 4 times that of n: the per-pair comparisons
    (literal pairs in _apart, every lead against every literal in _walks) are gone."""
    work = []
    for n in (16, 64):
        namespace: dict = {"__name__": "fields_parser"}
        source = generate_module(load_template(_fields(n, lead)))
        exec(compile(source, "fields_parser", "exec"), namespace)
        table = namespace["TABLE"]
        work.append(_lines_run(
            namespace["RegionTable"], table.regions, table.implicit, table.defaults,
            table.start_anchor, code="fields_parser",
        ))
    assert work[1] <= 5 * work[0], work


def test_a_module_with_many_fields_parses_as_before():
    namespace: dict = {"__name__": "fields_parser"}
    exec(compile(generate_module(load_template(_fields(100))), "fields_parser", "exec"), namespace)
    text = "x<f7>seven</f7><f99>last</f99>"
    assert namespace["parse_response"](text, prefix="") == {"f7": "seven", "f99": "last"}
