"""The batch parser a worker runs: standard library only, shipped as source.

A :class:`BatchParser` holds the source of a generated parser module and parses
records with it: a batch of columns (Ray Data, Hugging Face ``datasets``), a
list of records, or raw JSON lines (``rtc parse --jsonl``). Pickled, it becomes a
call to the built-in ``eval`` on a short bootstrap expression that carries this
file's source and the parser's source, so the process that unpickles it needs
Python and nothing else: not rtcompiler, not ``regex``, not transformers. Each
source is executed once per process (kept in ``sys.modules`` under its hash).

This file must therefore import nothing outside the standard library, and refer
to nothing of rtcompiler's.

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
        except Exception as e:  # one bad output is recorded on its row, never fatal to the run
            return None, _error(e)
        if self.options["message_json"]:
            return json.dumps(message, ensure_ascii=False), None
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
        how many of them carry an error."""
        out = []
        failed = 0
        for raw in lines:
            raw = raw.rstrip(b"\n").rstrip(b"\r")
            try:
                record = json.loads(raw.decode("utf-8"))
                if not isinstance(record, dict):
                    raise TypeError(f"a line is a JSON object, not {type(record).__name__}")
            except (ValueError, TypeError) as e:  # JSONDecodeError, UnicodeDecodeError too
                result = {"input_line": raw.decode("utf-8", "replace"),
                          self.options["error_field"]: _error(e)}
                bad = True
            else:
                result, bad = self._record(record)
            failed += bad
            out.append(_dump_line(result))
        return b"".join(out), failed


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


def _dump_line(obj: dict) -> bytes:
    try:
        return (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (legal in a JSON string, not in UTF-8) is written escaped.
        return (json.dumps(obj) + "\n").encode("ascii")
