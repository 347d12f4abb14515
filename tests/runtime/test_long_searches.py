"""Delimiter searches that go a long way before they settle cost a bounded amount of
Python work per parse, whatever the length: counted, never timed.

Shapes that were slower in ours than in the reference (issue 18):

- a tool-call header whose lazy ``.*?<|message|>`` stays open for ``n`` characters:
  the DFA stayed in one state for the whole stretch, stepped a character at a time in
  Python, and the groups were then read by the thread machine over the same stretch;
- Qwen3-Coder XML whose parameter value holds ``n / 25`` near-misses of the two-tag
  close ``</function>\\s*</tool_call>``: each failed a stdlib match, and past
  ``_WHOLE_FAILURES`` of them the close was handed to its scanner, stepped in Python.

``steps`` counts DFA steps taken in Python, ``looped`` the characters scanners passed
over at C speed in a state that stays put (``CompiledRegex.loop_exit``), ``walked`` the
characters the thread machine read for groups (``CompiledRegex.groups_at``).
"""

from __future__ import annotations

from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler.codegen import load_parser
from rtcompiler.template import load_template

SIZES = (2_000, 8_000, 32_000)

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
CODER_HEAD = "<tool_call>\n<function=write_file>\n<parameter=content>\n"
CODER_UNIT = "</function>\n</tool_cal x\n"
CODER_TAIL = "\n</parameter>\n</function>\n</tool_call>Done.<|im_end|>"


def _coder(n: int) -> str:
    return CODER_HEAD + CODER_UNIT * (n // len(CODER_UNIT)) + CODER_TAIL


def _whole(module, text):
    stream = module.ResponseStream(module.TABLE, "")
    message = stream.parse_whole(text)
    return message, stream


def test_near_misses_of_a_two_tag_close_stay_in_the_stdlib_search():
    module = load_parser(load_template(CODER_XML))
    per_char, steps = [], []
    for n in SIZES:
        text = _coder(n)
        message, stream = _whole(module, text)
        assert message == ref_parse_response(text, CODER_XML, prefix="")
        assert message["tool_calls"][0]["arguments"]["content"].count(CODER_UNIT) == n // 25
        # No scanner steps the value: one stdlib search (its form reads apart, so a
        # search trying every start is linear) goes over all the near-misses.
        steps.append(stream.steps)
        per_char.append((stream.searched + stream.examined) / n)
    assert max(steps) <= 16, steps
    assert max(per_char) <= 3.5, per_char
    assert per_char[2] <= per_char[0] * 1.05 + 0.05, per_char
