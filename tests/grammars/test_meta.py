"""meta.json: one schema, refusing unknown keys, that every bundled grammar follows."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

import rtcompiler
from rtcompiler import grammars
from rtcompiler.grammars import MetaError, meta_schema, resolve_grammar
from rtcompiler.roundtrip.check import normalisation

from ..cli.helpers import rtc_here

FOLDERS = Path(rtcompiler.__file__).resolve().parent / "grammars"
DOC = (Path(__file__).resolve().parents[2] / "docs" / "grammars.md").read_text(encoding="utf-8")
# What the bundled grammars give beyond what a --meta file needs.
BUNDLED_KEYS = {"families", "models", "generation_prompt", "normalise", "ambiguities"}


def _object_schemas(node, where="#"):
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            yield where, node
        for key, value in node.items():
            yield from _object_schemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _object_schemas(value, f"{where}/{i}")


def test_the_schema_is_valid_and_closes_every_object_with_fixed_keys():
    schema = meta_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    closed = 0
    for where, node in _object_schemas(schema):
        if "properties" in node:
            assert node.get("additionalProperties") is False, f"{where} takes unknown keys"
            closed += 1
        else:  # a map of free names (render_kwargs, control_tokens) or a message/tool schema
            assert where.rsplit("/", 1)[-1] in {
                "render_kwargs", "control_tokens", "call_keys", "call_keys_after", "expected",
                "items", "written_patterns"}, where
    # the meta, normalise, tokenizer, mistral_common, an ambiguity, export, and a field's
    # written patterns
    assert closed == 7


@pytest.mark.parametrize("name", grammars.names())
def test_every_bundled_meta_follows_the_schema(name):
    raw = json.loads((FOLDERS / name / "meta.json").read_text(encoding="utf-8"))
    jsonschema.validate(raw, meta_schema(), cls=jsonschema.Draft202012Validator)
    assert grammars.meta(name) == raw
    assert BUNDLED_KEYS <= set(raw), f"{name}: missing {sorted(BUNDLED_KEYS - set(raw))}"
    assert raw["families"], name


def _grammar_with(tmp_path: Path, change) -> Path:
    folder = tmp_path / "my_grammar"
    shutil.copytree(FOLDERS / "qwen3", folder)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    change(meta)
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return folder


def test_an_unknown_key_is_refused_naming_the_key_and_the_file(tmp_path):
    folder = _grammar_with(tmp_path, lambda m: m["normalise"].update(empty_is_absent=True))
    meta_file = folder / "meta.json"
    with pytest.raises(MetaError) as caught:
        _ = resolve_grammar(folder).meta
    assert str(caught.value) == (
        f"{meta_file}: normalise: unknown key 'empty_is_absent'; known: content_with_tool_calls, "
        "drop_empty, end_of_turn, identifier_keys, max_tool_calls, reasoning, "
        "reasoning_without_tool_calls, render_kwargs, strip_content, strip_reasoning, "
        "tool_call_id, unsupported_argument_values")
    # rtc check reads it: one line, exit status 2, before any round trip.
    run = rtc_here("check", str(folder), "--examples", "1")
    assert run.code == 2
    assert run.error_lines() == [f"rtc: error: {caught.value}"]


@pytest.mark.parametrize("change,message", [
    (lambda m: m.update(name="qwen3"),
     "unknown key 'name'; known: ambiguities, export, families, "),
    (lambda m: m["ambiguities"][1].update(comment="x"), "ambiguities[1]: unknown key 'comment'"),
    (lambda m: m["normalise"].update(reasoning=True), "normalise.reasoning: True is not one of"),
    (lambda m: m["normalise"].update(end_of_turn="<|im_end|>"),
     "normalise.end_of_turn: '<|im_end|>' is not of type 'array'"),
    (lambda m: m["ambiguities"][0].pop("expected"),
     "ambiguities[0]: give exactly one of 'expected' or 'error'"),
])
def test_rtc_check_meta_is_checked_against_the_schema(tmp_path, change, message):
    folder = _grammar_with(tmp_path, change)
    run = rtc_here("check", "qwen3", "--meta", str(folder / "meta.json"), "--examples", "1")
    assert run.code == 2
    [line] = run.error_lines()
    assert line.startswith(f"rtc: error: {folder / 'meta.json'}: ") and message in line, line


def test_the_python_api_reads_the_same_schema():
    with pytest.raises(MetaError, match="normalise: unknown key 'drop_reasoning'"):
        normalisation({"drop_reasoning": True})
    assert normalisation({"reasoning": "drop"})["reasoning"] is False
    assert normalisation(None)["reasoning"] is None  # automatic


def _documented_keys(heading: str) -> set[str]:
    section = DOC.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return {key for row in rows for key in re.findall(r"`(\w+)`", row)}


def test_docs_list_exactly_the_schemas_keys():
    schema = meta_schema()
    assert _documented_keys("`meta.json`") == set(schema["properties"])
    assert _documented_keys("`meta.json` `normalise`") == set(
        schema["$defs"]["normalise"]["properties"])
    assert _documented_keys("`meta.json` `ambiguities`") == set(
        schema["$defs"]["ambiguity"]["properties"])


def test_a_meta_that_is_not_json_or_not_utf8_is_one_line(tmp_path):
    folder = _grammar_with(tmp_path, lambda m: None)
    for data, rule in ((b"{", "not valid JSON"), (b'{"families": ["\xe9"]}', "not UTF-8 text")):
        (folder / "meta.json").write_bytes(data)
        run = rtc_here("check", str(folder), "--examples", "1")
        assert run.code == 2
        [line] = run.error_lines()
        assert line.startswith(f"rtc: error: {folder / 'meta.json'}: {rule}"), line
