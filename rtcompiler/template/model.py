"""The validated template: what the later compiler stages read.

:func:`rtcompiler.template.load_template` builds these from a response-template
spec. They hold no compiled regexes: a delimiter is kept as the regex source our
dialect parses (``Delimiter.regex_source``), and the spec itself is kept verbatim in
``Template.raw`` so that a generated parser can name the exact template it came from
(``Template.sha256``).

>>> d = Delimiter.from_literals(["<tool_call>", "<tool", "<tool_call>"])
>>> d.literals, d.can_extend
(('<tool_call>', '<tool'), True)
>>> d.regex_source
'<tool_call>|<tool'
>>> Delimiter.from_pattern(r"<\\|channel\\|>(?P<ch>\\w+)").group_names
('ch',)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import regex


@dataclass(frozen=True)
class Delimiter:
    """How a region opens or closes, or where the assistant turn starts.

    Exactly one of the two forms is set:

    * ``literals``: fixed strings, any of which matches. They are in the order the
      reference tries them: duplicates dropped (first one kept), then longest first,
      ties in the order written, so that an alternation prefers the longer literal.
      ``can_extend`` is true when one literal is a strict prefix of another: a match
      of the shorter one at the end of the buffer may still grow into the longer.
    * ``pattern``: a regex in rtcompiler's dialect, with the names of its named groups
      (in order of first appearance) in ``group_names``.
    """

    literals: tuple[str, ...] | None = None
    can_extend: bool = False
    pattern: str | None = None
    group_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Guard the invariant here so that no later stage has to guess which form it has.
        if (self.literals is None) == (self.pattern is None):
            raise ValueError("a Delimiter has either literals or a pattern, not both or neither")
        if self.literals is not None:
            if not self.literals or any(not s for s in self.literals):
                raise ValueError("Delimiter literals must be non-empty strings, at least one")
            if self.group_names:
                raise ValueError("literal Delimiters capture no groups")

    @classmethod
    def from_literals(cls, literals: Iterable[str]) -> Delimiter:
        """Build a literal delimiter from the strings as written in the template."""
        unique = list(dict.fromkeys(literals))
        # sorted() is stable, so literals of equal length stay in written order.
        ordered = tuple(sorted(unique, key=len, reverse=True))
        # A literal that begins another begins the one that follows it in sorted order
        # (everything sorted between the two begins with it too): no pair is compared.
        lexical = sorted(unique)
        extends = any(b.startswith(a) for a, b in zip(lexical, lexical[1:], strict=False))
        return cls(literals=ordered, can_extend=extends)

    @classmethod
    def from_pattern(cls, pattern: str) -> Delimiter:
        """Build a regex delimiter; the pattern must already be known to be valid."""
        compiled = regex.compile(pattern, regex.DOTALL)
        names = sorted(compiled.groupindex, key=compiled.groupindex.__getitem__)
        return cls(pattern=pattern, group_names=tuple(names))

    @property
    def is_literal(self) -> bool:
        return self.literals is not None

    @property
    def regex_source(self) -> str:
        """One regex (dialect syntax) that matches exactly this delimiter."""
        if self.literals is None:
            assert self.pattern is not None
            return self.pattern
        # regex.escape only backslashes non-alphanumerics, which the dialect reads as
        # plain characters; the order of the alternatives is the matching order.
        return "|".join(regex.escape(s) for s in self.literals)


@dataclass(frozen=True)
class ValueDelimiters:
    """``close_outside_strings`` for a body whose values are raw text between literal
    delimiters (XML tool calls): a value begins after one of ``opens`` and ends at one
    of ``closes`` (docs/extensions.md)."""

    opens: tuple[str, ...]
    closes: tuple[str, ...]


@dataclass(frozen=True)
class Field:
    """One field of the output message and the region of text that fills it.

    ``open`` is ``None`` for the implicit field (text outside every other region goes
    there); ``close`` is ``None`` when the region runs to the end of the output.

    ``repeats`` and ``optional`` are stored as truth values: the reference accepts any
    JSON value for them and only ever tests it for truth. ``content_args`` is likewise
    kept exactly as written, unchecked, because the reference does not check it when
    loading (a wrong value only fails once a region of this field is parsed).
    """

    name: str
    open: Delimiter | None
    close: Delimiter | None
    content: str = "text"
    content_args: Any = dataclasses.field(default_factory=dict)
    repeats: bool = False
    join: str | None = None
    optional: bool = True
    transform: Any = None
    transform_each: bool = False
    # Robustness extensions (docs/extensions.md): keep a failed or unfinished region's
    # text as text of the implicit field (True) or of the field named; count the close
    # only outside the body's strings (True: JSON's; or the delimiters of its values).
    recover: bool | str = False
    close_outside_strings: bool | ValueDelimiters = False
    # The yield extension: the fields whose regions may open inside this one's, and the
    # separator its pieces' values are joined with.
    yields: tuple[str, ...] = ()
    yield_join: str = ""
    # The json-end extension: a failed region ends where its JSON value ends (True, or
    # the literal after the value that belongs to the region); the text after is text.
    json_end: bool | str = False
    # ``recover``'s option for xml-inline: text the tags do not read is a failure.
    tags_only: bool = False
    # With it, the tag pattern that reads such a body again before it is given up.
    recover_tag_pattern: str | None = None
    # The extend extension: a later region's list (transform_each) is added to the
    # earlier ones' instead of replacing them.
    extend: bool = False
    # The string-arguments extension: a call's arguments written as a JSON string holding
    # an object are that object.
    string_arguments: bool = False

    @property
    def is_implicit(self) -> bool:
        return self.open is None

    @property
    def capture_names(self) -> tuple[str, ...]:
        """Named groups of the open then close pattern, each once; a transform sees them."""
        names: dict[str, None] = {}
        for delimiter in (self.open, self.close):
            if delimiter is not None:
                names.update(dict.fromkeys(delimiter.group_names))
        return tuple(names)


@dataclass(frozen=True)
class Template:
    """A validated response template.

    ``fields`` are in declaration order (which is also the order in which the
    reference tries their open delimiters). ``implicit`` names the field without an
    ``open``, if any. ``raw`` is a private deep copy of the spec as given.
    ``extensions`` names the rtcompiler extensions the template declares (sorted);
    a template that declares any is not loadable by transformers.
    """

    defaults: dict[str, Any]
    fields: tuple[Field, ...]
    implicit: str | None
    start_anchor: Delimiter
    raw: dict[str, Any]
    extensions: tuple[str, ...] = ()

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def canonical_json(self) -> str:
        """The spec as canonical JSON: sorted keys, no spaces, non-ASCII kept as is."""
        return json.dumps(self.raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of :attr:`canonical_json` (UTF-8): the template's identity."""
        # surrogatepass: a JSON file may spell a lone surrogate ("\ud800"), which is still data.
        data = self.canonical_json.encode("utf-8", "surrogatepass")
        return hashlib.sha256(data).hexdigest()
