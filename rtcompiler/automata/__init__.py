"""Stage 2: automata for the delimiter dialect.

A pattern's life here: source -> :func:`rtcompiler.dialect.parse_pattern` (syntax
tree) -> :func:`compile_nfa` (Thompson NFA with priorities) -> :class:`Dfa` (lazily
determinised, leftmost-first, stepped one character class at a time) ->
:class:`Regex`, which answers exactly what ``regex.compile(p, regex.DOTALL)``
answers for ``.search(s, pos)`` and ``.search(s, pos, partial=True)``.

>>> rx = compile_regex(r"\\s*<tool_call>")
>>> rx.search("hi  <tool_call>").span()
(2, 15)
>>> m = rx.search("hi  <tool", partial=True)
>>> m.span(), m.partial
((2, 9), True)
"""

from .dfa import Dfa
from .nfa import Nfa, compile_nfa
from .search import Match, Regex, Scanner, TagPattern, compile_regex, compile_tag_pattern

__all__ = [
    "Dfa", "Match", "Nfa", "Regex", "Scanner", "TagPattern", "compile_nfa", "compile_regex",
    "compile_tag_pattern",
]
