"""Search with ``regex``'s answers: complete, partial, groups, and streaming.

``regex.compile(p, regex.DOTALL).search(s, pos, partial=True)`` behaves like
this (learned by experiment; each rule is pinned by a named test in
``tests/automata/test_partial_rules.py``):

1. a complete leftmost-first match anywhere in ``s[pos:]`` wins;
2. otherwise, the leftmost start from which some path of the matcher ran into
   the end of the text (needed one more character, there or inside a
   lookahead) gives a partial match ending at ``len(s)``;
3. at ``len(s)`` itself, a pattern that needs at least one character reports a
   partial match without evaluating anything -- unless it is anchored at the
   start of the string.

:class:`Scanner` is the streaming form: text is fed in pieces, each character
is stepped through the DFA exactly once, and :meth:`Scanner.result` answers as
if the text ended where the feeding stopped -- the question a streaming parser
asks after every chunk. :class:`Regex` is the one-shot form.

>>> rx = compile_regex(r"<tool_call>")
>>> sc = rx.scanner()
>>> sc.feed("Sure. <tool")
>>> sc.result(partial=True).span()
(6, 11)
>>> sc.feed("_call>{")
>>> sc.result(partial=True).span()
(6, 17)
"""

from __future__ import annotations

import dataclasses
import functools

from ..dialect import ast
from ..dialect.errors import PatternError
from ..dialect.parser import parse_pattern
from ..runtime.compiled_regex import CompiledRegex, regex_from_data
from ..runtime.match import Match
from ..runtime.prefilter import Prefilter
from ..runtime.scanner import Scanner
from ..runtime.tag_chain import TagChain
from .capture import capture_pattern, lazy_tail_pattern
from .chain import chain_plan
from .dfa import Dfa
from .nfa import Nfa, compile_nfa
from .prefilter import prefilter_data


class Regex(CompiledRegex):
    """A compiled delimiter pattern, with its DFA built lazily as text arrives."""

    def __init__(self, nfa: Nfa, parsed: ast.Pattern | None = None) -> None:
        dfa = Dfa(nfa)
        if parsed is None:
            parsed = parse_pattern(nfa.source)
        self.prefilter_facts = prefilter_data(parsed.root)
        self.capture_source = capture_pattern(
            parsed, None if self.prefilter_facts is None else self.prefilter_facts["literals"]
        )
        # Only where the whole pattern has no form that may run over a whole text.
        self.lazy_tail_source = (
            lazy_tail_pattern(parsed)
            if self.capture_source is None or not self.capture_source["tail"] else None
        )
        # (Also beside a whole form: a streamed search answers from the branches, see
        # ResponseStream.branch_answer.)
        self.branches_source = branch_forms(parsed) if self.lazy_tail_source is None else None
        prefilter = None if self.prefilter_facts is None else Prefilter(self.prefilter_facts)
        super().__init__(
            nfa, dfa.alphabet, dfa, prefilter, self.capture_source, self.lazy_tail_source,
            self.branches_source, _late(nfa, parsed),
        )

    @property
    def pattern(self) -> str:
        return self.nfa.source

    def to_data(self) -> dict:
        """The whole compiled pattern as JSON-able data: NFA, alphabet, full DFA.

        This is the intermediate representation the code generator embeds;
        :meth:`from_data` reads it back into a working :class:`Regex`.
        """
        nfa = self.nfa
        data = {
            "format": "rtcompiler.regex/1",
            "pattern": nfa.source,
            "nfa": {
                "states": [_jsonable(s) for s in nfa.states],
                "start": nfa.start,
                "charsets": [[list(r) for r in cs.ranges] for cs in nfa.charsets],
                "group_names": dict(nfa.group_names),
                "group_count": nfa.group_count,
                "needs_input": nfa.needs_input,
                "anchored": nfa.anchored,
                "uses_word_boundary": nfa.uses_word_boundary,
                "uses_start": nfa.uses_start,
            },
            "alphabet": self.alphabet.to_data(),
            "dfa": self.dfa.to_data(),
            "prefilter": self.prefilter_facts,
            "captures": self.capture_source,
        }
        if self.lazy_tail_source is not None:  # (absent otherwise: modules stay as they were)
            data["lazy_tail"] = self.lazy_tail_source
        if self.branches_source is not None:
            data["branches"] = self.branches_source
        if self.late is not None:
            data["late"] = self.late.to_data()
        return data

    @staticmethod
    def from_data(data: dict) -> CompiledRegex:
        """Read :meth:`to_data` back: a working pattern run from its tables."""
        if data.get("format") != "rtcompiler.regex/1":
            raise ValueError(f"not a serialised rtcompiler regex: format {data.get('format')!r}")
        return regex_from_data(data)


def _late(nfa: Nfa, parsed: ast.Pattern) -> Regex | None:
    r"""The pattern past the start of the output, where ``^`` never holds, compiled, when
    that drops alternatives and changes nothing else the search rules read (see the
    module's rules): None otherwise.

    Llama 3's call open ``(?:^\s*|<\|python_tag\|>\s*|;\s*)\{…`` is then, past the
    start, a pattern every match of which begins with its literal: its streamed answers
    take the prefilter's short paths, where the whole pattern needs a scanner.
    """
    if not nfa.uses_start or nfa.anchored:
        return None
    root = _without_start(parsed.root)
    if root is None or root == parsed.root:
        return None
    late = ast.Pattern(
        source=parsed.source, root=root, group_count=parsed.group_count,
        group_names=parsed.group_names,
    )
    late_nfa = compile_nfa(late)
    if late_nfa.needs_input != nfa.needs_input or late_nfa.anchored:
        return None
    return Regex(late_nfa, late)


def _without_start(node: ast.Node) -> ast.Node | None:
    """``node`` where ``^`` never holds, or None where it then never matches."""
    if isinstance(node, ast.Assertion):
        return None if node.kind == ast.START else node
    if isinstance(node, ast.Concat):
        parts: list[ast.Node] = []
        for item in node.items:
            part = _without_start(item)
            if part is None:
                return None
            parts.append(part)
        return ast.Concat(tuple(parts))
    if isinstance(node, ast.Alternation):
        kept = [alt for alt in map(_without_start, node.alternatives) if alt is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else ast.Alternation(tuple(kept))
    if isinstance(node, (ast.Group, ast.Repeat, ast.Lookahead)):
        inner = _without_start(node.item)
        if inner is not None:
            return dataclasses.replace(node, item=inner)
        if isinstance(node, ast.Repeat) and not node.min:
            return ast.Empty()  # (taken no times)
        if isinstance(node, ast.Lookahead) and node.negative:
            return ast.Empty()  # (what it looks for never matches: it always holds)
        return None
    return node


def _jsonable(state: tuple) -> list:
    return [list(x) if isinstance(x, tuple) else x for x in state]


# Large enough for every pattern of one template (up to 256 fields, each with an open,
# a close and a tag pattern, and the anchor): the loader builds their tables and the
# code generator reuses them; evicted in the order used, they were all built twice.
@functools.lru_cache(maxsize=1024)
def compile_regex(pattern: str) -> Regex:
    """Compile ``pattern`` in the delimiter dialect, or raise ``PatternError``."""
    return Regex(compile_nfa(pattern))


class TagPattern:
    """An xml-inline tag pattern, compiled for ``group_finditer`` over a region body.

    A pattern with the shape of a chain of literals (:mod:`rtcompiler.automata.chain`)
    runs as a :class:`TagChain`, backreferences included; any other runs as a
    :class:`Regex` (its stdlib form where that is linear, else its automata).
    """

    def __init__(self, source: str) -> None:
        self.source = source
        parsed = parse_pattern(source, backreferences=True)
        plan = chain_plan(parsed)
        backref = _first_backref(parsed.root)
        if plan is None and backref is not None:
            raise PatternError(
                "backreference", backref.column, source,
                detail="backreference outside the tag-pair shape that rtcompiler matches in "
                "linear time (like <(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>; see "
                "docs/regex-dialect.md)",
            )
        self.plan = plan
        self.chain = None if plan is None else TagChain(plan)
        self.regex = compile_regex(source) if plan is None else None
        finder = self.chain if self.chain is not None else self.regex
        assert finder is not None
        self.group_finditer = finder.group_finditer
        self.group_split = finder.group_split

    def to_data(self) -> dict:
        return {
            "format": "rtcompiler.tag/1",
            "pattern": self.source,
            "chain": self.plan,
            "regex": None if self.regex is None else self.regex.to_data(),
        }


def _first_backref(node: ast.Node) -> ast.Backref | None:
    if isinstance(node, ast.Backref):
        return node
    for child in _children(node):
        found = _first_backref(child)
        if found is not None:
            return found
    return None


def _children(node: ast.Node) -> tuple:
    if isinstance(node, ast.Concat):
        return node.items
    if isinstance(node, ast.Alternation):
        return node.alternatives
    if isinstance(node, (ast.Group, ast.Repeat, ast.Lookahead)):
        return (node.item,)
    return ()


@functools.lru_cache(maxsize=256)
def compile_tag_pattern(pattern: str) -> TagPattern:
    """Compile an xml-inline ``tag_pattern``, or raise ``PatternError``."""
    return TagPattern(pattern)


__all__ = ["Match", "Regex", "Scanner", "TagPattern", "compile_regex", "compile_tag_pattern"]


def _literal_text(node: ast.Node) -> str | None:
    """The one string ``node`` matches, when it is a sequence of single characters."""
    items = node.items if isinstance(node, ast.Concat) else (node,)
    out = []
    for item in items:
        if not isinstance(item, ast.Chars) or len(item.chars.ranges) != 1:
            return None
        lo, hi = item.chars.ranges[0]
        if lo != hi:
            return None
        out.append(chr(lo))
    return "".join(out) or None


def branch_forms(pattern: ast.Pattern) -> list | None:
    r"""For an alternation without groups whose whole has no stdlib form: per alternative,
    ``{"ahead": literal}`` for a lookahead of a literal, or ``{"form": stdlib source,
    "literals": [...]}`` for one with a form that is linear with a bounded tail and whose
    every match begins with one of its literals; None when an alternative is neither.

    Qwen3's call close ``</tool_call>\s*|(?=<\|im_end\|>)`` has no form (the lookahead),
    so a whole-text parse stepped every call's body in Python. The
    leftmost match of an alternation begins where the earliest of its alternatives'
    leftmost matches does, and there the first alternative in order that matches wins,
    with its own first success: WholePass.complete_branches.
    """
    root = pattern.root
    if pattern.group_names or not isinstance(root, ast.Alternation):
        return None
    out: list = []
    for alternative in root.alternatives:
        if isinstance(alternative, ast.Lookahead):
            literal = None if alternative.negative else _literal_text(alternative.item)
            if literal is None:
                return None
            out.append({"ahead": literal})
            continue
        form = capture_pattern(ast.Pattern(
            source=pattern.source, root=alternative, group_count=0, group_names={},
        ))
        facts = prefilter_data(alternative)
        if (
            form is None or not form["tail"] or "start" in form or "whole" in form
            or facts is None or facts["lead"] or facts["lead_ranges"]
        ):
            return None
        out.append({"form": form["source"], "literals": list(facts["literals"])})
    return out
