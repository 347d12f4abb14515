"""Near-JSON read leniently: what ``recover`` tries on a body its field's parser refused.

Standard library only (the ``lenient`` section, in a generated module whose template
recovers a field with a string delimiter of its own; docs/extensions.md, ``recover``).
"""

from __future__ import annotations

###{standalone lenient
import json as _json
import re as _re

# The run of whitespace from a position.
_SPACE_RUN = _re.compile(r"\s*")
# A bare key, and a bare value (up to what ends one), of LenientReader.
_BARE_KEY = _re.compile(r"[^\s:=,{}\[\]\"']+")
_BARE_VALUE = _re.compile(r"[^,}\]]*")
# What begins the next member of an object, after a comma.
_NEXT_KEY = _re.compile(r",\s*[^\s:=,{}\[\]\"']+\s*[:=]")
# Containers nested deeper than this are refused (the reader recurses).
_LENIENT_DEPTH = 100


class LenientReader:
    """Near-JSON with one string delimiter (Gemma 4's ``<|"|>``), as models write it,
    read into a value; ValueError when it is not. Tried only on a body the field's own
    parser refused (docs/extensions.md, recover):

    - strings between the delimiter, JSON's ``"..."`` (escapes and all) or ``'...'``;
    - bare keys, and ``=`` as well as ``:`` between a key and its value;
    - a bare value that a lone delimiter ends (``{query:Paris, France<|"|>}``): the text
      up to it, when the delimiter is followed by what ends a value (``,``, ``}``, ``]``
      or the end), is a string, unless it crosses what begins the next member (in an
      object, a comma then a key and ``:`` or ``=``; elsewhere, a comma);
    - any other bare value must be a JSON number, ``true``, ``false`` or ``null``.

    Linear: each character is read once, and the next delimiter is looked for once
    past each one found (``ahead``).
    """

    __slots__ = ("text", "delimiter", "at", "ahead", "searched")

    def __init__(self, text, delimiter) -> None:
        self.text = text
        self.delimiter = delimiter
        self.at = 0
        self.ahead = -1  # where the next delimiter at or after ``at`` is (-2: none)
        self.searched = 0  # characters the searches for it went through (for the tests)

    def read(self):
        value = self.value(0, False)
        if self.skip() < len(self.text):
            raise ValueError("lenient: text after the value")
        return value

    def skip(self):
        self.at = _SPACE_RUN.match(self.text, self.at).end()
        return self.at

    def next_delimiter(self):
        if self.ahead == -2 or self.at <= self.ahead:
            return self.ahead
        self.ahead = self.text.find(self.delimiter, self.at)
        self.searched += (len(self.text) if self.ahead < 0 else self.ahead) - self.at
        if self.ahead < 0:
            self.ahead = -2
        return self.ahead

    def value(self, depth, in_object):
        if depth > _LENIENT_DEPTH:
            raise ValueError("lenient: nested too deeply")
        text, at = self.text, self.skip()
        if at >= len(text):
            raise ValueError("lenient: a value is missing")
        c = text[at]
        if c == "{" or c == "[":
            return self.container(c, depth)
        string = self.string()
        if string is not None:
            return string
        d = self.next_delimiter()
        if d >= 0:
            # A bare run up to a lone closing delimiter is a string. (The searches for a
            # next member stop at the first comma that begins one, after this value.)
            after = _SPACE_RUN.match(text, d + len(self.delimiter)).end()
            if (after == len(text) or text[after] in ",}]") and (
                _NEXT_KEY.search(text, at, d) is None if in_object
                else text.find(",", at, d) < 0
            ):
                self.at = d + len(self.delimiter)
                return text[at:d]
        end = _BARE_VALUE.match(text, at).end()
        self.at = end
        token = text[at:end].strip()
        if token in ("true", "false", "null") or token[:1] in "-0123456789" and token:
            return _json.loads(token)
        raise ValueError(f"lenient: a bare value {token!r}")

    def string(self):
        """A quoted or delimited string at ``at`` (its text), or None."""
        text, at = self.text, self.at
        if text.startswith(self.delimiter, at):
            start = at + len(self.delimiter)
            end = text.find(self.delimiter, start)
            if end < 0:
                raise ValueError("lenient: an unfinished string")
            self.at = end + len(self.delimiter)
            return text[start:end]
        if text[at] == '"':
            value, self.at = _json.decoder.scanstring(text, at + 1)
            return value
        if text[at] == "'":
            out, i = [], at + 1
            while True:
                j = text.find("'", i)
                if j < 0:
                    raise ValueError("lenient: an unfinished string")
                k = j
                while k > i and text[k - 1] == "\\":
                    k -= 1
                if (j - k) % 2 == 0:
                    out.append(text[i:j])
                    self.at = j + 1
                    return "".join(out).replace("\\'", "'")
                out.append(text[i : j + 1])
                i = j + 1
        return None

    def container(self, opening, depth):
        text = self.text
        self.at += 1
        closing = "}" if opening == "{" else "]"
        out = {} if opening == "{" else []
        if self.skip() < len(text) and text[self.at] == closing:
            self.at += 1
            return out
        while True:
            if opening == "{":
                self.skip()
                key = self.string() if self.at < len(text) else None
                if key is None:
                    found = _BARE_KEY.match(text, self.at)
                    if found is None:
                        raise ValueError("lenient: a key is missing")
                    key, self.at = found.group(), found.end()
                if self.skip() >= len(text) or text[self.at] not in ":=":
                    raise ValueError("lenient: ':' is missing after a key")
                self.at += 1
                out[key] = self.value(depth + 1, True)
            else:
                out.append(self.value(depth + 1, False))
            if self.skip() >= len(text):
                raise ValueError(f"lenient: {closing!r} is missing")
            c = text[self.at]
            self.at += 1
            if c == closing:
                return out
            if c != ",":
                raise ValueError(f"lenient: {c!r} where ',' or {closing!r} was expected")
###}
