"""Diagrams of a compiled template: the region automaton, and one delimiter's DFA.

Everything here reads the JSON-able data of ``rtc compile --emit automaton``
(:func:`rtcompiler.codegen.automaton_data`), so a saved automaton file can be drawn
too. Two output languages, both plain text and deterministic (same data, same bytes):
Mermaid (``flowchart``, which GitHub renders inside a ```` ```mermaid ```` block) and
Graphviz ``dot``.

The region automaton has one node per parsing mode -- the outside mode (the implicit
field, or the null sink when the template has none) and one per explicit field -- and
one edge per delimiter a mode watches: an open leads from the outside mode into the
field's mode, a close leads back out (the implicit field's close is a loop on the
outside mode). A start node stands for the prompt: the start anchor leads into the
outside mode. Literal delimiters are shown as JSON strings, patterns between slashes.

>>> from rtcompiler.template import load_template
>>> from rtcompiler.codegen import automaton_data
>>> t = load_template({"start_anchor": "<s>", "fields": {
...     "reasoning_content": {"open": "<think>", "close": "</think>"},
...     "content": {}}})
>>> print(region_mermaid(automaton_data(t)))  # doctest: +ELLIPSIS
%% rtcompiler region automaton, template sha256 ...
flowchart LR
  start(("start"))
  m0(["content (implicit)"])
  m1("reasoning_content")
  start -->|"start_anchor #34;#60;s#62;#34;"| m0
  m0 -->|"open #34;#60;think#62;#34;"| m1
  m1 -->|"close #34;#60;/think#62;#34;"| m0
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from functools import lru_cache

from ..dialect.charsets import CharSet

MAX_CODE_POINT = 0x10FFFF

# -- what the region automaton says, independent of the output language -------------------


def delimiter_text(delimiter: dict) -> str:
    """How a delimiter reads on an edge: literals as JSON strings, a pattern as ``/p/``."""
    if delimiter["literals"] is not None:
        return " or ".join(json.dumps(s, ensure_ascii=False) for s in delimiter["literals"])
    return "/" + _visible(delimiter["source"]) + "/"


_NAMED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _visible(text: str) -> str:
    """``text`` with every character that does not print (controls, line and paragraph
    separators, bidirectional and other format characters) spelled as an escape, so that
    it shows on one line as it is."""
    out = []
    for ch in text:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        elif ch in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[ch])
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                       else f"\\U{code:08x}")
    return "".join(out)


def mode_label(mode: dict) -> str:
    name = mode["mode"]
    if not mode["explicit"]:
        return f"{name} (implicit)" if name is not None else "outside (null sink)"
    return name if mode["watch"] else f"{name} (to the end)"


def region_edges(data: dict) -> Iterator[tuple[int | None, int, str]]:
    """``(from_mode, to_mode, label)`` for every edge; ``from_mode`` None is the start.

    Modes are numbered in the order of ``data["modes"]`` (0 is the outside mode).
    """
    delimiters = data["delimiters"]
    yield None, 0, "start_anchor " + delimiter_text(delimiters[data["start_anchor"]])
    index = {mode["mode"]: i for i, mode in enumerate(data["modes"]) if mode["explicit"]}
    closes = {watch["field"]: watch["delimiter"] for mode in data["modes"]
              for watch in mode["watch"] if watch["kind"] == "close"}
    for i, mode in enumerate(data["modes"]):
        for watch in mode["watch"]:
            label = watch["kind"] + " " + delimiter_text(delimiters[watch["delimiter"]])
            if watch["kind"] == "open":
                yield i, index[watch["field"]], label
            elif watch["kind"] == "yield":
                # Into the other field's region, and back here when it closes.
                target = index[watch["field"]]
                yield i, target, label
                if watch["field"] in closes:
                    back = "close " + delimiter_text(delimiters[closes[watch["field"]]])
                    yield target, i, back + " (after a yield)"
            else:
                yield i, 0, label


# -- Mermaid -------------------------------------------------------------------------------

# Characters that mean something to Mermaid's parser (or to the HTML it renders into)
# are written as its "#code;" entities; "%" too, since Mermaid looks for "%%{...}%%"
# directives anywhere in the text, labels included.
_MERMAID_ESCAPE = set('"#&<>|`%')


def mermaid_text(text: str) -> str:
    """``text`` as the inside of a quoted Mermaid label, on one line."""
    return "".join(f"#{ord(ch)};" if ch in _MERMAID_ESCAPE else ch for ch in _visible(text))


def region_mermaid(data: dict) -> str:
    """The region automaton as a Mermaid flowchart."""
    lines = [
        f"%% rtcompiler region automaton, template sha256 {data['template_sha256']}",
        "flowchart LR",
        '  start(("start"))',
    ]
    for i, mode in enumerate(data["modes"]):
        label = mermaid_text(mode_label(mode))
        # Outside: a stadium; a field's region: a rounded box.
        lines.append(f'  m{i}(["{label}"])' if i == 0 else f'  m{i}("{label}")')
    for source, target, label in region_edges(data):
        origin = "start" if source is None else f"m{source}"
        lines.append(f'  {origin} -->|"{mermaid_text(label)}"| m{target}')
    return "\n".join(lines)


# -- Graphviz ------------------------------------------------------------------------------


def dot_text(text: str) -> str:
    """``text`` as a double-quoted dot string on one line (backslashes kept literal)."""
    return '"' + _visible(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def region_dot(data: dict) -> str:
    """The region automaton as a Graphviz digraph."""
    lines = [
        f"// rtcompiler region automaton, template sha256 {data['template_sha256']}",
        "digraph regions {",
        "  rankdir=LR;",
        '  node [shape=box, style=rounded, fontname="monospace"];',
        '  edge [fontname="monospace"];',
        '  start [shape=circle, label="start"];',
    ]
    for i, mode in enumerate(data["modes"]):
        shape = ", peripheries=2" if i == 0 else ""
        lines.append(f"  m{i} [label={dot_text(mode_label(mode))}{shape}];")
    for source, target, label in region_edges(data):
        origin = "start" if source is None else f"m{source}"
        lines.append(f"  {origin} -> m{target} [label={dot_text(label)}];")
    lines.append("}")
    return "\n".join(lines)


# -- one delimiter's DFA -------------------------------------------------------------------


def find_delimiter(data: dict, name: str) -> int:
    """The index in ``data["delimiters"]`` of ``name``.

    ``name`` is an index as the automaton JSON shows it, ``start_anchor``, or
    ``FIELD.open`` / ``FIELD.close``. Raises ``KeyError`` with the choices otherwise.
    """
    choices: dict[str, int] = {"start_anchor": data["start_anchor"]}
    for mode in data["modes"]:
        for watch in mode["watch"]:
            choices[f"{watch['field']}.{watch['kind']}"] = watch["delimiter"]
    if name.isdigit() and int(name) < len(data["delimiters"]):
        return int(name)
    if name not in choices:
        raise KeyError(
            f"no delimiter {name!r}; choose an index below {len(data['delimiters'])} or one of "
            + ", ".join(sorted(choices))
        )
    return choices[name]


def class_intervals(alphabet: dict) -> list[list[tuple[int, int]]]:
    """Per character class, the code-point intervals ``(lo, hi)`` it holds."""
    starts = alphabet["starts"]
    size = max(alphabet["interval_class"]) + 1
    out: list[list[tuple[int, int]]] = [[] for _ in range(size)]
    for k, lo in enumerate(starts):
        hi = starts[k + 1] - 1 if k + 1 < len(starts) else MAX_CODE_POINT
        out[alphabet["interval_class"][k]].append((lo, hi))
    return out


def _char(cp: int) -> str:
    ch = chr(cp)
    if ch == " ":
        return "␠"
    return ch if ch.isprintable() else f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _span(lo: int, hi: int) -> str:
    return _char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}"


# Sets a diagram names instead of listing their ranges (derived from ``regex``).
_NAMED_SETS = (r"\s", r"\d", r"\w", r"\S", r"\D", r"\W")


@lru_cache(maxsize=1)
def _named_sets() -> dict[tuple[tuple[int, int], ...], str]:
    from ..dialect.charsets import derive

    return {derive(name).ranges: name for name in _NAMED_SETS}


def chars_label(spans: Iterable[tuple[int, int]]) -> str:
    """A short name for a set of code points: ``a``, ``a-z 0-9``, ``\\s``, ``12 ranges``."""
    ranges = CharSet.from_ranges(spans).ranges
    if ranges == ((0, MAX_CODE_POINT),):
        return "any"
    named = _named_sets().get(ranges)
    if named is not None:
        return named
    if len(ranges) <= 4:
        return " ".join(_span(lo, hi) for lo, hi in ranges)
    return f"{len(ranges)} ranges"


Edge = tuple[int, int, str]
# What preceded the search's first character, in the order of the DFA's initial states.
_CONTEXTS = ("at the text start", "after a word character", "after another character")


def dfa_graph(regex_data: dict) -> tuple[list[int], set[int], list[tuple[int, str]], list[Edge]]:
    """``(states, accepting, initial, edges)`` of a serialised delimiter regex.

    States are the live DFA states (the dead one is left out, and so is every
    transition into it); a state is accepting when, were the text to end there, a
    match would end there; ``initial`` are the start states with a label, one per
    kind of character before the search's start where the pattern tells them apart
    (``^``, ``\\b``). Edges join the character classes with
    the same source and target; the edge taking the largest class is labelled "other"
    (every character no other edge of that state takes), or "any" when it is the
    state's only way on.
    """
    dfa = regex_data["dfa"]
    dead = set(dfa["dead"])
    intervals = class_intervals(regex_data["alphabet"])
    # The class with the most code points is what a state does "otherwise".
    sizes = [sum(hi - lo + 1 for lo, hi in spans) for spans in intervals]
    other = sizes.index(max(sizes))
    states = [s for s in range(len(dfa["rows"])) if s not in dead]
    accepting = {s for s in states if dfa["eof"][s][0] is not None}
    initial = []
    for sid in dict.fromkeys(dfa["initial"]):
        after = [_CONTEXTS[k] for k, other_sid in enumerate(dfa["initial"]) if other_sid == sid]
        if sid not in dead:
            label = "start" if len(after) == len(_CONTEXTS) else f"start {' / '.join(after)}"
            initial.append((sid, label))
    edges = []
    for s in states:
        targets: dict[int, list[int]] = {}
        for c, cell in enumerate(dfa["rows"][s]):
            targets.setdefault(dfa["cells"][cell][0], []).append(c)
        for t in sorted(set(targets) - dead):
            classes = targets[t]
            if other in classes:
                label = "any" if len(targets) == 1 else "other"
            else:
                label = chars_label(span for c in classes for span in intervals[c])
            edges.append((s, t, label))
    return states, accepting, initial, edges


def _comment(source: str) -> str:
    # Mermaid reads "{" in a comment as the start of a directive; nothing here renders.
    return mermaid_text(source).replace("{", "#123;").replace("}", "#125;")


def dfa_mermaid(data: dict, index: int) -> str:
    """Delimiter ``index`` of an automaton's data as a Mermaid state machine."""
    delimiter = data["delimiters"][index]
    states, accepting, initial, edges = dfa_graph(delimiter["automaton"])
    lines = [
        f"%% rtcompiler delimiter {index}: {_comment(delimiter['source'])}",
        "flowchart LR",
    ]
    for s in states:
        shape = ('s{0}((("{0}")))' if s in accepting else 's{0}(("{0}"))').format(s)
        lines.append("  " + shape)
    for k, (s, label) in enumerate(initial):
        lines.append(f'  i{k}(["{mermaid_text(label)}"])')
        lines.append(f"  i{k} --> s{s}")
    for s, t, label in edges:
        lines.append(f'  s{s} -->|"{mermaid_text(label)}"| s{t}')
    return "\n".join(lines)


def dfa_dot(data: dict, index: int) -> str:
    """Delimiter ``index`` of an automaton's data as a Graphviz digraph."""
    delimiter = data["delimiters"][index]
    states, accepting, initial, edges = dfa_graph(delimiter["automaton"])
    lines = [
        f"// rtcompiler delimiter {index}: {_visible(delimiter['source'])}",
        "digraph dfa {",
        "  rankdir=LR;",
        '  node [shape=circle, fontname="monospace"];',
        '  edge [fontname="monospace"];',
    ]
    for s in states:
        lines.append(f"  s{s}" + (" [shape=doublecircle];" if s in accepting else ";"))
    for k, (s, label) in enumerate(initial):
        lines.append(f"  i{k} [shape=plaintext, label={dot_text(label)}];")
        lines.append(f"  i{k} -> s{s};")
    for s, t, label in edges:
        lines.append(f"  s{s} -> s{t} [label={dot_text(label)}];")
    lines.append("}")
    return "\n".join(lines)


EMITTERS = {"mermaid": region_mermaid, "dot": region_dot}
DFA_EMITTERS = {"dfa-mermaid": dfa_mermaid, "dfa-dot": dfa_dot}

__all__ = [
    "DFA_EMITTERS",
    "EMITTERS",
    "dfa_dot",
    "dfa_graph",
    "dfa_mermaid",
    "find_delimiter",
    "region_dot",
    "region_mermaid",
]
