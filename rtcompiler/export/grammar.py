"""The exported grammar, form-neutral, and its two writers (lark, llguidance).

A grammar is a set of named rules over a small expression language. Its leaves are either
*lexical* -- literal text, a regex (a dialect syntax tree), "text up to a delimiter",
free text, a guarded repetition -- or *syntactic* -- a special-token reference, a ``%json``
schema, a rule reference. The writers fuse every run of consecutive lexical leaves into
one terminal: llguidance's lexer is greedy and never backtracks, so "text then delimiter"
must be a single lexeme, never a text terminal followed by a delimiter terminal.

The two writers differ only where the forms do:

- "no delimiter inside this text": lark says it with a negative lookahead before every
  character, llguidance with and-not (``/…/ & ~/…/``), which is its only way;
- lark refuses a terminal that can match the empty string, so a nullable run is written
  ``T?`` with ``T`` its non-empty part;
- special tokens (``<|im_end|>``) and ``%json`` exist in llguidance only; the builder
  never gives them to the lark writer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..dialect import ast
from ..dialect.charsets import ANY, CharSet
from . import regex as rx

# ------------------------------------------------------------------- lexical leaves


@dataclass(frozen=True)
class Lit:
    """Exactly this text."""

    text: str
    name: str | None = field(default=None, compare=False)  # the terminal's name, if first


@dataclass(frozen=True)
class Rx:
    """A regex (assertions only in the lark form)."""

    node: ast.Node
    name: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class UpTo:
    """Text, then ``end``, read as a parser reads it: the text runs to the first place
    where a delimiter the parser watches matches.

    ``own`` are the delimiters (``end``'s own, usually) that may match only so as to end
    where this terminal ends; ``others`` may not match anywhere in it. ``chars`` narrows
    the text's characters, ``max_len`` bounds it (for generation grammars).
    """

    end: ast.Node
    own: tuple[ast.Node, ...] = ()
    others: tuple[ast.Node, ...] = ()
    max_len: int | None = None
    chars: CharSet | None = None
    name: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class FreeText:
    """Text in which no delimiter of ``others`` matches (what follows is no text the lexer
    could run into: a special token, or the end)."""

    others: tuple[ast.Node, ...] = ()
    min_len: int = 1
    max_len: int | None = None
    chars: CharSet | None = None
    name: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Guarded:
    """``item`` repeated, no literal of ``avoid`` anywhere in the repetition (a string
    body that may not contain the delimiter that would close its region)."""

    item: ast.Node
    avoid: tuple[str, ...] = ()
    min: int = 0
    max: int | None = None
    name: str | None = field(default=None, compare=False)


Lexical = Lit | Rx | UpTo | FreeText | Guarded
LEXICAL = (Lit, Rx, UpTo, FreeText, Guarded)

# ----------------------------------------------------------------- syntactic nodes


@dataclass(frozen=True)
class Special:
    """A special token of the target tokenizer, by its text (and id, for tokens whose text
    is not ``<…>``-shaped)."""

    text: str
    id: int | None = None


@dataclass(frozen=True)
class Json:
    """A JSON value following ``schema`` (llguidance's ``%json``), the schema kept as
    canonical JSON text."""

    schema: str
    name: str | None = field(default=None, compare=False)  # of the rule that holds it

    @staticmethod
    def of(schema: dict, name: str | None = None) -> Json:
        return Json(json.dumps(schema, ensure_ascii=False, separators=(",", ":")), name)


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Expr, ...]


@dataclass(frozen=True)
class Rep:
    item: Expr
    min: int
    max: int | None


Expr = Lit | Rx | UpTo | FreeText | Guarded | Special | Json | Ref | Seq | Alt | Rep
EMPTY = Seq(())


def seq(*items: Expr) -> Expr:
    flat: list[Expr] = []
    for item in items:
        if isinstance(item, Seq):
            flat.extend(item.items)
        elif not (isinstance(item, Lit) and not item.text):
            flat.append(item)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*options: Expr) -> Expr | None:
    """Options in order, duplicates dropped; ``None`` when there is none."""
    flat: list[Expr] = []
    for option in options:
        for o in option.options if isinstance(option, Alt) else (option,):
            if o not in flat:
                flat.append(o)
    if not flat:
        return None
    return flat[0] if len(flat) == 1 else Alt(tuple(flat))


def opt(item: Expr) -> Expr:
    return Rep(item, 0, 1)


def named(expr: Expr, name: str) -> Expr:
    """``expr`` with its first lexical leaf named (the terminal it starts gets the name)."""
    import dataclasses

    if isinstance(expr, LEXICAL):
        return dataclasses.replace(expr, name=expr.name or name)
    if isinstance(expr, Seq) and expr.items:
        return Seq((named(expr.items[0], name),) + expr.items[1:])
    if isinstance(expr, Alt):
        return Alt(tuple(named(o, name) for o in expr.options))
    return expr


@dataclass
class Grammar:
    """Rules in writing order, the first being ``start``; ``notes`` are the approximations
    made (each becomes a comment, and a line on stderr); ``header`` describes the export."""

    rules: dict[str, Expr] = field(default_factory=dict)
    header: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


# ------------------------------------------------------------------------- writers


def write(grammar: Grammar, flavour: str) -> str:
    """The grammar in ``flavour`` (``"lark"`` or ``"llguidance"``) syntax."""
    return _Writer(flavour).write(grammar)


class _Writer:
    def __init__(self, flavour: str) -> None:
        self.flavour = flavour
        self.regex = rx.RegexWriter(flavour)
        self.terminals: dict[tuple, str] = {}
        self.definitions: list[str] = []
        self.used_names: set[str] = set()
        self.json_rules: dict[str, str] = {}  # schema -> the rule that holds it
        self.rule_names: set[str] = set()
        self.extra_rules: list[str] = []
        self.helpers: dict[str, str] = {}  # body -> the rule that holds it (lark form)

    def write(self, grammar: Grammar) -> str:
        lines = [f"// {line}" for line in grammar.header]
        lines += [f"// approximation: {note}" for note in grammar.notes]
        rules = []
        self.rule_names = set(grammar.rules)
        for name, expr in grammar.rules.items():
            self.rule = name
            rules.append(f"{name}: {self.expr(expr, top=True)}")
        return "\n".join(lines + [""] + rules + self.extra_rules + [""] + self.definitions) + "\n"

    # -- rules

    def expr(self, e: Expr, top: bool = False) -> str:
        if isinstance(e, LEXICAL):
            return self.terminal((e,))
        if isinstance(e, Seq):
            if not e.items:
                return "\"\"" if self.flavour == "llguidance" else ""
            distributed = _distribute(e.items)
            if distributed is not None:
                return self.expr(distributed, top)
            parts: list[str] = []
            run: list[Lexical] = []
            for item in e.items:
                if isinstance(item, LEXICAL):
                    run.append(item)
                    continue
                if run:
                    parts.append(self.terminal(tuple(run)))
                    run = []
                parts.append(self.expr(item))
            if run:
                parts.append(self.terminal(tuple(run)))
            return " ".join(p for p in parts if p)
        if isinstance(e, Alt):
            empty = [o for o in e.options if o == EMPTY]
            options = [o for o in e.options if o != EMPTY]
            body = " | ".join(self.expr(o, top=True) for o in options)
            if self.flavour == "lark" and len(options) > 1 and (empty or not top):
                # Lark's Earley analysis expands every inline group into its rule's
                # alternatives: nested groups multiply (a bounded call list made 24,000
                # expansions and 100 s of loading). A rule of its own keeps them apart.
                body = self.helper(body)
            if empty:
                return f"{body}?" if _is_atom(body) else f"({body})?"
            return body if top else f"({body})"
        if isinstance(e, Rep):
            inner = self.expr(e.item)
            if not _is_atom(inner):
                inner = f"({inner})"
            if (e.min, e.max) == (0, 1):
                return f"{inner}?"
            if (e.min, e.max) == (0, None):
                return f"{inner}*"
            if (e.min, e.max) == (1, None):
                return f"{inner}+"
            if e.max is None:
                return f"({inner} ~ {e.min}) {inner}*"
            if e.min == e.max:
                return f"({inner} ~ {e.min})"
            return f"({inner} ~ {e.min}..{e.max})"
        if isinstance(e, Ref):
            return e.name
        if isinstance(e, Special):
            if self.flavour != "llguidance":
                raise ValueError("special tokens exist in the llguidance form only")
            return e.text if e.id is None else f"<[{e.id}]>"
        if isinstance(e, Json):
            if self.flavour != "llguidance":
                raise ValueError("%json exists in the llguidance form only")
            # A schema gets a rule of its own, written once however often it is used.
            name = self.json_rules.get(e.schema)
            if name is None:
                base = re.sub(r"[^a-z0-9_]", "_", (e.name or "json").lower())
                name, n = base, 1
                while name in self.rule_names:
                    n += 1
                    name = f"{base}_{n}"
                self.rule_names.add(name)
                self.json_rules[e.schema] = name
                self.extra_rules.append(f"{name}: %json {e.schema}")
            return name
        raise TypeError(e)

    def helper(self, body: str) -> str:
        """A rule that holds ``body``, written once however often it is used."""
        name = self.helpers.get(body)
        if name is None:
            name, n = f"{self.rule}_group", 1
            while name in self.rule_names:
                n += 1
                name = f"{self.rule}_group_{n}"
            self.rule_names.add(name)
            self.helpers[body] = name
            self.extra_rules.append(f"{name}: {body}")
        return name

    # -- terminals

    def terminal(self, run: tuple[Lexical, ...]) -> str:
        hint = next((p.name for p in run if p.name), None)
        if self.flavour == "lark":
            node = rx.concat(self.lark_node(part) for part in run)
            if rx.nullable(node):
                nonempty = rx.non_empty(node)
                if nonempty is None:
                    return ""
                name = self.named(("lark", nonempty),
                                  lambda: self.lark_terminal(nonempty, run), hint)
                return name + "?"
            return self.named(("lark", node), lambda: self.lark_terminal(node, run), hint)
        return self.named(("llg",) + run, lambda: " ".join(self.llg_part(p) for p in run), hint)

    def named(self, key: tuple, body, hint: str | None = None) -> str:
        name = self.terminals.get(key)
        if name is None:
            base = re.sub(r"[^A-Z0-9_]", "_", (hint or self.rule).upper()) or "T"
            n = 1
            name = base
            while name in self.used_names:
                n += 1
                name = f"{base}_{n}"
            self.used_names.add(name)
            self.terminals[key] = name
            self.definitions.append(f"{name}: {body()}")
        return name

    # lark: every part as one regex tree

    def lark_terminal(self, node: ast.Node, run: tuple[Lexical, ...]) -> str:
        text = rx.literal_text(node)
        if text:
            return _string(text)
        return self.slashed(self.regex.write(node))

    def lark_node(self, part: Lexical) -> ast.Node:
        if isinstance(part, Lit):
            return rx.literal(part.text)
        if isinstance(part, Rx):
            return part.node
        if isinstance(part, UpTo):
            watched = [n for n in part.own + part.others]
            char = ast.Chars(part.chars or ANY)
            step = rx.concat([_not_ahead(watched), char]) if watched else char
            # Where the end begins, another delimiter may match too: the parser takes the
            # longest match there, the end's.
            body = [rx.repeat(step, 0, part.max_len), part.end]
            return rx.concat(body)
        if isinstance(part, FreeText):
            char = ast.Chars(part.chars or ANY)
            step = rx.concat([_not_ahead([n for n in part.others]), char]) \
                if part.others else char
            return rx.repeat(step, part.min_len, part.max_len)
        if isinstance(part, Guarded):
            step = part.item
            if part.avoid:
                step = rx.concat([_not_ahead([rx.literal(a) for a in part.avoid]), part.item])
            return rx.repeat(step, part.min, part.max)
        raise TypeError(part)

    # llguidance: strings, regexes and and-not groups side by side

    def llg_part(self, part: Lexical) -> str:
        if isinstance(part, Lit):
            return _string(part.text)
        if isinstance(part, Rx):
            return self.slashed(self.regex.write(part.node))
        if isinstance(part, UpTo):
            text = rx.repeat(ast.Chars(part.chars or ANY), 0, part.max_len)
            if part.others:
                # The other delimiters may not match in the text; where the end begins one
                # may (an implicit close "<tool_call>" where the calls open): the parser
                # takes the longest match there, the end's.
                others = _contained(part.others)
                head = (f"({self.slashed(self.regex.write(text))} & ~"
                        + self.slashed(f"(?s:.*)(?:{self.regex.write(others)})(?s:.*)") + ")")
                pieces = [f"({head} {self.slashed(self.regex.write(part.end))})"]
            else:
                pieces = [self.slashed(self.regex.write(rx.concat([text, part.end])))]
            if part.own:
                # No match of the delimiter may start in the text: none may stop before
                # the end. "Followed by anything" would also forbid the end's own match
                # where its greedy tail is longer than one character (glm45's
                # "<tool_call>\s*[^\s<]+" then a tool's name): then nothing matches at all.
                owns = [rx.for_avoiding(n) for n in part.own]
                ends = [rx.stopped(n) for n in owns]
                if all(e is not None for e in ends):
                    own = rx.alternation(ends)
                    pieces.append("~" + self.slashed(
                        f"(?s:.*)(?:{self.regex.write(own)})(?s:.*)"))
                else:
                    own = rx.alternation(owns)
                    pieces.append("~" + self.slashed(
                        f"(?s:.*)(?:{self.regex.write(own)})(?s:.+)"))
            return "(" + " & ".join(pieces) + ")" if len(pieces) > 1 else pieces[0]
        if isinstance(part, FreeText):
            text = rx.repeat(ast.Chars(part.chars or ANY), part.min_len, part.max_len)
            pieces = [self.slashed(self.regex.write(text))]
            if part.others:
                others = _contained(part.others)
                pieces.append("~" + self.slashed(f"(?s:.*)(?:{self.regex.write(others)})(?s:.*)"))
            return "(" + " & ".join(pieces) + ")" if len(pieces) > 1 else pieces[0]
        if isinstance(part, Guarded):
            body = self.slashed(self.regex.write(rx.repeat(part.item, part.min, part.max)))
            if not part.avoid:
                return body
            avoid = "|".join(rx.escape_literal(a) for a in part.avoid)
            return f"({body} & ~" + self.slashed(f"(?s:.*)(?:{avoid})(?s:.*)") + ")"
        raise TypeError(part)

    @staticmethod
    def slashed(source: str) -> str:
        # The regex writer escapes every "/" (as "\\/"), so the source cannot end the
        # /…/ literal early.
        return f"/{source}/"


def _distribute(items: tuple[Expr, ...]) -> Expr | None:
    """``A (B | C) D`` as ``A (B D | C D)`` when B or C ends with free text and D is
    lexical: free text must share its terminal with what ends it, or a greedy lexer runs
    the text over it."""
    for i, item in enumerate(items[:-1]):
        if isinstance(items[i + 1], LEXICAL) and _ends_free(item):
            if isinstance(item, Alt):
                options = item.options
            elif isinstance(item, Rep) and (item.min, item.max) == (0, 1):
                options = (item.item, EMPTY)
            else:
                continue
            rest = items[i + 1:]
            merged = alt(*[seq(o, *rest) for o in options])
            assert merged is not None
            return seq(*items[:i], merged)
    return None


def _ends_free(e: Expr) -> bool:
    if isinstance(e, FreeText):
        return True
    if isinstance(e, Seq):
        return bool(e.items) and _ends_free(e.items[-1])
    if isinstance(e, Alt):
        return any(_ends_free(o) for o in e.options)
    if isinstance(e, Rep) and (e.min, e.max) == (0, 1):
        return _ends_free(e.item)
    return False


def _not_ahead(nodes: list[ast.Node]) -> ast.Node:
    return ast.Lookahead(rx.alternation(nodes), negative=True)


def _is_atom(text: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|\(.*\)|<[^ ]*>", text) is not None


def _string(text: str) -> str:
    out = []
    for c in text:
        cp = ord(c)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif cp < 0x20 or cp == 0x7F or 0xD800 <= cp <= 0xDFFF:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _contained(nodes: tuple[ast.Node, ...]) -> ast.Node:
    """What ``(?s:.*)(?:X)(?s:.*)`` needs of the delimiters ``nodes`` to hold the same texts:
    each alternative without the optional items at its ends, which the ``.*`` beside them
    cover, and none that begins with another that is a plain literal (Qwen3-Coder's
    ``\\s*<function=[^>\\n]+>\\n`` beside ``<function=``). llguidance builds the derivatives
    of the and-not as it masks tokens; with the redundant alternative under a bounded text's
    counter they outgrew its limit ("too many expressions constructed") after
    ``<tool_call>\\n<function``, and the only token left was the end of turn."""
    out: list[ast.Node] = []
    for node in nodes:
        for alternative in rx.alternatives(rx.for_avoiding(node)):
            items = list(alternative.items) if isinstance(alternative, ast.Concat) else [
                alternative]
            while len(items) > 1 and rx.nullable(items[0]):
                items.pop(0)
            while len(items) > 1 and rx.nullable(items[-1]):
                items.pop()
            out.append(rx.concat(items))
    literals = {text for text in map(rx.literal_text, out) if text}
    kept = [node for node in out if rx.literal_text(node) in literals or not any(
        _literal_prefix(node).startswith(text) for text in literals)]
    return rx.alternation(dict.fromkeys(kept)) or rx.EMPTY


def _literal_prefix(node: ast.Node) -> str:
    items = list(node.items) if isinstance(node, ast.Concat) else [node]
    prefix = ""
    for item in items:
        text = rx.literal_text(item)
        if text is None:
            break
        prefix += text
    return prefix

