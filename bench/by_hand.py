"""Gemma 4's whole-text parse written by hand for its one template: how near the floor
Python can come on this format.

The floor (``floor.py``) is a delimiter scan plus ``json.loads`` of each tool call's
arguments, written as canonical JSON outside the clock. Gemma 4 does not write JSON:
its keys are bare and its strings sit between ``<|"|>`` marks, so a parser must convert
each call before decoding it, and type the arguments by the tools' schemas. This parser
does that work and nothing else, in one function: one search for the template's
delimiters, the regions' text, each tool call's arguments through the content parser of
our generated module (``parse_json``, with the template's arguments) and typed by each
argument's one declared ``type`` with ours' ``coerce_argument`` (enough for the bench's
tools, which use no ``anyOf`` or ``nullable``). It has no prompt handling (the bench's
prompts end with the generation prompt), no streaming, no error paths, and knows only
this template. It is not a product: it measures how far above the floor a parser of this
format stays.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

# The template's delimiters (rtcompiler/grammars/gemma4/response_template.json), as one search.
_DELIMITERS = re.compile(
    r"<\|channel>thought|<channel\|>|<\|tool_call>call:([^{<]+)|<tool_call\|>|<turn\|>"
    r"|<\|tool_response>"
)
_CASTS = ("integer", "number", "boolean", "null", "object", "array")


def tool_call_arguments(module: ModuleType) -> dict:
    """The content arguments the generated module passes to ``parse_json`` for the
    ``tool_calls`` field (``_ARGS_content_<i>``, ``i`` the field's place)."""
    names = [region.name for region in module.TABLE.regions]
    return getattr(module, f"_ARGS_content_{names.index('tool_calls')}")


def parse_by_hand(module: ModuleType, text: str, tools: list[dict] | None) -> dict:
    """The message ``module.parse_response(text, prefix=..., tools=tools)`` gives for the
    bench's Gemma 4 outputs (a prompt ending with the generation prompt)."""
    arguments_of = tool_call_arguments(module)
    parse_json, coerce_argument = module.parse_json, module.coerce_argument
    casts: dict[str, dict[str, tuple]] = {}
    for tool in tools or []:
        function = tool["function"]
        properties = function.get("parameters", {}).get("properties", {})
        casts[function["name"]] = {
            key: (schema["type"],) for key, schema in properties.items()
            if schema.get("type") in _CASTS
        }
    message: dict[str, Any] = {"role": "assistant"}
    content, calls = [], []
    mode, pos, name = "content", 0, ""
    for found in _DELIMITERS.finditer(text):
        token = found.group()
        if mode == "content":
            if token == "<|channel>thought":
                mode = "reasoning"
            elif found.group(1) is not None:
                mode, name = "call", found.group(1)
            elif token in ("<turn|>", "<|tool_response>"):
                content.append(text[pos:found.start()])
                pos = len(text)
                break
            else:
                continue
            content.append(text[pos:found.start()])
        elif mode == "reasoning" and token == "<channel|>":
            message["reasoning_content"] = text[pos:found.start()].strip()
            mode = "content"
        elif mode == "call" and token == "<tool_call|>":
            arguments = parse_json(text[pos:found.start()], arguments_of)
            typed = casts.get(name)
            if typed:
                for key, value in arguments.items():
                    if type(value) is str and key in typed:
                        arguments[key] = coerce_argument(value, typed[key])
            calls.append({"type": "function", "function": {"name": name, "arguments": arguments}})
            mode = "content"
        else:
            continue
        pos = found.end()
    if mode == "content":
        content.append(text[pos:])
    joined = "".join(content).strip()
    if joined:
        message["content"] = joined
    if calls:
        message["tool_calls"] = calls
    return message


def call_bodies(text: str) -> list[str]:
    """Each tool call's arguments as written, for timing their conversion alone."""
    return re.findall(r"<\|tool_call>call:[^{<]+(.*?)<tool_call\|>", text, re.DOTALL)


def conversion_run(module: ModuleType, bodies: list[str]):
    """A callable converting ``bodies`` as our parser does (no scan, no typing)."""
    parse_json, arguments_of = module.parse_json, tool_call_arguments(module)

    def run() -> int:
        for body in bodies:
            parse_json(body, arguments_of)
        return len(bodies)

    return run
