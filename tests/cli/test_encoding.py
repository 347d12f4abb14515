"""One output-encoding policy for every channel: UTF-8 JSON that a strict JSON reader
takes (lone surrogates and terminal controls as \\u escapes, NaN and the infinities as
strings), whatever the locale; input that is not UTF-8 is the same error on every
channel."""

from __future__ import annotations

import json
import os

import pytest

from .helpers import RAW_CONTROL, assert_one_error_line, rtc_here, rtc_process

# A tool call whose JSON holds what UTF-8 cannot carry (a lone surrogate), what a terminal
# acts on (CSI as a C1 control, a line separator, a right-to-left override), and numbers
# JSON has no spelling for.
ARGUMENTS = ('{"s": "\\ud800 \\u009b2J \\u2028 \\u202e \\u00e9\U0001f642", '
             '"n": NaN, "m": [-Infinity]}')
OUTPUT = ('<tool_call>\n{"name": "f", "arguments": ' + ARGUMENTS + "}\n</tool_call><|im_end|>")
EXPECTED = {"s": "\ud800 \x9b2J \u2028 \u202e \u00e9\U0001f642", "n": "NaN", "m": ["-Infinity"]}


def strict_json(text: str):
    """json.loads without Python's extensions: NaN and Infinity are refused."""
    def refuse(name):
        raise AssertionError(f"bare {name} in the output")
    return json.loads(text, parse_constant=refuse)


def decoded_lines(stdout: bytes) -> list[str]:
    text = stdout.decode("utf-8")  # strict: a raw surrogate could not be there
    assert not RAW_CONTROL.search(text.replace("\n", "")), text
    return text.split("\n")[:-1]


def arguments_in(message: dict) -> dict:
    return message["tool_calls"][0]["function"]["arguments"]


def test_the_message_is_strict_utf8_json():
    run = rtc_here("parse", "qwen3", stdin=OUTPUT.encode())
    assert run.code == 0, run.stderr
    assert arguments_in(strict_json("\n".join(decoded_lines(run.stdout)))) == EXPECTED


def test_stream_events_are_strict_utf8_json():
    run = rtc_here("parse", "qwen3", "--stream", stdin=OUTPUT.encode())
    assert run.code == 0, run.stderr
    events = [strict_json(line) for line in decoded_lines(run.stdout)]
    closed = [e for e in events if e["type"] == "region_close" and e["field"] == "tool_calls"]
    assert closed[0]["value"]["function"]["arguments"] == EXPECTED
    assert arguments_in(events[-1]["message"]) == EXPECTED


def test_openai_chunks_are_strict_utf8_json():
    run = rtc_here("parse", "qwen3", "--openai", stdin=OUTPUT.encode())
    assert run.code == 0, run.stderr
    chunks = [strict_json(line) for line in decoded_lines(run.stdout)]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_the_output_is_utf8_whatever_the_locale():
    env = {**os.environ, "PYTHONIOENCODING": "latin-1", "LC_ALL": "C"}
    run = rtc_process("parse", "qwen3", stdin=OUTPUT.encode(), env=env)
    assert run.code == 0, run.stderr
    assert arguments_in(strict_json(run.stdout.decode("utf-8"))) == EXPECTED


@pytest.mark.parametrize("mode", [[], ["--stream"], ["--openai"]])
def test_bytes_that_are_not_utf8_are_the_same_error_on_stdin_and_in_a_file(tmp_path, mode):
    data = "Bonjour, ça va".encode("latin-1") + b"<|im_end|>"
    path = tmp_path / "out.txt"
    path.write_bytes(data)
    from_file = assert_one_error_line(rtc_here("parse", "qwen3", str(path), *mode), 2)
    from_stdin = assert_one_error_line(rtc_here("parse", "qwen3", *mode, stdin=data), 2)
    assert from_file == f"rtc: error: {path}: not UTF-8 (byte 9)"
    assert from_stdin == "rtc: error: stdin: not UTF-8 (byte 9)"


def test_a_character_split_between_two_reads_is_read_whole(tmp_path):
    # 4095 ASCII bytes, then a 4-byte character across the first 4096-byte read.
    text = "x" * 4095 + "\U0001f642 done<|im_end|>"
    path = tmp_path / "out.txt"
    path.write_text(text, encoding="utf-8")
    run = rtc_here("parse", "qwen3", str(path), "--stream")
    assert run.code == 0, run.stderr
    assert strict_json(decoded_lines(run.stdout)[-1])["message"]["content"] == text[:-10]


def test_the_automaton_json_follows_the_policy(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"start_anchor": "<s>", "fields": {
        "content": {"close": "\u2028end\x85"}}}))
    run = rtc_here("compile", str(path), "--emit", "automaton")
    assert run.code == 0, run.stderr
    literals = [d["literals"] for d in strict_json("\n".join(decoded_lines(run.stdout)))[
        "delimiters"]]
    assert ["\u2028end\x85"] in literals
