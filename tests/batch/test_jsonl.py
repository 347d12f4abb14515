"""rtc parse --jsonl and parse_jsonl: every line kept, in order, resumable; workers need nothing."""

from __future__ import annotations

import json
import os
import pickle
import pickletools
import signal
import subprocess
import sys
import time

import pytest
from transformers.utils.chat_parsing import parse_response as reference

from rtcompiler.batch import BatchParser, ResumeRefused, batch_parser, parse_jsonl
from rtcompiler.cli.main import main
from rtcompiler.grammars import grammar

QWEN3 = grammar("qwen3").spec
PROMPT = "<|im_start|>assistant\n"
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}}}]
CALL = '<tool_call>\n{"name": "f", "arguments": {"n": "7", "s": "7"}}\n</tool_call><|im_end|>'

# (line, what the output line must carry)
CASES = [
    (json.dumps({"id": 1, "text": "<think>\nhm\n</think>\n\nHi 🙂<|im_end|>"}), "message"),
    (json.dumps({"id": 2, "text": CALL, "tools": TOOLS}), "message"),
    (json.dumps({"id": 3, "text": CALL, "tools": json.dumps(TOOLS)}), "message"),
    (json.dumps({"id": 4, "text": "line\u2028separator<|im_end|>", "prefix": PROMPT + "<think>\n"},
                ensure_ascii=False), "message"),
    (json.dumps({"id": 5, "txt": "no text field"}), "KeyError"),
    ('{"id": 6, "text": "broken', "JSONDecodeError"),
    ("", "JSONDecodeError"),
    ("[1, 2]", "TypeError"),
    (json.dumps({"id": 9, "text": 42}), "TypeError"),
    (json.dumps({"id": 10, "text": "<tool_call>\n{bad json\n</tool_call>"}), "ValueError"),
    ('{"id": 11, "text": "\xff"}', "UnicodeDecodeError"),  # written as latin-1 below
    (json.dumps({"id": 12, "text": "last line, no newline<|im_end|>"}), "message"),
]


def write_input(path, cases=CASES):
    data = b"\n".join(line.encode("latin-1") if "\xff" in line else line.encode("utf-8")
                      for line, _ in cases)
    path.write_bytes(data)  # no final newline: the last line still counts
    return path


def rtc(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "rtcompiler.cli.main", *args],
                          capture_output=True, text=True, **kwargs)


@pytest.fixture
def input_file(tmp_path):
    return write_input(tmp_path / "in.jsonl")


def test_every_line_is_kept_in_order_with_its_message_or_error(input_file, tmp_path):
    out = tmp_path / "out.jsonl"
    summary = parse_jsonl("qwen3", input_file, out, text_field="text", prefix_field=None,
                          tools_field="tools", prefix=PROMPT, progress=False)
    lines = out.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) - 1 == len(CASES) == summary.lines == summary.parsed
    assert summary.errors == sum(expect != "message" for _, expect in CASES)
    for raw, (line, expect) in zip(lines, CASES, strict=False):
        result = json.loads(raw)
        if expect == "message":
            record = json.loads(line)
            assert result == {**record, "message": reference(
                record["text"], QWEN3, prefix=PROMPT, tools=TOOLS if "tools" in record else None)}
        else:
            assert result["error"]["type"] == expect, result
            assert "message" not in result
            assert result["error"]["message"]
            if expect in ("JSONDecodeError", "UnicodeDecodeError") or line == "[1, 2]":
                assert "input_line" in result  # the line that could not be read, kept
            else:
                assert result["id"] == json.loads(line)["id"]  # the record, kept
    typed = json.loads(lines[1])["message"]["tool_calls"][0]["function"]["arguments"]
    assert typed == {"n": 7, "s": "7"}  # the record's tools typed its arguments
    assert json.loads(lines[3])["message"]["content"] == "line\u2028separator"


def test_prefix_field_and_cli_with_workers_give_the_same_file(input_file, tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    common = ["parse", "qwen3", "--jsonl", str(input_file), "--prefix", PROMPT,
              "--tools", str(tools)]
    first = rtc(*common, "-o", str(one))
    assert first.returncode == 0, first.stderr
    assert "100%" in first.stderr and "lines" in first.stderr  # the progress bar, on stderr
    assert first.stdout == ""
    assert f"{len(CASES)} parsed" in first.stderr
    second = rtc(*common, "-o", str(two), "--workers", "2", "--quiet")
    assert second.returncode == 0, second.stderr
    assert "100%" not in second.stderr
    assert one.read_bytes() == two.read_bytes()
    # Per-record prefixes: the record's prefix opens the <think> region for record 4.
    by_field = tmp_path / "by_field.jsonl"
    assert rtc(*common, "--prefix-field", "prefix", "-o", str(by_field)).returncode == 0
    # split("\n"), not splitlines(): a JSON line may hold a raw U+2028.
    lines = [json.loads(x) for x in by_field.read_text("utf-8").split("\n")[:-1]]
    record = json.loads(CASES[3][0])
    assert lines[3]["message"] == reference(record["text"], QWEN3, prefix=record["prefix"])
    assert "reasoning_content" in lines[3]["message"]
    assert lines[0]["error"] == {"type": "KeyError", "message": "no field 'prefix' in the record"}


class Interrupted(BatchParser):
    """A batch parser that is interrupted (Ctrl-C) when it starts its chunk ``stop``."""

    def __init__(self, parser: BatchParser, stop: int) -> None:
        super().__init__(parser.source, **parser.options)
        self.stop, self.calls = stop, 0

    def parse_lines(self, lines):
        self.calls += 1
        if self.calls > self.stop:
            raise KeyboardInterrupt
        return super().parse_lines(lines)


def test_an_interrupted_output_resumes_into_the_file_a_full_run_writes(input_file, tmp_path):
    parser = batch_parser("qwen3", prefix=PROMPT)
    full = tmp_path / "full.jsonl"
    parse_jsonl(parser, input_file, full, progress=False)
    data = full.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    for stop, cut in [(0, None), (0, 3), (2, None), (2, ends[3] + 5), (2, ends[2]), (2, ends[0]),
                      (5, ends[4] + 1), (5, 0)]:
        partial = tmp_path / f"partial{stop}-{cut}.jsonl"
        with pytest.raises(KeyboardInterrupt):
            parse_jsonl(Interrupted(parser, stop), input_file, partial, chunk_lines=2,
                        progress=False)
        # Two lines a chunk: the interrupted run wrote and recorded `stop` chunks.
        assert partial.read_bytes() == data[:ends[2 * stop - 1] if stop else 0]
        if cut is not None:  # what a lost machine can leave: the last writes did not land
            with open(partial, "r+b") as f:
                f.truncate(cut)
            if cut > len(data[:ends[2 * stop - 1] if stop else 0]):
                partial.write_bytes(data[:cut])  # or more than the journal records
        on_disk = partial.stat().st_size
        kept = 2 * min(stop, sum(1 for e in ends[1::2] if e <= on_disk))
        summary = parse_jsonl(parser, input_file, partial, progress=False,
                              workers=2 if stop == 2 else 1)
        assert (summary.skipped, summary.parsed) == (kept, len(CASES) - kept), (stop, cut)
        assert partial.read_bytes() == data, (stop, cut)
        again = parse_jsonl(parser, input_file, partial, progress=False)  # nothing left to do
        assert (again.skipped, again.parsed, again.lines) == (len(CASES), 0, len(CASES))
        assert partial.read_bytes() == data


def test_a_killed_run_resumes_to_the_identical_file(tmp_path):
    lines = 8_000
    source = tmp_path / "big.jsonl"
    with open(source, "w", encoding="utf-8") as f:
        for i in range(lines):
            text = [f"<think>\n{i}\n</think>\n\nanswer {i}<|im_end|>", CALL, "{" * (i % 7)][i % 3]
            f.write(json.dumps({"id": i, "text": text}) + "\n")
    whole, killed = tmp_path / "whole.jsonl", tmp_path / "killed.jsonl"
    args = ["parse", "qwen3", "--jsonl", str(source), "--quiet", "--workers", "2"]
    parse_jsonl("qwen3", source, whole, progress=False)  # the CLI writes the same bytes
    size = 0
    # Run as a shell's background job, this process ignores SIGINT, and so would the runs
    # it starts (Python then installs no KeyboardInterrupt handler in them): give them the
    # default, as a terminal would.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        for sig in (signal.SIGKILL, signal.SIGINT):
            proc = subprocess.Popen([sys.executable, "-m", "rtcompiler.cli.main", *args, "-o",
                                     str(killed)], start_new_session=True, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                if killed.exists() and killed.stat().st_size > size:
                    break
                time.sleep(0.02)
            # The run and its worker processes, mid-write: kill -9, or Ctrl-C in a terminal.
            os.killpg(proc.pid, sig)
            err = proc.communicate()[1].decode()
            assert proc.returncode == (-sig if sig == signal.SIGKILL else 130), err
            assert size < killed.stat().st_size < whole.stat().st_size
            size = killed.stat().st_size
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert err.strip() == f"rtc: interrupted; run the same command again to resume {killed}"
    rerun = rtc(*args, "-o", str(killed))
    assert rerun.returncode == 0, rerun.stderr
    assert "already there" in rerun.stderr
    assert killed.read_bytes() == whole.read_bytes()


def test_two_runs_never_write_the_same_output(input_file, tmp_path):
    import fcntl

    out = tmp_path / "out.jsonl"
    with open(out, "ab") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        with pytest.raises(ValueError, match="another run is writing"):
            parse_jsonl("qwen3", input_file, out, progress=False)
    parse_jsonl("qwen3", input_file, out, progress=False)
    assert out.read_bytes().count(b"\n") == len(CASES)


def test_command_line_mistakes_exit_2_with_one_line(input_file, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    for args, message in [
        (["--jsonl", str(input_file)], "-o OUT is required"),
        ([str(input_file), "--jsonl", str(input_file), "-o", str(out)], "FILE cannot be used"),
        (["--jsonl", str(input_file), "--stream", "-o", str(out)], "--stream cannot be used"),
        (["--jsonl", str(input_file), "--openai", "-o", str(out)], "--openai cannot be used"),
        (["--jsonl", str(input_file), "--workers", "0", "-o", str(out)], "between 1 and 256"),
        (["--jsonl", str(input_file), "--workers", "100000", "-o", str(out)], "between 1 and"),
        (["--jsonl", str(tmp_path / "missing.jsonl"), "-o", str(out)], "missing.jsonl"),
        (["--jsonl", str(input_file), "-o", str(input_file)], "is the input file itself"),
        (["--jsonl", str(tmp_path), "-o", str(out)], "Is a directory"),
        (["--jsonl", str(input_file), "-o", str(tmp_path)], "Is a directory"),
        (["--jsonl", str(input_file), "-o", "/dev/null"], "not a regular file"),
        ([str(input_file), "-o", str(out)], "the batch options need --jsonl IN"),
        (["--workers", "2"], "the batch options need --jsonl IN"),
    ]:
        assert main(["parse", "qwen3", *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    assert not out.exists()  # no mistake left an empty OUT behind
    out.write_text("{}\n" * (len(CASES) + 1))  # not written by rtc
    assert main(["parse", "qwen3", "--jsonl", str(input_file), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no resumable run wrote it" in err and "--overwrite" in err and "resume=" not in err
    assert main(["parse", "qwen3", "--jsonl", str(input_file), "-o", str(out), "--overwrite",
                 "--quiet"]) == 0
    assert out.read_bytes().count(b"\n") == len(CASES)


def _refusal(capsys, input_file, out, *extra) -> str:
    assert main(["parse", "qwen3", "--jsonl", str(input_file), "-o", str(out), "--quiet",
                 *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rtc: error: "), err
    # The remedy is the command line's flag, not the Python keyword.
    assert "rerun with --overwrite" in err and "resume=False" not in err
    return err


def test_a_resume_refuses_an_input_that_changed(tmp_path, capsys):
    lines = [json.dumps({"id": i, "text": f"answer {i}<|im_end|>"}) + "\n" for i in range(30)]
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(lines[:20]))
    full = tmp_path / "full.jsonl"
    parse_jsonl("qwen3", source, full, progress=False)

    def interrupted_run(chunks: int = 2) -> None:
        out.unlink(missing_ok=True)
        with pytest.raises(KeyboardInterrupt):
            parse_jsonl(Interrupted(batch_parser("qwen3"), chunks), source, out, chunk_lines=5,
                        progress=False)
        assert out.read_bytes().count(b"\n") == 5 * chunks

    for changed, reason in [
        (lines[20:21] + lines[:20], "is not the input"),  # a line added at the front
        (lines[:3] + [lines[3].replace("answer", "edited")] + lines[4:20], "is not the input"),
        (lines[:6], "is not the input"),  # shorter than what was read
    ]:
        source.write_text("".join(lines[:20]))
        interrupted_run()
        source.write_text("".join(changed))
        with pytest.raises(ResumeRefused, match=reason):
            parse_jsonl("qwen3", source, out, progress=False)
        assert reason in _refusal(capsys, source, out)
    # Another prefix is another parser: its records would not be this run's.
    source.write_text("".join(lines[:20]))
    interrupted_run()
    assert "another template or other options" in _refusal(capsys, source, out, "--prefix", "x")
    # An output changed behind rtc's back.
    data = out.read_bytes()
    out.write_bytes(data.replace(b"answer 3", b"answer 9"))
    assert "has changed since rtc wrote it" in _refusal(capsys, source, out)
    # A last line without its newline, which the input now continues.
    source.write_text("".join(lines[:10])[:-1])
    parse_jsonl("qwen3", source, out, progress=False, resume=False)
    source.write_text("".join(lines[:10])[:-1] + "more\n")
    assert "now goes on" in _refusal(capsys, source, out)
    # Lines added at the end are the same input, extended: the run goes on with them.
    source.write_text("".join(lines[:20]))
    interrupted_run()
    source.write_text("".join(lines))
    summary = parse_jsonl("qwen3", source, out, progress=False)
    assert (summary.skipped, summary.parsed) == (10, 20)
    parse_jsonl("qwen3", source, full, progress=False, resume=False)
    assert out.read_bytes() == full.read_bytes()


def test_a_deeply_nested_line_gets_its_error_record(tmp_path):
    deep_call = '<tool_call>\n{"name": "f", "arguments": ' + "[" * 3000 + "]" * 3000 + "}"
    lines = [
        json.dumps({"text": "a"}),
        "[" * 1000 + "]" * 1000,  # the line itself
        "[" * 100_000,
        json.dumps({"text": deep_call + "\n</tool_call>"}),  # the output in it
        json.dumps({"text": "b"}),
    ]
    source = tmp_path / "deep.jsonl"
    source.write_text("\n".join(lines) + "\n")
    outputs = []
    for workers in (1, 2):
        out = tmp_path / f"out{workers}.jsonl"
        run = rtc("parse", "qwen3", "--jsonl", str(source), "-o", str(out), "--quiet",
                  "--workers", str(workers))
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr
        records = [json.loads(line) for line in out.read_text("utf-8").split("\n")[:-1]]
        assert len(records) == len(lines)
        assert records[0]["message"]["content"] == "a" and records[4]["message"]["content"] == "b"
        for record in records[1:4]:
            assert record["error"]["type"] == "ValueError", record["error"]
            assert "nested too deeply" in record["error"]["message"]
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_an_input_from_a_pipe_is_read_once_and_resumes_from_the_same_stream(tmp_path):
    data = "".join(json.dumps({"id": i, "text": f"{i}<|im_end|>"}) + "\n" for i in range(1200))
    out = tmp_path / "out.jsonl"
    args = ["parse", "qwen3", "--jsonl", "/dev/stdin", "-o", str(out), "--quiet"]
    run = rtc(*args, input=data)
    assert run.returncode == 0, run.stderr
    assert "1200 parsed" in run.stderr
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [r["id"] for r in records] == list(range(1200))
    # Resumed from a pipe: what the pipe gives again is checked against what was read.
    with open(out, "r+b") as f:
        f.truncate(out.stat().st_size // 2)
    more = data + json.dumps({"id": 1200, "text": "x"}) + "\n"
    run = rtc(*args, input=more)
    assert run.returncode == 0, run.stderr
    assert "1201 lines" in run.stderr and "already there" in run.stderr
    assert out.read_text("utf-8").count("\n") == 1201
    run = rtc(*args, input=more.replace('"id": 3,', '"id": 4,'))
    assert run.returncode == 2 and "is not the input" in run.stderr


# Stands in for a parser that kills its process: what an out-of-memory kill does.
_DYING_SOURCE = """
import os

def parse_response(text, *, prefix=None, tools=None):
    if text == "die":
        os._exit(9)
    return {"content": text}
"""


def test_a_worker_that_dies_costs_no_line(tmp_path):
    texts = [f"line {i}" for i in range(40)]
    texts[13] = texts[31] = "die"
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    # In a child process, with a deadline: a pool that waits for a dead worker never ends.
    script = (
        "import sys\n"
        "from rtcompiler.batch import parse_jsonl\n"
        "from rtcompiler.batch_worker import BatchParser\n"
        "s = parse_jsonl(BatchParser(sys.argv[1]), sys.argv[2], sys.argv[3], workers=2,\n"
        "                chunk_lines=4, progress=False)\n"
        "print(s.lines, s.errors)\n"
    )
    run = subprocess.run([sys.executable, "-c", script, _DYING_SOURCE, str(source), str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["40", "2"]
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(records) == 40
    for text, record in zip(texts, records, strict=True):
        if text == "die":
            assert record["error"]["type"] == "WorkerDied"
            assert json.loads(record["input_line"]) == {"text": "die"}
        else:
            assert record == {"text": text, "message": {"content": text}}


def test_output_records_follow_the_json_policy(tmp_path):
    # A model output's JSON may hold a lone surrogate, NaN, C1 controls and U+2028.
    call = ('<tool_call>\n{"name": "f", "arguments": {"s": "\\ud800\\u009b\\u2028", "n": NaN}}'
            "\n</tool_call>")
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(json.dumps({"text": call}) + "\n" + json.dumps({"text": "fine"}) + "\n")
    summary = parse_jsonl("qwen3", source, out, progress=False)
    assert summary.errors == 0
    data = out.read_bytes()
    data.decode("utf-8")  # strict: no surrogate reached the file
    assert len(data.decode("utf-8").splitlines()) == 2  # no separator inside a line
    assert b"\\ud800\\u009b\\u2028" in data
    strict = json.JSONDecoder(parse_constant=lambda name: pytest.fail(f"bare {name}"))
    arguments = strict.decode(data.decode("utf-8").split("\n")[0])["message"]["tool_calls"][0]
    assert arguments["function"]["arguments"] == {"s": "\ud800\x9b\u2028", "n": "NaN"}


def f(n: int, s: str) -> None:
    """A tool.

    Args:
        n: A number.
        s: A string.
    """


def test_python_functions_as_tools_travel_as_their_schemas():
    parse = batch_parser("qwen3", tools=[f])
    copy = pickle.loads(pickle.dumps(parse))
    message = copy.parse_one(CALL)
    assert message["tool_calls"][0]["function"]["arguments"] == {"n": 7, "s": "7"}


def pickled_globals(data: bytes) -> list[tuple[str, str]]:
    found, strings = [], []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            found.append(tuple(arg.split(" ", 1)))
        elif op.name == "STACK_GLOBAL":
            found.append((strings[-2], strings[-1]))
        elif isinstance(arg, str):
            strings.append(arg)
    return found


def test_the_pickled_parser_needs_only_python(tmp_path):
    parser = batch_parser("qwen3", prefix=PROMPT, tools_field="tools")
    data = pickle.dumps(parser)
    # The only thing the pickle refers to by name is the built-in eval.
    assert pickled_globals(data) == [("builtins", "eval")]
    worker = (
        "import pickle, sys\n"
        "for name in ('rtcompiler', 'regex', 'transformers'):\n"
        "    try:\n"
        "        __import__(name)\n"
        "    except ImportError:\n"
        "        pass\n"
        "    else:\n"
        "        raise SystemExit(name + ' is importable: not an isolated worker')\n"
        "parse = pickle.loads(sys.stdin.buffer.read())\n"
        "out = parse({'text': [sys.argv[1], '<tool_call>nope'], 'tools': [None, None]})\n"
        "again = pickle.loads(pickle.dumps(parse))\n"
        "out2 = again([{'text': sys.argv[1]}])\n"
        "print(repr((out['message'], out['error'][1]['type'], out2[0]['message'])))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('rtc', 'regex', 'transformers'))))\n"
    )
    # -I -S: no site-packages, no user paths, not even the current directory on sys.path.
    result = subprocess.run([sys.executable, "-I", "-S", "-c", worker, "Hi<|im_end|>"],
                            input=data, capture_output=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    messages, error_type, again = eval(result.stdout.decode().splitlines()[0])
    assert messages == [{"role": "assistant", "content": "Hi"}, None]
    assert error_type == "ValueError" and again == messages[0]
    modules = eval(result.stdout.decode().splitlines()[1])
    assert all(m.startswith(("rtc_batch_worker_", "rtc_parser_")) for m in modules), modules
