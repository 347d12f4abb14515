"""OpenAI-compatible streaming deltas from a compiled parser.

>>> from rtcompiler import compile_template
>>> from rtcompiler.openai import DeltaStream
>>> stream = DeltaStream(compile_template("qwen3"), "<|im_start|>assistant\\n",
...                      call_id=lambda index: f"call_{index}", live_calls=True)
>>> stream.initial_deltas
[{'role': 'assistant'}]
>>> stream.feed('Sure.\\n<tool_call>\\n{"name": "f", "arguments": {"x": 1')
[{'content': 'Sure.'}, {'tool_calls': [{'index': 0, 'id': 'call_0', 'type': 'function', \
'function': {'name': 'f', 'arguments': '{"x": '}}]}]
>>> stream.feed('0}}\\n</tool_call><|im_end|>') + stream.finish()
[{'tool_calls': [{'index': 0, 'function': {'arguments': '10}'}}]}]
>>> stream.finish_reason
'tool_calls'

Each delta is what goes in ``choices[0].delta`` of a ``chat.completion.chunk``;
:func:`chunk` wraps one. :func:`accumulate` folds deltas back into a message,
as a client does. See ``docs/openai.md`` for the format and for which
templates stream tool-call arguments before the call ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from .api import CompiledParser, _schemas, compile_template
from .automata import compile_regex
from .codegen.deltas import openai_plan
from .runtime import deltas as _runtime
from .runtime.deltas import arguments_json
from .template import Template

__all__ = ["DeltaStream", "accumulate", "arguments_json", "chunk", "openai_plan"]


class DeltaStream(_runtime.DeltaStream):
    """Deltas from a compiled template's streaming parse of one generation.

    ``parser`` is a :class:`~rtcompiler.CompiledParser`, a ``Template``, a
    template dict, path or bundled grammar name; ``prefix`` and ``tools`` are
    what the parser takes (tools may be Python functions). The deltas gathered
    from ``initial_deltas``, every ``feed`` and ``finish`` rebuild
    ``.message``; see :class:`rtcompiler.runtime.deltas.DeltaStream`.
    """

    def __init__(
        self,
        parser: CompiledParser | Template | dict | str,
        prefix: str | None = None,
        *,
        tools: list | None = None,
        call_id: Callable[[int], str] | None = None,
        ensure_ascii: bool = False,
        live_calls: bool = False,
    ) -> None:
        compiled = parser if isinstance(parser, CompiledParser) else compile_template(parser)
        schemas = _schemas(tools)
        super().__init__(
            compiled.response_parser(prefix, tools=schemas),
            openai_plan(compiled.template),
            schemas,
            call_id=call_id,
            ensure_ascii=ensure_ascii,
            regex=compile_regex,
            live_calls=live_calls,
        )


def chunk(
    delta: dict,
    *,
    id: str = "chatcmpl-rtc",
    model: str = "rtc",
    created: int | None = None,
    finish_reason: str | None = None,
) -> dict:
    """A ``chat.completion.chunk`` object carrying ``delta`` as its only choice."""
    return {
        "id": id,
        "object": "chat.completion.chunk",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def accumulate(deltas: Iterable[dict]) -> dict:
    """Fold deltas into a message, as an OpenAI client does.

    Text keys concatenate; tool calls gather by ``index``: the first delta of
    an index gives its ``id``, ``type`` and ``function.name``, every one adds to
    ``function.arguments``. Tool calls come out in index order.
    """
    message: dict[str, Any] = {}
    calls: dict[int, dict] = {}
    # Text in pieces, joined at the end: a long argument comes in many thousands.
    texts: dict[str, list[str]] = {}
    arguments: dict[int, list[str]] = {}
    for delta in deltas:
        for key, value in delta.items():
            if key == "tool_calls":
                for part in value:
                    index = part["index"]
                    call = calls.get(index)
                    if call is None:
                        call = calls[index] = {"function": {"arguments": ""}}
                        arguments[index] = []
                    for field in ("id", "type"):
                        if part.get(field) is not None:
                            call[field] = part[field]
                    function = part.get("function") or {}
                    if function.get("name") is not None:
                        call["function"]["name"] = function["name"]
                    arguments[index].append(function.get("arguments") or "")
            elif key == "role":
                message["role"] = value
            elif value is not None:
                if key not in texts:
                    message[key], texts[key] = "", []
                texts[key].append(value)
    for key, pieces in texts.items():
        message[key] = "".join(pieces)
    for index, pieces in arguments.items():
        calls[index]["function"]["arguments"] = "".join(pieces)
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message
