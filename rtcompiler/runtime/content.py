"""Content parsers: turn the text captured by a region into the field's value.

One ``###{standalone NAME`` section per parser, standard library only, inlined by the
code generator into every generated module that needs it. Each takes the region body
and *prepared* arguments -- plain JSON-like data computed at compile time -- so nothing
about a field's ``content_args`` is looked up or defaulted while parsing. Call shapes::

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

The compile-time half, which specialises a field's ``content_args`` into those
prepared arguments, is :mod:`rtcompiler.codegen.content`.

Behaviour is transformers 5.23.0's ``chat_parsing.content_parsers``, including how each
malformed ``content_args`` fails. The reference does not validate ``content_args`` when
a template loads: a bad value only fails when a region of that field is parsed, so a
plan reproduces that failure at parse time instead of refusing the template.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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
# One it holds as it is, but not as the same value: json.dumps writes a surrogate as an
# escape, and two escaped surrogates of a pair decode to one character.
_SURROGATE = _re.compile("[\ud800-\udfff]")


def _strings_in_place(
    body: str, delimiter: str, key_pattern: "str | None", exact: bool = False  # noqa: UP037
):
    """``(text, parked)`` as parking the strings of ``body`` written between two
    ``delimiter`` (one opening and closing delimiter, as Gemma's ``<|"|>``) and
    quoting the keys leave them, or None when a string is left open (parking then
    leaves it as text: the general path decides).

    Done with splits and joins: the text outside the strings is rewritten as one
    piece, joined by a marker where each string was (a key can neither hold a marker
    character nor follow one, so the markers' numbers change nothing). When no string
    needs an escape, nothing is parked: each string is itself between quotes. That
    text decodes to the reference's value; but where a string is beyond ASCII (which
    json.dumps writes as escapes) it is not the reference's text, which a failure
    quotes: then ``parked`` is None, unless ``exact`` asks for the reference's text.
    """
    parts = body.split(delimiter)
    if len(parts) % 2 == 0:
        return None
    outside = parts[0::2]
    if key_pattern is not None:
        outside = _quote_keys(_PARK_OPEN.join(outside), key_pattern).split(_PARK_OPEN)
    strings = parts[1::2]
    joined = "".join(strings)
    if _NEEDS_ESCAPE.search(joined) is None and (
        joined.isascii() or not exact and _SURROGATE.search(joined) is None
    ):
        parts[0::2] = outside
        return '"'.join(parts), [] if joined.isascii() else None
    pieces = [outside[0]]
    for k, rest in enumerate(outside[1:]):
        pieces.append(f"{_PARK_OPEN}{k}{_PARK_CLOSE}")
        pieces.append(rest)
    return "".join(pieces), strings


def parse_json_plain(body: str, args: dict) -> object:
    """:func:`parse_json` for ``args`` that ask for no repair (no ``string_delims``, no
    ``unquoted_key_pattern``): one decode. A body that does not decode goes to
    parse_json, which decodes it again and fails, or falls back, with its words."""
    try:
        return _json_loads(body)
    except (ValueError, RecursionError):
        return parse_json(body, args)


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
            "json: input contains reserved sentinel characters (\\x01/\\x02); cannot parse "
            "safely. (string_delims parsing reserves them)"
        )
    working = body
    parked: list = []
    key_pattern = args["unquoted_key_pattern"]
    same = args.get("same_delimiter")  # (worked out with the plan: see _same_delimiter)
    in_place = None if same is None else _strings_in_place(body, same, key_pattern)
    if in_place is not None:
        working, parked = in_place
        if parked is None:
            # In place, with a string beyond ASCII: the reference's value when it decodes.
            # A failure is worded from the reference's text, made for it.
            try:
                return _json_loads(working)
            except (ValueError, RecursionError):
                working, parked = _strings_in_place(body, same, key_pattern, True)
    else:
        # Iterate the value as written: a malformed string_delims fails here with the
        # same exception the reference raises (unpacking a non-pair, iterating None, ...).
        for open_d, close_d in delims:
            for end in (open_d, close_d):
                if not isinstance(end, str):
                    # The reference's message: escaping iterates the delimiter.
                    raise TypeError(
                        f"{type(end).__name__!r} object is not iterable "
                        "(json: string_delims entries must be pairs of strings)"
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
            raise ValueError(
                f"json parser could not parse region as JSON.\nContent: {body!r}\nError: {exc}"
            ) from exc
        raise ValueError(
            f"json: could not parse after dialect transforms.\nOriginal: {body!r}\n"
            f"Transformed: {working!r}\nError: {exc}"
        ) from exc


###}


###{standalone xml_inline
def parse_xml_inline(
    body: str,
    args: dict,
    finditer: "Finditer | None",  # noqa: UP037
    value_parser: "ValueParser | None",  # noqa: UP037
    split=None,
) -> dict:
    """Flat XML-ish tags as a dict: one entry per match of the tag pattern.

    ``args``: ``tag_pattern`` (for messages) and ``merge_duplicates`` (boolean); with
    ``tags_only`` (the ``recover`` extension), ``tags_leads`` and ``tags_closers``.
    ``split``: with ``tags_only``, the tag pattern's ``group_split`` (or None).
    """
    if finditer is None:
        raise ValueError("xml-inline: 'tag_pattern' content_arg is required")
    if not isinstance(body, str):
        # Reached through a nested value_parser whose value group did not take part.
        raise TypeError(
            f"expected string or buffer (xml-inline: got {type(body).__name__} to parse)"
        )
    if args.get("tags_only", False):
        if split is not None:
            whole = _xml_tags_split(body, args, split(body), value_parser)
            if whole is not None:
                return whole
        return _xml_inline_tags_only(body, args, finditer, value_parser)
    merge = args["merge_duplicates"]
    out: dict = {}
    for m in finditer(body):
        groups = m.groupdict()
        key = groups.get("key")
        if key is None:
            _xml_no_key(args)
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


def _xml_no_key(args: dict) -> None:
    raise ValueError(
        "xml-inline: tag_pattern must have a named group 'key'. Pattern: "
        f"{args['tag_pattern']} (the group must take part in every match)"
    )


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
    ``typed_group`` (a group name of the tag pattern), and ``key_entities``: (entity,
    text) pairs replaced in each key, in that order (Kimi K3 escapes its attributes).
    """
    merge = args["merge_duplicates"]
    typed_group = args["typed_group"]
    entities = args.get("key_entities", ())
    tags_only = args.get("tags_only", False)
    read = tags = 0  # with tags_only: where the tags read so far end, and how many
    out: dict = {}
    for m in finditer(body):
        if tags_only:
            start, end = m.span()
            if start > read and not body[read:start].isspace():
                _xml_untagged(body, read, start, args["tags_closers"])
            read = end
            tags += 1
        groups = m.groupdict()
        key = groups.get("key")
        if key is None:
            raise ValueError(
                "xml-inline: tag_pattern must have a named group 'key'. Pattern: "
                f"{args['tag_pattern']} (the group must take part in every match)"
            )
        for entity, text in entities:
            if entity in key:
                key = key.replace(entity, text)
        raw = groups.get("value", "")
        parser = typed_parsers.get(groups.get(typed_group), value_parser)
        value = raw if parser is None else parser(raw)
        if merge and key in out:
            collected = out[key]
            if not isinstance(collected, list):
                collected = out[key] = [collected]
            collected.append(value)
        else:
            if tags_only and key in out:
                _xml_twice(key)
            out[key] = value
    if tags_only:
        # The usual body passes at C speed: nothing after the last tag but one stray
        # closing tag at most, and as many openings as tags read.
        rest = body[read:].strip()
        if (rest and rest not in args["tags_closers"]) or sum(
            map(body.count, args["tags_leads"])
        ) != tags:
            _xml_tags_only_end(body, read, tags, args)
    return out


###}


###{standalone xml_tags_only
# ``tags_only`` (the ``recover`` extension, docs/extensions.md): an xml-inline body that
# its tags do not read whole is a failure, which the field then recovers from.
def _xml_inline_tags_only(
    body: str,
    args: dict,
    finditer: "Finditer",  # noqa: UP037
    value_parser: "ValueParser | None",  # noqa: UP037
) -> dict:
    """``parse_xml_inline`` with ``tags_only``: its own loop, as a body's every tag
    pays for the checks."""
    merge = args["merge_duplicates"]
    read = merged = 0  # where the tags read so far end; values merged into a list
    out: dict = {}
    for m in finditer(body):
        start, read_to = m.span()
        if start != read and not body[read:start].isspace():
            _xml_untagged(body, read, start, args["tags_closers"])
        read = read_to
        groups = m.groupdict()
        key = groups.get("key")
        if key is None:
            _xml_no_key(args)
        raw = groups.get("value", "")
        value = raw if value_parser is None else value_parser(raw)
        if key in out:
            if not merge:
                _xml_twice(key)
            collected = out[key]
            if not isinstance(collected, list):
                collected = out[key] = [collected]
            collected.append(value)
            merged += 1
        else:
            out[key] = value
    # The usual body passes at C speed: nothing after the last tag but one stray
    # closing tag at most, and as many openings as tags read.
    tags = len(out) + merged
    rest = body[read:].strip()
    if (rest and rest not in args["tags_closers"]) or sum(
        map(body.count, args["tags_leads"])
    ) != tags:
        _xml_tags_only_end(body, read, tags, args)
    return out


def _xml_tags_split(body: str, args: dict, found, value_parser) -> dict | None:
    """``_xml_inline_tags_only``'s answer from the tag pattern's ``split`` of the body
    (``found``, see CompiledRegex.group_split) where it passes every check: the text
    between the tags, its closing tags taken out, is whitespace; each key is given
    once; as many tags open as were read. None where it does not (or ``found`` is
    None): the loop then finds the failure, and says it as ever."""
    if found is None:
        return None
    parts, (stride, k, v) = found
    if k is None:
        return None
    keys = parts[k::stride]
    if None in keys or len(set(keys)) != len(keys):
        return None
    # The closing tags hold no whitespace (see codegen), so joined by a space no two
    # gaps make one up.
    between = " ".join(parts[::stride])
    for closer in args["tags_closers"]:
        if closer in between:
            between = between.replace(closer, "")
    if between and not between.isspace():
        return None
    if sum(map(body.count, args["tags_leads"])) != len(keys):
        return None
    values = [""] * len(keys) if v is None else parts[v::stride]
    if value_parser is not None:
        values = map(value_parser, values)
    return dict(zip(keys, values))  # noqa: B905 (one value per key, by the split)


def _xml_untagged(body: str, start: int, end: int, closers: list) -> None:
    """Text no tag reads is a failure, unless it is only whitespace and stray
    closing tags of the pattern's."""
    text = body[start:end]
    for closer in closers:
        text = text.replace(closer, "")
    if not text.strip():
        return
    text = body[start:end].strip()
    shown = text if len(text) <= 60 else text[:57] + "..."
    raise ValueError(f"xml-inline: text outside the tags at {start}: {shown!r}")


def _xml_tags_only_end(body: str, read: int, tags: int, args: dict) -> None:
    """``tags_only``, once the tags are read: no text after the last, and no tag that
    swallowed the opening (the pattern's leading literals) of another."""
    if body[read:].strip():
        _xml_untagged(body, read, len(body), args["tags_closers"])
    leads = args["tags_leads"]
    if leads:
        opened = sum(body.count(lead) for lead in leads)
        if opened != tags:
            raise ValueError(
                f"xml-inline: {opened} tags open ({' or '.join(map(repr, leads))}), "
                f"{tags} read: a tag's text holds the opening of another"
            )


def _xml_twice(key: str) -> None:
    """``tags_only``: a key given twice (without merge_duplicates) is ambiguous."""
    raise ValueError(f"xml-inline: {key!r} given twice")


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
