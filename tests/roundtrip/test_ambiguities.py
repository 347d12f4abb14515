"""Every known ambiguity a grammar's README documents is a checked counterexample.

Each bundled grammar's ``meta.json`` lists its ambiguities under ``"ambiguities"``: a model
output (with an optional ``prefix``, default the grammar's ``generation_prompt``, and optional
``tools``) and what parsing it gives, the ``expected`` message or the ``error`` raised. For each
entry,

* the compiled parser gives exactly that, whole (``parse_response``) and streamed one character
  at a time (``response_parser`` → ``feed`` → ``finalize``);
* transformers' ``chat_parsing`` gives the same, whole and streamed, so each documented
  ambiguity is one of the format and not of our parser. A template that declares
  ``"extensions"`` is refused by transformers; for it only ours is checked, and the refusal is.

Messages are compared as JSON text: types (``1``/``1.0``/``True``) and key order count.
The last test keeps prose and data together: the ambiguities section of each README has no
more bullet points than ``meta.json`` has entries.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from transformers.utils.chat_parsing import ResponseParser as RefParser
from transformers.utils.chat_parsing import parse_response as ref_parse_response
from transformers.utils.chat_parsing.response_templates import load_response_template

from rtcompiler import compile_template
from rtcompiler.grammars import grammar, names

ENTRY_KEYS = {"note", "output", "prefix", "tools", "expected", "error"}


@cache
def meta(name: str) -> dict[str, Any]:
    return grammar(name).meta


@cache
def spec(name: str) -> dict[str, Any]:
    return grammar(f"{name}:strict").spec


@cache
def ours(name: str) -> Any:
    return compile_template(f"{name}:strict")


@cache
def reference(name: str) -> Any:
    return load_response_template(copy.deepcopy(spec(name)))


def has_extensions(name: str) -> bool:
    return "extensions" in spec(name)


def entries() -> list[Any]:
    params = []
    for name in names():
        for i, entry in enumerate(meta(name).get("ambiguities") or []):
            params.append(pytest.param(name, entry, id=f"{name}-{i}"))
    return params


ENTRIES = entries()
REFERENCE_ENTRIES = [p for p in ENTRIES if not has_extensions(p.values[0])]


# -- running one entry ------------------------------------------------------------------


def prefix_of(name: str, entry: dict[str, Any]) -> str:
    return entry.get("prefix", meta(name)["generation_prompt"])


def tools_of(entry: dict[str, Any]) -> list | None:
    tools = entry.get("tools")
    return copy.deepcopy(tools) if tools is not None else None


def outcome(run: Callable[[], dict]) -> tuple[str, str]:
    """``("message", JSON text)`` or ``("error", exception type name)``."""
    try:
        message = run()
    except Exception as e:  # the type is what is compared
        return ("error", type(e).__name__)
    return ("message", json.dumps(message, ensure_ascii=False))


def expected_outcome(entry: dict[str, Any]) -> tuple[str, str]:
    if "error" in entry:
        return ("error", entry["error"])
    return ("message", json.dumps(entry["expected"], ensure_ascii=False))


def streamed(parser: Any, output: str) -> dict:
    for char in output:
        parser.feed(char)
    message, _ = parser.finalize()
    return message


def check(entry: dict[str, Any], whole: tuple[str, str], stream: tuple[str, str]) -> None:
    want = expected_outcome(entry)
    context = f"{entry['note']}\noutput: {entry['output']!r}"
    assert whole == want, f"parse_response: {whole} != {want}\n{context}"
    assert stream == want, f"streamed 1 char at a time: {stream} != {want}\n{context}"


# -- the tests ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "entry"), ENTRIES)
def test_compiled_parser_gives_the_documented_result(name: str, entry: dict[str, Any]) -> None:
    parser, output, prefix = ours(name), entry["output"], prefix_of(name, entry)
    whole = outcome(lambda: parser.parse_response(output, prefix=prefix, tools=tools_of(entry)))
    stream = outcome(
        lambda: streamed(parser.response_parser(prefix, tools=tools_of(entry)), output)
    )
    check(entry, whole, stream)


@pytest.mark.parametrize(("name", "entry"), REFERENCE_ENTRIES)
def test_transformers_gives_the_same(name: str, entry: dict[str, Any]) -> None:
    template, output, prefix = reference(name), entry["output"], prefix_of(name, entry)
    whole = outcome(
        lambda: ref_parse_response(output, template, prefix=prefix, tools=tools_of(entry))
    )
    stream = outcome(
        lambda: streamed(RefParser(template, prefix=prefix, tools=tools_of(entry)), output)
    )
    check(entry, whole, stream)


@pytest.mark.parametrize("name", [n for n in names() if has_extensions(n)])
def test_transformers_refuses_extension_templates(name: str) -> None:
    with pytest.raises(ValueError):
        load_response_template(copy.deepcopy(spec(name)))


def ambiguity_section(readme: str) -> list[str] | None:
    """The lines of the README's ``## …ambiguities…`` section, or None without one."""
    lines = readme.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("## ") and "ambiguit" in line.lower():
            body = []
            for rest in lines[i + 1 :]:
                if rest.startswith("#"):
                    break
                body.append(rest)
            return body
    return None


@pytest.mark.parametrize("name", names())
def test_readme_ambiguities_are_all_in_meta(name: str) -> None:
    listed = meta(name).get("ambiguities")
    assert isinstance(listed, list), f"{name}/meta.json has no 'ambiguities' list"
    for entry in listed:
        assert isinstance(entry, dict) and set(entry) <= ENTRY_KEYS, entry
        assert isinstance(entry.get("note"), str) and isinstance(entry.get("output"), str), entry
        assert ("expected" in entry) != ("error" in entry), f"one of expected/error: {entry}"
        assert isinstance(entry.get("prefix", ""), str), entry
        assert isinstance(entry.get("tools", []), list), entry
    section = ambiguity_section(grammar(name).read_text("README.md"))
    assert section is not None, f"{name}/README.md has no '## … ambiguities' section"
    bullets = [line for line in section if line.startswith("- ")]
    assert len(listed) >= len(bullets), (
        f"{name}: README lists {len(bullets)} ambiguities, meta.json has {len(listed)} entries"
    )
    if not listed:
        assert any(line.strip() for line in section), (
            f"{name}: no ambiguities in meta.json; the README section must say why"
        )
