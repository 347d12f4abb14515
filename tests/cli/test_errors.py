"""Every mistake in what rtc is given is one line on stderr and exit status 2; a model
output that does not parse is one line and exit status 1; never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import RAW_CONTROL, Run, assert_one_error_line, rtc_here, rtc_process

CALL = '<tool_call>\n{"name": "f", "arguments": {"n": "7"}}\n</tool_call><|im_end|>'
SPEC = {"start_anchor": "<s>", "fields": {"content": {}}}


def schema_tools(schema: str) -> str:
    return ('[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", '
            '"properties": {"n": ' + schema + "}}}}]")


def nested_any_of(depth: int) -> str:
    return '{"anyOf": [' * depth + '{"type": "integer"}' + "]}" * depth


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    made = {
        "call": CALL.encode(),
        "bigint.json": (json.dumps(SPEC)[:-1] + ', "version": ' + "1" * 5000 + "}").encode(),
        "42.json": b"42",
        "anyof.json": b'{"anyOf": 5}',
        "deep.json": nested_any_of(600).encode(),
        "deep_schema.json": schema_tools(nested_any_of(600)).encode(),
        "anyof_schema.json": schema_tools('{"anyOf": 5}').encode(),
        "latin1": "caf\xe9".encode("latin-1"),
        "deep_call": ('<tool_call>\n{"name": "f", "arguments": ' + "[" * 1000 + "]" * 1000
                      + "}\n</tool_call><|im_end|>").encode(),
    }
    for name, data in made.items():
        (tmp_path / name).write_bytes(data)
    return {name: tmp_path / name for name in made} | {"dir": tmp_path}


@pytest.mark.parametrize("argv, fragments", [
    (["compile", "{bigint.json}"], ["bigint.json", "4300 digits"]),
    (["parse", "qwen3", "{call}", "--tools", "{42.json}"], ["--tools", "a JSON list", "a number"]),
    (["parse", "qwen3", "{call}", "--tools", "{anyof.json}"], ["--tools", "an object"]),
    (["parse", "qwen3", "{call}", "--tools", "{deep.json}"], ["--tools", "nested too deeply"]),
    (["parse", "qwen3", "{call}", "--tools", "{deep_schema.json}"], ["nested too deeply"]),
    (["parse", "qwen3", "{call}", "--tools", "{latin1}"], ["--tools", "not UTF-8 (byte 3)"]),
    (["parse", "qwen3", "{call}", "--prefix-file", "{latin1}"], ["--prefix-file", "byte 3"]),
    (["parse", "qwen3", "{latin1}"], ["latin1: not UTF-8 (byte 3)"]),
    (["parse", "qwen3", "{dir}"], ["Is a directory"]),
    (["parse", "qwen3", "{call}", "--tools", "{dir}"], ["--tools", "Is a directory"]),
    (["parse", "qwen3", "{call}", "--prefix-file", "{dir}"], ["--prefix-file", "Is a directory"]),
    (["compile", "qwen3", "-o", "{dir}"], ["-o", "Is a directory"]),
    (["parse", "qwen3", "--jsonl", "{dir}", "-o", "{dir}/out.jsonl"], ["Is a directory"]),
    (["parse", "qwen3", "--jsonl", "{call}", "-o", "{dir}"], ["Is a directory"]),
    (["check", "qwen3", "--examples", "0"], ["--examples must be at least 1"]),
    (["check", "qwen3", "--generate", "-3"], ["--generate must be at least 1"]),
    (["check", "qwen3", "--generate", "4"], ["--generate needs --model"]),
    (["check", "qwen3", "--constrained"], ["--constrained goes with --generate N"]),
    (["check", "qwen3", "gemma4"], ["several TEMPLATEs only with --generate N"]),
    (["check", "--model", "smollm2"], ["give a TEMPLATE"]),
    (["check", "qwen3", "--model", "{dir}/nothing.gguf", "--generate", "2"],
     ["nothing.gguf"]),
    (["check", "qwen3", "--model", "smollm2", "--generate", "2", "--batch-size", "0"],
     ["--batch-size must be at least 1"]),
    (["check", "qwen3", "--max-new-tokens", "0"], ["--max-new-tokens"]),
    (["check", "qwen3", "--examples", "ten"], ["invalid int value", "rtc check --help"]),
    (["check", "qwen3", "--meta", "{42.json}"], ["expected a JSON object"]),
    (["compile", "qwen3", "--emit", "dfa-dot"], ["give --delimiter"]),
    (["frobnicate"], ["invalid choice"]),
])
def test_each_mistake_is_one_line_and_exit_2(files, argv, fragments):
    assert_one_error_line(rtc_here(*fill(argv, files)), 2, *fragments)


def fill(argv: list[str], files: dict[str, Path]) -> list[str]:
    out = []
    for arg in argv:
        for name, path in files.items():
            arg = arg.replace("{" + name + "}", str(path))
        out.append(arg)
    return out


# qwen3:strict: the bundled qwen3 recovers a call that does not parse (docs/extensions.md).
@pytest.mark.parametrize("argv, fragments", [
    # The reference crashes (RecursionError); the parser says what is wrong.
    (["parse", "qwen3:strict", "{deep_call}"], ["nested too deeply"]),
    (["parse", "qwen3:strict", "{deep_call}", "--stream"], ["nested too deeply"]),
    (["parse", "qwen3:strict", "{deep_call}", "--openai"], ["nested too deeply"]),
    # The reference raises TypeError for this schema, as we do.
    (["parse", "qwen3:strict", "{call}", "--tools", "{anyof_schema.json}"], ["TypeError"]),
])
def test_an_output_that_does_not_parse_is_one_line_and_exit_1(files, argv, fragments):
    assert_one_error_line(rtc_here(*fill(argv, files)), 1, *fragments)


@pytest.mark.parametrize("chat_template, fragment", [
    ("{% if %}", "line 1: Expected an expression"),
    ("{{ messages[0].content + 1 }}", "rendering fails: TypeError"),
    ("{% if add_generation_prompt %}<s>{% endif %}{% for m in messages %}{{ m.content }}"
     "{% endfor %}", "does not start with the generation prompt"),
])
def test_a_chat_template_that_cannot_be_used_is_one_line_and_exit_2(tmp_path, chat_template,
                                                                     fragment):
    path = tmp_path / "chat.jinja"
    path.write_text(chat_template)
    run = rtc_here("check", "qwen3", "--chat-template", str(path), "--examples", "5")
    assert_one_error_line(Run(run.code, run.stdout, run.stderr.split("\n", 1)[1]), 2,
                          f"chat template {path}: ", fragment)
    assert run.stderr.startswith("rtc check: 5 examples")  # the line before it, informational


def test_a_chat_template_that_refuses_every_message_is_one_line_and_exit_2(tmp_path,
                                                                            monkeypatch):
    # The search draws some 450 refused messages (half a minute) before hypothesis gives
    # up; what the command does then is all this test needs, so the search gives up at once.
    from hypothesis.errors import Unsatisfiable

    def search_that_gives_up(*args, **kwargs):
        raise Unsatisfiable("Unable to satisfy assumptions of test")

    import rtcompiler.roundtrip  # noqa: F401  (its check module, by name below)

    module = sys.modules["rtcompiler.roundtrip.check"]  # the package's "check" is the function
    monkeypatch.setattr(module, "find", search_that_gives_up)
    path = tmp_path / "chat.jinja"
    path.write_text("{{ raise_exception('no') }}")
    run = rtc_here("check", "qwen3", "--chat-template", str(path), "--examples", "5")
    assert_one_error_line(Run(run.code, run.stdout, run.stderr.split("\n", 1)[1]), 2,
                          f"chat template {path}: it refuses every message drawn")


@pytest.mark.skipif(not os.path.exists("/proc/version"), reason="no /proc (not Linux)")
def test_an_output_file_that_cannot_be_written(files):
    # /proc/version opens for writing and fails on the write.
    assert_one_error_line(rtc_process("compile", "qwen3", "-o", "/proc/version"), 2, "-o")


def test_a_template_key_cannot_write_to_the_terminal(tmp_path):
    key = "\x1b[2J\x1b[H\u202e\x9b31m\nrtc: wrote parser.py"
    path = tmp_path / "t.json"
    path.write_text(json.dumps({**SPEC, key: 1}))
    for run in (rtc_here("compile", str(path)), rtc_process("compile", str(path))):
        line = assert_one_error_line(run, 2)
        assert "\\x1b[2J" in line and "\\nrtc: wrote" in line  # spelled out, still readable
    # A name on the command line, quoted back by rtc and by argparse.
    assert_one_error_line(rtc_here("compile", key), 2, "neither a file")
    assert_one_error_line(rtc_here("compile", "qwen3", key), 2, "unrecognized arguments")
    # A model output quoted in a parse error.
    broken = "<tool_call>\n{\x1b[2J\u2028\n</tool_call>".encode()
    assert_one_error_line(rtc_here("parse", "qwen3:strict", stdin=broken), 1, "as JSON")


def test_informational_lines_are_escaped_too(tmp_path):
    out = tmp_path / "x\x1b[2J\n.py"
    run = rtc_here("compile", "qwen3", "-o", str(out))
    assert run.code == 0 and out.exists()
    assert len(run.error_lines()) == 1 and not RAW_CONTROL.search(run.stderr[:-1])
    assert "x\\x1b[2J\\n.py" in run.stderr


@pytest.mark.parametrize("mode", ["--stream", "--openai"])
def test_a_reader_that_goes_away_ends_rtc_quietly_with_141(tmp_path, mode):
    # Far more events than a pipe buffers, so a later write fails once the reader has gone.
    out = tmp_path / "long"
    out.write_text(CALL.replace("<|im_end|>", "") + " word" * 200_000)
    argv = [sys.executable, "-m", "rtcompiler.cli.main", "parse", "qwen3", str(out), mode]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 141, stderr
    assert stderr == ""


@pytest.mark.parametrize("place", ["before", "after"])
def test_the_output_file_may_come_after_the_options(files, place):
    options = ["--tools", str(files["dir"] / "tools.json"), "--openai"]
    (files["dir"] / "tools.json").write_text("[]")
    argv = ["parse", "qwen3", str(files["call"]), *options] if place == "before" else \
        ["parse", "qwen3", *options, str(files["call"])]
    run = rtc_process(*argv)
    assert run.code == 0, run.stderr
    assert b'"name": "f"' in run.stdout


def test_a_second_output_file_is_refused(files):
    run = rtc_process("parse", "qwen3", "--stream", str(files["call"]), str(files["call"]))
    assert_one_error_line(run, 2, "unrecognized arguments")
