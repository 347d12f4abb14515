"""Stage 1: the delimiter regex dialect -- syntax tree, parser, character sets.

>>> from rtcompiler.dialect import parse_pattern
>>> parse_pattern("a|b").root  # doctest: +NORMALIZE_WHITESPACE
Alternation(alternatives=(Chars(chars=CharSet(ranges=((97, 97),))),
                          Chars(chars=CharSet(ranges=((98, 98),)))))
"""

from .ast import Pattern
from .charsets import CharSet
from .errors import PatternError
from .parser import parse_pattern, read_pattern

__all__ = ["CharSet", "Pattern", "PatternError", "parse_pattern", "read_pattern"]
