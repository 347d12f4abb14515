"""The region table: what the machine watches in each mode, and where a parse may jump.

Standard library only (the ``regions`` section). A template compiles to a
:class:`RegionTable`: its :class:`Region` rows (a field's open and close
:class:`Watched` delimiter, flags, and its ``process(body, captures)`` function), per mode
the watch list (the delimiters watched, by priority) and the quick searches a feed
tries first, and, for a whole-text parse, the landmarks and walks (see stream.py's
glossary). :func:`truncate_at_last_anchor` cuts the prompt prefix.
"""

from __future__ import annotations

from .pikevm import CHAR, LOOK, MATCH, SPLIT
from .prefilter import ASTRAL_TURN, _beginnings

# isort: split

###{standalone regions
import bisect as _bisect
import itertools as _itertools
import re as _re


class Watched:
    """One open or close delimiter, as the region machine watches it."""

    __slots__ = ("regex", "later", "is_literal", "can_extend", "fixed", "longest", "danger")

    def __init__(self, regex, is_literal, can_extend, literals=None) -> None:
        self.regex = regex  # a CompiledRegex
        # The pattern past the start of the output, where ^ never holds: what the quick
        # path, the walks and their landmarks read there (see RegionTable.start_modes).
        # Its ``late`` form where the pattern itself has no literals to search for
        # (Llama 4's open); else the pattern, whose literals stand for the late form's
        # too (Llama 3's "{"), and whose mode is read as before.
        self.later = regex if regex.late is None or regex.prefilter is not None else regex.late
        # A literal delimiter fully present before the end of the buffer cannot
        # grow, unless another literal of its list extends it.
        self.is_literal = is_literal
        self.can_extend = can_extend
        pre = regex.prefilter
        # The search that finds, from a position, everything that could leave
        # this delimiter matched or pending there (see Prefilter.quiet), or None.
        self.danger = None if pre is None or pre.danger is None else pre.quiet_search
        # Literals none of which begins another: at most one matches at a start,
        # so what a search answers is known from str.find and the literals'
        # beginnings, without a scanner (see ResponseStream.fixed_search).
        self.fixed = None
        if (
            is_literal and not can_extend and literals and pre is not None and pre.simple
            and not pre.lead and pre.lead_class is None and set(pre.literals) == set(literals)
        ):
            self.fixed = tuple(literals)
            self.longest = max(len(s) for s in literals)


class Region:
    """One field of the template."""

    __slots__ = (
        "name", "open", "close", "streamable", "repeats", "join", "optional", "process",
        "recover", "outside_strings", "recover_to", "repairs", "yields", "yield_join",
        "lenient", "json_end", "extend", "string_arguments", "decode", "decoded",
        "rank",
    )

    def __init__(
        self, name, open, close, streamable, repeats, join, optional, process,
        recover=False, outside_strings=False, recover_to=None, repairs=False, yields=(),
        yield_join="", lenient=None, json_end=False, extend=False, string_arguments=False,
        decode=None, decoded=None,
    ) -> None:
        self.name = name
        self.open = open
        self.close = close
        self.streamable = streamable  # chunks are part of the final value (dirty=False)
        self.repeats = repeats
        self.join = join
        self.optional = optional
        self.process = process  # (body, captures) -> value
        # The robustness extensions (docs/extensions.md): a failed or unfinished region's
        # body becomes implicit text; the close counts only outside the body's strings
        # (``outside_strings``: True for JSON's, or the plan of the literals that begin
        # and end a raw-text value, ValueSpans.prepare; see strings.tracker).
        self.recover = recover
        self.outside_strings = outside_strings
        self.recover_to = recover_to  # the field that keeps that body; None: the implicit one
        # With recover, a JSON list of calls that fails is read leniently (see
        # ResponseStream.repaired).
        self.repairs = repairs
        # The yield extension: the fields whose regions may open inside this one, which
        # resumes after each; its pieces' values are joined with ``yield_join``.
        self.yields = yields
        self.yield_join = yield_join
        # A recovering json field's one string delimiter: a body its parser refuses is
        # read again leniently (see LenientReader), or None.
        self.lenient = lenient
        # The json-end extension: a body that fails ends where its JSON value ends (True,
        # or the literal that follows the value and belongs to the region); see
        # ResponseStream.json_ended.
        self.json_end = json_end
        # The extend extension: a region's list of calls is added to the earlier ones'.
        self.extend = extend
        # The string-arguments extension: see decoded_arguments.
        self.string_arguments = string_arguments
        # A close-outside-strings region whose body is plain JSON: ``decode`` (body ->
        # content; ValueError when it is not JSON) and ``decoded`` ((content, captures) ->
        # value: ``process`` after the decode). The whole-text walk decodes the body at
        # the first landmark of its close: a body that decodes proves that landmark outside
        # strings without reading them, and its value is not decoded again (None: no such).
        self.decode = decode
        self.decoded = decoded
        # What breaks a tie between two matches of one span and kind: the field name, as
        # in the reference (see RegionTable for the implicit field's).
        self.rank = name


class RegionTable:
    """The compiled template: regions in declaration order, and what to watch when."""

    __slots__ = (
        "regions", "by_name", "implicit", "defaults", "flat_defaults", "start_anchor", "quiet",
        "anchor_literals", "required", "watches", "landmarks", "landmark_of", "walks", "modes",
        "stream_walks",
        "prompt_states",
        "context_free",
        "transitions", "states", "string_modes", "yielding", "cut_opens", "cut_forms",
        "recovering",
        "start_modes",
    )

    def __init__(self, regions, implicit, defaults, start_anchor) -> None:
        self.regions = regions
        self.by_name = {r.name: r for r in regions}
        self.required = tuple(r.name for r in regions if not r.optional)
        self.implicit = implicit
        self.defaults = defaults
        # Defaults holding no container (the usual {"role": "assistant"}) are copied
        # with dict(), at a fraction of deepcopy's cost.
        self.flat_defaults = all(
            v is None or type(v) in (str, int, float, bool) for v in defaults.values()
        )
        self.start_anchor = start_anchor  # a CompiledRegex
        # The anchor's literals, when it matches them only and they never overlap:
        # its last match is then the last occurrence of one, found by rfind from the
        # end of the prompt instead of a search through all of it.
        self.anchor_literals = anchor_literals(start_anchor)
        # Outside explicit regions: every open, in field order, then the
        # implicit field's close. Inside region r: only r's close. An entry is
        # (kind, region, delimiter, key of the stream's per-watcher state).
        watch = [("open", r, r.open, ("open", r.name)) for r in regions if r.open is not None]
        if implicit is not None and self.by_name[implicit].close is not None:
            region = self.by_name[implicit]
            watch.append(("close", region, region.close, ("close", implicit)))
        self.watches = {None: watch, implicit: watch}
        if implicit is not None:
            # Two closes tie only in a yielding mode (docs/extensions.md, yield): the
            # yielding region's own close, or a call's, against the implicit field's close
            # written the same (Qwen3's </think>, a stray one in content). There the other
            # close wins: the region closes. (Opens tie by name, as in the reference; the
            # implicit field has none.)
            self.by_name[implicit].rank = "\U0010ffff" + implicit
        for r in regions:
            if r.open is not None and r.name != implicit:
                self.watches[r.name] = (
                    [("close", r, r.close, ("close", r.name))] if r.close is not None else []
                )
        # A region that yields (docs/extensions.md) watches its close, the opens of the
        # fields it yields to, and the implicit field's close, which ends a piece of it.
        self.yielding = {r.name: frozenset(r.yields) for r in regions if r.yields}
        for name in self.yielding:
            region = self.by_name[name]
            self.watches[name] = self.watches[name] + [
                entry for entry in watch
                if entry[0] == "open" and entry[1].name in region.yields or entry[0] == "close"
            ]
            # A region opened in it closes at its own close or at the yielding region's,
            # which then closes too: mode (field, yielding field).
            for target in region.yields:
                self.watches[target, name] = (
                    self.watches[target] + [("close", region, region.close, ("close", name))]
                )
        # Per mode, the literals of the recovering fields' opens it watches that look like
        # markup (begin with < or [): an output that ends in the beginning of one, cut in
        # the middle of its spelling, ends with no text (docs/extensions.md, recover).
        # A template with a recovering field (the recover extension): an empty region the
        # output ends in adds nothing (see ResponseStream.close_current).
        self.recovering = any(r.recover for r in regions)
        self.cut_opens = {}
        # Per such mode, each of those literals with its open's pattern: an output that
        # ends in the literal whole and then in the beginning of the rest of a match
        # (Qwen3-Coder's "<function=get_wea") ends with no text either.
        self.cut_forms = {}
        for mode, entries in self.watches.items():
            forms = sorted({
                (s, d.regex) for kind, r, d, _ in entries
                if kind == "open" and r.recover and d.regex.prefilter is not None
                for s in d.regex.prefilter.literals if s[:1] in "<[" and len(s) > 2
            }, key=lambda form: form[0])
            if forms:
                self.cut_opens[mode] = sorted({s for s, _ in forms})
                self.cut_forms[mode] = forms
        # Per mode, a stdlib pattern that finds, in a piece of text searched from
        # its start, everything that could leave a watched delimiter matched or
        # pending (see Prefilter.danger). A piece it does not match is all
        # region text. None when some watched delimiter has no such pattern.
        self.quiet: dict = {}
        modes = [implicit] + [r.name for r in regions if r.open is not None] + [
            mode for mode in self.watches if type(mode) is tuple
        ]
        for mode in modes:
            pres = [
                delimiter.later.prefilter for _, _, delimiter, _ in self.watch(mode)
            ]
            if any(pre is None or pre.danger is None for pre in pres):
                self.quiet[mode] = None
                continue
            # The watchers' danger patterns together (Prefilter.danger), with the
            # beginnings of all their literals in one tree: the delimiters of a mode
            # often share a beginning (gpt-oss's "<|channel|>"), which a tree per
            # watcher would make sre walk once per watcher.
            literals = sorted({s for p in pres for s in p.literals})
            leads = list(dict.fromkeys(p.lead_source for p in pres if p.lead_source))
            beginnings = _beginnings(literals)
            danger = _re.compile(
                "|".join(
                    [_re.escape(s) for s in literals]
                    + ([f"(?:{beginnings})\\Z"] if beginnings is not None else [])
                    + [f"{lead}\\Z" for lead in leads]
                ) or "(?!)",
                _re.DOTALL,
            )
            if all(p.simple for p in pres):
                whole = "|".join(_re.escape(s) for s in literals)
                # One search that finds a literal first, or where the earliest
                # watcher pends (see Prefilter.hold): the work of the danger
                # search, the literal search and one pending() per watcher. The
                # watchers without a lead pend where the rest of the text begins
                # one of their literals: one tree for all of them.
                bare = _beginnings([s for p in pres if p.lead_source is None for s in p.literals])
                tails = [p.hold for p in pres if p.hold and p.lead_source is not None]
                if bare is not None:
                    tails.append(f"(?:{bare})\\Z")
                hold = _re.compile("|".join([f"(?P<literal>{whole})"] + tails), _re.DOTALL)
                # Any watcher's lead character: the hold search begins where the
                # run of them before the danger search's find does.
                lead = _re.compile("|".join(leads), _re.DOTALL).match if leads else None
                self.quiet[mode] = (
                    danger.search, _re.compile(whole, _re.DOTALL).search, hold.search, lead,
                    _first_characters(pres),
                )
            else:
                self.quiet[mode] = (danger.search, None, None, None, _first_characters(pres))
            # One character that every literal begins with (Gemma's "<", every
            # delimiter of Qwen3's or of a region of gpt-oss), and the lead characters:
            # the danger search finds a literal or its beginning, or a lead character
            # at the end, so a piece without the one and not ending with the other is
            # region text, told by ``in`` at a fraction of the search's cost. (No
            # gate when the lead characters are too many to list; they are None
            # when there are none, else a string of them.)
            heads = {s[0] for p in pres for s in p.literals}
            spaces = "".join(sorted({
                chr(c) for p in pres for lo, hi in p.lead_ranges for c in range(lo, hi + 1)
            })) if self.quiet[mode][4] is not None else None
            gate = next(iter(heads)) if len(heads) == 1 and spaces is not None else None
            self.quiet[mode] += (gate, spaces or None)

        # Modes watching a delimiter with alternatives for the start of the output only
        # (Llama 4's call list at the start, or after its python tag anywhere): their
        # quick path, walks and landmarks are the later pattern's, taken past the start.
        self.start_modes = frozenset(
            mode for mode in self.watches
            if any(d.later is not d.regex for _, _, d, _ in self.watch(mode))
        )
        self.landmarks, self.landmark_of = _landmarks(regions)
        # Per mode, for a whole-text parse: each landmark -> the watchers whose
        # matches can begin there (see ResponseStream.walk), when every watcher of
        # the mode only matches where one of its literals begins.
        self.walks = {} if self.landmarks is None else _walks(self.watches, self.landmark_of)
        # Regions whose close counts only outside strings: their mode has a scan of
        # its own (see ResponseStream.scan_outside_strings), and its walk reads the
        # strings up to each landmark; a feed reads the text it gives to such a region
        # for its strings only when they are needed (ResponseStream.strings_read).
        self.string_modes = frozenset(r.name for r in regions if r.outside_strings)
        # A region opened in a yielding one is not walked (its close goes back there); a
        # yielding region is, up to a commit that yields (see WholePass.walk).
        for mode in list(self.walks):
            if type(mode) is tuple:
                self.walks.pop(mode)
        # The same per mode, for a stream's walk (see ResponseStream.walk_step). (It only
        # chooses the commit: in a yielding mode, the stream makes one that yields.)
        self.stream_walks = {
            mode: {landmark: _stream_spot(spot) for landmark, spot in spots.items()}
            for mode, spots in self.walks.items()
        }
        # Prompt tail -> the stream's state after it (see ResponseStream.remember).
        self.prompt_states: dict = {}
        # Per mode, whether no watched delimiter reads the character before where
        # its search starts (no ^, \b or \B); what a feed did from a state, and
        # the numbers given to states (see ResponseStream.transition_key): next() on
        # a count is one step, so streams of one table in threads never share one.
        self.context_free = {
            mode: all(d.regex.context_free for _, _, d, _ in self.watch(mode))
            for mode in self.watches
        }
        self.transitions: dict = {}
        self.states = _itertools.count(1)
        # Per mode, what entering it sets: the quick path's searches, and whether
        # the region's chunks are dirty (not part of the final value).
        self.modes = {
            mode: (
                self.quiet.get(mode),
                mode is not None
                and not self.by_name[mode[0] if type(mode) is tuple else mode].streamable,
            )
            for mode in modes
        }
        self.modes.setdefault(None, (self.quiet.get(None), False))

    def watch(self, current):
        """What the machine watches in mode ``current``: (kind, region, delimiter, key)s."""
        return self.watches[current]


def _first_characters(prefilters):
    """The characters a one-character piece, with nothing held, must be for the danger
    pattern to find anything in it: a literal's first character or a lead character
    (None when the lead characters are too many to list)."""
    if sum(hi - lo + 1 for p in prefilters for lo, hi in p.lead_ranges) > 4096:
        return None
    first = {s[0] for p in prefilters for s in p.literals}
    first.update(
        chr(c) for p in prefilters for lo, hi in p.lead_ranges for c in range(lo, hi + 1)
    )
    return frozenset(first)


def cut_open_length(text, literals):
    """How many characters at the end of ``text`` are the beginning of one of
    ``literals`` (two characters or more, not the whole literal), the longest; 0 for none."""
    best = 0
    for literal in literals:
        for k in range(min(len(literal) - 1, len(text)), max(best, 1), -1):
            if text.endswith(literal[:k]):
                best = k
                break
    return best


def _landmarks(regions):
    """One stdlib search that finds every occurrence of every delimiter's literal, and
    each literal -> the landmark it begins with; (None, None) when there is none.

    A whole-text parse then reads the text once, instead of once per watched
    delimiter that has no match left (each such search runs to the end). It
    needs landmarks whose occurrences never overlap (none begins inside another or
    itself, none begins another), so that ``finditer`` meets every occurrence, and
    alternations sre searches fast: one per first character (see LandmarkSearch).
    A literal that begins with another literal (Harmony's header
    ``<|channel|>analysis<|message|>`` and a bare ``<|channel|>``) is found by the
    shorter one's landmark, where every match holding it begins too; a fixed
    delimiter's literal must be a landmark itself (the walk takes the landmark
    for its match).
    """
    literals = set()
    fixed = set()
    for region in regions:
        for delimiter in (region.open, region.close):
            if delimiter is not None:
                pre = delimiter.later.prefilter
                if pre is None:
                    return None, None
                literals.update(pre.literals)
                if delimiter.fixed is not None:
                    fixed.update(pre.literals)
    landmark_of = {}
    last = None
    for literal in sorted(literals):
        # Sorted, the literals that begin with one come right after it.
        if last is None or not literal.startswith(last):
            last = literal
        landmark_of[literal] = last
    kept = set(landmark_of.values())
    heads = sorted({s[0] for s in kept})
    if not kept or not fixed <= kept or not _apart(kept) or len(heads) > 1 and (
        len(heads) > _LANDMARK_HEADS or any(h.isalnum() or h.isspace() for h in heads)
    ):
        return None, None
    searches = [
        _re.compile("|".join(
            _re.escape(s) for s in sorted(
                (s for s in kept if s[0] == head), key=lambda s: (-len(s), s)
            )
        ), _re.DOTALL)
        for head in heads
    ]
    return (searches[0] if len(searches) == 1 else LandmarkSearch(searches)), landmark_of


# Literals beginning with more characters than this get no landmarks: each first
# character is one more pass over the text. So is one that is a letter, a digit or a
# space: its pass stops at every word, where a delimiter's own search (str.find) reads
# far faster.
_LANDMARK_HEADS = 3


class LandmarkSearch:
    """The landmarks of literals that begin with two or three characters (Mistral's
    ``[TOOL_CALLS]`` and ``</s>``): sre searches an alternation at C speed only when
    every branch begins with one character, and tries every branch at every position
    otherwise (ten times as long or more). So each first character has a search of its
    own, and their occurrences are merged in order; the occurrences of the literals
    never overlap (see _apart), so the merge meets each once. The same calls as the
    one compiled search it stands for: ``search(text, pos, endpos)`` and
    ``finditer(text, pos)``."""

    __slots__ = ("searches",)

    def __init__(self, searches):
        self.searches = searches

    def search(self, text, pos, endpos):
        best = None
        for search in self.searches:
            # (No occurrence begins before the best one and ends after it begins.)
            m = search.search(text, pos, endpos if best is None else best.start())
            if m is not None:
                best = m
        return best

    def finditer(self, text, pos):
        runs = [search.finditer(text, pos) for search in self.searches]
        heads = [next(run, None) for run in runs]
        while True:
            k = -1
            for i, m in enumerate(heads):
                if m is not None and (k < 0 or m.start() < heads[k].start()):
                    k = i
            if k < 0:
                return
            yield heads[k]
            heads[k] = next(runs[k], None)


def _apart(literals):
    """Whether no two occurrences of ``literals`` in any text overlap: none begins
    another, and none begins inside another or itself. Every occurrence is then a
    match of their alternation, in a search from the start or by ``rfind``.

    Read off the trie of the literals with its failure links (Aho-Corasick): a
    literal beginning or inside another ends at a node on the other's path before
    its last (a literal is a suffix of the node's text); one overlapping another's
    end begins with a proper suffix of it (the failure link of its last node is not
    the root). Linear in their total length, where comparing every pair was
    quadratic in their number (minutes at import for thousands of literals).
    """
    children = [{}]  # the trie: node -> {character: node}; 0 is the root
    ends = [False]  # whether a literal ends at the node
    for literal in literals:
        node = 0
        for ch in literal:
            nxt = children[node].get(ch)
            if nxt is None:
                nxt = children[node][ch] = len(children)
                children.append({})
                ends.append(False)
            node = nxt
        ends[node] = True
    # fail[n]: the node of the longest proper suffix of n's text that is in the trie;
    # ends[n] becomes whether some literal is a suffix of n's text. Breadth first.
    fail = [0] * len(children)
    order = list(children[0].values())
    for node in order:
        for ch, child in children[node].items():
            link = fail[node]
            while link and ch not in children[link]:
                link = fail[link]
            link = children[link].get(ch, 0)
            fail[child] = link
            ends[child] = ends[child] or ends[link]
            order.append(child)
    for literal in literals:
        node = 0
        for ch in literal[:-1]:
            node = children[node][ch]
            if ends[node]:
                return False
        if fail[children[node][literal[-1]]]:
            return False
    return True


def _single(entries, longer=None, landmark=""):
    """``(kind, region, form, lead, named, literals, otherwise)`` for a landmark where
    no candidates need comparing (see ``_walks``), else None:

    * one delimiter: ``form`` None for a literal one, else its regex; ``lead`` its
      prefilter when a run of lead characters may begin the match before the landmark
      (``\\s*<tool_call>``), else None; ``named``, whether the form captures a group
      (a match of one that does not captures nothing);
    * literal delimiters, each of which matches the landmark itself: they all match it
      end to end, so the winner is known here, by the order whole_pass breaks ties by
      (an open before a close, then the region's rank), as at Qwen3's ``<think>``,
      which opens the reasoning and ends a piece of the content;
    * those, and one delimiter with a form and no lead whose literals at the landmark
      (``literals``) are all longer than it: any match of the form is longer than the
      literals', so it wins where it matches, and ``otherwise`` (the literals' winner,
      ``(kind, region)``) where it does not. Gemma 4's ``<|tool_call>`` opens a call
      where ``call:`` follows, and ends a piece of the content elsewhere. So too where
      the form's literal is the ``landmark`` itself but it matches nothing that short
      (``literals`` None): Magistral's ``[TOOL_CALLS]`` opens a call where a name and
      ``[ARGS]`` follow, and ends a piece of the content elsewhere.
    """
    fixed = [entry for entry in entries if entry[2].fixed is not None]
    if len(entries) > 1 and fixed and (longer is None or not any(
        longer[k] for k, entry in enumerate(entries) if entry[2].fixed is not None
    )):
        kind, region, _, _ = min(
            fixed, key=lambda entry: (0 if entry[0] == "open" else 1, entry[1].rank)
        )
        if len(fixed) == len(entries):
            return kind, region, None, None, False, None, None
        if len(fixed) == len(entries) - 1:
            k, entry = next((k, e) for k, e in enumerate(entries) if e[2].fixed is None)
            regex = entry[2].later
            pre = regex.prefilter
            if not pre.lead and pre.lead_class is None and _reads_its_literal(regex):
                literals = longer[k] if longer is not None else None
                shortest = None if literals else _shortest(regex.nfa)
                if literals or shortest is not None and shortest > len(landmark):
                    return (entry[0], entry[1], regex, None, bool(regex.nfa.group_names),
                            literals, (kind, region))
        return None
    if len(entries) != 1 or longer is not None:
        return None  # (a lone delimiter that needs its own literal there: best_at)
    kind, region, delimiter, _ = entries[0]
    if delimiter.fixed is not None:
        return kind, region, None, None, False, None, None
    regex = delimiter.later
    pre = regex.prefilter
    if pre.lead:
        return None
    lead = None if pre.lead_class is None else pre
    return kind, region, regex, lead, bool(regex.nfa.group_names), None, None


def _shortest(nfa):
    """The fewest characters a match of ``nfa`` reads, or None when it matches nothing:
    the NFA read level by level, each level's closure without characters first (a
    lookaround reads none of the match)."""
    states = nfa.states
    frontier, seen, depth = [nfa.start], set(), 0
    while frontier:
        stack, frontier = frontier, []
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            st = states[s]
            kind = st[0]
            if kind == MATCH:
                return depth
            if kind == CHAR:
                frontier.append(st[2])
            elif kind == SPLIT:
                stack.extend(st[1])
            elif kind == LOOK:
                stack.append(st[3])
            else:  # SAVE, ASSERT
                stack.append(st[2])
        depth += 1
    return None


def _reads_its_literal(regex):
    """Whether every match of ``regex`` reads the literal it begins with: its stdlib form
    has no lookaround, through which a literal may stand ahead of a shorter match (the
    forms write every character as a class, so ``(?`` is only ever syntax)."""
    # (The lookbehind that lets an astral character into a run reads that character
    # only: see ASTRAL_TURN.)
    source = regex.captures.pattern.replace(ASTRAL_TURN, "")
    return not any(look in source for look in ("(?=", "(?!", "(?<=", "(?<!"))


def anchor_literals(anchor):
    """The literals ``anchor`` (a CompiledRegex) matches, each with the length of its
    match, when it matches nothing else and they never overlap; or a lookahead of
    literals only, whose empty matches are where they begin; else None (see
    ``truncate_at_last_anchor``)."""
    pre = anchor.prefilter
    if pre is None:
        return None
    if pre.ahead:
        return tuple((literal, 0) for literal in pre.literals)
    if pre.exact and _apart(pre.literals):
        return tuple((literal, len(literal)) for literal in pre.literals)
    return None


def _walks(watches, landmark_of):
    """Per mode whose every watcher's matches begin where one of its literals does,
    or at the run of its lead characters before it (literals none of which begins
    another, or a stdlib form with no bounded lead): each literal -> the watch
    entries it can begin a match of, and ``(kind, region, form)`` when that is one
    delimiter (nothing to compare), else None. ``form``: None for a literal
    delimiter (the landmark is its match), else its regex, which has no lead (a
    match begins at the landmark).

    A lead is allowed when no literal holds a lead character: a run of them then
    holds no landmark, so matches begin in the order of their landmarks.
    """
    # Every character of every literal, as sorted code points: whether a lead holds one
    # is then a look-up per range of the lead, not a question per literal.
    characters = sorted({
        ord(c) for watch in watches.values() for entry in watch
        for s in entry[2].later.prefilter.literals for c in s
    })

    def holds_a_literal_character(pre):
        for lo, hi in pre.lead_ranges:
            k = _bisect.bisect_left(characters, lo)
            if k < len(characters) and characters[k] <= hi:
                return True
        return False

    walks = {}
    for mode, watch in watches.items():
        by_literal: dict = {}
        for entry in watch:
            delimiter = entry[2]
            regex = delimiter.later
            pre = regex.prefilter
            if delimiter.fixed is None and (
                regex.captures is None or not regex.tail or pre.lead
                or pre.lead_class is not None and holds_a_literal_character(pre)
            ):
                break
            for literal in pre.literals:
                entries = by_literal.setdefault(landmark_of[literal], {})
                entries.setdefault(id(entry), (entry, []))[1].append(literal)
        else:
            walks[mode] = {
                landmark: _walk_spot(landmark, list(entries.values()))
                for landmark, entries in by_literal.items()
            }
    return walks


def _walk_spot(landmark, found):
    """``(entries, single, longer, early)`` for a landmark: its watch entries, ``_single``
    of them, and, when some entry's literals only begin with the landmark, per entry the
    literals one of which must stand at the landmark for it to match there (None
    where the landmark is its literal): checked before its form is tried, so that a
    shorter landmark costs no failed match (see ``WholePass.best_at``). ``early``:
    whether an entry's pattern has a lookahead (Qwen3's call closed where <|im_end|>
    stands), so that its match may end before the landmark does (the walk then
    searches again from there; a negative one too, a needless search at worst)."""
    entries = [entry for entry, _ in found]
    early = any(
        st[0] == LOOK for entry in entries for st in entry[2].later.nfa.states
    )
    if all(landmark in literals for _, literals in found):
        return entries, _single(entries, None, landmark), None, early
    longer = [None if landmark in literals else tuple(literals) for _, literals in found]
    return entries, _single(entries, longer, landmark), longer, early


def _stream_spot(spot):
    """A walk spot (see ``_walk_spot``) as a stream's walk reads it: per watch entry,
    ``(kind, region, regex, lead, form, literals, longest, entry, rank)``: ``regex`` None
    for a literal delimiter (the landmark is its match), else its prefilter where it has
    a lead class (or None), its stream form, and the literals one of which must stand at
    the landmark for it to match there, and the longest of them (or None, 0), the watch
    entry itself (what a hold names, see ResponseStream.walk_step), and its place in
    scan's order between matches of one span (an open before a close, then the
    region's rank). None when an entry has no stream form that a match found stands by
    (see ResponseStream.answer): the stream's watchers are asked there."""
    entries, _, longer, _ = spot
    order = sorted(
        range(len(entries)),
        key=lambda k: (0 if entries[k][0] == "open" else 1, entries[k][1].rank),
    )
    ranks = {k: place for place, k in enumerate(order)}
    plan = []
    for k, entry in enumerate(entries):
        kind, region, delimiter, _ = entry
        literals = None if longer is None else longer[k]
        longest = 0 if literals is None else max(map(len, literals))
        if delimiter.fixed is not None:
            plan.append((kind, region, None, None, None, literals, longest, entry, ranks[k]))
            continue
        regex = delimiter.later
        if regex.form_dollar or regex.captures_stream is None:
            return None
        pre = regex.prefilter
        plan.append((
            kind, region, regex, None if pre.lead_class is None else pre,
            regex.captures_stream, literals, longest, entry, ranks[k],
        ))
    return tuple(plan)


def truncate_at_last_anchor(anchor, prefix, literals=None):
    """The prefix after the last match of the start anchor (all of it if none).

    ``literals``: what the anchor matches and how much of it, when they never
    overlap (see ``RegionTable.anchor_literals``): the last match is the last
    occurrence.
    """
    if literals is not None:
        last, last_end = -1, None
        for literal, width in literals:
            at = prefix.rfind(literal)
            if at > last:
                last, last_end = at, at + width
        return prefix if last_end is None else prefix[last_end:]
    # The stdlib form finds regex's spans (see automata/capture.py) where its search is
    # linear, at C speed: cheaper than stepping the automata over a long chat prompt.
    last_end = anchor.last_end(prefix)
    return prefix if last_end is None else prefix[last_end:]
###}
