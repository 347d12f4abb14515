"""The runtime sections work on their own: standard library only, under ``python -I -S``.

A generated module contains only the ``###{standalone`` sections it needs (a section
plus what the manifest, ``rtcompiler/codegen/manifest.py``, says it calls into), in
manifest order. So, for content.py, transform.py, functions.py and tools.py:

* every import inside a section is a standard-library module;
* the manifest names exactly the file's sections, in file order, and every section
  comes after the ones it depends on; every runtime file's sections are in it;
* each section with its dependency closure, alone, runs a smoke call in a fresh
  ``python -I -S`` interpreter (no site-packages: no regex, no rtcompiler) and gives
  the same result as the in-process modules;
* all sections together run, in file order and in reverse order.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from rtcompiler.codegen import content as content_plans
from rtcompiler.codegen import manifest
from rtcompiler.codegen import transform as transform_plans
from rtcompiler.runtime import content, functions, tools, transform

MODULES: dict[str, ModuleType] = {
    "content": content,
    "transform": transform,
    "functions": functions,
    "tools": tools,
}
EXPECTED_SECTIONS = {
    "content": [
        "content_error",
        "text",
        "int",
        "float",
        "bool",
        "json",
        "xml_inline",
        "xml_typed",
        "xml_tags_only",
        "kv_lines",
        "pythonic",
    ],
    "transform": ["transform", "transform_each"],
    "functions": ["tool_schema"],
    "tools": ["tool_coercion"],
}

_SECTION = re.compile(r"^###\{standalone (\w+)\n(.*?)^###\}$", re.M | re.S)


def sections(module: ModuleType) -> dict[str, str]:
    """Section name -> code, with the marker lines left out."""
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    found = {m.group(1): m.group(2) for m in _SECTION.finditer(source)}
    # Every marker line is accounted for: no section is left open or nested.
    assert len(re.findall(r"^###\{standalone", source, re.M)) == len(found)
    assert len(re.findall(r"^###\}$", source, re.M)) == len(found)
    return found


def closure(name: str) -> list[str]:
    """The code of ``name`` and of what it depends on (all in MODULES), in manifest order."""
    found = list(manifest.closure([name]))
    assert {manifest.BY_NAME[s].module for s in found} <= set(MODULES)
    return [sections(MODULES[manifest.BY_NAME[s].module])[s] for s in found]


@pytest.mark.parametrize("label", MODULES)
def test_section_names_and_dependencies(label: str) -> None:
    module = MODULES[label]
    found = sections(module)
    assert list(found) == EXPECTED_SECTIONS[label]
    assert [s.name for s in manifest.SECTIONS if s.module == label] == EXPECTED_SECTIONS[label]
    for s in manifest.SECTIONS:
        if s.module == label:
            # What a section calls into is in a module checked here too.
            assert {manifest.BY_NAME[d].module for d in s.depends} <= set(MODULES)


def test_manifest_lists_every_section_after_its_dependencies() -> None:
    seen: set[str] = set()
    for s in manifest.SECTIONS:
        assert s.name not in seen, f"{s.name} listed twice"
        assert set(s.depends) <= seen, f"{s.name} comes before a section it depends on"
        seen.add(s.name)
    runtime = Path(content.__file__ or "").parent
    for path in sorted(runtime.glob("*.py")):
        module = importlib.import_module(f"rtcompiler.runtime.{path.stem}")
        found = list(sections(module))
        assert found == [s.name for s in manifest.SECTIONS if s.module == path.stem], path.name


def test_generator_reads_the_same_sections() -> None:
    for module in MODULES.values():
        assert {k: v.strip() for k, v in manifest.sections_of(module.__name__).items()} == {
            k: v.strip() for k, v in sections(module).items()
        }


@pytest.mark.parametrize("label", MODULES)
def test_sections_import_only_the_standard_library(label: str) -> None:
    for name, code in sections(MODULES[label]).items():
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{label}[{name}]: relative import"
                roots = [(node.module or "").split(".")[0]]
            else:
                continue
            for root in roots:
                assert root in sys.stdlib_module_names, f"{label}[{name}] imports {root}"
                assert root != "__future__", f"{label}[{name}]: the generator owns that"


# --- running the sections alone -----------------------------------------------------------

JSON_ARGS = content_plans.content_plan(
    "json", {"unquoted_keys": True, "string_delims": [["<<", ">>"]]}
).args
JSON_BODY = '{ca\u0301fe\u0301:<<he said "hi">>,b:[1]}'
XML_PATTERN = r"<(?P<key>\w+)>(?P<value>.*?)</\w+>"
TYPED_PATTERN = r'<(?P<key>\w+)(?: t="(?P<t>\w)")?>(?P<value>.*?)</\w+>'
TRANSFORM = transform_plans.transform_plan(
    {"type": "function", "function": {"name": "{name}", "arguments": "{content.args}"}}
)
TOOLS = [
    {
        "type": "function",
        "function": {"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}},
    }
]

EACH = transform_plans.transform_plan({"function": {"name": "{name}", "arguments": "{args}"}})

# One smoke call per section; each sets `result` (JSON-able).
SMOKE: dict[str, str] = {
    "content_error": (
        "try:\n"
        "    parse_content_error('x', {'error': 'KeyError', 'message': 'm'})\n"
        "except KeyError as e:\n"
        "    result = 'KeyError'\n"
    ),
    "text": "result = parse_text(' a ', {'strip': True})",
    "int": "result = parse_int(' \\u0663 ', {'strip': True})",
    "float": "result = parse_float('1_0.5', {'strip': False})",
    "bool": "result = parse_bool(' TRUE ', {'strip': True})",
    "json": f"result = parse_json({JSON_BODY!r}, {JSON_ARGS!r})",
    "xml_inline": (
        "import re\n"
        f"finditer = re.compile({XML_PATTERN!r}, re.S).finditer\n"
        "result = parse_xml_inline('<a>1</a><a>2</a>', "
        "{'tag_pattern': 'p', 'merge_duplicates': True}, finditer, int)"
    ),
    "xml_tags_only": (
        "try:\n"
        "    _xml_tags_only_end('<a>1</a> x', 8, 1,\n"
        "                       {'tags_closers': ['</a>'], 'tags_leads': ['<a>']})\n"
        "    result = None\n"
        "except ValueError as e:\n"
        "    result = str(e)"
    ),
    "xml_typed": (
        "import re, json\n"
        f"finditer = re.compile({TYPED_PATTERN!r}, re.S).finditer\n"
        "result = parse_xml_typed('<a t=\"j\">[1]</a><b t=\"s\">[1]</b><c>2</c>', "
        "{'tag_pattern': 'p', 'merge_duplicates': False, 'typed_group': 't'}, finditer, int, "
        "{'j': json.loads, 's': None})"
    ),
    "kv_lines": (
        "result = parse_kv_lines('a: 1\\n\\nb= 2\\nc: x: y', "
        "{'line_sep': '\\n', 'kv_sep': ':', 'strip': True}, None)"
    ),
    "pythonic": (
        "result = parse_pythonic('[f(from=\\'x\\', n=(1, None)), g()]', {'strip': True})"
    ),
    "transform": (
        f"result = transform_content({{'args': {{'n': '3'}}}}, {{'name': 'f'}}, {TRANSFORM!r})"
    ),
    "transform_each": (
        f"result = transform_each([{{'args': {{}}, 'name': 'g'}}], {{'name': 'f'}}, "
        f"{EACH!r}, 'calls')"
    ),
    "tool_schema": (
        "def f(n: int, tags: 'list[str] | None' = None) -> int:\n"
        "    'F.\\n\\nArgs:\\n    n: how many\\n    tags: labels (choices: [\"a\"])\\n'\n"
        "result = tool_schema(f)\n"
    ),
    "tool_coercion": (
        "def g(n: int):\n"
        "    'G.\\n\\nArgs:\\n    n: how many'\n"
        f"coerce = tool_coercer({TOOLS!r})\n"
        "result = [coerce({'function': {'name': 'f', 'arguments': {'n': '3.0', 'm': '1'}}})]\n"
        "result.append(tool_coercer([g])({'function': {'name': 'g', 'arguments': {'n': '4'}}}))\n"
        "try:\n"
        "    tool_coercer([lambda: None])\n"
        "except Exception as e:\n"
        "    result.append([type(e).__name__, str(e)])\n"
    ),
}

DRIVER = """
import json, sys
results = []
for case in json.load(sys.stdin):
    namespace = {"__name__": "generated"}
    try:
        exec(case, namespace)
        results.append(namespace.get("result"))
    except BaseException as e:
        results.append("crashed: %s: %s" % (type(e).__name__, e))
print(json.dumps(results))
"""


def run_isolated(programs: list[str]) -> list[Any]:
    """Run each program in a fresh namespace of a ``python -I -S`` interpreter."""
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", DRIVER],
        input=json.dumps(programs),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout)


def in_process(smoke: str) -> Any:
    namespace: dict[str, Any] = {}
    for module in MODULES.values():
        namespace.update(vars(module))
    exec(smoke, namespace)
    return json.loads(json.dumps(namespace["result"]))


def _program(parts: list[str]) -> str:
    return "\n".join(parts)


def test_each_section_runs_alone_under_isolated_python() -> None:
    programs, expected, labels = [], [], []
    for label, module in MODULES.items():
        code = sections(module)
        for name in code:
            parts = closure(name)
            programs.append(_program([*parts, SMOKE[name]]))
            expected.append(in_process(SMOKE[name]))
            labels.append(f"{label}[{name}]")
    results = run_isolated(programs)
    for label, got, want in zip(labels, results, expected, strict=True):
        assert got == want, label
    # The smoke calls do exercise something.
    assert expected[labels.index("content[json]")] == {"ca\u0301fe\u0301": 'he said "hi"', "b": [1]}
    assert expected[labels.index("content[xml_tags_only]")] == (
        "xml-inline: text outside the tags at 8: 'x'")
    assert expected[labels.index("content[xml_typed]")] == {"a": [1], "b": "[1]", "c": 2}
    assert expected[labels.index("content[pythonic]")] == [
        {"name": "f", "arguments": {"from": "x", "n": [1, None]}}, {"name": "g", "arguments": {}}
    ]
    assert expected[labels.index("tools[tool_coercion]")][1:] == [
        {"function": {"name": "g", "arguments": {"n": 4}}},
        ["DocstringParsingException", "Cannot generate JSON schema for <lambda> because it has "
         "no docstring!"],
    ]
    assert expected[labels.index("functions[tool_schema]")]["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "description": "how many"},
            "tags": {"type": "array", "items": {"type": "string"}, "nullable": True,
                     "enum": ["a"], "description": "labels"},
        },
        "required": ["n"],
    }


@pytest.mark.parametrize("reverse", [False, True])
def test_all_sections_together(reverse: bool) -> None:
    every = [code for module in MODULES.values() for code in sections(module).values()]
    if reverse:
        every.reverse()
    programs = [_program([*every, smoke]) for smoke in SMOKE.values()]
    expected = [in_process(smoke) for smoke in SMOKE.values()]
    assert run_isolated(programs) == expected


def test_isolated_interpreter_really_lacks_site_packages() -> None:
    """The check above would be vacuous if regex were importable there."""
    program = (
        "try:\n    import regex\n    result = 'regex'\nexcept ImportError:\n    result = 'absent'\n"
    )
    assert run_isolated([program]) == ["absent"]
