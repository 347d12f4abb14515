"""Random bad command lines and files: rtc answers each with its exit status and, for an
error, one escaped line on stderr; nothing escapes ``main``, and nothing is a bug report."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers import RAW_CONTROL, Run, rtc_here, rtc_process

_counter = itertools.count()

# Text a user (or a model) can put anywhere: escape sequences, line breaks, separators,
# bidirectional overrides, lone surrogates (an argv that is not UTF-8 arrives with them).
NASTY_TEXT = st.text(
    alphabet=st.one_of(st.sampled_from("\x1b[2J\n\r\t\x00\x07\x9b\u2028\u202e\ud800%{}\"'\\"),
                       st.characters(codec="utf-8")),
    max_size=12,
)
# Half good numbers, so that a command line gets past its numbers to its files.
NUMBERS = st.sampled_from(["1", "3"]) | st.sampled_from(["0", "-1", "-0", "x", "", "1.5", "1e3",
                                                         " 3", "257", "9" * 30])
DEEP = "[" * 3000 + "]" * 3000
SPEC = {"start_anchor": "<s>", "fields": {"content": {}}}


@st.composite
def file_contents(draw) -> bytes:
    """What a file given to rtc may hold: good, bad, or absurd."""
    kind = draw(st.sampled_from([
        "bytes", "text", "json", "deep", "bigint", "template", "bad template", "tools",
        "not utf-8", "empty", "output",
    ]))
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    if kind == "text":
        return draw(NASTY_TEXT).encode("utf-8", "surrogatepass")
    if kind == "json":
        value = draw(st.recursive(st.none() | st.booleans() | st.integers() | st.floats()
                                  | NASTY_TEXT, lambda inner: st.lists(inner, max_size=3)
                                  | st.dictionaries(NASTY_TEXT, inner, max_size=3),
                                  max_leaves=8))
        return json.dumps(value).encode()
    if kind == "deep":
        return draw(st.sampled_from([DEEP, '{"a":' * 3000 + "1" + "}" * 3000, "[" * 600])).encode()
    if kind == "bigint":
        return ("[" + "7" * 5000 + "]").encode()
    if kind == "template":
        return json.dumps(SPEC).encode()
    if kind == "bad template":
        key = draw(st.sampled_from(["fields", "start_anchor", "version", "defaults"])
                   | NASTY_TEXT)
        value = draw(st.sampled_from([None, 5, "x", [], {}, {"c": {"join": 1}}, DEEP]))
        return json.dumps({**SPEC, key: value}).encode()
    if kind == "tools":
        return draw(st.sampled_from([
            "42", '{"anyOf": 5}', "[42]", '[{"function": 5}]', "null",
            '[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", '
            '"properties": {"n": {"anyOf": 5}}}}}]',
        ])).encode()
    if kind == "not utf-8":
        return b"ok \xff\xfe \xc3"
    if kind == "empty":
        return b""
    return draw(model_outputs())


@st.composite
def model_outputs(draw) -> bytes:
    arguments = draw(st.sampled_from([
        '{"n": NaN}', '{"s": "\\ud800"}', DEEP, '{"x": ' + "1" * 5000 + "}", "{oops",
        '{"s": "\\u001b[2J\\u2028"}',
    ]))
    return (draw(NASTY_TEXT) + '<tool_call>\n{"name": "f", "arguments": ' + arguments
            + "}\n</tool_call><|im_end|>").encode("utf-8", "surrogatepass")


@st.composite
def paths(draw, where: Path) -> str:
    """A path rtc may be given: a file drawn above, the directory, nothing there, or a file
    that cannot be written."""
    kind = draw(st.sampled_from(["file", "file", "file", "dir", "missing", "proc", "name"]))
    if kind == "file":
        path = where / f"f{next(_counter)}"
        path.write_bytes(draw(file_contents()))
        return str(path)
    if kind == "dir":
        return str(where)
    if kind == "missing":
        return str(where / "no" / "such")
    if kind == "proc":
        return "/proc/version"
    return draw(NASTY_TEXT)


CHAT_TEMPLATES = st.sampled_from([
    "{% if %}",  # does not compile
    "{{ raise_exception('no') }}",  # refuses every conversation
    "{{ 1 + messages }}",  # fails while rendering
    "{{ messages[99].content }}",  # fails on an undefined value
    "{% for m in messages %}{{ m.content }}{% endfor %}",  # drops the roles: no prompt
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
])


@st.composite
def chat_templates(draw, where: Path) -> str:
    if draw(st.booleans()):
        return draw(paths(where))
    path = where / f"f{next(_counter)}.jinja"
    path.write_text(draw(CHAT_TEMPLATES), encoding="utf-8")
    return str(path)


OPTIONS = {
    "compile": ["-o", "--emit", "--delimiter", "--openai"],
    "parse": ["FILE", "--prefix", "--prefix-file", "--tools", "--stream", "--openai", "-o",
              "--workers", "--text-field", "--tools-field", "--overwrite", "--live-calls"],
    "parse --jsonl": ["--prefix", "--prefix-file", "--tools", "-o", "--workers",
                      "--text-field", "--tools-field", "--overwrite", "FILE", "--stream"],
    "check": ["--examples", "--seed", "--generate", "--max-new-tokens", "--meta",
              "--chat-template", "--model", "--constrained", "--batch-size"],
    "list": ["--bogus"],
    "nonsense": ["--version", "--bogus"],
}


@st.composite
def invocations(draw, where: Path, command: str) -> tuple[list[str], bytes]:
    template = draw(st.sampled_from(["qwen3", "gemma4"]) | paths(where))
    argv = [command.split()[0]] if command != "nonsense" else [draw(NASTY_TEXT)]
    if command != "list" and draw(st.integers(0, 9)):
        argv.append(template)
    options = OPTIONS[command]
    if command == "parse --jsonl":
        argv += ["--jsonl", draw(paths(where))]
    for option in draw(st.lists(st.sampled_from(options), max_size=4, unique=True)):
        if option == "FILE":
            argv.append(draw(paths(where)))
        elif option in ("--stream", "--openai", "--overwrite", "--constrained", "--version",
                        "--bogus", "--live-calls"):
            argv.append(option)
        elif option in ("--examples", "--seed", "--generate", "--max-new-tokens", "--workers",
                        "--batch-size"):
            argv += [option, draw(NUMBERS)]
        elif option == "--emit":
            argv += [option, draw(st.sampled_from(["automaton", "mermaid", "dfa-dot", "pdf"]))]
        elif option in ("--prefix", "--delimiter", "--text-field", "--tools-field"):
            argv += [option, draw(NASTY_TEXT)]
        elif option == "--chat-template":
            argv += [option, draw(chat_templates(where))]
        else:
            argv += [option, draw(paths(where))]
    if command == "check" and "--chat-template" not in argv and draw(st.booleans()):
        argv += ["--chat-template", draw(chat_templates(where))]
    if "--jsonl" in argv:
        argv.append("--quiet")  # the progress bar is not an error line
    stdin = draw(st.binary(max_size=30) | model_outputs()
                 | st.sampled_from([b"", b"\xff\xfe", DEEP.encode()]))
    return argv, stdin


def assert_answered(argv: list[str], run: Run) -> None:
    assert run.code in (0, 1, 2), (argv, run.code, run.stderr)
    run.stdout.decode("utf-8")  # strict
    lines = run.error_lines()
    for line in lines:
        assert not RAW_CONTROL.search(line), (argv, line)
        assert line.startswith("rtc"), (argv, line)
        assert "internal error" not in line and "Traceback" not in line, (argv, line)
    errors = [line for line in lines if line.startswith(("rtc: error: ", "rtc: parse error: "))]
    if run.code == 2:
        assert len(errors) == 1 and lines[-1] == errors[0], (argv, run.stderr)
    elif run.code == 1 and argv[0] == "parse":
        assert len(errors) == 1 and errors[0].startswith("rtc: parse error: "), (argv, lines)
    else:
        assert not errors, (argv, run.stderr)


@pytest.fixture(scope="module")
def where(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(path)  # where a drawn relative name, given as an output, is written
        yield path


def _check_without_search(template, chat_template, *, examples, variables=None, **_):
    """``rtc check``'s round trip up to its search, which hypothesis cannot nest in a test
    of its own: the chat template is compiled and tried, the static checks run."""
    from rtcompiler.roundtrip import CheckReport
    from rtcompiler.roundtrip.check import static_findings, usable_renderer

    usable_renderer(chat_template, variables)
    return CheckReport(examples=examples, findings=static_findings(template, chat_template,
                                                                   variables))


@pytest.fixture(scope="module")
def no_nested_search():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("rtcompiler.roundtrip.check", _check_without_search)
        yield


@pytest.mark.parametrize("command", list(OPTIONS))
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_bad_command_lines_get_an_answer_not_a_traceback(where, no_nested_search, command,
                                                                 data):
    argv, stdin = data.draw(invocations(where, command))
    run = rtc_here(*argv, stdin=stdin)  # an exception escaping main fails the test
    assert_answered(argv, run)


@pytest.mark.parametrize("argv", [
    ["parse", "qwen3", "--tools", "{dir}"],
    ["compile", "{deep}"],
    ["parse", "qwen3", "--jsonl", "{deep}", "-o", "{dir}/out.jsonl", "--workers", "2", "--quiet"],
    ["check", "qwen3", "--examples", "0"],
    ["\x1b[2J"],
])
def test_a_few_through_a_process(where, argv):
    deep = where / "deep.json"
    deep.write_text(DEEP + "\n" + DEEP)
    argv = [a.replace("{dir}", str(where)).replace("{deep}", str(deep)) for a in argv]
    run = rtc_process(*argv, stdin=DEEP.encode())
    assert_answered(argv, run)
