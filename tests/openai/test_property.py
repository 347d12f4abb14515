"""Deltas rebuild the parsed message, for every bundled grammar, however the output is chunked.

Messages are drawn and rendered with each grammar's own chat template (as ``rtc
check`` does), the assistant turn is fed to a :class:`DeltaStream` in random
chunks, and what a client accumulates from the deltas must equal the message the
parser returns: content, reasoning, and each tool call's name and arguments JSON.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from rtcompiler.grammars import names

from .helpers import grammar, openai_view, rebuilt_view, run

EXAMPLES = 60


@pytest.mark.parametrize("name", names())
def test_deltas_rebuild_the_message(name):
    g = grammar(name)

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(g.cases())
    def check(case):
        stream = g.stream(case["prompt"], case["tools"])
        deltas = run(stream, case["output"], case["chunks"])
        assert stream.divergences == []
        assert rebuilt_view(deltas) == openai_view(stream.message)
        has_calls = bool(stream.message.get("tool_calls"))
        assert stream.finish_reason == ("tool_calls" if has_calls else "stop")
        ids = [call.get("id") for d in deltas for call in d.get("tool_calls", []) if "id" in call]
        assert ids == [f"call_{i}" for i in range(len(stream.message.get("tool_calls") or []))]

    check()
