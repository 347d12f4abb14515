"""The checks and the report of rtc check --generate, on outputs written here (no model).

Each check must catch what it names: a call to a tool not offered or with arguments
outside the schema, a message that does not survive rendering and parsing again, a
constrained row that does not parse, ends capped, or was forced and did not call. The
exit status is 1 exactly when a constrained row fails or a stream differs.
"""

from __future__ import annotations

import jsonschema

from rtcompiler.roundtrip import generate
from rtcompiler.roundtrip.sampling import Completion

TOOLS = [{"type": "function", "function": {"name": "f", "description": "The f tool.",
                                           "parameters": {
                                               "type": "object",
                                               "properties": {"n": {"type": "integer"}},
                                               "required": ["n"]}}}]


def qwen3() -> generate.Format:
    return generate.bundled_format("qwen3")


def conversation(fmt=None, force=False) -> generate.Conversation:
    conv = generate.Conversation(fmt or qwen3(), 0, "Wake me at 7", TOOLS, force)
    conv.prompt = conv.format.renderer.render([{"role": "user", "content": conv.user}],
                                              TOOLS, add_generation_prompt=True)
    return conv


def row(text, *, constrained=True, force=False, stop="grammar", conv=None) -> generate.Row:
    r = generate.Row(conv or conversation(force=force), 0, 1, constrained,
                     "required" if force else "auto")
    r.completion = Completion(ids=list(range(len(text))), pieces=list(text), stop=stop)
    generate.check_row(r)
    return r


CALL = '<tool_call>\n{"name": "f", "arguments": {"n": 7}}\n</tool_call><|im_end|>'


def test_a_call_must_name_an_offered_tool_with_valid_arguments():
    ok = {"type": "function", "function": {"name": "f", "arguments": {"n": 1}}}
    assert generate.check_call(ok, TOOLS) is None
    assert "arguments of f" in generate.check_call(
        {"function": {"name": "f", "arguments": {"n": "1"}}}, TOOLS)
    assert "arguments of f" in generate.check_call(
        {"function": {"name": "f", "arguments": "{broken"}}, TOOLS)
    assert generate.check_call({"function": {"name": "g", "arguments": {}}}, TOOLS) == \
        "unknown tool 'g'"


def test_generation_tools_are_small_and_bounded():
    tools = [{"type": "function", "function": {"name": "t", "parameters": {
        "type": "object", "properties": {k: {"type": t} for k, t in
                                         [("s", "string"), ("a", "array"), ("o", "object")]},
        "required": ["s", "a", "o"]}}}]
    bounded = generate.generation_tools(tools)[0]["function"]["parameters"]
    assert list(bounded["properties"]) == ["s", "a"]  # at most TOOL_PARAMETERS
    assert bounded["required"] == ["s", "a"]
    assert tools[0]["function"]["parameters"]["required"] == ["s", "a", "o"]  # a copy
    fine = {"s": "x" * 24, "a": [1, True, "short"]}
    jsonschema.validate(fine, bounded)
    for too_much in ({"s": "x" * 25, "a": []}, {"s": "", "a": [1, 2, 3, 4]},
                     {"s": "", "a": [10**4]}, {"s": "", "a": [], "extra": 1}):
        jsonschema.validate(too_much, tools[0]["function"]["parameters"] | {"required": []})
        try:
            jsonschema.validate(too_much, bounded)
        except jsonschema.ValidationError:
            continue
        raise AssertionError(f"{too_much} passes the bounded schema")


def test_a_constrained_row_that_parses_and_round_trips_passes():
    r = row(CALL, force=True)
    assert r.failures == []
    assert r.whole == r.stream and r.whole[0] == "ok"
    assert r.round_trip[0] == "ok" and (r.calls, r.valid_calls) == (1, 1)


def test_a_message_that_does_not_survive_rendering_fails_the_round_trip(monkeypatch):
    # A chat template that rewrites what it renders (Qwen3's takes the content before a
    # </think> for reasoning; the bundled grammar now drops a stray </think> from content,
    # so no parsed message holds one): here, one that writes the content in capitals.
    conv = conversation()
    renderer = conv.format.renderer
    real = renderer.assistant_turn
    monkeypatch.setattr(renderer, "assistant_turn", lambda history, message, tools: real(
        history, {**message, "content": message.get("content", "").upper()}, tools))
    r = row("Abc<|im_end|>", conv=conv)
    assert r.whole[0] == "ok"
    assert r.round_trip[0] == "error"
    assert r.failures == ["round trip"]


def strict_conversation(force=False) -> generate.Conversation:
    # qwen3 recovers a broken call (docs/extensions.md); its strict form still raises.
    return conversation(generate.bundled_format("qwen3:strict"), force=force)


def test_each_failure_of_a_constrained_row_is_named():
    broken = "<tool_call>\n{oops}\n</tool_call><|im_end|>"
    assert row(broken, conv=strict_conversation()).failures == ["parse error"]
    assert row("Hi<|im_end|>", force=True).failures == ["forced, no call"]
    assert row("Hi", stop="capped").failures == ["capped"]
    bad = '<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call><|im_end|>'
    assert row(bad).failures == ["unknown tool 'g'"]


def test_an_unconstrained_row_only_fails_on_a_stream_that_differs():
    r = row("<tool_call>\n{oops}\n</tool_call><|im_end|>", constrained=False, force=True,
            stop="capped", conv=strict_conversation(force=True))
    assert r.whole[0] == "error" and r.failures == []


def test_the_report_exits_1_on_a_failing_row_and_shows_the_smallest():
    report = generate.GenerationReport("tiny", True, 0)
    report.rows = [row(CALL, force=True), row("Hi<|im_end|>" * 3, force=True),
                   row("Hi<|im_end|>", force=True)]
    lines: list[str] = []
    assert generate.print_report(report, lines.append) == 1
    text = "\n".join(lines)
    assert "2 failing rows; the smallest:" in text
    assert '  output: "Hi<|im_end|>"' in text
    assert report.counts(report.rows)["forced+call"] == 1

    report.rows = report.rows[:1]
    lines.clear()
    assert generate.print_report(report, lines.append) == 0
    assert lines[-1].startswith("ok: every row parses")
    header, figures = lines[1].split(), lines[2].split()
    assert header[0] == "grammar" and figures[0] == "qwen3"
    assert dict(zip(["rows", "forced", "parsed"], figures[1:4], strict=True)) == \
        {"rows": "1", "forced": "1", "parsed": "1"}
