"""The conformance corpus (``cases/*.jsonl``): real outputs of the bundled grammars' families.

Every case runs through its grammar (the form a user gets by naming it, which opts in to
whatever robustness the grammar has) whole, one character at a time and in seeded random
chunkings (:mod:`.corpus`):

* ``test_stream_equals_whole``: every stream gives what the whole parse gives (the same
  message, or the same exception type), for every case, waiting or not;
* ``test_message``: the message is ``expected`` under the grammar's normalisation and no
  marker of the grammar (its delimiters' literals and special tokens, its end-of-turn
  tokens) occurs in any field more often than in ``expected``. A case marked ``needs``
  waits for an opt-in extension that does not exist yet: it runs as a strict expected
  failure, so the day it passes the test fails until the marker is removed;
* ``test_reference_agrees``: for a grammar without extensions, transformers' own parser
  gives the same message (or exception type), whole and one character at a time: what the
  corpus shows of a grammar is the format's behaviour, not an accident of ours.

``python -m pytest tests/conformance -p no:xdist -q`` ends with the per-family and
per-category counts (``conftest.py``); ``README.md`` holds the schema, the policy of the
expected messages and a copy of the counts.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from functools import cache

import pytest
from transformers.utils.chat_parsing import ResponseParser as RefParser
from transformers.utils.chat_parsing import parse_response as ref_parse_response
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler.grammars import grammar, names

from .corpus import (
    CASES,
    CASES_DIR,
    CATEGORIES,
    NEEDS,
    OPTIONAL_KEYS,
    README,
    RECOVERY_CATEGORIES,
    REQUIRED_KEYS,
    readme_counts,
    result,
    summary,
)


def _param(case, waiting: bool):
    marks = ()
    if waiting and case.needs:
        marks = pytest.mark.xfail(
            strict=True, reason=f"needs {case.needs!r} ({NEEDS[case.needs]}): {case.note}")
    return pytest.param(case, id=case.id, marks=marks)


def test_the_corpus_is_well_formed():
    ids = Counter(case.id for case in CASES)
    assert not [i for i, n in ids.items() if n > 1], "case ids are unique"
    for case in CASES:
        data = case.data
        where = f"{data['_file']} ({case.id})"
        missing = [k for k in REQUIRED_KEYS if k not in data]
        assert not missing, f"{where}: missing {missing}"
        unknown = set(data) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS) - {"_file"}
        assert not unknown, f"{where}: unknown keys {sorted(unknown)}"
        assert data["_file"].split(":")[0] == f"{case.family}.jsonl", where
        assert case.grammar in names(), f"{where}: no bundled grammar {case.grammar!r}"
        assert case.category in CATEGORIES, f"{where}: category {case.category!r}"
        assert case.needs in (None, *NEEDS), f"{where}: needs {case.needs!r}"
        if case.needs == "recover":
            assert case.category in RECOVERY_CATEGORIES, f"{where}: recover is for section 3"
        assert case.expected.get("role") == "assistant", where
        assert isinstance(case.source, str) and case.source, where
        if "alt_expected" in data:
            assert data.get("judgement"), f"{where}: an alt_expected goes with judgement"


def test_every_family_covers_every_category():
    """Every category for every family; ``in-reasoning`` only where the family's grammar has
    a reasoning field (a format without one has no reasoning to write a call into)."""
    families = {case.family: case.grammar for case in CASES}
    for family, name in sorted(families.items()):
        have = {case.category for case in CASES if case.family == family}
        want = set(CATEGORIES)
        if "reasoning_content" not in grammar(name).spec["fields"]:
            want.discard("in-reasoning")
        assert want <= have, f"{family}: no case for {sorted(want - have)}"


def test_every_shipped_grammar_has_cases():
    covered = {case.grammar for case in CASES}
    assert set(names()) <= covered, sorted(set(names()) - covered)
    assert sorted(p.stem for p in CASES_DIR.glob("*.jsonl")) == sorted(
        {case.family for case in CASES})


@pytest.mark.parametrize("case", [_param(c, False) for c in CASES])
def test_stream_equals_whole(case):
    outcome = result(case)
    assert outcome.stream_ok, f"{case.id}: {case.note}\n" + "\n".join(outcome.stream_problems)


@pytest.mark.parametrize("case", [_param(c, True) for c in CASES])
def test_message(case):
    outcome = result(case)
    assert outcome.expected_ok, (
        f"{case.id} ({case.category}): {case.note}\noutput: {case.output!r}\n"
        + "\n".join(outcome.problems + outcome.stream_problems))


# -- the reference -------------------------------------------------------------------------


@cache
def _reference(name: str):
    return load_response_template(copy.deepcopy(grammar(name).spec))


def _ref_outcome(run):
    try:
        return ("message", json.dumps(run(), ensure_ascii=False))
    except Exception as e:  # the type is what is compared
        return ("error", type(e).__name__)


def _ours(outcome):
    kind, value = outcome
    if kind == "error":
        return ("error", value.split(":", 1)[0])
    return ("message", json.dumps(value, ensure_ascii=False))


STANDARD = [c for c in CASES if "extensions" not in grammar(c.grammar).spec]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in STANDARD])
def test_reference_agrees(case):
    spec = _reference(case.grammar)
    whole = _ref_outcome(lambda: ref_parse_response(
        case.output, spec, prefix=case.prefix, tools=copy.deepcopy(case.tools)))

    def streamed():
        parser = RefParser(spec, prefix=case.prefix, tools=copy.deepcopy(case.tools))
        for char in case.output:
            parser.feed(char)
        return parser.finalize()[0]

    ours = result(case)
    assert whole == _ours(ours.whole), f"{case.id}: reference {whole}, ours {_ours(ours.whole)}"
    assert _ref_outcome(streamed) == _ours(ours.streams["1 char"]), case.id


def test_the_readme_counts_are_current():
    text = README.read_text(encoding="utf-8")
    assert readme_counts(text) == summary(CASES), (
        "tests/conformance/README.md: counts differ; python -m tests.conformance.corpus")
