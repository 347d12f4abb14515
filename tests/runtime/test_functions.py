"""Differential tests: ``tool_schema`` against transformers' ``get_json_schema``.

Functions are assembled from drawn parts -- a signature, type hints, and a docstring
made of lines that sit on the edges of the Google format (headings mid-line, entries
that do not parse, continuation lines, ``(choices: ...)``) -- and both converters must
return the same schema, key order included, or raise exceptions of the same name whose
message starts with the reference's.
"""

from __future__ import annotations

import json
import typing
from enum import Enum
from typing import Any, Literal, Optional, Union

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from transformers.utils.chat_template_utils import get_json_schema

from rtcompiler.runtime import functions
from rtcompiler.runtime.functions import tool_schema

from .helpers import DIFFERENTIAL, Raised, outcome, same


def _same_schema(mine: Any, ref: Any) -> bool:
    if isinstance(mine, Raised) or isinstance(ref, Raised):
        # Our exception classes carry the reference's names (they cannot be its classes),
        # and our messages start with the reference's: callers match on them.
        return (
            isinstance(mine, Raised)
            and isinstance(ref, Raised)
            and mine.type.__name__ == ref.type.__name__
            and (mine.type is ref.type or mine.type.__module__ == functions.__name__)
            and mine.message.startswith(ref.message)
        )
    return same(mine, ref)


def check(fn: Any) -> Any:
    ref = outcome(lambda: get_json_schema(fn))
    mine = outcome(lambda: tool_schema(fn))
    if currently_in_test_context():
        event(f"reference: {ref.type.__name__ if isinstance(ref, Raised) else 'schema'}")
    assert _same_schema(mine, ref), f"ours: {mine!r}\nreference: {ref!r}"
    if not isinstance(ref, Raised):
        # Same bytes too, so that a schema written to tools.json is identical.
        assert json.dumps(mine) == json.dumps(ref)
    return ref


# --- hand-written samples -------------------------------------------------------------


class Color(Enum):
    RED = "red"
    GREEN = "green"


class Mixed(Enum):
    ONE = 1
    HALF = 0.5
    NAME = "name"


class Empty(Enum):
    pass


class NotScalar(Enum):
    PAIR = (1, 2)


class Custom:
    pass


def get_weather(city: str, unit: str = "celsius", days: int | None = None) -> dict[str, float]:
    """Get the weather for a city.

    Args:
        city: The city to look up,
            spelled as on a map.
        unit: The unit (choices: ["celsius", "fahrenheit"])
        days: How many days ahead

    Returns:
        A mapping of day to temperature.

    Raises:
        ValueError: if the city is unknown
    """
    return {}


def everything(
    a: list[int],
    b: tuple[int, str],
    c: dict[str, list[str]],
    d: Optional[Union[int, str]],  # noqa: UP007, UP045 -- typing forms under test
    e: Literal["x", 1, True, None],
    f: Color,
    g: Mixed,
    h: Union[int, list[int]],  # noqa: UP007
    i: Any,
    j: list | tuple,
    k: Optional[Any],  # noqa: UP045
    m: typing.List[int],  # noqa: UP006 -- the typing alias is what is under test
    n: typing.Dict[str, int],  # noqa: UP006
    o: int | float,
    p: Union[Literal["a"], int, None],  # noqa: UP007
    q: dict,
    r: tuple,
) -> None:
    """All the hints.

    Args:
        a: a  b: b
        b: b
        c: c
        d: d
        e: e
        f: f
        g: g
        h: h
        i: i
        j: j
        k: k
        m: m
        n: n
        o: o
        p: p
        q: q
        r: r
    """


def no_doc(x: int) -> None:
    pass


def missing_arg_doc(x: int, y: int) -> None:
    """Only x.

    Args:
        x: The x
    """


def missing_hint(x, y: int) -> None:  # type: ignore[no-untyped-def]
    """Untyped.

    Args:
        x: x
        y: y
    """


def bad_return(x: int) -> Custom:
    """A return hint we cannot convert is left out.

    Args:
        x: x

    Returns:
        Something custom
    """
    return Custom()


def no_args() -> str:
    """Nothing to pass.

    Returns:
        a string
    """
    return ""


class Receiver:
    def method(self, x: int) -> int:
        """A method.

        Args:
            x: x
        """
        return x

    @classmethod
    def klass(cls, x: int) -> int:
        """A class method.

        Args:
            x: x
        """
        return x


def typed_self(self: int, x: int) -> None:
    """Self with a hint is a parameter.

    Args:
        self: me
        x: x
    """


SAMPLES = [
    get_weather,
    everything,
    no_doc,
    missing_arg_doc,
    missing_hint,
    bad_return,
    no_args,
    Receiver().method,
    Receiver.method,
    Receiver.klass,
    typed_self,
]


@pytest.mark.parametrize("fn", SAMPLES, ids=lambda fn: fn.__qualname__)
def test_samples(fn: Any) -> None:
    check(fn)


def test_sample_schema_is_the_documented_one() -> None:
    schema = check(get_weather)
    assert schema["function"]["parameters"]["properties"]["unit"] == {
        "type": "string",
        "enum": ["celsius", "fahrenheit"],
        "description": "The unit",
    }
    assert schema["function"]["return"]["description"] == "A mapping of day to temperature."


# --- drawn functions --------------------------------------------------------------------

HINTS: list[Any] = [
    int,
    str,
    float,
    bool,
    type(None),
    Any,
    list,
    list[int],
    list[list[str]],
    tuple,
    tuple[int, str],
    tuple[int],
    tuple[int, ...],
    dict,
    dict[str, int],
    Optional[int],  # noqa: UP045 -- typing.Union is what is under test
    int | None,
    Union[int, str],  # noqa: UP007
    Union[int, list[int]],  # noqa: UP007
    Literal["a", 1, True, None],
    Literal["a"],
    Literal[Color.RED],
    Color,
    Mixed,
    Empty,
    NotScalar,
    set[int],
    type,
    object,
    Custom,
    "UndefinedName",
    list | tuple,
    Optional[Any],  # noqa: UP045
    int | float | None,
    typing.Callable[[int], int],
    [int],  # not a type at all, and unhashable
]
hints = st.sampled_from(HINTS)

DOC_LINES = [
    "Does a thing.",
    "Second line of the description.",
    "Mentions Args: inline",
    "NoReturns: here",
    "",
    "   ",
    "Args:",
    "Args: ",
    "  Args:",
    "Returns:",
    "Returns: int",
    "Raises:",
    "    ValueError: when bad",
    "    x: The x",
    "    x:",
    '    y: The y (choices: ["a", "b"])',
    "    y: (CHOICES: [1, 2])",
    "    y: pick (choices: )",
    "    y: pick (choices: 5)",
    '    y: pick (choices: "ab")',
    "    y: pick (choices: [1]) trailing",
    "    z (int): typed the other way",
    "        continued deeper",
    "    continued at the same depth",
    "  z: less indented",
    "\tx: tab indented",
    "    Note: looks like an entry",
    "    é: unicode name",
    "    self: the receiver",
    "    The value returned.",
]
docstrings = st.lists(st.sampled_from(DOC_LINES), max_size=10).map("\n".join)
ENTRY_SHAPES = [
    "    {n}: The {n}",
    "    {n}: The {n}",
    "    {n}:",
    "    {n}:   spaced out   ",
    '    {n}: pick one (choices: ["a", " b "])',
    "    {n}: pick one (Choices:[1, 2.5, null])",
    "\t{n}: tab indented",
    "  {n}: less indented",
    "    {n}: on two\n        lines",
    "    {n}: on two\n    lines",
    "    {n}:\n        on the next line",
]


@st.composite
def shaped_docstrings(draw: st.DrawFn) -> str:
    """A docstring in the usual shape, with an entry for x, y and z among other lines.

    Most draws get past the docstring checks, so that the schemas get compared.
    """
    entries = [draw(st.sampled_from(ENTRY_SHAPES)).format(n=n) for n in ("x", "y", "z")]
    extra = draw(st.lists(st.sampled_from(DOC_LINES[12:]), max_size=3))
    body = draw(st.permutations(entries + extra))
    head = draw(st.sampled_from(DOC_LINES[:4]))
    tail = draw(st.lists(st.sampled_from(DOC_LINES[4:13]), max_size=3))
    return "\n".join([head, "", "Args:", *body, *tail])


@st.composite
def drawn_functions(draw: st.DrawFn) -> Any:
    names = draw(st.lists(st.sampled_from(["x", "y", "z", "self"]), unique=True, max_size=3))
    # Keyword-only parameters may take defaults in any order.
    params = ", ".join(f"{n}=None" if draw(st.booleans()) else n for n in names if n != "self")
    receiver = "self, " if "self" in names else ""
    star = "*, " if params else ""
    namespace: dict[str, Any] = {}
    exec(f"def tool({receiver}{star}{params}): pass", namespace)
    fn = namespace["tool"]
    annotations = {}
    for n in names:
        if draw(st.integers(0, 5)):
            annotations[n] = draw(hints)
    if draw(st.booleans()):
        annotations["return"] = draw(hints)
    fn.__annotations__ = annotations
    fn.__doc__ = draw(st.one_of(shaped_docstrings(), docstrings, st.none()))
    return fn


@DIFFERENTIAL
@given(fn=drawn_functions())
def test_drawn_functions(fn: Any) -> None:
    check(fn)


@DIFFERENTIAL
@given(doc=st.one_of(shaped_docstrings(), docstrings))
def test_drawn_docstrings(doc: str) -> None:
    """Every hint simple, so that the docstring parsing is what is compared."""

    def tool(x: int, y: str = "", z: float = 0.0) -> int:
        return 0

    tool.__doc__ = doc
    check(tool)


FRAGMENTS = [
    "Args:",
    "Returns:",
    "Raises:",
    "\n",
    "\n",
    "\n",
    " ",
    "  ",
    "\t",
    "\u00a0",
    "\x0b",
    "x",
    "y",
    "é",
    "\u0301",
    "_1",
    ":",
    ": ",
    "desc",
    "(choices:",
    "[1]",
    ")",
    ".",
]
FRAGMENTS += ["\n    x: ", "\n  y:", "\n\tz: ", "\n        ", "\n    ", "\nx:"]
soup = st.lists(st.sampled_from(FRAGMENTS), max_size=20).map("".join)
# Soup around real section headings, so that Args:/Returns: blocks do get parsed.
raw_docs = st.one_of(
    soup,
    st.tuples(
        soup,
        st.sampled_from(["\nArgs:\n", "\n  Args:\n", "\n \nArgs:\n", "Args:\n"]),
        soup,
        st.sampled_from(["", "\nReturns:\n", "\n    Returns:\n  ", "Raises:", "\nRaises:\n"]),
        soup,
    ).map("".join),
)


@DIFFERENTIAL
@given(doc=raw_docs)
def test_docstring_sections(doc: str) -> None:
    """Description, argument descriptions and returns of arbitrary fragment soup.

    ``get_json_schema`` strips the docstring before parsing it; so do we.
    """
    from transformers.utils.chat_template_utils import parse_google_format_docstring

    doc = doc.strip()
    ref_description, ref_args, ref_returns = parse_google_format_docstring(doc)
    assert ref_args is not None  # always a dict, possibly empty
    event(f"arguments described: {min(len(ref_args), 2)}; returns: {ref_returns is not None}")
    assert functions._description(doc) == ref_description
    assert functions._arg_descriptions(doc) == ref_args
    assert list(functions._arg_descriptions(doc)) == list(ref_args)
    assert functions._returns(doc) == ref_returns
    for text in ref_args.values():
        # Each description, as the one argument of a tool: (choices: ...) handling.
        def tool(x: str) -> None:
            pass

        tool.__doc__ = f"Tool.\n\nArgs:\n    x: {text}"
        check(tool)


@pytest.mark.parametrize(
    "doc",
    [
        # An empty description swallows the next entry: the whitespace after the colon
        # spans the line break, so "y: d" is x's description and y is undescribed.
        "D.\n\nArgs:\n    x:\n    y: d",
        "D.\n\nArgs:\n    x:\n    y: d\n    z: e",
        # A JSON string of choices is iterated: one choice per character.
        'D.\n\nArgs:\n    x: a (choices: "ab")\n    y: b\n    z: c',
        # "Args:" must end its line; "Args: " does not open a block.
        "D.\n\nArgs: \n    x: a\n    y: b\n    z: c",
        # A heading mid-word still ends the description.
        "Uses NoReturns: here\n\nArgs:\n    x: a\n    y: b\n    z: c",
    ],
)
def test_docstring_quirks(doc: str) -> None:
    def tool(x: int, y: str = "", z: float = 0.0) -> int:
        return 0

    tool.__doc__ = doc
    check(tool)
