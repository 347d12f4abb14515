"""Opening and closing regions: their events, and the value each region's body becomes.

Standard library only (the ``region_values`` section). :class:`RegionValues` is the part
of ``ResponseStream`` that gives text to the open region, opens and closes regions, and
makes a closing region's value with its field's ``process``; with the robustness
extensions (docs/extensions.md), what a body that fails becomes instead: ``recover``,
``json-end``, ``extend``.
"""

from __future__ import annotations

# A generated module defines these in the sections before this one.
from .lenient import LenientReader
from .string_regions import _BODY_RUN
from .strings import tracker
from .whole import _form_captures

# isort: split

###{standalone region_values
import json as _json
import re as _re


class RegionValues:
    """``ResponseStream``'s regions and their values (a mixin: the state is the stream's)."""

    __slots__ = ()

    # -- regions -------------------------------------------------------------------

    def accumulate(self, events, text):
        if not text or self.current is None:
            return  # no region open and no implicit field: the null sink
        if not self.opened:
            events.append({"type": "region_open", "field": self.current})
            self.opened = True
        tail = self.tail
        tail.append(text)
        if len(tail) >= _BODY_RUN:
            self.body.append("".join(tail))
            tail.clear()
        events.append(
            {"type": "region_chunk", "field": self.current, "text": text,
             "dirty": self.dirty}
        )

    def enter(self, mode):
        """Make ``mode`` current, with what the quick path of :meth:`feed` needs to know."""
        self.current = mode
        self.danger, self.dirty = self.table.modes[mode]

    def open_region(self, events, region, captures):
        mode = self.current = region.name  # enter, written out (a call less per region)
        if self.resume_to is not None:
            mode = mode, self.resume_to  # opened in a yielding region (see RegionTable)
        self.danger, self.dirty = self.table.modes[mode]
        self.captures = captures
        self.body = []
        self.tail = []
        self.opened = True
        if region.outside_strings:
            self.strings = tracker(region.outside_strings, self.pos)
            self.decoded = None
        if events is not None:  # None: parse_whole, where nobody reads them
            events.append({"type": "region_open", "field": region.name})

    def close_current(self, events, eos=False, decoded=None):
        """Leave the open region, giving its value; ``eos``: the output ended in it;
        ``decoded``: ``(content,)``, its body already decoded (see close_with)."""
        if self.current is None or not self.opened:
            self.reset()
            return
        tail = self.tail
        if tail:
            self.body.append("".join(tail))
            tail.clear()
        region = self.table.by_name[self.current]
        if eos and region.recover is True and region.close is not None:
            # Unfinished: never a value, however its text would parse. (A JSON body or a
            # pythonic call list is parsed: cut, it does not parse, and is recovered as
            # text below.)
            body = "".join(self.body)
            self.recovered(self.reopened(region, body) or body, _UNFINISHED, events)
            self.reset()
            return
        if eos and region.close is not None and self.table.recovering and (
            self.current != self.table.implicit and not any(p.strip() for p in self.body)
        ):
            # An opener at the very end of the output (a cut one, or a model that stops
            # right after it) opens a region with nothing in it: in a recovering template
            # it gives no value, so it does not replace an earlier region's value (a
            # second [THINK] would erase the reasoning).
            if events is not None:
                events.append({
                    "type": "region_close", "field": self.current, "value": None,
                    "error": _UNFINISHED,
                })
            self.reset()
            return
        try:
            self.close_with("".join(self.body), events, eos, decoded)
        except BaseException:
            # The region's parser (or its join, its tool typing) refused its text. As
            # in the reference, the region stays open with that text, once, and the
            # next finalize, or a close after more text, parses it again; the state
            # a replayed feed announced (see replay) was not reached.
            self.forget()
            raise
        self.reset()

    def close_with(self, text, events, unfinished=False, decoded=None):
        """Give the open region's value (its whole text is ``text``) to the message;
        the caller then leaves the region (``unfinished``: the output ended in it).
        ``decoded``: ``(content,)``, ``text`` already decoded (see Region.decoded)."""
        region = self.table.by_name[self.current]
        rest = None
        try:
            if decoded is None:
                value = region.process(text, self.captures)
            else:
                value = region.decoded(decoded[0], self.captures)
            if region.string_arguments:
                value = decoded_arguments(value)
            if self.coerce is not None and type(value) is not str:  # a string holds no call
                value = self.coerce(value)
        except (ValueError, TypeError, KeyError) as error:
            ended = self.json_ended(region, text) if region.json_end else None
            if ended is not None:
                value, rest = ended
            elif not region.recover:
                raise
            else:
                repaired = self.repaired(region, text, unfinished) if region.repairs else None
                if repaired is None:
                    value = self.reread(region, text)
                    if value is _FAILED:
                        inner = self.reopened(region, text)
                        if inner is not None:
                            self.close_with(inner, events, unfinished)
                        else:
                            self.recovered(text, str(error), events)
                        return
                else:
                    value, rest = repaired
        name = self.current
        if self.resumed or region.yields and region.join is not None:
            # The next piece of a yielding region, or of a later region of a yielding field
            # that repeats: its value joins the pieces before.
            previous = self.output.get(name)
            if not isinstance(previous, str) or not previous:
                self.output[name] = value
            elif value:
                self.output[name] = previous + region.yield_join + value
        elif region.join is not None:
            if not isinstance(value, str):
                raise ValueError(
                    f"Field '{name}': 'join' requires each match to parse to a string, "
                    f"got {type(value).__name__}."
                )
            previous = self.output.get(name)
            # In a recovering template an empty piece joins nothing, as a yielding
            # region's does: whitespace that a stream gives a field between two markers,
            # where the whole text lets a close take it, must not leave a separator.
            recovering = self.table.recovering
            if previous is None or recovering and not previous:
                self.output[name] = value
            elif value or not recovering:
                self.output[name] = previous + region.join + value
        elif region.repeats:
            previous = self.output.setdefault(name, [])
            if not isinstance(previous, list):
                # The reference crashes here (AttributeError); see docs/deviations.md.
                raise ValueError(
                    f"field {name!r} repeats, but its default value is a "
                    f"{type(previous).__name__}, not a list"
                )
            previous.append(value)
        elif region.extend:
            # (a new list: a default list of the template is never changed in place)
            previous = self.output.get(name)
            self.output[name] = previous + value if isinstance(previous, list) else value
        else:
            self.output[name] = value
        if events is not None:
            events.append({"type": "region_close", "field": name, "value": value})
        if rest:
            self.as_text(rest, events)

    def json_ended(self, region, text):
        """The value of a failed json-end region whose body is one JSON object or array
        followed by more text, and the text after it (docs/extensions.md, json-end):
        ``(value, rest)``, or None when the body is not that or the value fails too.
        ``region.json_end`` is True, or the literal that must follow the value (after
        whitespace) and belongs to the region. One decode and one parse of the value:
        linear."""
        start = len(text) - len(text.lstrip())
        if not text.startswith(("{", "["), start):
            return None
        try:
            _, end = _json_raw(text, start)
        except (ValueError, RecursionError):
            return None
        joined = None
        if region.repairs:
            # A list of calls (or a lone call), then the field's own open again and another:
            # the model wrote more calls (two [TOOL_CALLS] arrays, or one [TOOL_CALLS] per
            # call). They are one list.
            items = [_items(text, start, end)]
            while True:
                at = _SPACES.match(text, end).end()
                opened = self.open_at(region, text, at)
                if opened <= at:
                    break
                at = _SPACES.match(text, opened).end()
                if not text.startswith(("[", "{"), at):
                    break
                try:
                    _, stop = _json_raw(text, at)
                except (ValueError, RecursionError):
                    break
                items.append(_items(text, at, stop))
                end = stop
            if len(items) > 1:
                joined = "[" + ",".join(item for item in items if item.strip()) + "]"
        after = region.json_end
        if after is True:
            rest = text[end:]
            if not rest.strip() and joined is None:
                return None  # the value alone failed: nothing to end
        else:
            at = _SPACES.match(text, end).end()
            if not text.startswith(after, at):
                return None
            rest = text[at + len(after):]
        candidate = text[:end] if joined is None else joined
        try:
            value = region.process(candidate, self.captures)
            if self.coerce is not None and type(value) is not str:
                value = self.coerce(value)
        except (ValueError, TypeError, KeyError, RecursionError):
            if not region.repairs:
                return None
            # A lone call where the list is expected, as recover reads it.
            repaired = self.repaired(region, candidate, False)
            if repaired is None:
                return None
            value = repaired[0]
        return value, rest

    def repaired(self, region, text, unfinished):
        """The value of a JSON list of calls that failed, read leniently, and the text
        left over (docs/extensions.md, recover): a lone object as a list of one; an array
        cut by the end of the output as its finished elements, the rest as text. None
        when neither reading gives a value."""
        start = len(text) - len(text.lstrip())
        if region.recover == "pythonic":
            return self.pythonic_repaired(region, text, start, unfinished)
        rest = ""
        try:
            if text.startswith("{", start):
                value, end = _json_raw(text, start)
                if not isinstance(value, dict) or text[end:].strip():
                    return None
                candidate = "[" + text[start:end] + "]"
            elif unfinished and text.startswith("[", start):
                # Element by element: each one decoded whole and followed by a comma is
                # finished (one the output ends right after may still have been going
                # on); the text from the first one that is not goes back to being text.
                n = len(text)
                i = start + 1
                finished = None
                while True:
                    while i < n and text[i] in " \t\n\r":
                        i += 1
                    try:
                        _, end = _json_raw(text, i)
                    except ValueError:
                        break
                    j = end
                    while j < n and text[j] in " \t\n\r":
                        j += 1
                    if j == n or text[j] != ",":
                        break
                    finished = end
                    i = j + 1
                if finished is None:
                    return None
                candidate = text[start:finished] + "]"
                rest = text[i:]
            else:
                return None
            value = region.process(candidate, self.captures)
            if self.coerce is not None and type(value) is not str:
                value = self.coerce(value)
        except (ValueError, TypeError, KeyError, RecursionError):
            return None
        return value, rest

    def pythonic_repaired(self, region, text, start, unfinished):
        """``repaired`` for a pythonic call list (docs/extensions.md, recover): a whole
        list followed by text (the list says where it ends), a list cut by the end of the
        output as its finished calls, or one call without the list's brackets, with the
        text left over; None when none of them gives a value."""
        if text.startswith("[", start):
            end, finished = _pythonic_list_end(text, start)
            self.examined += (len(text) if end is None else end) - start
            if end is not None:
                rest = text[end:]
                if not rest.strip():
                    return None  # the list alone failed: nothing to end
                candidate = text[start:end]
            elif unfinished and finished is not None:
                candidate, rest = text[start:finished] + "]", text[finished + 1 :]
            else:
                return None
        elif not unfinished and _CALL_HEAD.match(text, start):
            # (Unfinished, a call that looks whole may still have had more after it.)
            candidate, rest = "[" + text[start:] + "]", ""
        else:
            return None
        try:
            value = region.process(candidate, self.captures)
            if self.coerce is not None:
                value = self.coerce(value)
        except (ValueError, TypeError, KeyError, RecursionError):
            return None
        return value, rest

    def reread(self, region, text):
        """The value of a failed recovering region whose body is near-JSON with one
        string delimiter (Gemma 4's), read leniently (see LenientReader) and then
        processed as the JSON it stands for, or a pythonic region whose body is JSON
        calls (see pythonic_from_json); _FAILED when that fails too."""
        if region.recover == "pythonic":
            try:
                value = region.process(pythonic_from_json(text), self.captures)
                if self.coerce is not None:
                    value = self.coerce(value)
            except (ValueError, TypeError, KeyError, RecursionError):
                return _FAILED
            return value
        delimiter = region.lenient
        if delimiter is None:
            return _FAILED
        try:
            dumped = _json.dumps(LenientReader(text, delimiter).read(), ensure_ascii=False)
            if delimiter in dumped:
                return _FAILED  # the field's parser would read it as a delimiter
            value = region.process(dumped, self.captures)
            if self.coerce is not None and type(value) is not str:
                value = self.coerce(value)
        except (ValueError, TypeError, KeyError, RecursionError):
            return _FAILED
        return value

    def reopened(self, region, text):
        """A failed recovering region's body after the opens it begins with (the model
        wrote the open twice), or None when it begins with none; the last open's
        captures are the region's. An open without a stdlib form is not looked for."""
        at = 0
        while True:
            start = _SPACES.match(text, at).end()
            end = self.open_at(region, text, start)
            if end <= start:
                return text[at:] if at else None
            at = end

    def open_at(self, region, text, start):
        """Where a match of the region's open that begins at ``start`` in ``text`` ends, or
        -1 (its captures become the region's). An open without a stdlib form is not
        looked for."""
        delimiter = region.open
        if delimiter.fixed is not None:
            return next(
                (start + len(s) for s in delimiter.fixed if text.startswith(s, start)), -1
            )
        regex = delimiter.regex
        form = regex.captures
        if form is None or regex.form_whole:  # (the text is no output's end)
            return -1
        found = form.match(text, start)
        if found is None:
            return -1
        if found.end() > start and regex.capture_names:
            self.captures = _form_captures(regex, found)
        return found.end()

    def recovered(self, body, error, events):
        """A recovering region that failed (``error``) gives no value; its body is text
        of the field that keeps it (see as_text)."""
        if events is not None:
            events.append({
                "type": "region_close", "field": self.current, "value": None, "error": error,
            })
        self.as_text(body, events)

    def as_text(self, body, events):
        """``body`` as text of the field that keeps the open region's text, which has
        closed (the implicit field unless the region names another): cut where that
        field's close matches in it (a marker there is no text), each piece not only
        whitespace a stretch of its own."""
        name = self.current
        if not body.strip():
            return
        table = self.table
        keeper = self.resume_to
        if keeper is None:
            keeper = table.by_name[name].recover_to or table.implicit
        closes = [table.by_name[keeper].close]
        if keeper != table.implicit and table.implicit is not None:
            # A yielding region keeps the text (a call in the reasoning that failed):
            # the implicit field's markers (an end of turn) are no text there either.
            closes.append(table.by_name[table.implicit].close)
        pieces = [body]
        for close in closes:
            if close is not None:
                pieces = [cut for piece in pieces for cut in _cut_at(close.regex, piece)]
        self.current, self.captures = keeper, {}
        self.resumed = self.resume_to is not None  # a yielding region's pieces join
        dirty = table.modes[keeper][1]
        for piece in pieces:
            if not piece.strip():
                continue
            if events is not None:
                events.append({"type": "region_open", "field": keeper})
                events.append({
                    "type": "region_chunk", "field": keeper, "text": piece, "dirty": dirty,
                })
            try:
                self.close_with(piece, events)
            except BaseException:
                self.current, self.resumed = name, False
                raise
        self.current, self.resumed = name, False

    def reset(self):
        table = self.table
        mode = self.resume_to
        if mode is None:
            mode = self.current = table.implicit  # enter, written out (a call less per region)
            self.resumed = False
        else:
            # Back to the yielding region the closed one opened in: its next piece.
            self.current = mode
            self.resume_to = None
            self.resumed = True
        self.danger, self.dirty = table.modes[mode]
        self.captures = {}
        self.body = []
        self.tail = []
        self.opened = False
        self.strings = None


_UNFINISHED = "unfinished: the output ended inside the region"
_json_raw = _json.JSONDecoder().raw_decode
_SPACES = _re.compile(r"\s*")


def _cut_at(regex, text):
    """``text`` in pieces, cut where ``regex`` matches (the matches dropped)."""
    pieces, at = [], 0
    for m in regex.finditer(text):
        start, end = m.span()
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    return pieces


def pythonic_from_json(text):
    """The pythonic call list that JSON calls stand for: ``text`` is one object
    ``{"name": NAME, "parameters": {...}}`` (or ``"arguments"``; a ``"type"`` key is
    allowed), objects apart by ``;`` (Llama 3's parallel calls), or a JSON array of them,
    as Llama 4 writes them in its python wrapper.
    Each value is written as its Python literal; ValueError when ``text`` is not that.
    Names and keys are checked here, as they are pasted into the list's text (ASCII
    only: Python's parser would normalise other identifiers, changing the key)."""
    values = []
    i, n = _SPACES.match(text).end(), len(text)
    while True:
        value, i = _json_raw(text, i)
        values.append(value)
        i = _SPACES.match(text, i).end()
        if i < n and text[i] == ";":
            i = _SPACES.match(text, i + 1).end()  # (a last ";" too)
        elif i < n:
            raise ValueError("pythonic: JSON calls apart by anything but ';'")
        if i == n:
            break
    value = values[0]
    calls = value if len(values) == 1 and isinstance(value, list) else values
    out = []
    for call in calls:
        if not isinstance(call, dict):
            raise ValueError("pythonic: a JSON call is an object")
        arguments = [call[k] for k in ("parameters", "arguments") if k in call]
        name = call.get("name")
        if (
            len(arguments) != 1 or not isinstance(arguments[0], dict)
            or set(call) - {"name", "parameters", "arguments", "type"}
            or not isinstance(name, str)
            or not all(_is_ascii_identifier(part) for part in name.split("."))
            or not all(_is_ascii_identifier(key) for key in arguments[0])
        ):
            raise ValueError("pythonic: not a JSON call with a name and arguments")
        out.append(name + "(" + ", ".join(
            f"{key}={value!r}" for key, value in arguments[0].items()) + ")")
    return "[" + ", ".join(out) + "]"


def _is_ascii_identifier(text):
    return text.isascii() and text.isidentifier()


_FAILED = object()


# Where a pythonic call begins: a dotted name and its parenthesis.
_CALL_HEAD = _re.compile(r"[A-Za-z_][\w.]*\s*\(")
# What the end of a pythonic list depends on: brackets, commas, strings and comments.
_PY_STOPS = _re.compile(r"[\"'\[\](){},#]")
_PY_STRING = _re.compile(
    r'"""(?:\\.|[^\\])*?"""|\'\'\'(?:\\.|[^\\])*?\'\'\'|"(?:\\.|[^"\\\n])*"'
    r"|'(?:\\.|[^'\\\n])*'",
    _re.DOTALL,
)


def _pythonic_list_end(text, start):
    """For the Python list that begins at ``text[start]`` (a ``[``): ``(where it ends,
    or None when it does not; where the last of its items followed by a comma ends,
    or None)``. One pass over the text: brackets are counted outside strings and
    comments (a string's quotes, escapes and triple quotes are Python's)."""
    depth = 0
    finished = None
    i = start
    while True:
        m = _PY_STOPS.search(text, i)
        if m is None:
            return None, finished
        ch = m.group()
        j = m.start()
        if ch == '"' or ch == "'":
            s = _PY_STRING.match(text, j)
            if s is None:
                return None, finished  # a string the text ends in
            i = s.end()
            continue
        if ch == "#":
            i = text.find("\n", j)
            if i < 0:
                return None, finished
            continue
        i = j + 1
        if ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
            if depth <= 0:
                return (i if depth == 0 else None), finished
        elif depth == 1:
            finished = j


def _items(text, start, end):
    """The elements of the JSON array ``text[start:end]`` as text, or the JSON object
    there as the one element."""
    return text[start + 1 : end - 1] if text.startswith("[", start) else text[start:end]


def decoded_arguments(value):
    """``value``, a region's tool call or list of calls, with each call's arguments that
    are a string holding a JSON object replaced by that object (the string-arguments
    extension): a model that saw arguments as a string in its history writes them so.
    Any other string is kept as it is. (The values are a region parser's: plain dicts
    and lists, so ``type`` tests them.)"""
    if type(value) is dict:
        # The usual call: its arguments an object already.
        function = value.get("function")
        if type(function) is not dict or type(function.get("arguments")) is not str:
            return value
    for call in value if type(value) is list else (value,):
        function = call.get("function") if type(call) is dict else None
        arguments = function.get("arguments") if type(function) is dict else None
        if type(arguments) is str and arguments.lstrip().startswith("{"):
            try:
                decoded = _json.loads(arguments)
            except ValueError:
                continue
            if type(decoded) is dict:
                function["arguments"] = decoded
    return value
###}
