"""A tool-call header cut by the end of a long piece pends without a scanner.

Streamed 64 or 256 characters a feed, a Harmony output cuts most of its tool-call
headers (``<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>``)
somewhere inside. Whether the search pends there was answered by a scanner that
stepped the header's characters through the DFA in Python, once per header and again
on the next feed (165 steps a 1K stream at 64 characters a feed). The stdlib search of
the pattern's beginnings answers it now (``ResponseStream.answer``): no step is taken
in Python, and every event is still the reference's. Counted, never timed.
"""

from __future__ import annotations

import pytest
from transformers.utils.chat_parsing import ResponseParser as RefParser

from rtcompiler.codegen import load_parser
from rtcompiler.grammars import grammar
from rtcompiler.template import load_template

GPT_OSS = grammar("gpt_oss:strict").spec

CALLS = (
    ("get_weather", '{"city": "Paris", "days": 3}'),
    ("search_web", '{"query": "tides at Saint-Malo", "max_results": 5}'),
    ("run_python", '{"code": "print(sum(range(10)))", "timeout": 2.5}'),
    ("get_weather", '{"city": "Z\\u00fcrich", "units": "metric"}'),
    ("x", "{}"),
)


def _harmony() -> str:
    text = (
        "<|channel|>analysis<|message|>The user wants the weather and a search; "
        "to=functions is mentioned here only in prose.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Checking a few things.<|end|>"
    )
    for name, arguments in CALLS:
        text += (
            f"<|start|>assistant to=functions.{name}<|channel|>commentary json"
            f"<|message|>{arguments}<|call|>"
        )
    return text


def _pieces(text: str, step: int, first: int) -> list[str]:
    # Every piece but the last is long: the cuts move by ``first``, the head piece holds
    # ``step + first`` characters. (A header cut by a short piece is the scanner's, which
    # then steps each new piece: see test_pending_shortcuts.)
    return [text[: step + first]] + [
        text[i : i + step] for i in range(step + first, len(text), step)
    ]


@pytest.mark.parametrize("step", [64, 256])
def test_harmony_headers_cut_by_long_pieces_take_no_python_steps(step):
    module = load_parser(load_template(GPT_OSS))
    text = _harmony()
    steps = []
    for first in range(0, step, 3):
        pieces = _pieces(text, step, first)
        parser = module.ResponseParser("")
        reference = RefParser(GPT_OSS, "")
        for piece in pieces:
            assert parser.feed(piece) == reference.feed(piece), (first, piece)
        assert parser.finalize() == reference.finalize()
        steps.append(parser._stream.steps)
    assert max(steps) == 0, steps
