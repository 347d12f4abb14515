"""What ``rtc`` reads and writes, by one policy for every command.

Input files and stdin are UTF-8: a byte that is not is an error naming the file and
the byte's offset, the same for a FILE, stdin, ``--prefix-file`` and ``--tools``.
stdout gets UTF-8 JSON by :func:`~rtcompiler.batch_worker.json_text`'s rules, whatever
the locale. stderr gets one line per message, with every character that a terminal
would act on (controls, escape sequences, line breaks, bidirectional overrides)
spelled as an escape: a message may quote the user's input, and must not be able to
rewrite the screen or add a line of its own.

>>> terminal_line("bad key '\\x1b[2J'\\nrtc: wrote parser.py")
"bad key '\\\\x1b[2J'\\\\nrtc: wrote parser.py"
"""

from __future__ import annotations

import argparse
import codecs
import json
import re
import sys
from collections.abc import Iterator

from ..batch_worker import UNSAFE_IN_JSON, json_text

__all__ = ["InputError", "json_text", "path_argument", "read_json", "read_text", "say",
           "terminal_line", "text_chunks", "write_file", "write_out"]


class InputError(Exception):
    """A mistake in what the user gave rtc (an argument, a file): one line, exit status 2."""


def path_argument(text: str) -> str:
    """An argument that names a file (argparse's ``type``): no NUL, which no path holds
    and which the operating system's calls refuse with a ValueError."""
    if "\x00" in text:
        raise argparse.ArgumentTypeError("a file name cannot hold a NUL character")
    return text


_UNSAFE_ON_A_LINE = re.compile(f"[\\x00-\\x1f{UNSAFE_IN_JSON}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    ch = match.group()
    code = ord(ch)
    return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def terminal_line(text: str) -> str:
    """``text`` as one line that a terminal shows as it is written."""
    return _UNSAFE_ON_A_LINE.sub(_escape, text)


def say(message: str) -> None:
    """Print ``message`` to stderr as one safe line."""
    print(terminal_line(message), file=sys.stderr, flush=True)


def write_out(text: str) -> None:
    """Write ``text`` to stdout as UTF-8, now (a stream's events must not wait)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    buffer.write(text.encode("utf-8", "backslashreplace"))
    buffer.flush()


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _open(path: str, what: str):
    try:
        return open(path, "rb")
    except OSError as e:
        raise InputError(f"{what}{path}: {_reason(e)}") from None


def read_bytes(path: str, what: str) -> bytes:
    """The bytes of file ``path``, which the command line gave as ``what`` (``"--tools "``,
    or ``""`` for a plain argument)."""
    with _open(path, what) as f:
        try:
            return f.read()
        except OSError as e:
            raise InputError(f"{what}{path}: {_reason(e)}") from None


def decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: not UTF-8 (byte {e.start})") from None


def read_text(path: str, what: str) -> str:
    return decode(read_bytes(path, what), f"{what}{path}")


def read_json(path: str, what: str) -> object:
    name = f"{what}{path}"
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{name}: not valid JSON: {e.msg} at line {e.lineno}, "
                         f"column {e.colno}") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise InputError(f"{name}: {e}") from None
    except RecursionError:
        raise InputError(f"{name}: JSON nested too deeply") from None


def write_file(path: str, text: str, what: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise InputError(f"{what}{path}: {_reason(e)}") from None


def open_input(path: str | None):
    """FILE, or stdin when there is none, as a binary stream."""
    if path is None:
        return getattr(sys.stdin, "buffer", sys.stdin)
    return _open(path, "")


def text_chunks(source, name: str) -> Iterator[str]:
    """The text of binary ``source`` as it arrives, decoded as UTF-8 (a character split
    between two reads waits for its end). stdin is read a line (or 64 bytes) at a time, as
    a generator writes it; a file in blocks."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    by_line = source is getattr(sys.stdin, "buffer", sys.stdin)
    offset = 0  # bytes read before this block
    while True:
        try:
            data = source.readline(64) if by_line else source.read(4096)
        except OSError as e:
            raise InputError(f"{name}: {_reason(e)}") from None
        held = len(decoder.getstate()[0])
        try:
            text = decoder.decode(data, final=not data)
        except UnicodeDecodeError as e:
            raise InputError(f"{name}: not UTF-8 (byte {offset - held + e.start})") from None
        offset += len(data)
        if text:
            yield text
        if not data:
            return


def read_all(source, name: str) -> str:
    try:
        data = source.read()
    except OSError as e:
        raise InputError(f"{name}: {_reason(e)}") from None
    return decode(data, name)


_JSON_KINDS = {dict: "an object", str: "a string", int: "a number", float: "a number",
               bool: "a boolean"}


def prefix_and_tools(args: argparse.Namespace) -> tuple[str, list | None]:
    """``rtc parse``'s prefix (``--prefix`` or ``--prefix-file``) and tools (``--tools``)."""
    if args.prefix_file is not None:
        prefix = read_text(args.prefix_file, "--prefix-file ")
    else:
        prefix = args.prefix if args.prefix is not None else ""
    tools = None
    if args.tools is not None:
        tools = read_json(args.tools, "--tools ")
        if not isinstance(tools, (list, type(None))):
            raise InputError(f"--tools {args.tools}: expected a JSON list of tools (JSON "
                             f"schemas), got {_JSON_KINDS.get(type(tools), 'something else')}")
    return prefix, tools
