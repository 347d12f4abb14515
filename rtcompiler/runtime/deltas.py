"""OpenAI-style streaming: parser events become ``chat.completion.chunk`` deltas.

Standard library only. ``rtc compile --openai`` inlines the ``deltas`` section
(after the region machine, with the JSON tokenizer of ``json_tokens.py``);
:mod:`rtcompiler.openai` is the in-package door.

A :class:`DeltaStream` wraps a streaming parser and turns what each ``feed``
causes into ``choices[0].delta`` dicts: ``{"content": ...}``,
``{"reasoning_content": ...}`` and ``{"tool_calls": [{"index", "id", "type",
"function": {"name", "arguments"}}]}``. What it promises: concatenating the
deltas gives the message ``finish`` returns -- the text fields, and for each
tool call its name and the ``arguments`` string :func:`arguments_json` makes of
the parsed arguments.

Text fields stream as their regions grow; a stripped field holds back
whitespace that may turn out to be trailing. Tool-call arguments stream before
the call's region closes where the template allows it (a *stream plan*, made at
compile time by :func:`openai_plan`): plain-JSON bodies are re-serialised token
by token into the canonical ``json.dumps`` form, ``xml-inline`` bodies give one
``"key": value`` pair per closed tag. A value a tool schema may still retype
(``"7"`` under an integer schema) is held until it is complete and retyped.
Everything else waits for the region's close, where the parsed value supplies
what remains.
"""

from __future__ import annotations

###{standalone deltas
import json as _json
import re as _re
import uuid as _uuid

# A schema naming one of these types may retype a string argument (or the strings
# of a list): such a value streams only once it is complete and retyped.
_RETYPING = frozenset(("integer", "number", "boolean", "null", "object", "array"))
_RUN = 64  # pieces of a _Text joined into one string


def arguments_json(arguments, ensure_ascii=False):
    """The OpenAI ``function.arguments`` string for parsed arguments.

    A string is what the model wrote as its arguments and is passed on as is;
    anything else is JSON of it, NaN and the infinities as strings (see finite_json).
    """
    if isinstance(arguments, str):
        return arguments
    return finite_json(arguments, ensure_ascii)


def _quoted(text, ensure_ascii):
    """``json.dumps`` of the string ``text``, without its per-call encoder."""
    if ensure_ascii:
        return _json.encoder.encode_basestring_ascii(text)
    return _json.encoder.encode_basestring(text)


def _same_json(text, value):
    """Whether ``text`` decodes to ``value``, compared in canonical form."""
    try:
        return _json.dumps(_json.loads(text)) == _json.dumps(value)
    except (ValueError, TypeError):
        return False


class _Text:
    """Text that grows at its end, a token at a time, and is read whole once or a few
    times: what was sent of a call's arguments or of a text field, a value held
    back, an xml-inline body. Adding copies nothing of what came before (a string
    grown by ``+=`` is copied whole every time); every ``_RUN`` pieces are joined
    into one, since a token-sized string costs ~50 bytes of header, ten times its
    text, and a list of a piece per token is copied whole whenever it grows."""

    __slots__ = ("runs", "tail")

    def __init__(self, text=""):
        self.runs = [text] if text else []
        self.tail = []

    def add(self, text):
        tail = self.tail
        tail.append(text)
        if len(tail) >= _RUN:
            self.runs.append("".join(tail))
            tail.clear()

    def text(self):
        """All of it, in one string (kept so, until more is added)."""
        runs = self.runs
        if self.tail:
            runs.append("".join(self.tail))
            self.tail = []
        if len(runs) > 1:
            runs[:] = ["".join(runs)]
        return runs[0] if runs else ""

    def __bool__(self):
        return bool(self.runs or self.tail)


class _Call:
    """One tool call of the stream: its place, and what has been sent of it."""

    __slots__ = ("index", "id", "name", "header", "sent", "args_kind", "hold", "hold_depth")

    def __init__(self, index):
        self.index = index
        self.id = None
        self.name = None
        self.header = False  # the delta naming the call went out
        self.sent = _Text()  # arguments text sent so far
        self.args_kind = None  # kind of the arguments value, once it began
        self.hold = None  # canonical text of a value held back for retyping (a _Text)
        self.hold_depth = 0


class _NearJson:
    """Rewrites near-JSON the way ``parse_json`` does before decoding, as it streams.

    Text between one pair of custom string delimiters becomes a JSON string (the
    first close after an open ends it), and a bare key right after ``{`` or ``,``
    and before ``:`` gets quotes, but only outside those delimited strings. Text
    is passed on once no later text can change how it is rewritten.
    """

    def __init__(self, delims, key_chars):
        self.open, self.close = delims[0] if delims else (None, None)
        self.word = _re.compile(key_chars) if key_chars else None
        self.pending = ""  # outside a string: a tail that may begin the open delimiter
        self.parked = None  # inside a delimited string: its text so far (a _Text)
        self.tail = ""  # the last characters of the string, where a close may begin
        self.prev = ""
        self.run = None  # a bare word that may be a key, in characters

    def feed(self, text):
        if self.open is not None and ("\x01" in text or "\x02" in text):
            raise _Stuck("parse_json refuses text holding its park markers")
        out = []
        while text:
            if self.parked is not None:
                window = self.tail + text
                i = window.find(self.close)
                if i < 0:
                    self.parked.add(text)
                    self.tail = window[max(0, len(window) - len(self.close) + 1) :]
                    break
                held = self.parked.text()
                string = held[: len(held) - len(self.tail)] + window[:i]
                out.append(_json.dumps(string))
                text = window[i + len(self.close) :]
                self.parked, self.tail, self.prev = None, "", "\x02"
                continue
            text, self.pending = self.pending + text, ""
            if self.open is None:
                self._outside(text, out)
                break
            i = text.find(self.open)
            if i < 0:
                # Keep a tail that may still become the open delimiter.
                keep = next((n for n in range(min(len(self.open) - 1, len(text)), 0, -1)
                             if text.endswith(self.open[:n])), 0)
                self._outside(text[: len(text) - keep], out)
                self.pending = text[len(text) - keep :]
                break
            self._outside(text[:i], out)
            if self.run is not None:
                out.append("".join(self.run))  # a bare word before a string is no key
                self.run = None
            text = text[i + len(self.open) :]
            self.parked = _Text()
        return "".join(out)

    def _outside(self, text, out):
        word = self.word
        for ch in text:
            if self.run is not None:
                if word.match(ch):
                    self.run.append(ch)
                    continue
                if ch == ":":
                    out.append('"' + "".join(self.run) + '":')
                    self.prev, self.run = ":", None
                    continue
                out.append("".join(self.run))
                self.run = None
            if word is not None and self.prev in ("{", ",") and word.match(ch):
                self.run = [ch]
                continue
            out.append(ch)
            self.prev = ch


class _JsonCalls:
    """Follows the call(s) of a plain-JSON body and streams their arguments.

    ``spec``: ``name`` (``["capture", group]`` or ``["path", keys]``),
    ``arguments`` (keys inside the call), ``each`` (the body is a list, one call
    per element). The arguments value is re-serialised as ``json.dumps`` writes
    it; a string at the arguments path is the arguments text itself.
    """

    def __init__(self, spec, region):
        self.region = region
        self.each = spec["each"]
        kind, where = spec["name"]
        self.name_capture = where if kind == "capture" else None
        self.name_path = tuple(where) if kind == "path" else None
        self.args_path = tuple(spec["arguments"])
        self.tokens = _JsonTokens(self)
        self.near = None
        if spec.get("string_delims") or spec.get("key_chars"):
            self.near = _NearJson(spec.get("string_delims"), spec.get("key_chars"))
        self.name_text = None
        if self.name_capture is not None and not self.each:
            self._call(0)  # the name came with the open delimiter: announce the call now

    def feed(self, text):
        self.tokens.feed(self.near.feed(text) if self.near is not None else text)

    # -- where the tokenizer is ---------------------------------------------------

    def _locate(self, path):
        """``(call ordinal, path inside the call)``, or None outside every call."""
        if not self.each:
            return 0, tuple(path)
        if not path or path[0] is None:
            return None
        return path[0], tuple(path[1:])

    def _depth(self, inner):
        n = len(self.args_path)
        return len(inner) - n if inner[:n] == self.args_path else None

    def _call(self, k):
        call = self.region.call(k)
        if self.name_capture is not None and call.name is None:
            self.region.name(call, self.region.captures.get(self.name_capture))
        return call

    # -- the handler ------------------------------------------------------------------

    def begin(self, kind):
        path = self.tokens.path
        where = self._locate(path)
        if where is None:
            return
        k, inner = where
        call = self._call(k)
        if inner == self.name_path:
            if kind != "string" or self.name_text is not None or call.name is not None:
                raise _Stuck("a tool name that is not one string")
            self.name_text = []
            return
        depth = self._depth(inner)
        if depth is None:
            return
        if depth == 0:
            if call.args_kind is not None:
                raise _Stuck("the arguments given twice")
            if not call.header:
                raise _Stuck("arguments before the tool name")
            call.args_kind = kind
        else:
            if isinstance(inner[-1], int) and inner[-1] > 0:
                self._out(call, ", ")
            if depth == 1 and self._retyped(call, inner[-1]):
                call.hold, call.hold_depth = _Text(), len(path)
        if kind == "object":
            self._out(call, "{")
        elif kind == "array":
            self._out(call, "[")
        elif kind == "string" and depth > 0:
            self._out(call, '"')

    def key(self, key, first):
        where = self._locate(self.tokens.path[:-1])
        if where is None:
            return
        k, inner = where
        if self._depth(inner) is None:
            return
        text = _quoted(key, self.region.ensure_ascii)
        self._out(self._call(k), text + ": " if first else ", " + text + ": ")

    def piece(self, text):
        where = self._locate(self.tokens.path)
        if where is None:
            return
        k, inner = where
        if inner == self.name_path:
            self.name_text.append(text)
            return
        depth = self._depth(inner)
        if depth is None:
            return
        if depth > 0:
            text = _quoted(text, self.region.ensure_ascii)[1:-1]
        self._out(self._call(k), text)

    def end(self, kind, scalar):
        path = self.tokens.path
        where = self._locate(path)
        if where is None:
            return
        k, inner = where
        call = self._call(k)
        if inner == self.name_path:
            name = "".join(self.name_text)
            self.name_text = None
            self.region.name(call, name)
            return
        depth = self._depth(inner)
        if depth is None:
            return
        if kind == "object":
            self._out(call, "}")
        elif kind == "array":
            self._out(call, "]")
        elif kind == "scalar":
            self._out(call, scalar)
        elif depth > 0:
            self._out(call, '"')
        if call.hold is not None and len(path) == call.hold_depth:
            self._release(call, path[-1])

    # -- output -------------------------------------------------------------------------

    def _retyped(self, call, key):
        if call.args_kind != "object" or not isinstance(key, str):
            return False
        properties = self.region.params.get(call.name)
        if not properties or key not in properties:
            return False
        return any(t in _RETYPING for t in schema_types(properties[key]))

    def _release(self, call, key):
        text, call.hold = call.hold.text(), None
        self._out(call, self.region.retyped_json(call, key, _json.loads(text)))

    def _out(self, call, text):
        if call.hold is not None:
            call.hold.add(text)
        else:
            self.region.arguments(call, text)


class _XmlCalls:
    """Streams ``xml-inline`` arguments: one ``"key": value`` pair per closed tag.

    A tag counts once the tag pattern's search has a match and no live
    attempt that could still prefer another: the match that ``finditer`` on the
    whole body will give.
    """

    def __init__(self, spec, region, regex):
        self.region = region
        self.regex = regex
        # The search for the next tag, from the end of the last one, and the body from
        # ``origin`` on, where the tag's groups are read: the character before
        # where the search began (context for the pattern) and, at times, text
        # before it (see feed).
        self.scanner = None
        self.kept = _Text()
        self.origin = 0
        self.pairs = 0
        self.call = region.call(0)
        region.name(self.call, region.captures.get(spec["name"][1]))

    def kept_text(self):
        return self.kept.text(), self.origin

    def feed(self, text):
        scanner = self.scanner
        if scanner is None:
            scanner = self.scanner = self.regex.bare_scanner(text, 0, 0, self.kept_text)
        self.kept.add(text)
        scanner.advance(text, 0, len(text))
        while True:
            m = scanner.result(False)
            if m is None or not scanner.dead:
                return
            if m.end == m.start:
                raise _Stuck("an empty tag match")
            groups = m.groupdict()
            key = groups.get("key")
            if key is None or not self.call.header:
                raise _Stuck("a tag without a key, or a call without a name")
            value = groups.get("value", "")
            value_text = self.region.retyped_json(self.call, key, value)
            key_text = _quoted(key, self.region.ensure_ascii)
            lead = "{" if not self.pairs else ", "
            self.region.arguments(self.call, lead + key_text + ": " + value_text)
            self.pairs += 1
            held, origin = self.kept_text()
            if m.end - 1 - origin > len(held) // 2:
                # Most of what is kept was read: keep what follows. (Copying it
                # every time would be quadratic with many tags in one piece; this
                # copies no more than was read since the last copy.)
                held, origin = held[m.end - 1 - origin :], m.end - 1
                self.kept, self.origin = _Text(held), origin
            scanner = self.scanner = self.regex.bare_scanner(
                held, m.end - origin, m.end, self.kept_text)
            scanner.advance(held, m.end - origin, len(held))


class _ToolRegion:
    """One open region of the tool-call field: its calls, and its body's follower."""

    def __init__(self, owner, first_index):
        self.owner = owner
        self.first_index = first_index
        self.calls = {}
        self.follower = None
        self.stuck = False
        self.unfed = []
        self.captures = {}
        self.id_capture = None
        self.params = owner.params
        self.ensure_ascii = owner.ensure_ascii

    def start(self, spec, captures):
        self.captures = captures
        self.id_capture = spec.get("id")
        try:
            if spec["parser"] == "json":
                self.follower = _JsonCalls(spec, self)
            elif self.owner.regex is not None:
                self.follower = _XmlCalls(spec, self, self.owner.regex(spec["tag_pattern"]))
            else:
                self.stuck = True  # no way to run the tag pattern: arguments at close
        except _Stuck:
            self.stuck = True

    def feed_unfed(self):
        text = "".join(self.unfed)
        self.unfed = []
        if self.stuck or self.follower is None or not text:
            return
        try:
            self.follower.feed(text)
        except _Stuck:
            self.stuck = True

    def call(self, k):
        call = self.calls.get(k)
        if call is None:
            call = self.calls[k] = _Call(self.first_index + k)
        return call

    def name(self, call, name):
        if name is None or call.name is not None:
            return
        call.name = name
        self.owner.header(call, self.captures.get(self.id_capture) if self.id_capture else None)

    def arguments(self, call, text):
        if text:
            call.sent.add(text)
            delta = {"index": call.index, "function": {"arguments": text}}
            self.owner.push({"tool_calls": [delta]})

    def retyped_json(self, call, key, value):
        """``value`` as the parser's tool typing leaves it, in canonical JSON."""
        properties = (self.params or {}).get(call.name) if isinstance(call.name, str) else None
        if properties and key in properties:
            types = schema_types(properties[key])
            if types and isinstance(value, str):
                value = coerce_argument(value, types)
            elif types and isinstance(value, list) and "array" not in types:
                value = [coerce_argument(v, types) if isinstance(v, str) else v for v in value]
        return finite_json(value, self.ensure_ascii)


class DeltaStream:
    """Chat-completion chunk deltas from a streaming parse.

    ``parser`` is a ``ResponseParser`` (or the region machine behind one);
    ``plan`` its template's stream plan (:func:`openai_plan`); ``tools`` the
    same tool schemas the parser was given, so that arguments it retypes are
    streamed retyped (a parser given tools that this stream is not told about
    only sends arguments at close). ``call_id(index)`` names tool calls whose format gives no
    id (default: ``call_`` and 24 random hex digits); ``regex(source)`` compiles
    an xml-inline tag pattern.

    ``initial_deltas`` holds the opening delta (``role``) and what the prompt
    prefix already caused; ``feed(text)`` returns the deltas the text caused;
    ``finish()`` the last ones, and sets ``message`` (the parsed message) and
    ``finish_reason`` (``"tool_calls"`` if the message has any, else ``"stop"``).

    A tool-call field that recovers (docs/extensions.md) may turn out to hold no call:
    its calls are announced only once its region has closed with a value, unless
    ``live_calls``, which streams them as they come (a failed call's deltas then just
    stop; its text arrives as content, and the final message has no such call).
    """

    def __init__(self, parser, plan, tools=None, *, call_id=None, ensure_ascii=False, regex=None,
                 live_calls=False):
        self.stream = getattr(parser, "_stream", parser)
        self.plan = plan
        if tools is not None:
            self.params = tool_parameters(tools)
        else:
            # No tools given: nothing is retyped, unless the parser was given some
            # after all -- then arguments are only sent once parsed (at close).
            self.params = None if self.stream.coerce is not None else {}
        self.call_id = call_id or (lambda index: "call_" + _uuid.uuid4().hex[:24])
        self.ensure_ascii = ensure_ascii
        self.regex = regex
        self.message = None
        self.finish_reason = None
        self.calls = []  # every tool call, by index
        # What was streamed that the final message contradicts: text fields, tool calls.
        self.divergences = []
        self.sent_text = {}  # OpenAI key -> text sent (a _Text)
        self.texts = {}  # OpenAI key -> per-field text state
        self.fields = {}  # template field -> OpenAI key
        for key in ("content", "reasoning_content", "tool_calls"):
            spec = plan.get(key)
            if spec is not None:
                self.fields[spec["field"]] = key
                if key != "tool_calls" and spec["kind"] is not None:
                    self.texts[key] = {"closed": 0, "started": False, "joined": False,
                                       "space": _Text()}
                    self.sent_text[key] = _Text()
        self.region = None
        tool_spec = plan.get("tool_calls")
        field = self.stream.table.by_name.get(tool_spec["field"]) if tool_spec else None
        # Calls held until their region closes with a value (see the class docstring).
        self.held_calls = not live_calls and getattr(field, "recover", False)
        self.out = []
        self.merging = None  # (delta or its function, key, pieces): see _merge
        self.push({"role": "assistant"})
        self._events(self.stream.initial_events)
        self.initial_deltas = self._take()

    # -- public --------------------------------------------------------------------

    def feed(self, text):
        self._events(self.stream.feed(text))
        return self._take()

    def finish(self):
        message, events = self.stream.finalize()
        self._events(events)
        self.message = message
        self.finish_reason = "tool_calls" if message.get("tool_calls") else "stop"
        for key, sent in self.sent_text.items():
            final = message.get(key)
            sent = sent.text()
            if sent != (final if isinstance(final, str) else ""):
                # A field the output filled twice keeps its last value, but the
                # first was already streamed.
                self.divergences.append({"field": key, "sent": sent, "final": final})
        return self._take()

    # -- output ----------------------------------------------------------------------

    def push(self, delta):
        """Append ``delta``, merged into the previous one when it only continues it."""
        last = self.out[-1] if self.out else None
        if last is not None and "tool_calls" in delta and "tool_calls" in last:
            previous, new = last["tool_calls"][-1], delta["tool_calls"][0]
            if previous["index"] == new["index"] and set(new) == {"index", "function"}:
                self._merge(previous["function"], "arguments", new["function"]["arguments"])
                return
        if last is not None and len(delta) == 1 and len(last) == 1:
            (key, value), = delta.items()
            if key in ("content", "reasoning_content") and key in last:
                self._merge(last, key, value)
                return
        if self.merging is not None:
            self._settle()
        self.out.append(delta)

    def _merge(self, holder, key, text):
        """Add ``text`` to ``holder[key]``, the last delta's text: the pieces are joined
        once the delta is complete (a long feed merges thousands of them)."""
        merging = self.merging
        if merging is None or merging[0] is not holder:
            if merging is not None:
                self._settle()
            merging = self.merging = (holder, key, [holder[key]])
        merging[2].append(text)

    def _settle(self):
        """Write the text merged into the last delta into it."""
        holder, key, pieces = self.merging
        holder[key] = "".join(pieces)
        self.merging = None

    def _take(self):
        if self.merging is not None:
            self._settle()
        out, self.out = self.out, []
        return out

    def header(self, call, call_id):
        call.header = True
        call.id = call_id if call_id is not None else self.call_id(call.index)
        self.calls.append(call)
        self.push({"tool_calls": [{"index": call.index, "id": call.id, "type": "function",
                                   "function": {"name": call.name, "arguments": ""}}]})

    # -- events ----------------------------------------------------------------------

    def _events(self, events):
        for event in events:
            key = self.fields.get(event["field"])
            if key == "tool_calls":
                self._tool_event(event)
            elif key in self.texts:
                self._text_event(key, event)
        region = self.region
        if region is not None:
            if region.follower is None and not region.stuck:
                spec = self.plan["tool_calls"]["stream"]
                if spec is None or self.params is None or self.held_calls:
                    # No stream plan, or the parser retypes arguments with tools we
                    # were not told about: the close gives the arguments whole.
                    region.stuck = True
                else:
                    # The region is still open, so the machine's captures are its own.
                    region.start(spec, dict(self.stream.captures))
            region.feed_unfed()

    def _text_event(self, key, event):
        spec, state = self.plan[key], self.texts[key]
        kind = event["type"]
        if kind == "region_open":
            state["started"], state["joined"], state["space"] = False, False, _Text()
        elif kind == "region_chunk" and spec["kind"] == "text":
            text = event["text"]
            if spec["strip"]:
                if not state["started"]:
                    text = text.lstrip()
                    if not text:
                        return
                    state["started"] = True
                body = text.rstrip()
                if not body:
                    state["space"].add(text)  # may still turn out to be trailing
                    return
                held, state["space"] = state["space"], _Text(text[len(body):])
                text = held.text() + body
            self._text(key, spec, state, text)
        elif kind == "region_close":
            value = event["value"]
            self._text(key, spec, state, value if spec["kind"] == "value" and isinstance(value, str)
                       else "")
            state["closed"] += 1

    def _text(self, key, spec, state, text):
        if spec["join"] is not None and state["closed"] and not state["joined"]:
            if text and spec.get("pieces") and not self.sent_text[key].text():
                state["joined"] = True  # no text before this piece: no separator
            elif text or not spec.get("pieces"):
                state["joined"] = True
                text = spec["join"] + text
        if text:
            self.sent_text[key].add(text)
            self.push({key: text})

    def _tool_event(self, event):
        kind = event["type"]
        if kind == "region_open":
            self.region = _ToolRegion(self, len(self.calls))
        elif kind == "region_chunk":
            if self.region is None:
                self.region = _ToolRegion(self, len(self.calls))
            self.region.unfed.append(event["text"])
        elif kind == "region_close":
            region = self.region or _ToolRegion(self, len(self.calls))
            self.region = None
            if "error" in event:
                return  # a recovering region that gave no call: its text comes as content
            region.feed_unfed()
            self._close_calls(region, event["value"])

    def _close_calls(self, region, value):
        calls = value if isinstance(value, list) else [value]
        for k, item in enumerate(calls):
            function = item.get("function") if isinstance(item, dict) else None
            if not isinstance(function, dict):
                function = item if isinstance(item, dict) else {}
            call = region.call(k)
            if not call.header:
                call.name = function.get("name")
                self.header(call, item.get("id") if isinstance(item, dict) else None)
            elif call.name != function.get("name"):
                self.divergences.append({"index": call.index, "sent_name": call.name,
                                         "final_name": function.get("name")})
            final = arguments_json(function.get("arguments"), self.ensure_ascii)
            sent = call.sent.text()
            # xml-inline pairs leave their object open: a tag could still follow.
            tail = "}" if isinstance(region.follower, _XmlCalls) and sent else ""
            if final.startswith(sent):
                region.arguments(call, final[len(sent):])
            elif _same_json(sent + tail, function.get("arguments")):
                region.arguments(call, tail)
            else:
                # Text already sent cannot be taken back (say, a key the model wrote
                # twice, in a place where the later value wins): say so.
                self.divergences.append({"index": call.index, "sent": sent, "final": final})
###}

# The section calls tool typing and the JSON tokenizer; a generated module has them
# from the tool_coercion and json_tokens sections, this module from here.
from .json_tokens import _JsonTokens, _safe_cut, _Stuck, finite_json  # noqa: E402, F401
from .tools import coerce_argument, schema_types, tool_parameters  # noqa: E402, F401

__all__ = ["DeltaStream", "arguments_json"]
