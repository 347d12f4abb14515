"""generated/ holds exactly the compiled parsers of the bundled grammars, as the compiler
makes them now."""

from __future__ import annotations

from rtcompiler import grammars
from rtcompiler.codegen import bundled


def test_generated_parsers_match_the_compiler():
    problems = bundled.stale()
    assert not problems, (
        "generated/ is out of date; run `python -m rtcompiler.codegen.bundled`:\n"
        + "\n".join(problems)
    )


def test_every_grammar_has_its_generated_parser_and_nothing_else():
    names = {f"{n}.py" for n in grammars.names()}
    files = {p.name for p in bundled.GENERATED.glob("*.py")}
    assert files == names
