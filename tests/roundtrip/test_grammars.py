"""Every bundled grammar round-trips through its chat template (rtc check)."""

from __future__ import annotations

import json

import pytest

from rtcompiler import grammars
from rtcompiler.roundtrip import check


@pytest.mark.parametrize("name", grammars.names())
def test_grammar_round_trips(name, request):
    grammar = grammars.grammar(name)
    meta = grammar.meta
    examples = request.config.getoption("--roundtrip-examples")
    report = check(
        grammar.template,
        grammar.chat_template,
        examples=examples,
        normalise=meta.get("normalise"),
        reserved=meta.get("reserved"),
    )
    assert report.ok, json.dumps(report.counterexample, ensure_ascii=False, indent=1, default=str)
    assert report.examples >= examples
    assert report.findings == []


def test_every_grammar_is_documented():
    for name in grammars.names():
        grammar = grammars.grammar(name)
        for needed in ("README.md", "meta.json", "chat_template.jinja"):
            assert grammar.read_text(needed) is not None, f"{name} has no {needed}"
