"""Every bundled grammar round-trips through its chat template (rtc check)."""

from __future__ import annotations

import json

import pytest

from rtcompiler.cli.resolve import GRAMMARS
from rtcompiler.codegen.bundled import grammar_names
from rtcompiler.roundtrip import check
from rtcompiler.template import load_template_file


@pytest.mark.parametrize("name", grammar_names())
def test_grammar_round_trips(name, request):
    folder = GRAMMARS / name
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    examples = request.config.getoption("--roundtrip-examples")
    report = check(
        load_template_file(folder / "response_template.json"),
        (folder / "chat_template.jinja").read_text(encoding="utf-8"),
        examples=examples,
        normalise=meta.get("normalise"),
        variables=meta.get("variables"),
        reserved=meta.get("reserved"),
    )
    assert report.ok, json.dumps(report.counterexample, ensure_ascii=False, indent=1, default=str)
    assert report.examples >= examples
    assert report.findings == []


def test_every_grammar_is_documented():
    for name in grammar_names():
        folder = GRAMMARS / name
        for needed in ("README.md", "meta.json", "chat_template.jinja"):
            assert (folder / needed).is_file(), f"{name} has no {needed}"
