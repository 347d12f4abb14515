"""Our chat templates render conversations as the model's own renderer does, where that
renderer is at hand offline: mistral-common generates the chat templates of Mistral's
tokenizers (``build_chat_template``), which we render side by side with ours.

DeepSeek's and Moonshot's renderers are Python encoders we do not ship; their layouts are
pinned by the outputs of ``test_formats.py`` and the round trips.
"""

from __future__ import annotations

import json

import jinja2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtcompiler.grammars import grammar
from rtcompiler.roundtrip import strategies
from rtcompiler.roundtrip.render import ChatRenderer


def mistral_template(version: str, **options) -> str:
    try:
        from mistral_common.integrations.chat_templates.template_generator import (
            TemplateConfig,
            build_chat_template,
        )
        from mistral_common.tokens.tokenizers.base import TokenizerVersion
    except ImportError:
        pytest.fail("mistral-common (the 'models' extra) is needed: these tests do not skip",
                    pytrace=False)
    return build_chat_template(TemplateConfig(version=TokenizerVersion(version), **options))


BANNED = ("[", "<s>", "</s>", "<think>", "</think>")
TEXT = strategies.texts(BANNED, max_size=12)
IDS = st.from_regex(r"[A-Za-z0-9]{9}", fullmatch=True)


@st.composite
def conversations(draw, thinking: bool):
    tools = draw(st.one_of(st.none(), strategies.tool_schemas()))
    messages = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(TEXT)})
    for _ in range(draw(st.integers(1, 3))):
        for _ in range(draw(st.integers(1, 2))):
            messages.append({"role": "user", "content": draw(TEXT)})
        if draw(st.integers(0, 4)) == 0:
            messages.append({"role": "system", "content": draw(TEXT)})
        calls = draw(strategies.tool_calls(tools, BANNED, 2, "alnum9")) if tools else []
        answer = {"role": "assistant", "content": draw(TEXT.filter(bool))}
        if thinking and draw(st.booleans()):
            answer["reasoning_content"] = draw(TEXT)
        if calls:
            answer["tool_calls"] = calls
            if not thinking and draw(st.integers(0, 3)):
                answer["content"] = ""  # v3 refuses content beside calls
        messages.append(answer)
        for c in calls:
            key = draw(st.sampled_from(["tool_call_id", "call_id"]))
            content = draw(st.one_of(TEXT, st.sampled_from(["7", "-2", "1.5", "x1"])))
            messages.append({"role": "tool", key: c["id"], "content": content})
    if draw(st.integers(0, 9)) == 0:  # a conversation both must refuse
        messages.insert(0, {"role": "assistant", "content": "x"})
    return tools, messages


def outcome(render):
    try:
        return render()
    except jinja2.exceptions.TemplateError:
        return "refused"


CASES = [
    ("mistral_v3", "v3", {"spm": False}, {}),
    ("mistral_v3", "v3", {"spm": True}, {"spm": True}),
    ("magistral_2506", "v11", {"plain_thinking_support": True}, {}),
]


@pytest.mark.parametrize("name, version, options, variables", CASES,
                         ids=[f"{c[0]}-{json.dumps(c[2])}" for c in CASES])
def test_mistral_templates_render_as_mistral_commons(name, version, options, variables):
    ours = ChatRenderer(grammar(name).chat_template, variables)
    theirs = ChatRenderer(mistral_template(version, **options))
    seen = {"rendered": 0, "refused": 0}

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(conversations(thinking=name == "magistral_2506"))
    def same(case):
        tools, messages = case
        want = outcome(lambda: theirs.render(messages, tools))
        got = outcome(lambda: ours.render(messages, tools))
        assert got == want, json.dumps(messages, ensure_ascii=False)
        seen["rendered" if want != "refused" else "refused"] += 1

    same()
    assert seen["rendered"] > 30 and seen["refused"] > 0, seen
