"""Seeded model outputs to measure on: realistic turns per template style, and adversarial ones.

Realistic turns are rendered by each bundled grammar's own chat template (the same
rendering ``rtc check`` uses), so whitespace, markers and argument encodings are what
the model family really emits. Only the message is invented: seeded prose, code and
tool calls sized to reach a target length.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache
from typing import Any

# One of each template style issue 6 asks for: Hermes JSON, XML with xml-inline, Harmony
# with a named-group open_pattern, relaxed JSON with unquoted keys and string delimiters.
STYLES = ("qwen3", "qwen3_coder", "gpt_oss", "gemma4")
# The other bundled grammars whose strict form the reference loads and whose chat template
# renders a message with prose and tool calls: measured on request (``--styles``, or
# ``--styles all``), each with a row for its robust form, so that what the robustness
# extensions cost (docs/extensions.md) is measured by the same bench. (Not measured:
# grammars whose strict form needs an extension of ours, and the Mistral v3 and Magistral
# 2506 templates, which render calls without prose or need 9-character call ids.)
MORE_STYLES = (
    "command_r7b", "deepseek_r1", "deepseek_v31", "glm45", "glm47", "granite3", "kimi_k2",
    "llama3_json", "magistral", "mistral", "phi4_mini",
)
ALL_STYLES = STYLES + MORE_STYLES
KINDS = ("mixed", "plain")

TOOLS: list[dict] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather and forecast for a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"},
            "units": {"type": "string", "enum": ["metric", "imperial"]},
        }, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search_web", "description": "Search the web.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "max_results": {"type": "integer"},
            "fresh": {"type": "boolean"},
        }, "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "write_file", "description": "Write a text file.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"},
        }, "required": ["path", "content"]}}},
    {"type": "function", "function": {
        "name": "run_python", "description": "Run a Python snippet.",
        "parameters": {"type": "object", "properties": {
            "code": {"type": "string"}, "timeout": {"type": "number"},
        }, "required": ["code"]}}},
]

_WORDS = (
    "the a of to and in is that for it as with on be by this are from at or an which we "
    "model parser stream token value region field state input output buffer delimiter "
    "function result request weather city forecast search query answer reason check "
    "step first then next because however therefore example data file path code test "
    "error case user tool call argument number string list returns should would could "
    "compute expected temperature tomorrow rain wind latency throughput memory cache"
).split()
_CITIES = ("Paris", "Lyon", "São Paulo", "Zürich", "Tokyo", "New York", "Cape Town", "Kraków")
_CODE_LINES = (
    "def {f}({a}, {b}):",
    "    if {a} < {b}:",
    "        return {a} * {n} + {b}",
    "    for i in range({n}):",
    "        {a} += i  # running total",
    "    result = {{\"{a}\": {a}, \"{b}\": [{n}, {n}]}}",
    "    print(f\"{a}={{{a}}} and {b}={{{b}}}\")",
    "    return sorted(items, key=lambda x: x[{n}])",
    "",
    "class {F}:",
    "    def __init__(self, {a}):",
    "        self.{a} = {a}",
    "            while {a} > {n}:",
    "                {a} //= 2",
)


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(5, 18))]
    words[0] = words[0].capitalize()
    if rng.random() < 0.2:
        words.insert(rng.randint(1, len(words)), rng.choice(("(see above)", "e.g.", "i.e.", "—")))
    return " ".join(words) + rng.choice(".....?!:")


def prose(rng: random.Random, size: int) -> str:
    """Paragraphs of sentences, about ``size`` characters."""
    paragraphs: list[str] = []
    total = 0
    while total < size:
        paragraph = " ".join(_sentence(rng) for _ in range(rng.randint(2, 6)))
        paragraphs.append(paragraph)
        total += len(paragraph) + 2
    return "\n\n".join(paragraphs)[:max(size, 1)].rstrip() or "Ok."


def code(rng: random.Random, size: int) -> str:
    """Python-looking lines (indentation runs, comparisons, braces, quotes)."""
    lines: list[str] = []
    total = 0
    while total < size:
        names = {
            "f": rng.choice(("compute", "load", "step", "merge")) + str(rng.randint(0, 99)),
            "F": rng.choice(("Parser", "Cache", "Region")) + str(rng.randint(0, 9)),
            "a": rng.choice(("x", "count", "total", "left")),
            "b": rng.choice(("y", "limit", "right", "size")),
            "n": rng.randint(0, 500),
        }
        line = rng.choice(_CODE_LINES).format(**names)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def _content(rng: random.Random, size: int) -> str:
    """Prose with fenced code blocks, as an assistant answer looks."""
    parts: list[str] = []
    total = 0
    while total < size:
        chunk = prose(rng, min(size - total, rng.randint(300, 1500)))
        parts.append(chunk)
        total += len(chunk)
        if total < size and rng.random() < 0.5:
            block = "```python\n" + code(rng, min(size - total, rng.randint(200, 1200))) + "\n```"
            parts.append(block)
            total += len(block)
    return "\n\n".join(parts)


def _arguments(rng: random.Random, name: str, big: int) -> dict:
    if name == "get_weather":
        return {"city": rng.choice(_CITIES), "days": rng.randint(1, 14),
                "units": rng.choice(("metric", "imperial"))}
    if name == "search_web":
        return {"query": prose(rng, rng.randint(20, 80)), "max_results": rng.randint(1, 20),
                "fresh": rng.random() < 0.5}
    if name == "write_file":
        return {"path": f"src/module_{rng.randint(0, 999)}.py", "content": code(rng, big)}
    return {"code": code(rng, max(big, 60)), "timeout": rng.choice((1.5, 10.0, 30.25))}


def mixed_message(rng: random.Random, size: int) -> dict:
    """Reasoning, an answer with code, and several tool calls: about ``size`` characters."""
    calls = [{"type": "function", "function": {"name": n, "arguments": _arguments(rng, n, 40)}}
             for n in ("get_weather", "search_web")]
    # One call carries a large argument (a file body), as coding agents' calls do.
    big = rng.choice(("write_file", "run_python"))
    calls.append({"type": "function",
                  "function": {"name": big, "arguments": _arguments(rng, big, size // 4)}})
    last = _arguments(rng, "get_weather", 0)
    calls.append({"type": "function", "function": {"name": "get_weather", "arguments": last}})
    return {"role": "assistant", "reasoning_content": prose(rng, size // 4),
            "content": _content(rng, size * 2 // 5), "tool_calls": calls}


def plain_message(rng: random.Random, size: int) -> dict:
    return {"role": "assistant", "content": _content(rng, size)}


@dataclass
class Output:
    """One model output and everything needed to parse it."""

    style: str
    kind: str
    text: str
    prefix: str
    tools: list[dict] | None
    message: dict = field(default_factory=dict)  # what was rendered (not the parse target)

    @property
    def size(self) -> int:
        return len(self.text)


@cache
def response_template(style: str, robust: bool = False) -> dict:
    """The style's bundled grammar: its strict form (the reference's template; every
    ratio compares like with like), or with ``robust`` the form as bundled, with the
    robustness extensions it opts in to (docs/extensions.md)."""
    from rtcompiler.grammars import grammar

    return grammar(style if robust else f"{style}:strict").spec


def has_robust_form(style: str) -> bool:
    """Whether the style's bundled grammar opts in to a robustness extension."""
    return response_template(style, robust=True) != response_template(style)


@cache
def _renderer(style: str) -> tuple[Any, tuple[str, ...]]:
    from rtcompiler.grammars import grammar
    from rtcompiler.roundtrip.render import ChatRenderer

    found = grammar(style)
    normalise = found.meta.get("normalise", {})
    variables = normalise.get("render_kwargs") or {}
    renderer = ChatRenderer(found.chat_template, variables)
    return renderer, tuple(normalise.get("end_of_turn") or ())


_HISTORY = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Check the weather in Paris, then write the helper we discussed."},
]


def _render(style: str, message: dict) -> tuple[str, str]:
    renderer, stops = _renderer(style)
    prompt, output = _render_turn(renderer, style, message)
    # A model stops at its end-of-turn marker; what a chat template writes after it
    # (a newline before the next turn) is never generated, and would reopen a region.
    ends = [output.rfind(s) + len(s) for s in stops if s in output]
    return prompt, output[: max(ends)] if ends else output


def _render_turn(renderer: Any, style: str, message: dict) -> tuple[str, str]:
    if style == "gpt_oss" and message.get("tool_calls") and message.get("content"):
        # Harmony puts prose next to tool calls in a commentary preamble, which the
        # chat template refuses to render from a message; splice it in where a model
        # writes it, before the first call.
        content = message["content"]
        prompt, output = renderer.assistant_turn(
            _HISTORY, {k: v for k, v in message.items() if k != "content"}, TOOLS)
        cut = output.index("<|start|>assistant to=functions")
        preamble = f"<|start|>assistant<|channel|>commentary<|message|>{content}<|end|>"
        return prompt, output[:cut] + preamble + output[cut:]
    return renderer.assistant_turn(_HISTORY, message, TOOLS)


def realistic(style: str, kind: str, size: int, seed: int = 0) -> Output:
    """A rendered assistant turn of about ``size`` characters (seeded, deterministic)."""
    build = mixed_message if kind == "mixed" else plain_message
    budget = size
    for _ in range(2):  # the second pass corrects the markup overhead of the first
        message = build(random.Random(f"{seed}:{style}:{kind}:{size}"), budget)
        prompt, text = _render(style, message)
        budget = max(1, budget * size // max(len(text), 1))
    return Output(style, kind, text, prompt, TOOLS, message)


# -- adversarial inputs --------------------------------------------------------------
# Each is quadratic (or worse) in the reference when fed one character at a time: a long
# stretch the reference keeps as a possible delimiter start and rescans on every feed.

HERMES_WS = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open_pattern": r"\s*<tool_call>", "close": "</tool_call>",
                       "repeats": True, "content": "json"},
        "content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)"},
    },
}
CODER_CLOSE = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close_pattern": r"</function>\s*</tool_call>",
                       "repeats": True},
        "content": {"close": "<|im_end|>"},
    },
}
HARMONY_HEADER = {
    "start_anchor": "<|start|>assistant",
    "fields": {
        "tool_calls": {
            "open_pattern": r"to=functions\.(?P<name>[\w.]+).*?<\|message\|>",
            "close": "<|call|>", "repeats": True, "content": "json",
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {},
    },
}
NAME_AT_EDGE = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open_pattern": r"\[(?P<name>\w+)\]", "close": "[/]", "repeats": True,
                       "transform": {"name": "{name}", "arguments": "{content}"}},
        "content": {},
    },
}
EXPONENTIAL = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {"call": {"open_pattern": r"<c(?:[a-z]|\w)+:", "close": ">"}, "content": {}},
}


@dataclass(frozen=True)
class Adversarial:
    name: str
    description: str
    template: dict
    head: str
    unit: str
    tail: str

    def output(self, size: int) -> Output:
        """``size`` characters of the repeated stretch between head and tail."""
        body = (self.unit * (size // len(self.unit) + 1))[:size]
        return Output(self.name, "adversarial", self.head + body + self.tail, "", None)


ADVERSARIAL = (
    Adversarial("hermes_ws", r"whitespace run in content under \s*<tool_call>", HERMES_WS,
                "The answer is", " \n\t ", " done.<|im_end|>"),
    Adversarial("coder_close_ws", r"whitespace inside </function>\s*</tool_call>", CODER_CLOSE,
                "<tool_call>\n<function=f>\n</function>", " \n", "</tool_call>ok<|im_end|>"),
    Adversarial("harmony_header", "unfinished Harmony header to=functions.x ... before <|message|>",
                HARMONY_HEADER, "<|channel|>commentary to=functions.get_weather ", "json x ",
                '<|message|>{"city": "Paris"}<|call|>'),
    Adversarial("name_at_edge", r"long \w+ name at the buffer edge", NAME_AT_EDGE,
                "Calling [", "get_weather", "]{}[/] done"),
    Adversarial("exponential", r"exponential backtracking <c(?:[a-z]|\w)+:", EXPONENTIAL,
                "<c", "a", "! fin"),
)
ADVERSARIAL_BY_NAME = {a.name: a for a in ADVERSARIAL}


# -- shapes where a delimiter search keeps going a long way, parsed whole and in chunks --
# Each was slower in ours than in the reference in held-out measurements (issue 18).

CODER_XML = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>[^>\n]+)>",
            "close_pattern": r"</function>\s*</tool_call>", "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>"},
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {"close": "<|im_end|>"},
    },
}

SHAPES = (
    Adversarial("harmony_lazy_header",
                r"a tool-call header whose lazy .*?<\|message\|> stays open for the stretch",
                HARMONY_HEADER, "Checking.<|channel|>commentary to=functions.get_weather ",
                "json x ", '<|message|>{"city": "Paris"}<|call|>'),
    Adversarial("coder_near_miss",
                r"a parameter value of </function>\n</tool_cal near-misses of the close",
                CODER_XML, "Writing it.<tool_call>\n<function=write_file>\n<parameter=path>\n"
                "a.txt\n</parameter>\n<parameter=content>\n",
                "</function>\n</tool_cal x\n",
                "\n</parameter>\n</function>\n</tool_call>Done.<|im_end|>"),
)
SHAPES_BY_NAME = {s.name: s for s in SHAPES}
