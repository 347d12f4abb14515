"""The template examples in ``docs/*.md`` compile and parse as they say, here and in transformers.

Convention (see ``docs/template-format.md``): an HTML comment

    <!-- example: template output message -->

names the roles of the fenced blocks that follow it, in order (prose may sit between
them; the next marker ends the example). Roles:

* ``template`` -- a response template (JSON); it must load and compile;
* ``prefix`` / ``output`` -- text given to the parser (the block's text, without the
  newline before the closing fence); the prefix defaults to ``""``;
* ``chunks`` -- a JSON list of strings: the output fed to ``ResponseParser`` piece by piece;
* ``tools`` -- a JSON list of tool schemas;
* ``message`` -- the JSON message the parse gives;
* ``events`` -- JSON lines: every event, ``initial_events`` first, then the feeds' and
  ``finalize``'s;
* ``error`` -- ``ExceptionType: message`` raised by loading, compiling or parsing.

Every expectation is checked against the compiled parser and against transformers'
``chat_parsing`` (the reference), so a doc example cannot drift from either.

A second marker, ``<!-- output of: rtc ARGS -->``, says that the next fenced block is
exactly what ``rtc ARGS`` prints (used for the rendered diagram in ``docs/automaton.md``).
"""

from __future__ import annotations

import builtins
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rtcompiler.cli.main import main as rtc_main
from rtcompiler.codegen import load_parser
from rtcompiler.template import load_template

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))

_MARKER = re.compile(r"<!-- (example|output of): ?(.*?) -->")
_FENCE = re.compile(r"^```[\w-]*\n(.*?)^```", re.S | re.M)
ROLES = {"template", "prefix", "output", "chunks", "tools", "message", "events", "error"}


@dataclass
class Example:
    where: str
    kind: str
    arg: str
    blocks: dict[str, str] = field(default_factory=dict)


def examples(path: Path) -> list[Example]:
    text = path.read_text(encoding="utf-8")
    found = []
    fenced = [m.span() for m in _FENCE.finditer(text)]
    # A marker shown inside a fenced block (to explain the convention) is not one.
    markers = [m for m in _MARKER.finditer(text)
               if not any(a <= m.start() < b for a, b in fenced)]
    for i, marker in enumerate(markers):
        end = markers[i + 1].start() if i + 1 < len(markers) else len(text)
        line = text.count("\n", 0, marker.start()) + 1
        example = Example(f"{path.name}:{line}", marker[1], marker[2])
        fences = [m[1] for m in _FENCE.finditer(text) if marker.end() <= m.start() < end]
        if example.kind == "example":
            roles = example.arg.split()
            assert set(roles) <= ROLES and "template" in roles, f"{example.where}: roles {roles}"
            assert len(fences) >= len(roles), f"{example.where}: fewer blocks than roles"
            blocks = fences[: len(roles)]
            example.blocks = {role: block[:-1] for role, block in zip(roles, blocks, strict=True)}
        else:
            assert fences, f"{example.where}: no block after the marker"
            example.blocks = {"stdout": fences[0]}
        found.append(example)
    return found


ALL = [e for path in DOCS for e in examples(path)]


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def run_ours(spec: dict, blocks: dict) -> dict:
    """What our compiled parser says: message, events, or error."""
    try:
        module = load_parser(load_template(spec))
        return _run(module.parse_response, module.ResponseParser, blocks)
    except Exception as e:  # noqa: BLE001 -- the doc states which one
        return {"error": e}


def run_reference(spec: dict, blocks: dict) -> dict:
    from transformers.utils.chat_parsing import ResponseParser, parse_response
    from transformers.utils.chat_parsing.response_templates import load_response_template

    try:
        load_response_template(spec)
        return _run(lambda text, prefix, tools: parse_response(text, spec, prefix=prefix,
                                                               tools=tools),
                    lambda prefix, tools: ResponseParser(spec, prefix, tools=tools), blocks)
    except Exception as e:  # noqa: BLE001
        return {"error": e}


def _run(parse, parser_class, blocks: dict) -> dict:
    prefix = blocks.get("prefix", "")
    tools = json.loads(blocks["tools"]) if "tools" in blocks else None
    if "chunks" not in blocks:
        out: dict = {}
        if "output" in blocks:
            out["message"] = parse(blocks["output"], prefix=prefix, tools=tools)
        return out
    parser = parser_class(prefix, tools=tools)
    events = list(parser.initial_events)
    for chunk in json.loads(blocks["chunks"]):
        events.extend(parser.feed(chunk))
    message, final = parser.finalize()
    return {"message": message, "events": events + final}


def check(result: dict, blocks: dict, who: str) -> None:
    if "error" in blocks:
        assert "error" in result, f"{who}: no error, got {result}"
        if who == "rtcompiler":
            assert _error(result["error"]) == blocks["error"]
        else:  # the reference's words differ; its exception family must not
            ours = blocks["error"].split(":")[0]
            expected = ValueError if ours == "TemplateError" else getattr(builtins, ours)
            assert isinstance(result["error"], expected), _error(result["error"])
        return
    if "error" in result:
        raise result["error"]
    if "message" in blocks:
        assert result["message"] == json.loads(blocks["message"]), who
    if "events" in blocks:
        expected = [json.loads(line) for line in blocks["events"].splitlines() if line.strip()]
        assert result["events"] == expected, who


@pytest.mark.parametrize("example", [e for e in ALL if e.kind == "example"], ids=lambda e: e.where)
def test_template_example(example):
    spec = json.loads(example.blocks["template"])
    check(run_ours(spec, example.blocks), example.blocks, "rtcompiler")
    check(run_reference(spec, example.blocks), example.blocks, "transformers")


@pytest.mark.parametrize("example", [e for e in ALL if e.kind == "output of"],
                         ids=lambda e: e.where)
def test_command_output(example, capsys):
    argv = shlex.split(example.arg)
    assert argv[0] == "rtc"
    assert rtc_main(argv[1:]) == 0
    assert capsys.readouterr().out == example.blocks["stdout"]


def test_the_docs_have_examples():
    assert len([e for e in ALL if e.where.startswith("template-format.md")]) >= 10
