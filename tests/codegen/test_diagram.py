"""Diagrams of the region automaton and of one delimiter's DFA (``--emit mermaid`` etc.)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from rtcompiler.codegen import automaton_data
from rtcompiler.codegen.diagram import (
    delimiter_text,
    dfa_dot,
    dfa_graph,
    dfa_mermaid,
    find_delimiter,
    mermaid_text,
    region_dot,
    region_edges,
    region_mermaid,
)
from rtcompiler.grammars import names, resolve_template
from rtcompiler.template import load_template

NAMES = names()

# One Mermaid flowchart statement per line: a comment, the header, a node, or an edge
# whose label is a quoted string (the renderer escapes what would break it).
_LABEL = r'"[^"<>|`]*"'
_MERMAID_LINE = re.compile(
    r"%%[^{}]*"
    r"|flowchart LR"
    # node shapes: (((double circle))), ((circle)), ([stadium]), (rounded), [box]
    rf"|  \w+(?:\(\(\({_LABEL}\)\)\)|\(\({_LABEL}\)\)|\(\[{_LABEL}\]\)"
    rf"|\({_LABEL}\)|\[{_LABEL}\])"
    rf"|  (\w+) -->(?:\|{_LABEL}\|)? (\w+)"
)
_NODE = re.compile(r"  (\w+)[(\[]")


def mermaid_shape(text: str) -> tuple[set[str], list[tuple[str, str]]]:
    """Check the syntax line by line; the declared nodes and the edges."""
    lines = text.splitlines()
    assert lines[0].startswith("%% ") and lines[1] == "flowchart LR"
    nodes: set[str] = set()
    edges = []
    for line in lines:
        assert _MERMAID_LINE.fullmatch(line), line
        edge = re.fullmatch(r"  (\w+) -->.* (\w+)", line)
        if edge:
            edges.append((edge[1], edge[2]))
        elif _NODE.match(line):
            nodes.add(_NODE.match(line)[1])
    return nodes, edges


def dot_shape(text: str) -> None:
    """Without Graphviz: balanced braces, one statement per line, quotes closed."""
    lines = text.splitlines()
    assert lines[0].startswith("// ") and lines[1].startswith("digraph ") and lines[-1] == "}"
    for line in lines[2:-1]:
        assert line.startswith("  ") and line.endswith(";"), line
        unescaped = re.sub(r"\\.", "", line)
        assert unescaped.count('"') % 2 == 0, line


def run_dot(text: str) -> None:
    if shutil.which("dot") is None:
        return
    run = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("name", NAMES)
def test_region_diagrams_show_every_mode_and_delimiter(name):
    data = automaton_data(resolve_template(name))
    mermaid = region_mermaid(data)
    assert mermaid == region_mermaid(data)  # deterministic
    nodes, edges = mermaid_shape(mermaid)
    assert nodes == {"start"} | {f"m{i}" for i in range(len(data["modes"]))}
    assert {a for a, _ in edges} | {b for _, b in edges} <= nodes
    watched = [w for mode in data["modes"] for w in mode["watch"]]
    # The start anchor, one edge per watch, and the way back from each yield.
    closes = {w["field"] for w in watched if w["kind"] == "close"}
    backs = [w for w in watched if w["kind"] == "yield" and w["field"] in closes]
    assert len(edges) == 1 + len(watched) + len(backs)
    for mode in data["modes"]:
        if mode["mode"] is not None:
            assert mode["mode"] in mermaid
    for w in watched + [{"delimiter": data["start_anchor"]}]:
        assert mermaid_text(delimiter_text(data["delimiters"][w["delimiter"]])) in mermaid

    dot = region_dot(data)
    dot_shape(dot)
    run_dot(dot)
    assert dot.count(" -> ") == len(edges)


def test_region_edges_go_where_the_machine_goes():
    t = load_template({
        "start_anchor": "A",
        "fields": {
            "reasoning_content": {"open": ["<t>", "<think>"], "close": "</t>"},
            "tool_calls": {"open_pattern": r"<call name=(\w+)>", "content": "json"},
            "content": {"close": "<end>"},
        },
    })
    lines = region_mermaid(automaton_data(t)).splitlines()[2:]
    assert lines == [
        '  start(("start"))',
        '  m0(["content (implicit)"])',
        '  m1("reasoning_content")',
        '  m2("tool_calls (to the end)")',
        '  start -->|"start_anchor #34;A#34;"| m0',
        '  m0 -->|"open #34;#60;think#62;#34; or #34;#60;t#62;#34;"| m1',
        '  m0 -->|"open /#60;call name=(\\w+)#62;/"| m2',
        '  m0 -->|"close #34;#60;end#62;#34;"| m0',
        '  m1 -->|"close #34;#60;/t#62;#34;"| m0',
    ]


def test_a_yield_goes_into_the_other_region_and_its_close_comes_back():
    t = load_template({
        "start_anchor": "A", "extensions": ["yield"],
        "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>",
                                  "yield_to": {"fields": ["tool_calls"], "join": "\n"}},
            "tool_calls": {"open": "<call>", "close": "</call>", "content": "json"},
            "content": {},
        },
    })
    data = automaton_data(t)
    call = data["modes"][0]["watch"][1]
    assert call["field"] == "tool_calls"
    assert data["modes"][1]["watch"][-1] == {"kind": "yield", "field": "tool_calls",
                                             "delimiter": call["delimiter"]}
    lines = region_mermaid(data).splitlines()
    assert '  m1 -->|"yield #34;#60;call#62;#34;"| m2' in lines
    assert '  m2 -->|"close #34;#60;/call#62;#34; (after a yield)"| m1' in lines
    assert '  m2 -->|"close #34;#60;/call#62;#34;"| m0' in lines
    assert region_dot(data).count(" -> ") == len(list(region_edges(data))) == 7


def test_without_an_implicit_field_the_outside_is_a_null_sink():
    t = load_template({"start_anchor_pattern": r"\n",
                       "fields": {"c": {"open": "|", "close": "\n"}}})
    data = automaton_data(t)
    assert '[label="outside (null sink)", peripheries=2]' in region_dot(data)
    # Control characters and quotes are spelled out, backslashes stay literal.
    assert '[label="start_anchor /\\\\n/"]' in region_dot(data)
    assert '"close #34;\\n#34;"' in region_mermaid(data)
    assert '"open #34;#124;#34;"' in region_mermaid(data)


def test_labels_cannot_break_a_line_or_hold_a_directive():
    # Field names and literals are the template author's: any text at all.
    sneaky = "a\n%%{init: {'theme': 'dark'}}%%\u2028\x85\u202e\tb"
    t = load_template({"start_anchor": "A" + sneaky, "fields": {
        sneaky: {"open": "<" + sneaky, "close": "\r\n"}, "content": {}}})
    data = automaton_data(t)
    mermaid = region_mermaid(data)
    nodes, _ = mermaid_shape(mermaid)  # one statement per line, every line as Mermaid reads it
    assert len(nodes) == 3
    assert "%%{" not in mermaid and "%" not in "\n".join(mermaid.splitlines()[1:])
    assert "\\n#37;#37;{init" in mermaid and "\\u2028\\x85\\u202e\\tb" in mermaid
    dot = region_dot(data)
    dot_shape(dot)
    assert len(dot.splitlines()) == len(dot.split("\n")) and "\u2028" not in dot
    run_dot(dot)
    for index in range(len(data["delimiters"])):
        mermaid_shape(dfa_mermaid(data, index))
        dot_shape(dfa_dot(data, index))


def _walk(graph, text: str) -> int:
    """Follow single-character edge labels (or "other") from the initial state."""
    states, _, initial, edges = graph
    state = initial[0][0]
    for ch in text:
        out = {label: t for s, t, label in edges if s == state}
        state = out[ch] if ch in out else out["other"]
    return state


def test_a_literal_delimiters_dfa_reaches_acceptance_on_the_literal():
    data = automaton_data(load_template({"start_anchor": "<think>", "fields": {"c": {}}}))
    graph = dfa_graph(data["delimiters"][0]["automaton"])
    states, accepting, initial, edges = graph
    assert len(states) == len("<think>") + 1 and initial == [(0, "start")]
    assert _walk(graph, "<think>") in accepting
    assert _walk(graph, "<thin") not in accepting
    assert _walk(graph, "<<thi<think>") in accepting  # the search restarts, as a scanner does
    nodes, mermaid_edges = mermaid_shape(dfa_mermaid(data, 0))
    assert nodes == {f"s{s}" for s in states} | {"i0"}
    assert len(mermaid_edges) == len(edges) + len(initial)
    dot = dfa_dot(data, 0)
    dot_shape(dot)
    run_dot(dot)


@pytest.mark.parametrize("name", NAMES)
def test_every_delimiter_dfa_renders(name):
    data = automaton_data(resolve_template(name))
    for index in range(len(data["delimiters"])):
        states, accepting, _, edges = dfa_graph(data["delimiters"][index]["automaton"])
        assert accepting, data["delimiters"][index]["source"]
        nodes, mermaid_edges = mermaid_shape(dfa_mermaid(data, index))
        assert {a for a, _ in mermaid_edges} | {b for _, b in mermaid_edges} <= nodes
        dot_shape(dfa_dot(data, index))


def test_character_sets_are_named_when_they_can_be():
    data = automaton_data(load_template({"start_anchor_pattern": r"x\s+\d", "fields": {"c": {}}}))
    labels = {label for _, _, label in dfa_graph(data["delimiters"][0]["automaton"])[3]}
    assert {"x", r"\s", r"\d", "other"} <= labels


def test_start_states_say_what_came_before_when_the_pattern_cares():
    data = automaton_data(load_template({"start_anchor_pattern": r"\bx", "fields": {"c": {}}}))
    _, _, initial, _ = dfa_graph(data["delimiters"][0]["automaton"])
    assert len(initial) == 2
    assert [label for _, label in initial] == [
        "start at the text start / after another character", "start after a word character"]
    mermaid_shape(dfa_mermaid(data, 0))


def test_delimiters_are_found_by_index_or_name():
    data = automaton_data(resolve_template("qwen3"))
    assert find_delimiter(data, "reasoning_content.open") == 0
    assert find_delimiter(data, "start_anchor") == data["start_anchor"]
    assert find_delimiter(data, "2") == 2
    with pytest.raises(KeyError, match="tool_calls.close"):
        find_delimiter(data, "tool_calls.middle")


def rtc(*args):
    return subprocess.run([sys.executable, "-m", "rtcompiler.cli.main", *args],
                          capture_output=True, text=True)


def test_cli_emits_the_diagrams():
    data = automaton_data(resolve_template("qwen3"))
    for emit, render in (("mermaid", region_mermaid), ("dot", region_dot)):
        run = rtc("compile", "qwen3", "--emit", emit)
        assert run.returncode == 0, run.stderr
        assert run.stdout == render(data) + "\n"
    run = rtc("compile", "qwen3", "--emit", "dfa-mermaid", "--delimiter", "content.close")
    assert run.returncode == 0, run.stderr
    assert run.stdout == dfa_mermaid(data, 2) + "\n"
    run = rtc("compile", "qwen3", "--emit", "automaton")
    assert json.loads(run.stdout) == data


@pytest.mark.parametrize("extra", [[], ["--delimiter", "content.open"]])
def test_cli_dfa_diagram_needs_a_known_delimiter(extra):
    run = rtc("compile", "qwen3", "--emit", "dfa-dot", *extra)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("rtc: error: ") and len(run.stderr.splitlines()) == 1
