"""Shared pieces: a bundled grammar's drawn cases, and running a delta stream over them."""

from __future__ import annotations

import functools
from typing import Any

import jinja2
from hypothesis import assume
from hypothesis import strategies as st

from rtcompiler.automata import compile_regex
from rtcompiler.codegen import load_parser
from rtcompiler.codegen.deltas import openai_plan
from rtcompiler.grammars import grammar as bundled
from rtcompiler.openai import accumulate
from rtcompiler.roundtrip import strategies
from rtcompiler.roundtrip.check import cut_at_stop, normalisation, reserved_strings
from rtcompiler.roundtrip.render import ChatRenderer
from rtcompiler.runtime.deltas import DeltaStream, arguments_json

HISTORY = [{"role": "user", "content": "Hello"}]


class Grammar:
    """A bundled grammar, ready to draw cases from and to stream."""

    def __init__(self, name: str) -> None:
        found = bundled(name)
        self.name = name
        self.template = found.template
        self.chat_template = found.chat_template
        meta = found.meta
        self.norm = normalisation(meta.get("normalise"))
        names = {f.name for f in self.template.fields}
        if self.norm["reasoning"] is None:
            self.norm["reasoning"] = "reasoning_content" in names
        if "tool_calls" not in names:
            self.norm["max_tool_calls"] = 0
        self.variables = self.norm["render_kwargs"]
        self.renderer = ChatRenderer(self.chat_template, self.variables)
        self.reserved = reserved_strings(self.template, self.chat_template, meta.get("reserved"))
        self.module = load_parser(self.template)
        self.plan = openai_plan(self.template)

    def cases(self) -> st.SearchStrategy[dict]:
        norm = self.norm

        @st.composite
        def draw_case(draw: Any) -> dict:
            null = "null" not in norm["unsupported_argument_values"]
            tools = draw(st.one_of(st.none(), strategies.tool_schemas(null=null)))
            message = draw(strategies.assistant_messages(
                tools, self.reserved, reasoning=norm["reasoning"],
                max_calls=norm["max_tool_calls"] or 0, call_ids=norm["tool_call_id"], null=null,
                identifiers=norm["identifier_keys"],
                content_with_calls=norm["content_with_tool_calls"] != "unsupported"))
            try:
                prompt, output = self.renderer.assistant_turn(HISTORY, message, tools)
            except jinja2.exceptions.TemplateError:
                assume(False)
            output = cut_at_stop(output, norm["end_of_turn"])
            chunks = draw(strategies.chunkings(output))
            return {"tools": tools, "prompt": prompt, "output": output, "chunks": chunks}

        return draw_case()

    def stream(self, prompt: str, tools: list | None) -> DeltaStream:
        return DeltaStream(self.module.ResponseParser(prompt, tools=tools), self.plan, tools,
                           call_id=lambda index: f"call_{index}", regex=compile_regex)


@functools.cache
def grammar(name: str) -> Grammar:
    return Grammar(name)


def run(stream: DeltaStream, output: str, chunks: list[int]) -> list[dict]:
    """Every delta of ``stream`` fed ``output`` in ``chunks``, finish included."""
    deltas = list(stream.initial_deltas)
    at = 0
    for n in chunks:
        deltas += stream.feed(output[at:at + n])
        at += n
    deltas += stream.finish()
    return deltas


def openai_view(message: dict, ensure_ascii: bool = False) -> dict:
    """What of a parsed message the deltas carry: texts, and calls as (name, arguments JSON)."""
    view: dict[str, Any] = {}
    for key in ("content", "reasoning_content"):
        value = message.get(key)
        view[key] = value if isinstance(value, str) else ""
    calls = message.get("tool_calls") or []
    view["tool_calls"] = [
        (c["function"].get("name"), arguments_json(c["function"].get("arguments"), ensure_ascii))
        for c in calls
    ]
    return view


def rebuilt_view(deltas: list[dict]) -> dict:
    message = accumulate(deltas)
    view: dict[str, Any] = {key: message.get(key, "") for key in ("content", "reasoning_content")}
    view["tool_calls"] = [(c["function"].get("name"), c["function"]["arguments"])
                          for c in message.get("tool_calls", [])]
    return view
