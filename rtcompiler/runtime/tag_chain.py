"""An xml-inline tag pattern shaped as a chain of literals (:class:`TagChain`).

Standard library only (the ``chain`` section, which generated parsers copy only for
templates with such a pattern). Built by ``rtcompiler/automata/chain.py``; runs a
tag pattern over a closed region, backreference pairs included.
"""

from __future__ import annotations

# A generated module defines these in the sections before this one.
from .compiled_regex import regex_from_data, split_layout
from .match import Match
from .prefilter import char_class_source

# isort: split

###{standalone chain
import re as _re


def tag_from_data(data: dict):
    """An xml-inline tag pattern read back from ``TagPattern.to_data()``: its chain
    when it has one (see rtcompiler/automata/chain.py), else its compiled regex;
    either way, what ``group_finditer`` runs."""
    if data["chain"] is not None:
        return TagChain(data["chain"])
    return regex_from_data(data["regex"])


class TagChain:
    """The matches of a tag pattern shaped as a chain of literals, as
    ``regex.finditer(pattern, text, regex.DOTALL)`` gives them, in linear time.

    The plan comes from ``rtcompiler/automata/chain.py``, which explains the shape
    and why one forward pass is exact: an attempt begins where the leading literal
    occurs; fixed pieces (literals, maximal runs) are read where they stand; a span
    stops at the first occurrence of its anchor after which the fixed pieces that
    follow match. Positions only move forward, so each question (the end of a run
    from here, the first viable anchor from here) is answered from where the last
    answer stopped, and an anchor with no viable occurrence from some point ends
    the search: no later attempt can get past it.
    """

    def __init__(self, plan: dict) -> None:
        self.lead = plan["lead"]
        self.names = plan["names"]
        # Segments: the fixed steps after the lead, then those after each span's
        # anchor. A fixed step: ("lit", text, group) | ("run", matcher, min, max, group).
        segments: list = [[]]
        spans: list = []
        for step in plan["steps"]:
            kind = step[0]
            if kind == "span":
                _, group, trim, anchor = step
                if trim is not None:
                    trim = (_re.compile(char_class_source(trim[0]), _re.DOTALL).match, trim[1])
                if anchor[0] == "pair":
                    # C KEY D, KEY the text of a group: every occurrence of it, for every
                    # key, is a match of C([S]+)D (see chain.py).
                    _, before, index, after, ranges = anchor
                    pattern = _re.compile(
                        _re.escape(before) + "(" + char_class_source(ranges) + "+)"
                        + _re.escape(after),
                        _re.DOTALL,
                    )
                    anchor = ("pair", pattern, index, len(before) + len(after))
                spans.append((group, trim, tuple(anchor)))
                segments.append([])
            elif kind == "run":
                _, ranges, least, most, group = step
                matcher = _re.compile(char_class_source(ranges) + "*", _re.DOTALL).match
                segments[-1].append(("run", matcher, least, most, group))
            else:
                segments[-1].append(tuple(step))
        self.segments = segments
        self.spans = spans
        # The same matches from one stdlib search, each attempt reading a character a
        # bounded number of times (see chain.py): used while few attempts can read far.
        self.form = _re.compile(plan["form"], _re.DOTALL)
        # Work counters of the linear-time tests: steps taken in Python, characters
        # the stdlib searches and matches went through, texts given to the form.
        self.steps = 0
        self.searched = 0
        self.formed = 0
        self.group_finditer = self.finditer  # what parse_xml_inline is handed
        self.split_layout = split_layout(self.form)

    # An attempt of the form may read to the end of the text: at most this many
    # attempts (occurrences of the leading literal), or the text is walked instead.
    FORM_ATTEMPTS = 64
    # Characters per attempt beyond which the walk is faster anyway: a match costs it
    # some microseconds in Python, but str.find crosses a long tool argument at memchr
    # speed where sre's lazy loop stops at every character that can begin the anchor.
    FORM_TEXT = 512

    def finditer(self, text: str):
        """Every match, in order: the form's own Match objects, or ours."""
        attempts = text.count(self.lead)
        if attempts <= self.FORM_ATTEMPTS and len(text) <= self.FORM_TEXT * (attempts + 1):
            self.formed += 1
            return self.form.finditer(text)
        return self.walk(text)

    def group_split(self, text: str):
        """``(parts, layout)``: the form's ``split`` of ``text`` where ``finditer`` would
        run the form (see CompiledRegex.group_split); else None."""
        attempts = text.count(self.lead)
        if attempts <= self.FORM_ATTEMPTS and len(text) <= self.FORM_TEXT * (attempts + 1):
            self.formed += 1
            return self.form.split(text), self.split_layout
        return None

    def walk(self, text: str) -> list:
        """Every match, in order, by one forward pass over the text."""
        out: list = []
        lead = self.lead
        width = len(lead)
        find = text.find
        n = len(text)
        spans = self.spans
        names = self.names
        runs: dict = {}  # run matcher -> (from, end of the maximal run from there)
        viable: dict = {}  # (span, anchor position) -> (end, groups) | False
        found: dict = {}  # span or (span, key) -> (from, first viable anchor or -1 | cursor)
        trims: dict = {}  # (span, anchor position) -> where the run before the anchor begins
        pairs: dict = {}  # span -> {key: positions of its pair}
        steps = searched = 0
        pos = 0
        while True:
            s = find(lead, pos)
            searched += (n if s < 0 else s + width) - pos
            if s < 0:
                break
            groups: dict = {}
            x = s + width
            # The fixed steps after the lead (see _fixed, written out).
            for step in self.segments[0]:
                steps += 1
                if step[0] == "lit":
                    if not text.startswith(step[1], x):
                        x = -1
                        break
                    end = x + len(step[1])
                else:
                    matcher = step[1]
                    known = runs.get(matcher)
                    if known is not None and known[0] <= x <= known[1]:
                        end = known[1]
                    else:
                        end = matcher(text, x).end()
                        searched += end - x + 1
                        runs[matcher] = (x, end)
                    if step[3] is not None and end - x > step[3]:
                        end = x + step[3]
                    if end - x < step[2]:
                        x = -1
                        break
                group = step[-1]
                if group is not None:
                    groups[group] = (x, end)
                x = end
            k = 0
            while x >= 0 and k < len(spans):
                group, trim, anchor = spans[k]
                lo = x
                steps += 1
                if anchor[0] == "lit":
                    known = found.get(k)
                    if known is not None and known[0] <= lo and (known[1] < 0 or lo <= known[1]):
                        at = known[1]
                    else:
                        # The first occurrence from lo after which the next fixed steps match.
                        literal = anchor[1]
                        c = lo
                        while True:
                            at = find(literal, c)
                            searched += (n if at < 0 else at + len(literal)) - c
                            steps += 1
                            if at < 0:
                                break
                            fits = viable.get((k, at))
                            if fits is None:
                                captured: dict = {}
                                end = self._fixed(k + 1, text, at + len(literal), captured, runs)
                                fits = viable[(k, at)] = (end, captured) if end >= 0 else False
                            if fits is not False:
                                break
                            c = at + 1
                        found[k] = (lo, at)
                    if at < 0:
                        x = -2  # and no later attempt gets past this span
                        break
                    x, captured = viable[(k, at)]
                else:
                    # A pair: the first occurrence of C KEY D from lo, KEY read before.
                    _, pattern, index, extra = anchor
                    table = pairs.get(k)
                    if table is None:
                        table = pairs[k] = {}
                        for m in pattern.finditer(text):
                            table.setdefault(m.group(1), []).append(m.start())
                        searched += n
                    start, stop = groups[index]
                    key = text[start:stop]
                    positions = table.get(key, ())
                    known = found.get((k, key))
                    cursor = known[1] if known is not None and known[0] <= lo else 0
                    while cursor < len(positions) and positions[cursor] < lo:
                        cursor += 1
                        steps += 1
                    found[(k, key)] = (lo, cursor)
                    if cursor == len(positions):
                        x = -1
                        break
                    at = positions[cursor]
                    x = at + extra + len(key)
                    captured = None
                stop = at
                if trim is not None:
                    start = trims.get((k, at))
                    if start is None:
                        matcher, most = trim
                        start = at
                        while start > 0 and (most is None or at - start < most) and matcher(
                            text, start - 1
                        ):
                            start -= 1
                        steps += at - start
                        trims[(k, at)] = start
                    stop = start if start > lo else lo
                if group is not None:
                    groups[group] = (lo, stop)
                if captured:
                    groups.update(captured)
                k += 1
            if x == -2:
                break
            if x < 0:
                pos = s + 1
                continue
            out.append(Match(s, x, False, {
                name: text[groups[index][0] : groups[index][1]] if index in groups else None
                for name, index in names.items()
            }))
            pos = x
        self.steps += steps
        self.searched += searched
        return out

    def _fixed(self, k: int, text: str, x: int, groups: dict, runs: dict) -> int:
        """Segment ``k``'s fixed steps from ``x``: where they end, or -1."""
        for step in self.segments[k]:
            self.steps += 1
            if step[0] == "lit":
                if not text.startswith(step[1], x):
                    return -1
                end = x + len(step[1])
            else:
                matcher = step[1]
                known = runs.get(matcher)
                if known is not None and known[0] <= x <= known[1]:
                    end = known[1]
                else:
                    end = matcher(text, x).end()
                    self.searched += end - x + 1
                    runs[matcher] = (x, end)
                if step[3] is not None and end - x > step[3]:
                    end = x + step[3]
                if end - x < step[2]:
                    return -1
            group = step[-1]
            if group is not None:
                groups[group] = (x, end)
            x = end
        return x
###}
