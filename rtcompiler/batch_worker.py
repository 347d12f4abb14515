"""The batch parser a worker runs: standard library only, shipped as source.

A :class:`BatchParser` holds the source of a generated parser module and parses
records with it: a batch of columns (Ray Data, Hugging Face ``datasets``), a
list of records, or raw JSON lines (``rtc parse --jsonl``). Pickled, it becomes a
call to the built-in ``eval`` on a short bootstrap expression that carries this
file's source and the parser's source, so the process that unpickles it needs
Python and nothing else: not rtcompiler, not ``regex``, not transformers. Each
source is executed once per process (kept in ``sys.modules`` under its hash).

This file must therefore import nothing outside the standard library, and refer
to nothing of rtcompiler's. It also holds :func:`json_text`, the one way rtc writes
JSON (the records here, and everything the ``rtc`` command prints).

>>> bp = BatchParser(_DEMO_SOURCE, text_field="out")
>>> bp({"out": ["a", None]})
{'out': ['a', None], 'message': [{'content': 'A'}, None], 'error': [None, {'type': 'TypeError', \
'message': "field 'out' is NoneType, not a string"}]}
>>> bp.parse_lines([b'{"out": "b"}', b'{oops'])[0].decode()
'{"out": "b", "message": {"content": "B"}}\\n{"input_line": "{oops", "error": {"type": \
"JSONDecodeError", "message": "Expecting property name enclosed in double quotes: line 1 column 2 \
(char 1)"}}\\n'
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import types

# A stand-in for a generated module, for the examples above.
_DEMO_SOURCE = """
def parse_response(text, *, prefix=None, tools=None):
    return {"content": text.upper()}
"""

# What ``pickle`` stores: an expression for the built-in ``eval``, which finds (or
# executes and registers) this file's source as a module and builds the BatchParser
# again from its options. ``__import__`` and lambdas because eval runs no statements.
_BOOTSTRAP = (
    "(lambda sys, types: (sys.modules.get(NAME) or sys.modules.setdefault(NAME, "
    "(lambda m: (m.__dict__.update(__rtc_source__=WORKER), "
    "exec(compile(WORKER, '<' + NAME + '>', 'exec'), m.__dict__), m)[2])(types.ModuleType(NAME))"
    ")).BatchParser(SOURCE, **OPTIONS))(__import__('sys'), __import__('types'))"
)


def _name(prefix: str, source: str) -> str:
    return prefix + hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def load_source(prefix: str, source: str) -> types.ModuleType:
    """Execute ``source`` as a module once per process; later calls return the same module."""
    name = _name(prefix, source)
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        sys.modules[name] = module  # registered first, as an import does, for its own lookups
        try:
            exec(compile(source, f"<{name}>", "exec"), module.__dict__)
        except BaseException:
            del sys.modules[name]
            raise
    return module


# What rtc escapes, beyond what ``json.dumps`` escapes (", \ and C0 controls): DEL and C1
# controls (terminals act on them), lone surrogates (not encodable as UTF-8), the line and
# paragraph separators (which str.splitlines() and JavaScript split on), and the
# bidirectional controls (which reorder what a terminal shows). Written as \uXXXX escapes,
# they decode back to the same characters.
UNSAFE_IN_JSON = "\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_IN_JSON = re.compile(f"[{UNSAFE_IN_JSON}]")


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(value: object, *, indent: int | None = None) -> str:
    """``value`` as JSON text that any JSON reader takes, and a terminal shows as it is.

    Non-ASCII text stays as it is (write the result as UTF-8), except the characters of
    ``UNSAFE_IN_JSON``, written as ``\\uXXXX`` escapes; NaN and the infinities, which
    JSON has no number for, are written as the strings ``"NaN"``, ``"Infinity"`` and
    ``"-Infinity"`` (as the protobuf JSON mapping does). A value nested too deeply for
    Python's recursion limit raises ``ValueError``.

    >>> print(json_text({"a": "\\ud800\\x9b\u00e9", "b": float("nan"), "c": [float("-inf")]}))
    {"a": "\\ud800\\u009b\u00e9", "b": "NaN", "c": ["-Infinity"]}
    """
    try:
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent)
        except ValueError:
            finite = _finite(value)
            if finite is value:  # not a non-finite float: an int past the digit limit, ...
                raise
            text = json.dumps(finite, ensure_ascii=False, allow_nan=False, indent=indent)
    except RecursionError:
        raise ValueError("the value is nested too deeply to write as JSON") from None
    if text.isascii() and "\x7f" not in text:
        return text
    return _UNSAFE_IN_JSON.sub(_escape, text)


def _finite(value: object) -> object:
    """``value`` with every NaN or infinity replaced by its name, or ``value`` itself when
    there is none. A loop, not a recursion: the value may be deep."""
    root = [value]
    todo: list = [(root, 0)]
    changed = False
    while todo:
        parent, key = todo.pop()
        item = parent[key]
        if isinstance(item, float) and item - item != 0:  # NaN or an infinity
            parent[key] = "NaN" if item != item else "Infinity" if item > 0 else "-Infinity"
            changed = True
        elif isinstance(item, dict):
            parent[key] = item = dict(item)
            todo.extend((item, k) for k in item)
        elif isinstance(item, (list, tuple)):
            parent[key] = item = list(item)
            todo.extend((item, k) for k in range(len(item)))
    return root[0] if changed else value


def _worker_source() -> str:
    # Rebuilt from source, this module has no file: it keeps the text it was made from.
    global __rtc_source__
    source = globals().get("__rtc_source__")
    if source is None:
        with open(__file__, encoding="utf-8") as f:
            source = __rtc_source__ = f.read()
    return source


class BatchParser:
    """Parse many outputs with one generated parser; picklable, with no dependency to unpickle.

    ``text_field`` names the model output in each record; ``prefix_field`` and
    ``tools_field`` name a per-record prompt and tools list (a list of JSON schemas,
    or that list as a JSON string), else ``prefix`` and ``tools`` apply to every
    record. The message goes to ``message_field`` (as a JSON string with
    ``message_json=True``: Arrow-backed tables want one type per column, and tool
    arguments differ from call to call); a failure goes to ``error_field`` as
    ``{"type", "message"}`` and never stops the batch.
    """

    def __init__(self, source: str, *, text_field: str = "text", prefix_field: str | None = None,
                 tools_field: str | None = None, prefix: str = "", tools: list | None = None,
                 message_field: str = "message", error_field: str = "error",
                 message_json: bool = False) -> None:
        self.source = source
        self.options = {
            "text_field": text_field, "prefix_field": prefix_field, "tools_field": tools_field,
            "prefix": prefix, "tools": tools, "message_field": message_field,
            "error_field": error_field, "message_json": message_json,
        }
        self._module: types.ModuleType | None = None

    def __reduce__(self):
        worker = _worker_source()
        return eval, (_BOOTSTRAP, {
            "NAME": _name("rtc_batch_worker_", worker), "WORKER": worker,
            "SOURCE": self.source, "OPTIONS": self.options,
        })

    def __repr__(self) -> str:
        return f"BatchParser(<parser {_name('', self.source)}>, **{self.options!r})"

    @property
    def module(self) -> types.ModuleType:
        """The generated parser module, executed on first use in this process."""
        if self._module is None:
            self._module = load_source("rtc_parser_", self.source)
        return self._module

    # -- one record -------------------------------------------------------------------

    def parse_one(self, text, prefix=None, tools=None) -> dict:
        """The message for one output; raises on a bad input or a parse failure."""
        o = self.options
        if not isinstance(text, str):
            raise TypeError(f"field {o['text_field']!r} is {type(text).__name__}, not a string")
        if o["prefix_field"] is None:
            prefix = o["prefix"]
        elif not isinstance(prefix, str):
            raise TypeError(f"field {o['prefix_field']!r} is {type(prefix).__name__}, not a string")
        if o["tools_field"] is None:
            tools = o["tools"]
        elif isinstance(tools, str):
            tools = json.loads(tools)
        return self.module.parse_response(text, prefix=prefix, tools=tools)

    def _outcome(self, text, prefix, tools) -> tuple[object, dict | None]:
        try:
            message = self.parse_one(text, prefix, tools)
            if self.options["message_json"]:
                message = json_text(message)
        except Exception as e:  # one bad output is recorded on its row, never fatal to the run
            return None, _error(e)
        return message, None

    def parse_record(self, record: dict) -> dict:
        """``record`` plus the message field, or plus the error field."""
        return self._record(record)[0]

    def _record(self, record) -> tuple[dict, bool]:
        o = self.options
        if not isinstance(record, dict):
            error = TypeError(f"a record is a JSON object, not {type(record).__name__}")
            return {"input": record, o["error_field"]: _error(error)}, True
        out = dict(record)
        try:
            text = _field(record, o["text_field"])
            prefix = _field(record, o["prefix_field"]) if o["prefix_field"] else None
            tools = record.get(o["tools_field"]) if o["tools_field"] else None
        except KeyError as e:
            out[o["error_field"]] = _error(e)
            return out, True
        message, error = self._outcome(text, prefix, tools)
        out[o["error_field"] if error else o["message_field"]] = error or message
        return out, error is not None

    # -- many records -----------------------------------------------------------------

    def __call__(self, batch):
        """A batch of columns (a mapping of equal-length sequences) or a list of records.

        Columns come back with two more: the message column (``None`` where a row
        failed) and the error column (``None`` where it parsed).
        """
        if isinstance(batch, (list, tuple)):
            return [self.parse_record(r) for r in batch]
        o = self.options
        out = dict(batch)
        # list(): by position, whatever the column is (a list, a numpy array, a pandas Series).
        texts = list(batch[o["text_field"]])
        rows = len(texts)
        prefixes = list(batch[o["prefix_field"]]) if o["prefix_field"] else [None] * rows
        tools = list(batch[o["tools_field"]]) if o["tools_field"] else [None] * rows
        messages: list = []
        errors: list = []
        for i in range(rows):
            message, error = self._outcome(texts[i], _plain(prefixes[i]), _plain(tools[i]))
            messages.append(message)
            errors.append(error)
        out[o["message_field"]] = messages
        out[o["error_field"]] = errors
        return out

    def parse_lines(self, lines: list[bytes]) -> tuple[bytes, int]:
        """JSON lines in, JSON lines out (one per input line, each ending in a newline), and
        how many of them carry an error. Whatever goes wrong with a line, it gets its output
        line: the record plus the error field, or ``{"input_line": ..., <error field>: ...}``
        when the record cannot be read or written back."""
        out = []
        failed = 0
        for raw in lines:
            raw = raw.rstrip(b"\n").rstrip(b"\r")
            try:
                result, bad = self._line(raw)
                text = json_text(result)
            except Exception as e:
                text, bad = self.unreadable_line(raw, e), True
            failed += bad
            out.append(text)
        out.append("")
        return "\n".join(out).encode("utf-8"), failed

    def _line(self, raw: bytes) -> tuple[dict, bool]:
        try:
            record = _json_loads(raw.decode("utf-8"))
            if not isinstance(record, dict):
                raise TypeError(f"a line is a JSON object, not {type(record).__name__}")
        except (ValueError, TypeError) as e:  # JSONDecodeError, UnicodeDecodeError too
            return self._unreadable(raw, e), True
        return self._record(record)

    def _unreadable(self, raw: bytes, error: BaseException) -> dict:
        return {"input_line": raw.decode("utf-8", "replace"),
                self.options["error_field"]: _error(error)}

    def unreadable_line(self, raw: bytes, error: BaseException) -> str:
        """The output line (without its newline) for an input line ``raw`` that could not
        be read, parsed or written back, because of ``error``."""
        return json_text(self._unreadable(raw.rstrip(b"\n").rstrip(b"\r"), error))


def _json_loads(text: str) -> object:
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("the line is nested too deeply to read as JSON") from None


def _field(record: dict, name: str):
    if name not in record:
        raise KeyError(f"no field {name!r} in the record")
    return record[name]


def _plain(value):
    # Columnar batches hand out numpy scalars and arrays (Ray Data); make them Python values.
    tolist = getattr(value, "tolist", None)
    return tolist() if tolist is not None and not isinstance(value, str) else value


def _error(e: BaseException) -> dict:
    message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
    return {"type": type(e).__name__, "message": str(message)}
