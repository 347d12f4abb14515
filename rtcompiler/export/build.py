"""Assembling the grammar: the turn's automaton becomes one rule per state.

The parser reads text in *modes*: outside every explicit region it watches each field's
open delimiter and the implicit field's close; inside a region, that region's close only.
The grammar follows the turn (:mod:`.turn`) and writes, for every step from one state to
the next, exactly what the parser will read as that step:

- a region: its open delimiter (with the text outside regions before it, if the turn
  allows text there, as one "text up to the delimiter" terminal), its body
  (:mod:`.content`, or text up to the close), its close;
- a literal of the turn: the delimiter alternative that reads it, or plain text;
- the end of turn: an end-of-turn marker, or the close of the last region when that
  close is such a marker (gpt-oss ends a call with ``<|call|>``).

A close delimiter's alternatives are split by what follows: an end-of-turn alternative
only ends the turn, and an alternative that ends in a lookahead only comes before a step
whose first characters satisfy it (Mistral's ``(?=\\[TOOL_CALLS\\])`` between calls).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..automata import compile_regex
from ..codegen import load_parser
from ..dialect import ast
from ..dialect.charsets import CharSet
from ..template import Template
from . import regex as rx
from . import turn as turns
from .content import Bodies, Body, tag_head
from .delimiters import (
    DelimiterTree,
    Written,
    leading,
    split_special,
    to_expr,
    write_alternative,
)
from .grammar import (
    EMPTY,
    Alt,
    Expr,
    FreeText,
    Grammar,
    Lit,
    Ref,
    Rep,
    Rx,
    Seq,
    Special,
    UpTo,
    alt,
    named,
    opt,
    seq,
)
from .tools import Bounds, Tool, call_shape, calls_field, offered_tools
from .values import Values

_GEN_WHITESPACE = CharSet.of(" \n")
_JSON_WS = CharSet(((9, 10), (13, 13), (32, 32)))


class ExportError(ValueError):
    """The template (with these options) has no grammar the exporter can write; the message
    says why."""


@dataclass
class ExportOptions:
    """``tools`` as ``apply_chat_template`` takes them; ``tool_choice`` ``auto``,
    ``required``, ``none`` or a tool's name; ``flavour`` ``lark`` or ``llguidance``;
    ``prefix`` the prompt the model continues (default: the meta's generation prompt);
    ``special_tokens`` the target tokenizer's special tokens (text -> id, or None when the
    text is written as the reference), llguidance only; ``bounds`` for generation;
    ``turn``/``end_of_turn`` override the meta's."""

    tools: list | None = None
    tool_choice: str = "auto"
    flavour: str = "lark"
    prefix: str | None = None
    special_tokens: Mapping[str, int | None] = field(default_factory=dict)
    bounds: Bounds | None = None
    turn: str | None = None
    end_of_turn: Sequence[str] | None = None


@dataclass(frozen=True)
class Go:
    position: int
    text: bool  # text outside regions may come first
    opens: tuple[int, ...] | None = None  # only these alternatives of the open delimiter


@dataclass(frozen=True)
class End:
    text: bool


Step = Go | End


class Builder:
    def __init__(self, template: Template, options: ExportOptions, meta: dict | None) -> None:
        self.template = template
        self.options = options
        self.meta = meta or {}
        self.grammar = Grammar()
        self.helpers: dict[str, Expr] = {}
        self.bounds = options.bounds
        self.flavour = options.flavour
        self.special = dict(options.special_tokens) if self.flavour == "llguidance" else {}
        self.values = Values(self.helpers, self.flavour, self.bounds, self.grammar.note)
        call_keys = self.meta.get("call_keys")
        after = self.meta.get("call_keys_after")
        self.bodies = Bodies(self.values, self.bounds, self.grammar.note,
                             call_keys if isinstance(call_keys, dict) else None,
                             after if isinstance(after, dict) else None)
        self.opens = {f.name: DelimiterTree(f.open) for f in template.fields if f.open}
        self.closes = {f.name: DelimiterTree(f.close) for f in template.fields if f.close}
        implicit = template.implicit
        # What the parser watches outside regions: (field, tree).
        self.outside: list[tuple[str, DelimiterTree]] = [
            (f.name, self.opens[f.name]) for f in template.fields if f.open is not None]
        if implicit is not None and implicit in self.closes:
            self.outside.append((implicit, self.closes[implicit]))
        self.heads = _heads(self.outside)
        self.tools = self._tools()
        self.prefix = self._prefix()
        self.inside, self.remainder = self._start_state()
        self.turn = self._turn()
        self.auto = turns.automaton(self.turn)
        self._separator_cache: dict[str, tuple[int, ...]] = {}
        self.markers = self._markers()
        self.rules: dict[str, Expr] = {}
        self.pending: list[tuple[str, int | None, tuple[Step, ...]]] = []

    # ------------------------------------------------------------------ setup

    def _tools(self) -> list[Tool] | None:
        if self.options.tool_choice == "none":
            return []
        try:
            tools = offered_tools(self.options.tools, self.options.tool_choice)
        except ValueError as e:
            raise ExportError(str(e)) from None
        calls = calls_field(self.template)
        if calls is None:
            if self.options.tool_choice not in ("auto", "none"):
                raise ExportError("--tool-choice asks for a call, but the template has no "
                                  "tool_calls field")
            return []
        if self.options.tools is None:
            return None  # generic calls
        if not tools and self.options.tool_choice != "auto":
            raise ExportError("--tool-choice asks for a call, but no tools are offered")
        return tools

    def _prefix(self) -> str:
        if self.options.prefix is not None:
            return self.options.prefix
        prompt = self.meta.get("generation_prompt")
        return prompt if isinstance(prompt, str) else ""

    def _start_state(self) -> tuple[str | None, str]:
        """(the explicit field the prefix leaves open, or None; the prefix's text after its
        last start-anchor match)."""
        parser = load_parser(self.template).ResponseParser(self.prefix)
        # The prefix's text after the anchor may be held back until more comes (DeepSeek
        # V3.1's ^<think> opens at the first feed): the end of the text flushes it, and
        # closes what is open, which the trailing closes are.
        held = parser.finalize()[1]
        while held and held[-1]["type"] == "region_close":
            held.pop()
        open_field: str | None = None
        for event in parser.initial_events + held:
            if event["type"] == "region_open":
                open_field = event["field"]
            elif event["type"] == "region_close":
                open_field = None
        if open_field == self.template.implicit:
            open_field = None
        anchor = compile_regex(self.template.start_anchor.regex_source)
        ends = [m.end for m in anchor.finditer(self.prefix)]
        remainder = self.prefix[ends[-1]:] if ends else self.prefix
        return open_field, remainder

    def _turn(self) -> turns.Node:
        text = self.options.turn or self.meta.get("turn")
        try:
            turn = turns.parse_turn(text) if text else turns.default_turn(self.template)
            turns.check_fields(turn, self.template)
        except turns.TurnError as e:
            raise ExportError(str(e)) from None
        if self.options.tool_choice == "none" or self.tools == []:
            restricted = turns.without_calls(turn)
            if restricted is None:
                raise ExportError(f"the turn {turns.show(turn)!r} always writes a tool call, "
                                  "but no call can be written here")
            turn = restricted
        elif self.options.tool_choice != "auto":
            restricted = turns.with_calls(turn)
            if restricted is None:
                raise ExportError(f"the turn {turns.show(turn)!r} never writes a tool call")
            turn = restricted
        if self.bounds is not None:
            turn = turns.cap_calls(turn, self.bounds.max_calls)
        return turn

    def _markers(self) -> list[str]:
        if self.options.end_of_turn is not None:
            return list(self.options.end_of_turn)
        given = self.meta.get("end_of_turn")
        if given is None:
            given = (self.meta.get("normalise") or {}).get("end_of_turn")
        if isinstance(given, str):
            return [given]
        if isinstance(given, list):
            return [m for m in given if isinstance(m, str) and m]
        implicit = self.template.implicit
        if implicit is not None and implicit in self.closes:
            literals = self.template.field(implicit).close.literals  # type: ignore[union-attr]
            return list(literals or ())
        return []

    # --------------------------------------------------------------- the rules

    def build(self) -> Grammar:
        start = self.steps(None)
        if self.inside is not None:
            start = tuple(s for s in start if isinstance(s, Go) and not s.text
                          and self._field(s.position) == self.inside)
            if not start:
                raise ExportError(f"the prefix leaves the parser inside {self.inside!r}, "
                                  f"but the turn {turns.show(self.turn)!r} does not begin "
                                  "with it")
        self.rules["start"] = EMPTY  # first in the grammar
        self.rules["start"] = self.rule_body(None, start)
        while self.pending:
            name, position, steps = self.pending.pop(0)
            self.rules[name] = self.rule_body(position, steps)
        self.grammar.rules = {**self.rules, **self.helpers}
        return self.grammar

    def steps(self, position: int | None) -> tuple[Step, ...]:
        """What may follow ``position`` (None: the start), the implicit field's text
        folded into the step after it."""
        auto = self.auto
        targets = auto.first if position is None else auto.follow.get(position, [])
        final = auto.empty if position is None else position in auto.last
        out: list[Step] = []
        seen: set[int] = set()

        def visit(ts: list[int], text: bool) -> None:
            for t in ts:
                if self._is_text(t):
                    if t in seen:
                        continue
                    seen.add(t)
                    visit(auto.follow.get(t, []), True)
                    if t in auto.last and End(True) not in out:
                        out.append(End(True))
                else:
                    go = Go(t, text, self._first_opens(t, position))
                    if go not in out:
                        out.append(go)

        visit(targets, False)
        if final and End(False) not in out:
            out.append(End(False))
        return tuple(out)

    def _first_opens(self, target: int, position: int | None) -> tuple[int, ...] | None:
        """The open alternatives a region may begin with when it does not follow a region
        of its own field: not the ones its close looks ahead to, which only separate two
        regions (Llama 3's ";" between calls)."""
        name = self._field(target)
        if name is None or (position is not None and self._field(position) == name):
            return None
        separators = self._separators(name)
        if not separators:
            return None
        count = len(self.opens[name].alternatives)
        return tuple(i for i in range(count) if i not in separators)

    def _separators(self, name: str) -> tuple[int, ...]:
        if name in self._separator_cache:
            return self._separator_cache[name]
        opener, close = self.opens.get(name), self.closes.get(name)
        out: tuple[int, ...] = ()
        if opener is not None and close is not None and len(opener.alternatives) > 1:
            looking = [j for j, a in enumerate(close.alternatives) if _ends_with_lookahead(a)]
            out = tuple(i for i in range(len(opener.alternatives)) if any(
                close.written(Written(following=opener.written(Written(), [i])), [j])
                is not None for j in looking))
            if len(out) == len(opener.alternatives):
                out = ()
        self._separator_cache[name] = out
        return out

    def _is_text(self, position: int) -> bool:
        item = self.auto.positions[position].item
        return isinstance(item, turns.Field) and item.name == self.template.implicit

    def _field(self, position: int) -> str | None:
        item = self.auto.positions[position].item
        return item.name if isinstance(item, turns.Field) else None

    def rule_for(self, position: int | None, steps: tuple[Step, ...], suffix: str = "") -> Ref:
        base = "start" if position is None else self.auto.positions[position].name
        name = base + suffix
        if name not in self.rules and all(p[0] != name for p in self.pending):
            self.rules[name] = EMPTY  # reserved
            self.pending.append((name, position, steps))
        return Ref(name)

    def rule_body(self, position: int | None, steps: tuple[Step, ...]) -> Expr:
        at_start = position is None and self.inside is None and self.remainder == ""
        options = []
        for step in steps:
            option = self.step_expr(step, at_start and not step.text, position is None)
            if option is not None:
                options.append(option)
        body = alt(*options)
        if body is None:
            raise ExportError("the turn has a state from which nothing can be written "
                              f"(after {self._describe(position)})")
        return body

    def _describe(self, position: int | None) -> str:
        if position is None:
            return "the start"
        item = self.auto.positions[position].item
        return item.name if isinstance(item, turns.Field) else repr(item.text)

    # ------------------------------------------------------------------ steps

    def step_expr(self, step: Step, at_start: bool, from_start: bool) -> Expr | None:
        if isinstance(step, End):
            return self.end_expr(step.text, at_start)
        position = step.position
        item = self.auto.positions[position].item
        if isinstance(item, turns.Literal):
            written = self.outside_text(item.text, step.text, at_start)
            after = self.steps(position)
            return seq(written, self.rule_for(position, after))
        inside = from_start and self.inside is not None
        return self.region_expr(position, step.text, at_start, inside, step.opens)

    def end_expr(self, text: bool, at_start: bool) -> Expr | None:
        if not self.markers:
            if text:
                return opt(FreeText(self._outside_nodes(), 1, self._limit()))
            return EMPTY
        options = [self.outside_text(m, text, at_start) for m in self.markers]
        return alt(*options)

    def outside_text(self, text: str, before: bool, at_start: bool) -> Expr:
        """``text`` written outside regions: as the delimiter alternative that reads it, if
        one does (with what that alternative adds, e.g. trailing whitespace), else as is."""
        for _owner, tree in self.outside:
            indexes = tree.reading(text)
            if indexes:
                node = tree.written(Written(at_start=at_start and not before), indexes)
                if node is not None:
                    expr = named(self.delimiter_expr(self._bound(node)), "end_of_turn"
                                 if text in self.markers else "literal")
                    return self.with_text_before(expr, tree.root) if before else expr
        written = named(self._text(text), "end_of_turn" if text in self.markers else "literal")
        if before:
            return self.with_text_before(written, rx.literal(text))
        return written

    def _text(self, text: str) -> Expr:
        if self.special:
            return seq(*split_special(text, self.special))
        return Lit(text)

    # ---------------------------------------------------------------- regions

    def region_expr(self, position: int, text: bool, at_start: bool, inside: bool,
                    opens: tuple[int, ...] | None = None) -> Expr | None:
        name = self._field(position)
        assert name is not None
        f = self.template.field(name)
        head = self.head(name, at_start and not text, inside, opens)
        if head is None:
            return None
        if text:
            head = self.with_text_before(head, self.opens[name].root)
        close = self.closes.get(name)
        after = self.steps(position)
        if close is None:
            if any(s != End(False) for s in after) or self.markers:
                self.grammar.note(f"{name} has no close delimiter: it can only end the turn")
            tail = opt(FreeText((), 1, self._limit())) if f.content == "text" else EMPTY
            return seq(head, tail)
        ending = [i for i in range(len(close.alternatives))
                  if any(i in close.reading(m) for m in self.markers)]
        # A close that ends with a marker but does more (Qwen3-Coder's, once:
        # </function>\s*<|im_end|>) is not written: the parser reads on after it, and the
        # marker, where the model's tokenizer stops at it, is no text of the output.
        middle = [i for i in range(len(close.alternatives)) if i not in ending and not any(
            _ends_with_literal(close.alternatives[i], m) for m in self.markers)]
        if f.content == "text" or tag_head(f) is not None:
            # A text region's close that is only a lookahead (Kimi K3's reasoning, ended
            # where a response opens) is not written: the text would end at nothing the
            # lexer sees. The parser reads such outputs; the grammar writes the close. So
            # for an xml-inline body, whose close is written after text too (see
            # close_expr): Qwen3-Coder's call without </tool_call> before <|im_end|>.
            middle = [i for i in middle if not _only_lookahead(close.alternatives[i])]
        options: list[Expr] = []
        # Which close alternatives may come before each next step (and, for a region, before
        # each alternative of its open: Llama 3's "; " between calls needs the lookahead close).
        # A close that goes on from where one proven by its lookahead ends is not written
        # where that one fits: llguidance's greedy lexer cannot end Llama 3's "}" (then
        # <|eot_id|>) where "}<|python_end|>" could go on.
        fitting = [i for i in middle if _ends_with_lookahead(close.alternatives[i]) and any(
            close.written(Written(following=self.leading_of(variant)), [i]) is not None
            for step in after for variant in self._variants(step))]
        middle = [i for i in middle if i in fitting or not any(
            _extends(close.alternatives[i], close.alternatives[j]) for j in fitting)]
        groups: dict[tuple[int, ...], list[Step]] = {}
        for step in after:
            # A close that reads an end-of-turn marker ends the turn itself (below); the
            # others may come before a marker (Phi-4-mini's <|/tool_call|><|end|>).
            for variant in self._variants(step):
                follow = self.leading_of(variant)
                valid = tuple(i for i in middle
                              if close.written(Written(following=follow), [i]) is not None)
                if valid:
                    group = groups.setdefault(valid, [])
                    merged = next((g for g in group if isinstance(g, Go) and isinstance(
                        variant, Go) and g.position == variant.position and g.text == variant.text),
                        None)
                    if merged is not None and isinstance(variant, Go):
                        joined = tuple(sorted(set(merged.opens or ()) | set(variant.opens or ())))
                        group[group.index(merged)] = Go(merged.position, merged.text, joined)
                    else:
                        group.append(variant)
        for valid, steps in groups.items():
            groups[valid] = [self._whole(s) for s in steps]
        for n, (valid, steps) in enumerate(groups.items()):
            suffix = "" if len(groups) == 1 else f"_{n + 1}"
            # A lookahead proved before each step alone holds before any of them.
            leads = [self.leading_of(step) for step in steps]
            follow = None if any(x is None for x in leads) else rx.alternation(leads)  # type: ignore[misc]
            node = self._close_before(close, follow, valid)
            assert node is not None
            options.append(seq(head, self.close_expr(name, node),
                               self.rule_for(position, tuple(steps), suffix)))
        if End(False) in after and ending:
            node = close.written(Written(), ending)
            if node is not None:
                options.append(seq(head, self.close_expr(name, node)))
        return alt(*options)

    @staticmethod
    def _close_before(close: DelimiterTree, follow: ast.Node | None,
                      valid: tuple[int, ...]) -> ast.Node | None:
        """The close alternatives ``valid`` written before what ``follow`` proves. Optional
        whitespace right before a lookahead is not written: read a character at a time, a
        shorter alternative of the close may end before it, and the whitespace becomes
        content (Llama 3's "}\\n;{" streams content "\\n" that the whole parse does not)."""
        options = []
        for i in valid:
            alternative = close.alternatives[i]
            if _ends_with_lookahead(alternative):
                alternative = _without_space_before_lookahead(alternative)
            node = write_alternative(alternative, Written(following=follow))
            if node is not None:
                options.append(node)
        return rx.alternation(options)

    def _variants(self, step: Step) -> list[Step]:
        """A step into a region, once per alternative of the region's open delimiter."""
        if not isinstance(step, Go) or step.text:
            return [step]
        name = self._field(step.position)
        if name is None or name not in self.opens:
            return [step]
        count = len(self.opens[name].alternatives)
        allowed = step.opens if step.opens is not None else range(count)
        return [Go(step.position, step.text, (i,)) for i in allowed] if count > 1 else [step]

    def _whole(self, step: Step) -> Step:
        """``step`` without an open restriction when it keeps every alternative."""
        if isinstance(step, Go) and step.opens is not None:
            name = self._field(step.position)
            if name is not None and len(step.opens) == len(self.opens[name].alternatives):
                return Go(step.position, step.text)
        return step

    def close_expr(self, name: str, node: ast.Node) -> Expr:
        expr = named(self.delimiter_expr(self._bound(node)), f"{name}_close")
        f = self.template.field(name)
        if f.content == "text":
            # A region that yields (docs/extensions.md, yield) reads its targets' opens in
            # its text as regions of theirs: its text keeps them out, as text outside
            # regions does (Qwen3-Coder's reasoning, <tool_call>\n<function=x</think>).
            targets = [(t, self.opens[t]) for t in f.yields if t in self.opens]
            return self.with_text_before(
                expr, self.closes[name].root, inside=True,
                also=tuple(tree.root for _, tree in targets) + _heads(targets),
            )
        head = tag_head(f)
        if head is not None and self.bounds is None and _ends_with_fixed_char(
                self.opens[name].root):
            # The parser skips text before an xml-inline close that holds no tag (Qwen3-Coder
            # writes </function> there): it runs up to the close in one terminal, as a text
            # region's does. It keeps out a tag's head, not the whole tag: narrower, and the
            # value's .*? inside an and-not made llguidance's lexer give up on DeepSeek
            # V3.2. After an open that may end in a greedy name no text is written: the
            # name would run on into it.
            return self._prefix_text(expr, (self.closes[name].root,),
                                     (rx.for_avoiding(head),))
        return expr

    def head(self, name: str, at_start: bool, inside: bool,
             opens: tuple[int, ...] | None = None) -> Expr | None:
        """The region's open delimiter and body (its close comes after); one option per
        tool when a delimiter writes the tool's name."""
        f = self.template.field(name)
        opener = self.opens[name]
        is_calls = name == "tool_calls"
        shape = call_shape(f) if is_calls else None
        tools = self.tools if is_calls else None
        if f.content == "text":
            if inside:
                return EMPTY
            node = opener.written(Written(at_start=at_start), self._only(opens))
            return None if node is None else named(self.delimiter_expr(self._bound(node)),
                                                   f"{name}_open")
        close_root = self.closes[name].root if name in self.closes else None
        limit = self.bounds.max_calls if self.bounds else None
        try:
            body: Body = self.bodies.body(f, close_root, shape, tools, limit)
        except ValueError as e:
            raise ExportError(f"fields.{name}: {e}") from None
        syntax_gemma = f.content == "json" and isinstance(f.content_args, dict) and bool(
            f.content_args.get("string_delims"))
        lead = not syntax_gemma and _ends_with_fixed_char(opener.root)
        trail = not syntax_gemma

        def padded(value: Expr) -> Expr:
            pad = self._pad() if f.content in ("json", "pythonic") else EMPTY
            return seq(pad if lead else EMPTY, value, pad if trail else EMPTY)

        # What follows the open, for proofs about it: the body, then the close.
        close_lead: Expr = Rx(rx.for_avoiding(close_root)) if close_root is not None else EMPTY

        if body.per_tool is not None:
            group = shape.name.path[0] if shape is not None else None
            options = []
            for tool, value in body.per_tool:
                value = padded(value)
                if inside:
                    options.append(value)
                    continue
                names = ((group, tool.name),) if group else ()
                follow = leading(seq(value, close_lead), self.helpers)
                node = opener.written(Written(at_start=at_start, following=follow, names=names),
                                      self._only(opens))
                if node is None:
                    self.grammar.note(f"the open delimiter of {name} cannot write the tool "
                                      f"name {tool.name!r}: that tool is left out")
                    continue
                options.append(seq(named(self.delimiter_expr(self._bound(node)),
                                         f"{name}_open"), value))
            return alt(*options)
        assert body.shared is not None
        value = padded(body.shared)
        if inside:
            return value
        node = opener.written(Written(at_start=at_start,
                                      following=leading(seq(value, close_lead), self.helpers)),
                              self._only(opens))
        if node is None:
            return None
        return seq(named(self.delimiter_expr(self._bound(node)), f"{name}_open"), value)

    @staticmethod
    def _only(opens: tuple[int, ...] | None) -> list[int] | None:
        return None if opens is None else list(opens)

    def leading_of(self, step: Step) -> ast.Node | None:
        """What the step writes first, as a prefix language (None: nothing can be proved)."""
        if step.text:
            return None
        if isinstance(step, End):
            if not self.markers:
                return None
            expr = self.end_expr(False, False)
            return leading(expr) if expr is not None else None
        item = self.auto.positions[step.position].item
        if isinstance(item, turns.Literal):
            return leading(self.outside_text(item.text, False, False))
        head = self.head(item.name, False, False, step.opens)
        return None if head is None else leading(head, self.helpers)

    # ------------------------------------------------------------ text before

    def with_text_before(self, expr: Expr, own: ast.Node | None, inside: bool = False,
                         also: tuple[ast.Node, ...] = ()) -> Expr:
        """``expr`` preceded by optional text, read as the parser reads it: the text runs to
        the first place a watched delimiter matches, and that is where ``expr`` begins.
        ``own`` is the delimiter ``expr`` writes; the others watched here may not match in
        the text at all (inside a region: the end-of-turn markers, and ``also``)."""
        others: tuple[ast.Node, ...] = self._markers_out() + also if inside else tuple(
            tree.root for _, tree in self.outside if tree.root is not own) + self.heads + (
            self._markers_out())
        owns = (own,) if own is not None else ()
        return self._prefix_text(expr, owns, others)

    def _prefix_text(self, expr: Expr, own: tuple[ast.Node, ...],
                     others: tuple[ast.Node, ...]) -> Expr:
        items = list(expr.items) if isinstance(expr, Seq) else [expr]
        if not items:
            return opt(FreeText(others + own, 1, self._limit()))
        first = items[0]
        rest = items[1:]
        if isinstance(first, (Lit, Rx)):
            # The text ends where the delimiter's first match begins. "No match of it ends
            # before here" says so only for the delimiter's core: a trailing optional part
            # (the \s* of "</think>\s*") has shorter matches that end earlier. So the core
            # ends the text and the tail follows, and only the delimiter does: what comes
            # after it in the same terminal stays outside the and-not.
            end = rx.literal(first.text) if isinstance(first, Lit) else first.node
            cores = tuple(_core(rx.for_avoiding(n)) for n in own)
            options = []
            for alternative in rx.alternatives(end):
                core, tail = _split_tail(alternative)
                text_name = (f"{first.name}_text" if inside_region(first.name) else
                             f"{self.template.implicit or 'text'}_then_{first.name}")
                options.append(seq(UpTo(core, own=cores, others=others, max_len=self._limit(),
                                        name=text_name),
                                   Rx(tail) if rx.literal_text(tail) is None else
                                   Lit(rx.literal_text(tail) or ""), *rest))
            return alt(*options) or EMPTY
        if isinstance(first, Alt):
            options = [self._prefix_text(seq(o, *rest), own, others) for o in first.options]
            return alt(*options) or EMPTY
        if isinstance(first, Rep) and first.min == 0 and first.max == 1:
            return alt(self._prefix_text(seq(first.item, *rest), own, others),
                       self._prefix_text(seq(*rest), own, others)) or EMPTY
        if isinstance(first, Seq):
            return self._prefix_text(seq(*first.items, *rest), own, others)
        # A special token (or a structure) comes first: the text stops before it.
        return seq(opt(FreeText(others + own, 1, self._limit())), expr)

    def _outside_nodes(self) -> tuple[ast.Node, ...]:
        return tuple(tree.root for _, tree in self.outside) + self.heads + self._markers_out()

    def _markers_out(self) -> tuple[ast.Node, ...]:
        """The end-of-turn markers, kept out of every text: a family never writes its marker
        inside a text (Kimi K3's reasoning once held <|end_of_msg|>, read as text by the
        parser, but the turn's end for everything else)."""
        return tuple(rx.literal(m) for m in self.markers)

    # ------------------------------------------------------------------ bits

    def delimiter_expr(self, node: ast.Node) -> Expr:
        return to_expr(node, self.special)

    def _bound(self, node: ast.Node) -> ast.Node:
        if self.bounds is None:
            return node
        return rx.bounded(node, self.bounds.max_text, _GEN_WHITESPACE)

    def _limit(self) -> int | None:
        return self.bounds.max_text if self.bounds else None

    def _pad(self) -> Expr:
        if self.bounds is not None:
            return Rx(rx.repeat(ast.Chars(_GEN_WHITESPACE), 0, 2))
        return Rx(rx.repeat(ast.Chars(_JSON_WS), 0, None))


def inside_region(name: str | None) -> bool:
    """Whether a terminal named ``name`` ends a region's own text (its close)."""
    return bool(name) and name.endswith("_close")  # type: ignore[union-attr]


def _split_tail(node: ast.Node) -> tuple[ast.Node, ast.Node]:
    """(core, tail): ``node`` without, and its trailing items that can match nothing."""
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    cut = len(items)
    while cut > 1 and rx.nullable(items[cut - 1]):
        cut -= 1
    return rx.concat(items[:cut]), rx.concat(items[cut:])


def _ends_with_literal(node: ast.Node, text: str) -> bool:
    """Whether every match of ``node`` ends with ``text`` (a close
    ``</function>\\s*<|im_end|>``, Qwen3-Coder's once, ends the turn: the parser reads on
    after it, the family does not)."""
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    tail = ""
    for item in reversed(items):
        char = rx.literal_text(item) if isinstance(item, ast.Chars) else None
        if not char:
            break
        tail = char + tail
        if tail.endswith(text):
            return True
    return tail.endswith(text)


def _ends_with_lookahead(node: ast.Node) -> bool:
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    return bool(items) and isinstance(items[-1], ast.Lookahead) and not items[-1].negative


def _only_lookahead(node: ast.Node) -> bool:
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    return len(items) == 1 and isinstance(items[0], ast.Lookahead)


def _without_space_before_lookahead(node: ast.Node) -> ast.Node:
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    if len(items) >= 2:
        before = items[-2]
        if isinstance(before, ast.Repeat) and before.min == 0 and isinstance(
                before.item, ast.Chars) and all(chr(c).isspace() for lo, hi in
                                                before.item.chars.ranges
                                                for c in range(lo, hi + 1)):
            return rx.concat(items[:-2] + items[-1:])
    return node


def _extends(node: ast.Node, looking: ast.Node) -> bool:
    """Whether ``node`` begins with the items of ``looking`` before its lookahead, and has
    more."""
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    start = list(looking.items)[:-1] if isinstance(looking, ast.Concat) else []
    return bool(start) and len(items) > len(start) and items[:len(start)] == start


def _heads(outside: list[tuple[str, DelimiterTree]]) -> tuple[ast.Node, ...]:
    """What comes before a captured name in the delimiters watched outside regions
    (Qwen3-Coder's ``\\s*<function=``). Text keeps them out too: a match of the whole
    delimiter may begin in the text and run on past what the grammar writes next
    (``<function=x`` then ``<tool_call>\\n<function=o9>\\n`` read as a call to
    ``x<tool_call``)."""
    out: list[ast.Node] = []
    for _owner, tree in outside:
        for alternative in tree.alternatives:
            items = list(alternative.items) if isinstance(alternative, ast.Concat) else [
                alternative]
            at = next((i for i, item in enumerate(items)
                       if isinstance(item, ast.Group) and item.name is not None), None)
            if at is None:
                continue
            head = rx.concat(items[:at])
            if rx.nullable(head) or rx.has_assertion(head):
                continue
            node = rx.for_avoiding(head)
            if node not in out:
                out.append(node)
    return tuple(out)


def _core(node: ast.Node) -> ast.Node:
    return rx.alternation(_split_tail(a)[0] for a in rx.alternatives(node)) or node


def _ends_with_fixed_char(node: ast.Node) -> bool:
    """Whether every match of the delimiter ends with a fixed character (no repeat, class
    or group that could take more text): whitespace after it is then the body's."""
    for alternative in rx.alternatives(node):
        items = list(alternative.items) if isinstance(alternative, ast.Concat) else [alternative]
        while items and isinstance(items[-1], (ast.Lookahead, ast.Assertion)):
            items.pop()
        if not items or rx.literal_text(items[-1]) is None or isinstance(items[-1], ast.Group):
            return False
    return True


__all__ = ["Builder", "ExportError", "ExportOptions", "Special"]
