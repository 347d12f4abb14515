"""An incremental JSON tokenizer, for tool-call arguments that stream as they are written.

Standard library only: the ``json_tokens`` section travels into generated modules
built with ``rtc compile --openai``, where the delta adapter (``deltas.py``) feeds it a
plain-JSON tool-call body token by token and re-serialises the arguments as they grow.
"""

from __future__ import annotations

###{standalone json_tokens
import json as _json
import re as _re

_JSON_SPACE = " \t\n\r"
# A JSON string's text up to its closing quote or a backslash that ends the piece:
# escapes whole, the rest in runs (json.loads judges both when the text is decoded).
_STRING_TEXT = _re.compile(r'(?:[^"\\]+|\\.)+', _re.DOTALL)
_SCALAR_RUN = _re.compile(r'[^ \t\n\r{}\[\]:,"]+')


def finite_json(value, ensure_ascii=False):
    """``json.dumps`` of ``value``, with NaN and the infinities as the strings "NaN",
    "Infinity" and "-Infinity": an OpenAI client decodes ``arguments`` with a strict JSON
    reader (JavaScript's ``JSON.parse``), which has no such numbers."""
    try:
        return _json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=False)
    except ValueError:
        return _json.dumps(_finite(value), ensure_ascii=ensure_ascii)


def _finite(value):
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class _Stuck(Exception):
    """The body left what incremental streaming understands: the close decides."""


def _safe_cut(raw):
    """How much of a raw JSON string body decodes the same whatever follows it.

    ``raw`` starts on an escape boundary. A cut never splits an escape, nor a
    high surrogate escape from a low one that may follow.
    """
    i, n = 0, len(raw)
    while True:
        i = raw.find("\\", i)
        if i < 0:
            return n
        if i + 1 >= n:
            return i
        if raw[i + 1] != "u":
            i += 2
            continue
        if i + 6 > n:
            return i
        digits = raw[i + 2 : i + 6]
        hex_digits = all(c in "0123456789abcdefABCDEF" for c in digits)
        if hex_digits and 0xD800 <= int(digits, 16) < 0xDC00:
            after = raw[i + 6 : i + 8]
            if len(after) < 2 and "\\u".startswith(after):
                return i
            if after == "\\u" and i + 12 > n:
                return i
        i += 6


class _JsonTokens:
    """An incremental JSON tokenizer that reports values as they begin, grow and end.

    It accepts exactly what ``json.loads`` accepts (scalars are checked by
    ``json.loads`` itself) and raises :class:`_Stuck` at the first thing it
    would refuse. ``path`` is where the current value sits: keys and indices.
    The handler gets ``begin(kind)``, ``key(key, first)``, ``piece(text)`` (the
    decoded text of a string value) and ``end(kind, canonical_scalar)``.
    """

    def __init__(self, handler):
        self.handler = handler
        self.stack = []  # frames: [kind, expecting, members so far]
        self.path = []
        # The string being read: its text not decoded yet, in pieces (None outside a
        # string), and whether a backslash ended the last piece.
        self.raw = None
        self.escaped = False
        self.is_key = False
        self.key_text = []
        self.scalar = None  # the pieces of the number or literal being read
        self.done = False

    def feed(self, text):
        i, n = 0, len(text)
        while i < n:
            if self.raw is not None:
                i = self._string(text, i)
            elif self.scalar is not None:
                m = _SCALAR_RUN.match(text, i)
                if m is None:
                    self._scalar_end()
                else:
                    self.scalar.append(m.group())
                    i = m.end()
            else:
                ch = text[i]
                i += 1
                if ch not in _JSON_SPACE:
                    self._structure(ch)

    def _begin(self, kind):
        top = self.stack[-1] if self.stack else None
        if top is None:
            if self.done:
                raise _Stuck("text after the JSON value")
        elif top[1] != "value":
            raise _Stuck("a value where a separator belongs")
        self.handler.begin(kind)

    def _ended(self):
        if not self.stack:
            self.done = True
            return
        top = self.stack[-1]
        top[1] = "comma"
        top[2] += 1

    def _structure(self, ch):
        top = self.stack[-1] if self.stack else None
        if ch == '"':
            self.is_key = top is not None and top[0] == "object" and top[1] == "key"
            if not self.is_key:
                self._begin("string")
            self.raw = []
            self.key_text = []
        elif ch in "{[":
            kind = "object" if ch == "{" else "array"
            self._begin(kind)
            self.stack.append([kind, "key" if kind == "object" else "value", 0])
            self.path.append(None if kind == "object" else 0)
        elif ch in "}]":
            kind = "object" if ch == "}" else "array"
            if top is None or top[0] != kind:
                raise _Stuck("an unbalanced bracket")
            # A close follows a member, or empties a container: never a separator.
            if not (top[1] == "comma" or (top[2] == 0 and top[1] in ("key", "value"))):
                raise _Stuck("a bracket after a separator")
            self.stack.pop()
            self.path.pop()
            self.handler.end(kind, None)
            self._ended()
        elif ch == ":":
            if top is None or top[1] != "colon":
                raise _Stuck("a stray colon")
            top[1] = "value"
        elif ch == ",":
            if top is None or top[1] != "comma":
                raise _Stuck("a stray comma")
            if top[0] == "object":
                top[1] = "key"
            else:
                top[1] = "value"
                self.path[-1] = top[2]
        else:
            self._begin("scalar")
            self.scalar = [ch]

    def _string(self, text, i):
        """Read string text from ``text[i]`` to the closing quote (then the string
        ends) or to the end of the piece; returns where it stopped."""
        n = len(text)
        raw = self.raw
        if self.escaped:
            raw.append(text[i])  # the escape the last piece's backslash began
            i += 1
            self.escaped = False
        m = _STRING_TEXT.match(text, i)
        if m is not None:
            raw.append(m.group())
            i = m.end()
        if i < n and text[i] == "\\":  # the piece's last character
            raw.append("\\")
            self.escaped = True
            i = n
        if i == n:
            self._decode(final=False)
            return n
        self._decode(final=True)
        self.raw = None
        if self.is_key:
            top = self.stack[-1]
            top[1] = "colon"
            self.path[-1] = "".join(self.key_text)
            self.handler.key(self.path[-1], top[2] == 0)
        else:
            self.handler.end("string", None)
            self._ended()
        return i + 1  # after the closing quote

    def _decode(self, final):
        """Pass on the string text read so far, all of it when the string ended, else
        what no later text can change; the rest (at most an escape) stays."""
        raw = "".join(self.raw)
        cut = len(raw) if final else _safe_cut(raw)
        self.raw = [raw[cut:]] if cut < len(raw) else []
        if not cut:
            return
        try:
            # json.loads of the quoted text, less its per-call wrapping (the text
            # holds no unescaped quote: the string ends at one).
            piece = _json.decoder.scanstring(raw[:cut] + '"', 0, True)[0]
        except ValueError:
            raise _Stuck("not a JSON string") from None
        if self.is_key:
            self.key_text.append(piece)
        elif piece:
            self.handler.piece(piece)

    def _scalar_end(self):
        text, self.scalar = "".join(self.scalar), None
        try:
            value = _json.loads(text)
        except ValueError:
            raise _Stuck("not a JSON scalar") from None
        self.handler.end("scalar", finite_json(value))
        self._ended()
###}
