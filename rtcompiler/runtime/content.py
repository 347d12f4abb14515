"""Content parsers: turn the text captured by a region into the field's value.

Two halves live here.

* Runtime (the ``###{standalone NAME`` sections): one function per parser, standard
  library only, inlined by the code generator into every generated module that needs
  it. Each takes the region body and *prepared* arguments -- plain JSON-like data
  computed at compile time -- so nothing about a field's ``content_args`` is looked up
  or defaulted while parsing. Call shapes::

      parse_text(body, args)          parse_int(body, args)     parse_float(body, args)
      parse_bool(body, args)          parse_json(body, args)
      parse_kv_lines(body, args, value_parser)
      parse_xml_inline(body, args, finditer, value_parser)
      parse_content_error(body, args)
      parse_pythonic(body, args)      (extension)
      parse_xml_typed(body, args, finditer, value_parser, typed_parsers)   (extension)

  ``value_parser`` is ``None`` or the already specialised nested parser (a callable
  ``str -> value``); ``finditer`` is ``None`` (no ``tag_pattern``) or a callable
  ``text -> iterable of matches with .groupdict()`` running the tag pattern with the
  semantics of ``regex.finditer(pattern, text, regex.DOTALL)``; ``typed_parsers`` maps
  the text of one named group of a tag to the parser of that tag's value (``None``: the
  raw text).

* Compile time (everything outside the sections, never copied): :func:`content_plan`
  specialises a field's ``content``/``content_args`` into a :class:`ContentPlan`, and
  :func:`build_parser` turns a plan into a Python callable in-process (what the tests
  and the in-process CLI run; a generated module builds the same call from the plan).

Behaviour is transformers 5.23.0's ``chat_parsing.content_parsers``, including how each
malformed ``content_args`` fails. The reference does not validate ``content_args`` when
a template loads: a bad value only fails when a region of that field is parsed, so a
plan reproduces that failure at parse time (see :func:`content_plan`) instead of
refusing the template.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Annotations inside sections that name non-builtin types are strings, so that the
# sections run without these imports (a generated module has none of them).
Finditer = Callable[[str], Iterable[Any]]
ValueParser = Callable[[Any], Any]

###{standalone content_error
# Exceptions a plan can be told to raise, by name, so that plans stay plain data.
_CONTENT_ERRORS = {
    "AttributeError": AttributeError,
    "KeyError": KeyError,
    "TypeError": TypeError,
    "ValueError": ValueError,
}


def parse_content_error(body: object, args: dict) -> object:
    """A parser whose configuration can never work: fail as the reference does."""
    raise _CONTENT_ERRORS[args["error"]](args["message"])


###}


###{standalone text
def parse_text(body: str, args: dict) -> str:
    return body.strip() if args["strip"] else body


###}


###{standalone int
def parse_int(body: str, args: dict) -> int:
    # int() itself accepts what Python accepts: " 3 ", "1_000", "+7", Arabic-Indic digits.
    return int(parse_text(body, args))


###}


###{standalone float
def parse_float(body: str, args: dict) -> float:
    return float(parse_text(body, args))


###}


###{standalone bool
def parse_bool(body: str, args: dict) -> bool:
    # Anything that is not a spelling of true is False, never an error.
    return parse_text(body, args).lower() in ("true", "1")


###}

###{standalone json
# Imports sit inside the section so that a generated module gets them with it.
import json as _json  # noqa: E402
import re as _re  # noqa: E402
from json.encoder import encode_basestring_ascii as _json_string  # noqa: E402

# The C scanner json.loads ends up in, and the whitespace its decoder skips (neither is
# in the stdlib's type stubs).
_json_scan = _json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_json_space = _json.decoder.WHITESPACE.match  # type: ignore[attr-defined]


def _json_loads(text: str) -> object:
    """``json.loads(text)`` for a string, without the three Python calls it makes
    on the way to the C scanner: the same value, or the same error (type, message
    and position), per the stdlib's decoder."""
    if type(text) is not str:
        return _json.loads(text)  # (its TypeError for what is not text)
    if text.startswith("\ufeff"):
        raise _json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    # The whitespace the decoder skips, skipped only where there is some (a match
    # costs as much as a small document's scan).
    start = _json_space(text, 0).end() if text[:1] in " \t\n\r" else 0
    try:
        value, end = _json_scan(text, start)
    except StopIteration as exc:
        raise _json.JSONDecodeError("Expecting value", text, exc.value) from None
    if end != len(text):
        end = _json_space(text, end).end()
        if end != len(text):
            raise _json.JSONDecodeError("Extra data", text, end)
    return value

# String bodies found between custom delimiters are parked behind these markers while
# the rest of the text is rewritten. They are control characters a model never writes,
# and an input that does contain one is refused rather than silently mangled.
_PARK_OPEN = "\x01"
_PARK_CLOSE = "\x02"

_json_patterns: dict = {}


def _json_pattern(source: str):
    # Compiled once per module: the unquoted-key pattern carries a large character class.
    compiled = _json_patterns.get(source)
    if compiled is None:
        compiled = _json_patterns[source] = _re.compile(source, _re.DOTALL)
    return compiled


def _park_strings(text: str, open_d: str, close_d: str, parked: list) -> str:
    """Every ``open_d ... close_d`` string (lazy, across lines) replaced by a marker.

    What ``re.sub(escape(open_d) + "(.*?)" + escape(close_d), ...)`` does, with
    ``str.find``: the lazy loop made sre try the close delimiter at every
    character of a long string (a file body), several times slower.
    """
    if not open_d and close_d:
        # Every position opens: each string runs from where the last one closed to the
        # next close. (The regex form would try every start and read to the end from
        # each one when no close follows.)
        out = []
        at = 0
        while True:
            stop = text.find(close_d, at)
            if stop < 0:
                break
            out.append(f"{_PARK_OPEN}{len(parked)}{_PARK_CLOSE}")
            parked.append(text[at:stop])
            at = stop + len(close_d)
        if not out:
            return text
        out.append(text[at:])
        return "".join(out)
    if not open_d or not close_d:
        # Empty delimiters match everywhere; the regex form defines what that means.
        def park(m) -> str:
            parked.append(m.group(1))
            return f"{_PARK_OPEN}{len(parked) - 1}{_PARK_CLOSE}"

        source = _re.escape(open_d) + "(.*?)" + _re.escape(close_d)
        return _json_pattern(source).sub(park, text)
    out = []
    at = 0
    find = text.find
    while True:
        start = find(open_d, at)
        if start < 0:
            break
        inner = start + len(open_d)
        stop = find(close_d, inner)
        if stop < 0:
            break  # no later opening has a close either
        out.append(text[at:start])
        out.append(f"{_PARK_OPEN}{len(parked)}{_PARK_CLOSE}")
        parked.append(text[inner:stop])
        at = stop + len(close_d)
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)


_LOOKBEHIND = "(?<=[{,])"


_key_splitters: dict = {}


def _key_splitter(key_pattern: str, ascii: bool):
    """``split`` of the key pattern with the brace or comma consumed (a key ends with
    ':', so it is never the next key's lookbehind): sre then skips to those two
    characters at C speed instead of testing the lookbehind everywhere.

    ``ascii``: for text known to be ASCII, with the key class cut down to its ASCII
    members. sre tests a character against a class of some seven hundred ranges one
    range at a time; in ASCII text both classes match the same characters.
    """
    rest = key_pattern[len(_LOOKBEHIND):]
    if ascii:
        if not (rest.startswith("([") and rest.endswith("]+):")):
            return None
        members = _re.compile(rest[1:-3], _re.DOTALL)
        chars = "".join(c for c in map(chr, range(128)) if members.match(c))
        if not chars:
            return None
        rest = "([" + "".join(f"\\x{ord(c):02x}" for c in chars) + "]+):"
    return _re.compile("([{,])" + rest, _re.DOTALL).split


def _quote_keys(text: str, key_pattern: str) -> str:
    # Keyed by the template's own pattern string, whose hash Python keeps: a key
    # built here would be hashed anew, all few thousand characters of it, per call.
    splitter = None
    if key_pattern.startswith(_LOOKBEHIND):
        ascii = text.isascii()
        splitters = _key_splitters.get(key_pattern)
        if splitters is None:
            splitters = _key_splitters[key_pattern] = [None, None]
        splitter = splitters[ascii]
        if splitter is None:
            splitter = splitters[ascii] = _key_splitter(key_pattern, ascii)
            if splitter is None:  # no ASCII form: the full class does for ASCII text too
                splitter = splitters[ascii] = _key_splitter(key_pattern, False)
    if splitter is not None:
        parts = splitter(text)
        if len(parts) == 1:
            return text
        # split() gives [text, brace, key, text, brace, key, ...]: joining is cheaper
        # than sub's per-match expansion of a replacement template.
        for k in range(2, len(parts), 3):
            parts[k] = f'"{parts[k]}":'
        return "".join(parts)
    return _json_pattern(key_pattern).sub(r'"\1":', text)


# Parked strings this long in all are not written out as JSON and read back: the text
# is decoded with a short stand-in string per parked one, then the strings are put in
# place (see _loads_parked). Below it, encoding and decoding cost less than the walk.
_PARKED_DIRECT = 256
_UNSURE = object()


class _KeyParked(Exception):
    pass


def _loads_parked(working: str, parked: list) -> object:
    """``json.loads`` of ``working`` with every marker replaced by the JSON of its
    parked string, or ``_UNSURE`` when this shortcut cannot tell.

    Each marker becomes the JSON string ``"\\u0001N\\u0002"``: a string token where
    the dumped string would be, so the document parses (or fails) alike, and decodes
    to a value no other string in it can have (the text holds no escape of those
    characters, checked by the caller, nor the raw characters). A stand-in used as an
    object key gives up: duplicate keys would merge differently.
    """
    text = working.replace(_PARK_OPEN, '"\\u0001').replace(_PARK_CLOSE, '\\u0002"')
    try:
        return _unpark(_json_loads(text), parked)
    except (ValueError, RecursionError, _KeyParked):
        return _UNSURE  # the caller decodes the written-out form, failing as it should


def _unpark(value: "Any", parked: list) -> "Any":  # noqa: UP037
    kind = type(value)
    if kind is str:
        return parked[int(value[1:-1])] if value[:1] == _PARK_OPEN else value
    if kind is list:
        return [_unpark(item, parked) for item in value]
    if kind is dict:
        for key in value:
            if key[:1] == _PARK_OPEN:
                raise _KeyParked
        return {key: _unpark(item, parked) for key, item in value.items()}
    return value


# A character a JSON string cannot hold as it is.
_NEEDS_ESCAPE = _re.compile(r'["\\\x00-\x1f]')


def _strings_in_place(body: str, delimiter: str, key_pattern: "str | None"):  # noqa: UP037
    """``(text, parked)`` as parking the strings of ``body`` written between two
    ``delimiter`` (one opening and closing delimiter, as Gemma's ``<|"|>``) and
    quoting the keys leave them, or None when a string is left open (parking then
    leaves it as text: the general path decides).

    Done with splits and joins: the text outside the strings is rewritten as one
    piece, joined by a marker where each string was (a key can neither hold a marker
    character nor follow one, so the markers' numbers change nothing). When no string
    needs an escape, nothing is parked: each string is itself between quotes.
    """
    parts = body.split(delimiter)
    if len(parts) % 2 == 0:
        return None
    outside = parts[0::2]
    if key_pattern is not None:
        outside = _quote_keys(_PARK_OPEN.join(outside), key_pattern).split(_PARK_OPEN)
    strings = parts[1::2]
    if _NEEDS_ESCAPE.search("".join(strings)) is None:
        parts[0::2] = outside
        return '"'.join(parts), []
    pieces = [outside[0]]
    for k, rest in enumerate(outside[1:]):
        pieces.append(f"{_PARK_OPEN}{k}{_PARK_CLOSE}")
        pieces.append(rest)
    return "".join(pieces), strings


def parse_json(body: str, args: dict) -> object:
    """JSON, optionally after two repairs for near-JSON that models write.

    ``args``: ``string_delims`` (as written in the template, default ``[]``),
    ``unquoted_key_pattern`` (a stdlib pattern whose group 1 is a bare key, or
    ``None``), ``allow_non_json`` and ``strip`` (booleans), ``same_delimiter`` (the one
    delimiter of ``string_delims`` when both ends of its one pair are it, else None).
    """
    delims = args["string_delims"]
    if delims and (_PARK_OPEN in body or _PARK_CLOSE in body):
        raise ValueError(
            "json: the text contains \\x01 or \\x02, which string_delims parsing "
            "reserves; refusing to parse it"
        )
    working = body
    parked: list = []
    key_pattern = args["unquoted_key_pattern"]
    same = args.get("same_delimiter")  # (worked out with the plan: see _same_delimiter)
    in_place = None if same is None else _strings_in_place(body, same, key_pattern)
    if in_place is not None:
        working, parked = in_place
    else:
        # Iterate the value as written: a malformed string_delims fails here with the
        # same exception the reference raises (unpacking a non-pair, iterating None, ...).
        for open_d, close_d in delims:
            if not isinstance(open_d, str) or not isinstance(close_d, str):
                raise TypeError(
                    f"json: string_delims entries must be pairs of strings, "
                    f"got {type(open_d).__name__} and {type(close_d).__name__}"
                )
            working = _park_strings(working, open_d, close_d, parked)
        if key_pattern is not None:
            working = _quote_keys(working, key_pattern)
    if parked:
        if sum(map(len, parked)) >= _PARKED_DIRECT and "\\u000" not in working:
            value = _loads_parked(working, parked)
            if value is not _UNSURE:
                return value
        # One pass puts every string back, as JSON: a dumped string holds no
        # marker (json.dumps escapes control characters), so none is re-read.
        parts = working.split(_PARK_OPEN)
        for k in range(1, len(parts)):
            index, rest = parts[k].split(_PARK_CLOSE, 1)
            parts[k] = _json_string(parked[int(index)]) + rest  # what json.dumps writes
        working = "".join(parts)
    try:
        return _json_loads(working)
    except RecursionError:
        # The reference crashes with RecursionError here; a bad output is a ValueError.
        raise ValueError(
            "json: the region is nested too deeply to decode (Python's recursion limit)"
        ) from None
    except _json.JSONDecodeError as exc:
        # Only a decoding failure falls back; json.loads' other error (a ValueError for
        # an integer past the digit limit) propagates, as in the reference.
        if args["allow_non_json"]:
            return parse_text(body, args)
        if working == body:
            raise ValueError(f"json: the region is not JSON ({exc}).\nText: {body!r}") from exc
        raise ValueError(
            f"json: the region is not valid JSON after the string_delims/unquoted_keys "
            f"rewrites ({exc}).\nText: {body!r}\nRewritten: {working!r}"
        ) from exc


###}


###{standalone xml_inline
def parse_xml_inline(
    body: str,
    args: dict,
    finditer: "Finditer | None",  # noqa: UP037
    value_parser: "ValueParser | None",  # noqa: UP037
) -> dict:
    """Flat XML-ish tags as a dict: one entry per match of the tag pattern.

    ``args``: ``tag_pattern`` (for messages) and ``merge_duplicates`` (boolean).
    """
    if finditer is None:
        raise ValueError("xml-inline: the 'tag_pattern' content_arg is required")
    if not isinstance(body, str):
        # Reached through a nested value_parser whose value group did not take part.
        raise TypeError(f"xml-inline: expected a string to parse, got {type(body).__name__}")
    merge = args["merge_duplicates"]
    out: dict = {}
    for m in finditer(body):
        groups = m.groupdict()
        key = groups.get("key")
        if key is None:
            raise ValueError(
                "xml-inline: tag_pattern needs a named group 'key' that takes part in "
                f"every match; pattern: {args['tag_pattern']}"
            )
        # A missing 'value' group reads as "", but a 'value' group that did not take
        # part in the match gives None, which goes to the value parser as is.
        raw = groups.get("value", "")
        value = raw if value_parser is None else value_parser(raw)
        if merge and key in out:
            collected = out[key]
            if not isinstance(collected, list):
                collected = out[key] = [collected]
            # A first value that was already a list (say, from a json value parser)
            # is extended in place, as the reference does.
            collected.append(value)
        else:
            out[key] = value
    return out


###}


###{standalone xml_typed
def parse_xml_typed(
    body: str,
    args: dict,
    finditer: "Finditer",  # noqa: UP037
    value_parser: "ValueParser | None",  # noqa: UP037
    typed_parsers: dict,
) -> dict:
    """``xml-inline`` whose tags say how their value is read (the ``typed-values``
    extension): the text of the tag's ``args["typed_group"]`` group picks the value's
    parser in ``typed_parsers``; any other text, or a group that did not take part,
    falls back to ``value_parser``.

    ``args``: ``tag_pattern`` (for messages), ``merge_duplicates`` (boolean),
    ``typed_group`` (a group name of the tag pattern).
    """
    merge = args["merge_duplicates"]
    typed_group = args["typed_group"]
    out: dict = {}
    for m in finditer(body):
        groups = m.groupdict()
        key = groups.get("key")
        if key is None:
            raise ValueError(
                "xml-inline: tag_pattern needs a named group 'key' that takes part in "
                f"every match; pattern: {args['tag_pattern']}"
            )
        raw = groups.get("value", "")
        parser = typed_parsers.get(groups.get(typed_group), value_parser)
        value = raw if parser is None else parser(raw)
        if merge and key in out:
            collected = out[key]
            if not isinstance(collected, list):
                collected = out[key] = [collected]
            collected.append(value)
        else:
            out[key] = value
    return out


###}


###{standalone kv_lines
def parse_kv_lines(body: str, args: dict, value_parser: "ValueParser | None") -> dict:  # noqa: UP037
    """``key<kv_sep>value`` lines as a dict; other lines are skipped.

    ``args``: ``line_sep`` and ``kv_sep`` (as written in the template, defaults
    ``"\\n"`` and ``":"``), ``strip`` (boolean, applies to lines, keys and values).
    """
    kv_sep = args["kv_sep"]
    out: dict = {}
    # The separators are used as written, so str.split/`in` raise what the reference's
    # raise for a bad one (empty separator: ValueError; not a string: TypeError), and a
    # null line_sep splits on whitespace runs.
    for line in body.split(args["line_sep"]):
        line = parse_text(line, args)
        if not line or kv_sep not in line:
            continue
        key, raw = line.split(kv_sep, 1)
        key, raw = parse_text(key, args), parse_text(raw, args)
        out[key] = raw if value_parser is None else value_parser(raw)
    return out


###}


###{standalone pythonic
# rtcompiler's own extension (declared in a template with "extensions": ["pythonic"]);
# transformers has no such parser. Python's own parser reads the call list, so every
# literal form the language allows (both quote styles, escapes, nested containers,
# True/False/None) is read exactly as Python reads it, in linear time, and nothing is
# ever evaluated: only literal nodes are accepted.
import ast as _ast  # noqa: E402
import io as _io  # noqa: E402
import keyword as _keyword  # noqa: E402
import tokenize as _tokenize  # noqa: E402


def _pythonic_rename_keywords(text: str) -> "tuple[str, dict] | None":  # noqa: UP037
    """``text`` with parameters and functions named like Python keywords
    (``f(from="en")``, ``or()``) renamed to fresh identifiers, and the renaming;
    ``None`` when there are none.

    Models do write such calls (a ``from``/``class``/``in`` parameter is common), but
    Python's grammar refuses them; the tokenizer still reads them as plain names.
    """
    try:
        tokens = list(_tokenize.generate_tokens(_io.StringIO(text).readline))
    except (_tokenize.TokenError, SyntaxError):
        return None
    significant = [t for t in tokens if t.type not in (_tokenize.NL, _tokenize.COMMENT)]
    renames: dict = {}
    out = []
    for i, tok in enumerate(significant):
        before = significant[i - 1].string if i > 0 else ""
        after = significant[i + 1].string if i + 1 < len(significant) else ""
        if (
            tok.type == _tokenize.NAME
            and _keyword.iskeyword(tok.string)
            and (
                (before in ("(", ",") and after == "=")  # a parameter: f(from="en")
                or (before in ("[", ",", ".") and after in ("(", "."))  # a name: or(), a.in.b()
            )
        ):
            fresh = f"_rtc_keyword_{len(renames)}"
            while fresh in text:
                fresh += "_"
            renames[fresh] = tok.string
            tok = tok._replace(string=fresh)
        out.append((tok.type, tok.string))
    if not renames:
        return None
    # Token-by-token output respaces the text, which changes nothing in a call list.
    return _tokenize.untokenize(out), renames


def _pythonic_json(value: object, where: str) -> object:
    """A literal's value as JSON data: tuples become lists; other non-JSON types fail."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_pythonic_json(item, where) for item in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"pythonic: {where}: dict keys must be strings, got {key!r}")
            out[key] = _pythonic_json(item, where)
        return out
    raise ValueError(f"pythonic: {where}: {type(value).__name__} is not a JSON value")


def _pythonic_name(node: object, renames: dict) -> str:
    # f(...) or a dotted name such as tools.search(...)
    parts = []
    while isinstance(node, _ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, _ast.Name):
        raise ValueError("pythonic: a call must name a function (NAME or a.b.NAME)")
    parts.append(node.id)
    return ".".join(renames.get(part, part) for part in reversed(parts))


def _pythonic_unreadable(exc: BaseException, body: str) -> ValueError:
    return ValueError(f"pythonic: not a Python list of calls ({exc}).\nText: {body!r}")


def parse_pythonic(body: str, args: dict) -> list:
    """A Python list of keyword calls, ``[f(a=1, b="x"), g()]``, as
    ``[{"name": "f", "arguments": {"a": 1, "b": "x"}}, {"name": "g", "arguments": {}}]``.

    ``args``: ``strip`` (boolean). Anything else -- positional arguments, ``**kwargs``,
    expressions that are not literals, a body that is not one list of calls -- is a
    ``ValueError`` naming what is wrong.
    """
    text = body.strip() if args["strip"] else body
    renames: dict = {}
    try:
        tree = _ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        renamed = _pythonic_rename_keywords(text)
        if renamed is None:
            raise _pythonic_unreadable(exc, body) from None
        text, renames = renamed
        try:
            tree = _ast.parse(text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise _pythonic_unreadable(exc, body) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        # ValueError: a NUL byte; the others: nesting beyond what Python's parser takes.
        raise _pythonic_unreadable(exc, body) from None
    if not isinstance(tree, _ast.List):
        raise ValueError(f"pythonic: expected a list of calls like [f(a=1)].\nText: {body!r}")
    calls = []
    for element in tree.elts:
        if not isinstance(element, _ast.Call):
            raise ValueError(f"pythonic: every list item must be a call.\nText: {body!r}")
        name = _pythonic_name(element.func, renames)
        if element.args:
            raise ValueError(
                f"pythonic: {name}: positional arguments have no parameter names; "
                f"write {name}(name=value)"
            )
        arguments = {}
        for keyword in element.keywords:
            if keyword.arg is None:
                raise ValueError(f"pythonic: {name}: **kwargs is not a literal argument")
            key = renames.get(keyword.arg, keyword.arg)
            where = f"{name}({key}=...)"
            try:
                value = _ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                raise ValueError(f"pythonic: {where}: not a Python literal") from None
            arguments[key] = _pythonic_json(value, where)
        calls.append({"name": name, "arguments": arguments})
    return calls


###}

# ----------------------------------------------------------------------------------
# Compile time. Nothing below is copied into generated modules.
# ----------------------------------------------------------------------------------

# Which sections a section calls into; a generated module includes the closure.
SECTION_DEPENDS: dict[str, tuple[str, ...]] = {
    "content_error": (),
    "text": (),
    "int": ("text",),
    "float": ("text",),
    "bool": ("text",),
    "json": ("text",),
    "xml_inline": (),
    "xml_typed": (),
    "kv_lines": ("text",),
    "pythonic": (),
}

# File order, which puts every section after the ones it depends on.
SECTION_ORDER: tuple[str, ...] = tuple(SECTION_DEPENDS)

# Content parser name -> (runtime function, its section).
PARSERS: dict[str, tuple[str, str]] = {
    "text": ("parse_text", "text"),
    "int": ("parse_int", "int"),
    "float": ("parse_float", "float"),
    "bool": ("parse_bool", "bool"),
    "json": ("parse_json", "json"),
    "xml-inline": ("parse_xml_inline", "xml_inline"),
    "kv-lines": ("parse_kv_lines", "kv_lines"),
    "pythonic": ("parse_pythonic", "pythonic"),
}

# The xml-inline content_args key of the ``typed-values`` extension (docs/extensions.md),
# honoured on a field's own parser only (a nested value parser ignores it, as the
# reference ignores every key it does not know).
TYPED_VALUES = "typed_values"

# Parsers that are rtcompiler extensions, each usable only in a template that declares
# it (docs/extensions.md); transformers refuses such a template.
EXTENSION_PARSERS = frozenset({"pythonic"})

# Parsers whose chunks are part of the final value, streamed with dirty=False.
STREAMABLE_PARSERS = frozenset({"text", "int", "float", "bool"})


@dataclass(frozen=True)
class ContentPlan:
    """A content parser specialised to one field's (or nested value parser's) arguments.

    ``parser`` is the content name as written; ``function`` the runtime function to
    call; ``args`` its prepared, JSON-like arguments. ``tag_pattern`` (xml-inline
    only) is the pattern to compile into the ``finditer`` argument, ``None`` when the
    template gives none (the parser then fails at parse time, like the reference).
    ``value_parser`` is the nested plan of xml-inline and kv-lines, if any.
    ``typed`` (the ``typed-values`` extension) pairs each text of the tag pattern's
    typing group with the plan of its values (``None``: the raw text), in the
    template's order. ``sections`` is the dependency-closed set of runtime sections
    the plan needs, nested plans included, in file order.
    """

    parser: str
    function: str
    args: dict[str, Any]
    sections: tuple[str, ...]
    tag_pattern: str | None = None
    value_parser: ContentPlan | None = field(default=None)
    typed: tuple[tuple[str, ContentPlan | None], ...] = ()

    @property
    def streamable(self) -> bool:
        return self.parser in STREAMABLE_PARSERS


def section_closure(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` plus everything they depend on, in file order."""
    wanted: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(SECTION_DEPENDS[name])
    return tuple(s for s in SECTION_ORDER if s in wanted)


def _error_plan(parser: str, error: str, message: str) -> ContentPlan:
    return ContentPlan(
        parser=parser,
        function="parse_content_error",
        args={"error": error, "message": message},
        sections=("content_error",),
    )


def content_plan(content: str, content_args: Any) -> ContentPlan:
    """Specialise a field's parser ``content`` to ``content_args`` (as written in the
    template); see :func:`_plan`. Only here, on a field's own parser, does an
    xml-inline ``typed_values`` take effect (the template stage refuses it unless the
    template declares the ``typed-values`` extension)."""
    return _plan(content, content_args, field_level=True)


def _plan(content: str, content_args: Any, field_level: bool = False) -> ContentPlan:
    """Specialise parser ``content`` to ``content_args`` (as written in the template).

    ``content`` must be a known parser name (the template stage has checked it);
    anything else raises ``ValueError``. A ``content_args`` with which the reference
    fails on every parse of the region -- not a dict, a ``tag_pattern`` that is not a
    string, a ``value_parser`` that is not a dict or names an unknown parser -- gives a
    plan that raises the reference's exception type when called (the nested case only
    when a value is actually parsed, exactly where the reference raises).
    """
    if content not in PARSERS:
        raise ValueError(f"unknown content parser {content!r}; known: {sorted(PARSERS)}")
    if not isinstance(content_args, Mapping):
        # Every reference parser starts with content_args.get(...).
        return _error_plan(
            content,
            "AttributeError",
            f"{content}: content_args must be a dict, got {type(content_args).__name__}",
        )
    function, section = PARSERS[content]
    strip = bool(content_args.get("strip", True))
    nested: ContentPlan | None = None
    tag_pattern: str | None = None
    if content in ("text", "int", "float", "bool", "pythonic"):
        args: dict[str, Any] = {"strip": strip}
    elif content == "json":
        delims = content_args.get("string_delims", [])
        args = {
            "string_delims": delims,
            "unquoted_key_pattern": (
                unquoted_key_pattern() if content_args.get("unquoted_keys", False) else None
            ),
            "allow_non_json": bool(content_args.get("allow_non_json")),
            "strip": strip,
            "same_delimiter": _same_delimiter(delims),
        }
    elif content == "kv-lines":
        args = {
            "line_sep": content_args.get("line_sep", "\n"),
            "kv_sep": content_args.get("kv_sep", ":"),
            "strip": strip,
        }
        nested = _value_parser_plan(content_args.get("value_parser"))
    else:  # xml-inline
        pattern = content_args.get("tag_pattern")
        if pattern is not None and not isinstance(pattern, str):
            # regex.finditer refuses a pattern that is not a string.
            return _error_plan(
                content,
                "TypeError",
                f"xml-inline: tag_pattern must be a string, got {type(pattern).__name__}",
            )
        tag_pattern = pattern
        args = {
            "tag_pattern": pattern,
            "merge_duplicates": bool(content_args.get("merge_duplicates", False)),
        }
        nested = _value_parser_plan(content_args.get("value_parser"))
        if field_level and TYPED_VALUES in content_args:
            return _typed_plan(content_args[TYPED_VALUES], args, tag_pattern, nested)
    needed = [section] + (list(nested.sections) if nested is not None else [])
    return ContentPlan(
        parser=content,
        function=function,
        args=args,
        sections=section_closure(needed),
        tag_pattern=tag_pattern,
        value_parser=nested,
    )


def _typed_plan(
    spec: Any, args: dict[str, Any], tag_pattern: str | None, nested: ContentPlan | None
) -> ContentPlan:
    """The ``typed-values`` form of an xml-inline plan (the template stage has checked
    ``spec``: ``{"group": NAME, "parsers": {TEXT: value parser or null}}``)."""
    if (
        not isinstance(spec, Mapping)
        or not isinstance(spec.get("group"), str)
        or not isinstance(spec.get("parsers"), Mapping)
        or tag_pattern is None
    ):
        raise ValueError(f"{TYPED_VALUES}: not a checked typed-values spec: {spec!r}")
    typed = tuple(
        (text, None if parser is None else _value_parser_plan(parser))
        for text, parser in spec["parsers"].items()
    )
    needed = ["xml_typed"] + [s for p in (nested, *(p for _, p in typed)) if p for s in p.sections]
    return ContentPlan(
        parser="xml-inline",
        function="parse_xml_typed",
        args={**args, "typed_group": spec["group"]},
        sections=section_closure(needed),
        tag_pattern=tag_pattern,
        value_parser=nested,
        typed=typed,
    )


def _same_delimiter(delims: Any) -> str | None:
    """The delimiter of ``string_delims`` when it is one pair of one non-empty string
    (Gemma 4's ``<|"|>`` both ends): parse_json then rewrites strings in place."""
    if type(delims) is list and len(delims) == 1:
        pair = delims[0]
        if (
            type(pair) in (list, tuple) and len(pair) == 2 and type(pair[0]) is str and pair[0]
            and pair[0] == pair[1]
        ):
            return pair[0]
    return None


def _value_parser_plan(spec: Any) -> ContentPlan | None:
    """The plan of a nested ``{"name": ..., "args": ...}`` value parser."""
    if spec is None:
        return None
    if not isinstance(spec, Mapping):
        # The reference calls spec.get(...) on the first value it parses.
        return _error_plan(
            "value_parser",
            "AttributeError",
            f"value_parser must be a dict like {{'name': 'json'}}, got {type(spec).__name__}",
        )
    name = spec.get("name", "text")
    try:
        known = name in PARSERS and name not in EXTENSION_PARSERS
    except TypeError:  # an unhashable name: the reference's table lookup raises this
        return _error_plan(
            "value_parser", "TypeError", f"value_parser name must be a string, got {name!r}"
        )
    if not known:
        return _error_plan(
            "value_parser",
            "KeyError",
            f"value_parser names unknown content parser {name!r}; "
            f"known: {sorted(set(PARSERS) - EXTENSION_PARSERS)}",
        )
    return _plan(name, spec.get("args", {}))


def unquoted_key_pattern() -> str:
    r"""The stdlib ``re`` pattern for a bare JSON object key, as the reference finds it.

    The reference matches ``(?<=[{,])(\w+):`` with the ``regex`` module, whose ``\w``
    is not the standard library's (combining marks and connector punctuation are word
    characters there, superscript digits are not). The class is therefore spelled out
    as code point ranges taken from ``regex`` itself.
    """
    from rtcompiler.dialect.charsets import derive

    return "(?<=[{,])([" + class_body(derive(r"\w").ranges) + "]+):"


def class_body(ranges: Iterable[tuple[int, int]]) -> str:
    """The inside of a stdlib ``re`` character class for inclusive code point ranges.

    Every endpoint is written as an escape, so the pattern is ASCII and no character
    can be read as class syntax.
    """
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_escape_code_point(lo))
        else:
            parts.append(f"{_escape_code_point(lo)}-{_escape_code_point(hi)}")
    return "".join(parts)


def _escape_code_point(cp: int) -> str:
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


FinditerFactory = Callable[[str], Finditer]


def _engine_finditer(pattern: str) -> Finditer:
    from rtcompiler.automata import compile_tag_pattern

    return compile_tag_pattern(pattern).group_finditer


def build_parser(
    plan: ContentPlan, compile_pattern: FinditerFactory | None = None
) -> Callable[[Any], Any]:
    """The plan as an in-process callable ``body -> value``.

    ``compile_pattern`` turns a tag pattern into a ``finditer``; by default our own
    regex engine (the one generated modules embed).
    """
    compile_pattern = compile_pattern or _engine_finditer
    function = globals()[plan.function]
    args = plan.args
    nested = build_parser(plan.value_parser, compile_pattern) if plan.value_parser else None
    if plan.function == "parse_xml_inline":
        finditer = compile_pattern(plan.tag_pattern) if plan.tag_pattern is not None else None
        return lambda body: function(body, args, finditer, nested)
    if plan.function == "parse_xml_typed":
        finditer = compile_pattern(plan.tag_pattern)
        typed = {text: build_parser(p, compile_pattern) if p else None for text, p in plan.typed}
        return lambda body: function(body, args, finditer, nested, typed)
    if plan.function == "parse_kv_lines":
        return lambda body: function(body, args, nested)
    return lambda body: function(body, args)
