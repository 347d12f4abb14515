"""The rtc command line, run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": True,
                       "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close": "<|im_end|>"},
    },
}
OUTPUT = '<think>hm</think>Hello<tool_call>{"name": "f", "arguments": {}}</tool_call><|im_end|>'


def rtc(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "rtcompiler.cli.main", *args],
                          input=stdin, capture_output=True, text=True)


@pytest.fixture
def template_file(tmp_path):
    path = tmp_path / "template.json"
    path.write_text(json.dumps(TEMPLATE))
    return path


def _check_compiled(path):
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    message = namespace["parse_response"](OUTPUT, prefix="")
    call = {"type": "function", "function": {"name": "f", "arguments": {}}}
    assert message == {"role": "assistant", "reasoning_content": "hm", "content": "Hello",
                       "tool_calls": [call]}


def test_compile_a_template_file(template_file, tmp_path):
    out = tmp_path / "parser.py"
    run = rtc("compile", str(template_file), "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert "wrote" in run.stderr
    _check_compiled(out)


def test_compile_a_tokenizer_config_and_a_model_folder(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    config = {"model_max_length": 8, "response_template": TEMPLATE}
    (model / "tokenizer_config.json").write_text(json.dumps(config))
    for source in (model / "tokenizer_config.json", model):
        out = tmp_path / "p.py"
        run = rtc("compile", str(source), "-o", str(out))
        assert run.returncode == 0, run.stderr
        _check_compiled(out)


def test_emit_automaton_is_json_with_modes_and_delimiters(template_file):
    run = rtc("compile", str(template_file), "--emit", "automaton")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["format"] == "rtcompiler.regions/1"
    outside = data["modes"][0]
    assert [w["field"] for w in outside["watch"]] == ["reasoning_content", "tool_calls", "content"]
    assert data["delimiters"][outside["watch"][0]["delimiter"]]["literals"] == ["<think>"]


@pytest.mark.parametrize("spec, where", [
    ({"fields": {"content": {}}}, "start_anchor"),
    ({"start_anchor": "x", "fields": {"c": {"join": ","}}}, "fields.c"),
    ({"start_anchor": "x", "fields": {"c": {"open_pattern": "(?<=a)b"}}}, "fields.c.open_pattern"),
    # an rtcompiler extension used without being declared
    ({"start_anchor": "x", "fields": {"c": {"content": "pythonic"}}},
     "fields.c.content: 'pythonic'"),
])
def test_invalid_template_is_one_line_and_exit_2(tmp_path, spec, where):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(spec))
    run = rtc("compile", str(path))
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtc: error:") and where in lines[0]
    assert "Traceback" not in run.stderr


def test_missing_template_is_exit_2():
    run = rtc("compile", "no-such-template-anywhere")
    assert run.returncode == 2 and "Traceback" not in run.stderr


def test_parse_prints_the_message(template_file):
    run = rtc("parse", str(template_file), stdin=OUTPUT)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["content"] == "Hello"


def test_parse_stream_prints_events_as_json_lines(template_file):
    run = rtc("parse", str(template_file), "--stream", "--prefix", "<|im_start|>assistant\n<think>",
              stdin="deep</think>Hi<|im_end|>")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert lines[0] == {"type": "region_open", "field": "reasoning_content"}
    assert lines[-1]["message"] == {
        "role": "assistant", "reasoning_content": "deep", "content": "Hi"}


def test_list_shows_every_bundled_grammar_and_its_extensions():
    from rtcompiler import grammars

    run = rtc("list")
    assert run.returncode == 0
    table, _, note = run.stdout.partition("\n\n")
    rows = {line.split()[0]: line for line in table.splitlines()}
    robust = {n for n in grammars.names() if "recover" in grammars.grammar(n).spec.get(
        "extensions", [])}
    assert robust >= {"qwen3", "mistral", "qwen3_coder"}
    # Each grammar, and the strict form of each that opts in to a robustness extension.
    assert set(rows) == set(grammars.names()) | {f"{n}:strict" for n in robust}
    assert "NAME:strict" in note
    assert rows["glm45"].endswith("(extension: recover, close-outside-strings, yield)")
    assert rows["deepseek_v32"].endswith("(extension: typed-values, recover, yield)")
    assert rows["deepseek_v32:strict"].endswith("(extension: typed-values)")
    # No implicit field: a recovered call's text goes to the content field it names.
    assert rows["command_r7b"].endswith(
        "(extension: recover, close-outside-strings, yield, extend)")
    assert "extension" not in rows["command_r7b:strict"]
    assert rows["llama4_pythonic"].endswith("(extension: pythonic, recover, extend)")
    assert rows["llama4_pythonic:strict"].endswith("(extension: pythonic)")
    assert rows["qwen3"].endswith(
        "(extension: recover, close-outside-strings, yield, string-arguments)")
    assert rows["mistral"].endswith("(extension: recover, close-outside-strings, json-end)")
    assert rows["qwen3:strict"].split(None, 1)[1] == (
        "strict form of qwen3: the reference's behaviour")
