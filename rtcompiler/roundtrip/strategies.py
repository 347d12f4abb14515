"""Hypothesis strategies for round trips: tools, their arguments, assistant messages.

Text is drawn to be awkward -- Unicode, quotes, backslashes, newlines, braces,
fragments of markup -- except for the *reserved* strings of the format (its
special tokens), which a model's text cannot contain because the tokenizer
keeps them as single special tokens; ambiguities that remain are the
grammar's to document.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

_FRAGMENTS = ["<", ">", "</", "/>", "[", "]", "{", "}", '"', "'", "\\", "\n", "\t", " ", "  ",
              ":", ",", "|", "think", "tool", "call", "function", "=", "é", "ß", "中文", "🙂",
              "\u0301", "\u00a0", "null", "true", "1.5", "```"]


def texts(
    reserved: tuple[str, ...], min_size: int = 0, max_size: int = 40
) -> st.SearchStrategy[str]:
    pieces = st.one_of(
        st.text(st.characters(exclude_categories=("Cs", "Cc"), include_characters="\n\t"),
                min_size=1, max_size=8),
        st.sampled_from(_FRAGMENTS),
    )
    text = st.lists(pieces, max_size=max_size // 4 + 1).map("".join)
    text = text.filter(lambda s: min_size <= len(s) <= max_size * 2)
    return text.filter(lambda s: not any(r in s for r in reserved))


_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
_TYPES = ["string", "integer", "number", "boolean", "object", "array", "null"]


@st.composite
def tool_schemas(draw: Any, max_tools: int = 3, null: bool = True) -> list[dict]:
    names = draw(st.lists(_NAME, min_size=1, max_size=max_tools, unique=True))
    types = _TYPES if null else [t for t in _TYPES if t != "null"]
    tools = []
    for name in names:
        params = draw(st.dictionaries(_NAME, st.sampled_from(types), max_size=4))
        tools.append({
            "type": "function",
            "function": {
                "name": name,
                "description": f"The {name} tool.",
                "parameters": {
                    "type": "object",
                    "properties": {k: {"type": t} for k, t in params.items()},
                    "required": sorted(params),
                },
            },
        })
    return tools


def _keys(reserved: tuple[str, ...], identifiers: bool) -> st.SearchStrategy[str]:
    return _NAME if identifiers else texts(reserved, min_size=1, max_size=8)


def json_values(reserved: tuple[str, ...], depth: int = 2, null: bool = True,
                identifiers: bool = False) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none() if null else st.booleans(), st.booleans(), st.integers(-10**6, 10**6),
        st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda x: x == x),
        texts(reserved, max_size=12),
    )
    if depth == 0:
        return scalars
    inner = json_values(reserved, depth - 1, null, identifiers)
    return st.one_of(
        scalars,
        st.lists(inner, max_size=3),
        st.dictionaries(_keys(reserved, identifiers), inner, max_size=3),
    )


def value_of_type(kind: str, reserved: tuple[str, ...], null: bool = True,
                  identifiers: bool = False) -> st.SearchStrategy[Any]:
    return {
        "string": texts(reserved, max_size=20),
        "integer": st.integers(-10**6, 10**6),
        "number": st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3)),
        "boolean": st.booleans(),
        "object": st.dictionaries(_keys(reserved, identifiers),
                                  json_values(reserved, 1, null, identifiers), max_size=3),
        "array": st.lists(json_values(reserved, 1, null, identifiers), max_size=3),
        "null": st.none(),
    }[kind]


_CALL_IDS = {"alnum9": st.from_regex(r"[A-Za-z0-9]{9}", fullmatch=True)}


@st.composite
def tool_calls(draw: Any, tools: list[dict], reserved: tuple[str, ...], max_calls: int,
               call_ids: str | None = None, null: bool = True,
               identifiers: bool = False) -> list[dict]:
    calls = []
    for _ in range(draw(st.integers(0, max_calls))):
        fn = draw(st.sampled_from(tools))["function"]
        props = fn["parameters"]["properties"]
        arguments = {k: draw(value_of_type(v["type"], reserved, null, identifiers))
                     for k, v in props.items()}
        call: dict = {"type": "function", "function": {"name": fn["name"], "arguments": arguments}}
        if call_ids:
            call["id"] = draw(_CALL_IDS[call_ids])
        calls.append(call)
    return calls


@st.composite
def assistant_messages(draw: Any, tools: list[dict] | None, reserved: tuple[str, ...],
                       reasoning: bool = True, max_calls: int = 3, call_ids: str | None = None,
                       null: bool = True, content_with_calls: bool = True,
                       identifiers: bool = False) -> dict:
    message: dict = {"role": "assistant"}
    message["content"] = draw(texts(reserved))
    if reasoning and draw(st.booleans()):
        message["reasoning_content"] = draw(texts(reserved))
    if tools and max_calls:
        calls = draw(tool_calls(tools, reserved, max_calls, call_ids, null, identifiers))
        if calls:
            message["tool_calls"] = calls
            if not content_with_calls:
                message["content"] = ""
    return message


def chunkings(text: str) -> st.SearchStrategy[list[int]]:
    """Chunk sizes that cover ``text``: single characters, small pieces, or all at once."""
    if not text:
        return st.just([])
    sizes = st.lists(st.integers(1, 8), min_size=1, max_size=len(text))

    def cover(parts: list[int]) -> list[int]:
        out, left = [], len(text)
        i = 0
        while left > 0:
            n = min(parts[i % len(parts)], left)
            out.append(n)
            left -= n
            i += 1
        return out

    return st.one_of(st.just([1] * len(text)), st.just([len(text)]), sizes.map(cover))


def draw_examples(strategy: st.SearchStrategy[Any], n: int, seed: int = 0) -> list[Any]:
    """``n`` values drawn from ``strategy``, the same ones for the same seed (no shrinking)."""
    import random

    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    out: list[Any] = []

    def keep(value: Any) -> bool:
        out.append(value)
        return len(out) >= n

    if n <= 0:
        return []
    try:
        find(strategy, keep,
             settings=settings(max_examples=n, phases=[Phase.generate], database=None,
                               deadline=None, suppress_health_check=list(HealthCheck)),
             random=random.Random(seed))
    except NoSuchExample:
        pass
    return out[:n]


@st.composite
def user_prompts(draw: Any, reserved: tuple[str, ...], tools: bool | None = None,
                 null: bool = True) -> tuple[str, list[dict] | None]:
    """A user message's text and, with ``tools`` (or a coin when None), tools to offer."""
    text = draw(texts(reserved, min_size=1, max_size=40).filter(lambda s: s.strip() != ""))
    offer = draw(st.booleans()) if tools is None else tools
    return text, (draw(tool_schemas(null=null)) if offer else None)
