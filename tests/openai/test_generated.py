"""``rtc compile --openai``: the adapter inside a standalone module, and on the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rtcompiler.codegen import generate_module
from rtcompiler.codegen.bundled import GENERATED
from rtcompiler.grammars import resolve_template
from rtcompiler.openai import DeltaStream, accumulate

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}}}]

CASES = {
    "qwen3": ("<|im_start|>assistant\n",
              '<think>\nok\n</think>\n\nSure.\n<tool_call>\n{"name": "f", "arguments": '
              '{"n": "7", "s": "a\\u00e9\\"b"}}\n</tool_call><|im_end|>'),
    "qwen3_coder": ("<|im_start|>assistant\n<think>\n",
                    "hm\n</think>\n\n<tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>\n"
                    "<parameter=s>\nx y\n</parameter>\n</tool_call>\n<|im_end|>"),
    "gemma4": ("<|turn>model\n",
               '<|channel>thought\nhm<channel|><|tool_call>call:f{n:7,s:<|"|>a, b:c<|"|>}'
               "<tool_call|><turn|>"),
    "command_r7b": ("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
                    '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": '
                    '{"n": 1}}]<|END_ACTION|>'),
}

SCRIPT = r"""
import json, sys
sys.path.insert(0, ".")  # -I leaves the working directory off the path
import parser_openai as p
prefix, output, tools = json.loads(sys.stdin.read())
stream = p.openai_stream(prefix, tools=tools, call_id=lambda i: "call_%d" % i)
deltas = [list(stream.initial_deltas)]
for ch in output:
    deltas.append(stream.feed(ch))
deltas.append(stream.finish())
print(json.dumps({"deltas": deltas, "message": stream.message, "finish": stream.finish_reason}))
"""


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_module_gives_the_package_adapters_deltas_without_site_packages(name, tmp_path):
    prefix, output = CASES[name]
    source = generate_module(resolve_template(name), openai=True)
    (tmp_path / "parser_openai.py").write_text(source, encoding="utf-8")
    run = subprocess.run([sys.executable, "-I", "-S", "-c", SCRIPT], cwd=tmp_path,
                         input=json.dumps([prefix, output, TOOLS]), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)

    stream = DeltaStream(name, prefix, tools=TOOLS, call_id=lambda i: f"call_{i}")
    want = [stream.initial_deltas] + [stream.feed(ch) for ch in output] + [stream.finish()]
    assert got["deltas"] == json.loads(json.dumps(want))
    assert got["message"] == json.loads(json.dumps(stream.message))
    assert got["finish"] == stream.finish_reason
    rebuilt = accumulate(d for step in want for d in step)
    assert [c["function"]["name"] for c in rebuilt.get("tool_calls", [])] == [
        c["function"]["name"] for c in stream.message.get("tool_calls", [])]


def test_default_output_is_unchanged_and_has_no_adapter():
    template = resolve_template("qwen3")
    default = generate_module(template)
    assert default == (GENERATED / "qwen3.py").read_text(encoding="utf-8")
    assert "openai_stream" not in default and "DeltaStream" not in default
    with_adapter = generate_module(template, openai=True)
    assert "runtime: rtcompiler.runtime.deltas [deltas]" in with_adapter
    assert with_adapter.endswith('__all__ += ["DeltaStream", "arguments_json", "openai_stream"]\n')
    assert generate_module(template, openai=True) == with_adapter  # deterministic


def rtc(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "rtcompiler.cli.main", *args],
                          input=stdin, capture_output=True, text=True)


def test_cli_prints_one_chunk_object_per_line(tmp_path):
    openai_types = pytest.importorskip("openai.types.chat")
    prefix, output = CASES["qwen3"]
    run = rtc("parse", "qwen3", "--stream", "--openai", "--prefix", prefix, stdin=output)
    assert run.returncode == 0, run.stderr
    chunks = [json.loads(line) for line in run.stdout.splitlines()]
    for c in chunks:
        openai_types.ChatCompletionChunk.model_validate(c)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    message = accumulate(c["choices"][0]["delta"] for c in chunks)
    assert message["content"] == "Sure." and message["reasoning_content"] == "ok"
    assert message["tool_calls"][0]["function"] == {"name": "f",
                                                    "arguments": '{"n": "7", "s": "aé\\"b"}'}


def test_cli_compile_openai_writes_a_module_with_the_adapter(tmp_path):
    out = tmp_path / "p.py"
    run = rtc("compile", "qwen3", "--openai", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert "def openai_stream(" in out.read_text(encoding="utf-8")
