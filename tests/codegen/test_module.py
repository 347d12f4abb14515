"""The generated module: standalone, deterministic, minimal, and inert to hostile input."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from rtcompiler import __version__
from rtcompiler.automata import compile_regex
from rtcompiler.codegen import generate_module, load_parser
from rtcompiler.template import load_template

QWEN_LIKE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>",
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)"},
    },
}
OUTPUT = (
    '<think>\nplan\n</think>\n\nSure.\n<tool_call>\n{"name": "get", "arguments": {"n": "3"}}\n'
    "</tool_call><|im_end|>"
)
TOOLS = [{"type": "function", "function": {"name": "get", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer"}}}}}]


def test_runs_under_isolated_python_without_site_packages(tmp_path):
    (tmp_path / "qwen_parser.py").write_text(generate_module(load_template(QWEN_LIKE)))
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import qwen_parser\n"
        "p = qwen_parser.ResponseParser('', tools=json.loads(sys.argv[2]))\n"
        "events = [e for ch in sys.argv[1] for e in p.feed(ch)]\n"
        "message, final = p.finalize()\n"
        "print(json.dumps([message, events + final]))\n"
        "assert 'regex' not in sys.modules and 'rtcompiler' not in sys.modules\n"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, OUTPUT, json.dumps(TOOLS)],
        capture_output=True, text=True, check=True,
    )
    message, events = json.loads(run.stdout)
    assert message == {
        "role": "assistant",
        "reasoning_content": "plan",
        "content": "Sure.",
        "tool_calls": [{"type": "function", "function": {"name": "get", "arguments": {"n": 3}}}],
    }
    assert events[0] == {"type": "region_open", "field": "reasoning_content"}
    assert events[-1]["type"] == "region_close"


def test_python_function_tools_under_isolated_python(tmp_path):
    """The module carries the get_json_schema converter: a function typed ``n: int``
    types the argument "3" as 3, with only the standard library to hand; one without
    a docstring fails with the reference's exception name and message."""
    (tmp_path / "qwen_parser.py").write_text(generate_module(load_template(QWEN_LIKE)))
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import qwen_parser\n"
        "def get(n: int):\n"
        "    'Get n.\\n\\n    Args:\\n        n: How many\\n    '\n"
        "def undocumented(n: int):\n"
        "    pass\n"
        "message = qwen_parser.parse_response(sys.argv[1], prefix='', tools=[get])\n"
        "try:\n"
        "    qwen_parser.ResponseParser('', tools=[undocumented])\n"
        "except Exception as e:\n"
        "    error = [type(e).__name__, str(e)]\n"
        "print(json.dumps([message, error]))\n"
        "assert 'rtcompiler' not in sys.modules and 'transformers' not in sys.modules\n"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, OUTPUT],
        capture_output=True, text=True, check=True,
    )
    message, error = json.loads(run.stdout)
    assert message["tool_calls"][0]["function"]["arguments"] == {"n": 3}
    assert error == [
        "DocstringParsingException",
        "Cannot generate JSON schema for undocumented because it has no docstring!",
    ]


def test_same_template_same_bytes():
    first = generate_module(load_template(QWEN_LIKE))
    compile_regex.cache_clear()
    assert generate_module(load_template(json.loads(json.dumps(QWEN_LIKE)))) == first


def test_header_names_the_template_hash_and_compiler_version():
    template = load_template(QWEN_LIKE)
    head = generate_module(template)[:2000]
    assert f"sha256 {template.sha256}" in head
    assert f"rtcompiler {__version__}" in head
    assert "open 'tool_calls' on pattern" in head  # the region automaton, in words


def test_only_the_runtime_a_template_uses_is_emitted():
    text_only = generate_module(load_template({
        "start_anchor": "A", "fields": {"content": {"close": "<end>"}}}))
    assert "def parse_text(" in text_only
    for absent in ("def parse_json(", "def parse_xml_inline(", "def parse_kv_lines(",
                   "def transform_each(", "def apply_transform("):
        assert absent not in text_only
    with_json = generate_module(load_template(QWEN_LIKE))
    assert "def parse_json(" in with_json and "def apply_transform(" in with_json
    assert "def parse_xml_inline(" not in with_json


HOSTILE = [
    "'''", '"""', "\\", "\n", "'); __import__('os').system('touch PWNED') #",
    '"); __import__("os").system("touch PWNED") #', "\\'", "{__import__}", "\u2028", "\x00",
]


def _hostile_template(payload: str) -> dict:
    # The payload in every position a template can hold a string.
    return {
        "defaults": {"role": "assistant", payload: payload},
        "start_anchor": [payload + "<s>", "<s>"],
        "fields": {
            payload + "f": {
                "open": [payload + "<o>", "<o>"],
                "close": "</o>" + payload,
                "repeats": True,
                "join": payload,
            },
            "tool_calls": {
                "open_pattern": compile_safe_literal(payload) + r"\s*<t>",
                "close": "</t>",
                "content": "json",
                "content_args": {"string_delims": [[payload + "(", ")" + payload]]},
                "transform": {payload: payload, "function": "{content}", "k": [payload]},
            },
            "content": {"content": "kv-lines", "content_args": {"kv_sep": payload + ":"}},
        },
    }


def compile_safe_literal(text: str) -> str:
    import regex

    return regex.escape(text)


@pytest.mark.parametrize("payload", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_strings_stay_data(payload, tmp_path, monkeypatch):
    source = generate_module(load_template(_hostile_template(payload)))
    tree = ast.parse(source)  # the module is valid Python whatever the payload
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert "__import__" not in names and "system" not in attrs
    calls = {n.func.id for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert not calls & {"eval", "exec", "compile", "__import__", "open"}
    monkeypatch.chdir(tmp_path)
    module = load_parser(load_template(_hostile_template(payload)))
    message = module.parse_response(payload + "<o>x</o>" + payload, prefix="")
    assert not (tmp_path / "PWNED").exists()
    assert message["role"] == "assistant"


def test_region_table_comes_first_with_keyword_arguments():
    """A reader sees the state machine on the first screen: region_table() stands
    before the runtime code, and spells every Region with keyword arguments."""
    source = generate_module(load_template(QWEN_LIKE))
    lines = source.split("\n")
    first_runtime = next(i for i, line in enumerate(lines) if line.startswith("# runtime: "))
    table = lines.index("def region_table():")
    assert table < first_runtime and table < 40
    tree = ast.parse(source)
    function = next(n for n in tree.body if getattr(n, "name", None) == "region_table")
    regions = [
        n for n in ast.walk(function)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "Region"
    ]
    assert [r.args for r in regions] == [[], [], []]
    assert [kw.value.value for r in regions for kw in r.keywords if kw.arg == "name"] == [
        "reasoning_content", "tool_calls", "content"
    ]
    assert "TABLE = region_table()" in lines


def test_plain_json_fields_call_the_one_decode() -> None:
    """A JSON field with no repair calls parse_json_plain; one with string delimiters or
    bare keys (or a malformed string_delims, which must fail as the reference does) calls
    parse_json."""
    def source(args: dict) -> str:
        template = {"start_anchor": "<a>", "fields": {"tool_calls": {
            "open": "<c>", "close": "</c>", "content": "json", "content_args": args}}}
        return generate_module(load_template(template))

    assert "parse_json_plain(body, " in source({})
    assert "parse_json_plain(body, " in source({"allow_non_json": True})
    for args in ({"string_delims": [["'", "'"]]}, {"unquoted_keys": True},
                 {"string_delims": None}, {"string_delims": 0}):
        text = source(args)
        assert "parse_json(body, " in text and "parse_json_plain(body, " not in text, args
