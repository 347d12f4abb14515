"""Round trips streamed at real token boundaries: Mistral's tokenizer from mistral-common.

mistral-common ships Mistral's tekken BPE vocabulary (``mistral_common/data/``);
the grammars' ``meta.json`` names it (``tokenizer.mistral_common``) with the v13
control tokens. Each Mistral round trip is then fed to the parser in the chunks a
server streams token by token, and those chunks are checked against the
tokenizer's own token boundaries; the rendered turn is checked to be the very
token sequence mistral-common's instruct tokenizer builds for the message.

mistral-common is a dev dependency: without it these tests fail, they do not skip.
"""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rtcompiler.cli.main import main
from rtcompiler.grammars import grammar
from rtcompiler.roundtrip import check, strategies
from rtcompiler.roundtrip.check import reserved_strings
from rtcompiler.roundtrip.render import ChatRenderer
from rtcompiler.roundtrip.tokenizers import (
    REPLACEMENT,
    ChunkingError,
    TokenizerUnavailable,
    load_chunker,
    split_special,
    stream_pieces,
)

MISTRAL = ["mistral", "magistral", "mistral_v3", "magistral_2506"]


def _meta(name: str) -> dict:
    return grammar(name).meta


def _chunker(name: str, **override):
    spec = json.loads(json.dumps(_meta(name)["tokenizer"]))
    spec["mistral_common"].update(override)
    try:
        return load_chunker(spec)
    except TokenizerUnavailable as e:
        problem = str(e)
    pytest.fail(f"{problem}. These tests need it: they do not skip.", pytrace=False)


def _token_boundaries(tok, ids, text):
    """Independently of the chunker: where a server cuts ``text``, from the tokens' bytes.

    A cut falls at the end of every token that ends on a character boundary, unless the
    text so far ends in U+FFFD (a server cannot tell it from an unfinished character).
    """
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

    data = text.encode("utf-8")
    char_at = {len(text[:i].encode("utf-8")): i for i in range(len(text) + 1)}
    ends, at = [], 0
    for i in ids:
        at += len(tok.id_to_byte_piece(i, SpecialTokenPolicy.KEEP))
        if at in char_at and char_at[at] > (ends[-1] if ends else 0):
            if not text[: char_at[at]].endswith(REPLACEMENT) or at == len(data):
                ends.append(char_at[at])
    assert at == len(data)
    return ends


@pytest.mark.parametrize("name", MISTRAL)
def test_mistral_round_trips_at_real_token_boundaries(name, request):
    bundled = grammar(name)
    meta = _meta(name)
    chunker = _chunker(name)
    tok = chunker.tokenizer
    seen: list[tuple[str, list[int]]] = []

    def recording(text: str) -> list[int]:
        sizes = chunker(text)
        seen.append((text, sizes))
        return sizes

    recording.name = chunker.name
    examples = request.config.getoption("--roundtrip-examples")
    report = check(
        bundled.template, bundled.chat_template,
        examples=examples, normalise=meta.get("normalise"), reserved=meta.get("reserved"),
        chunker=recording,
    )
    assert report.ok, json.dumps(report.counterexample, ensure_ascii=False, indent=1, default=str)
    spec = meta["tokenizer"]["mistral_common"]
    assert report.chunker.startswith(
        f"mistral-common {spec['file'].removesuffix('.json')} ({spec['version']})")
    assert report.chunking_errors == []
    assert report.token_streams >= examples
    assert len(seen) >= examples
    # The chunks are the tokenizer's: many per output, cut exactly where its tokens end.
    assert report.token_chunks > 5 * report.token_streams
    multi = 0
    for text, sizes in seen:
        ids = chunker.encode(text)
        ends = [sum(sizes[: k + 1]) for k in range(len(sizes))]
        assert ends == _token_boundaries(tok, ids, text), text
        assert len(sizes) <= len(ids)
        multi += len(sizes) > 1
        for marker in ("[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]", "</s>"):
            if marker in text:  # a control token: one token, one chunk
                assert tok.get_special_token(marker) in ids
                assert marker in chunker.pieces(text)
    assert multi >= len(seen) * 0.9


def _assistant_message(message: dict, thinking: bool, chunked: bool = True,
                       plain_thinking: bool = False):
    """mistral-common's message for ``message``; ``chunked=False``: content as one string
    (what tokenizers before v7 take); ``plain_thinking``: the reasoning as the text
    ``<think>…</think>`` before the content (Magistral-2506 on tokenizer v11)."""
    from mistral_common.protocol.instruct.messages import AssistantMessage, TextChunk, ThinkChunk
    from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall

    calls = [ToolCall(id=c["id"], function=FunctionCall(name=c["function"]["name"],
                                                        arguments=c["function"]["arguments"]))
             for c in message.get("tool_calls") or []]
    if not chunked:
        return AssistantMessage(content=message.get("content") or None, tool_calls=calls or None)
    chunks = []
    if plain_thinking and message.get("reasoning_content"):
        text = f"<think>{message['reasoning_content']}</think>{message.get('content') or ''}"
        return AssistantMessage(content=[TextChunk(text=text)], tool_calls=calls or None)
    if thinking and message.get("reasoning_content"):
        chunks.append(ThinkChunk(thinking=message["reasoning_content"]))
    if message.get("content"):
        chunks.append(TextChunk(text=message["content"]))
    return AssistantMessage(content=chunks or None, tool_calls=calls or None)


@pytest.mark.parametrize("name,version", [
    ("mistral", "v13"), ("magistral", "v13"), ("mistral", "v11"), ("mistral_v3", "v3"),
    ("magistral_2506", "v11")])
def test_rendered_turns_are_mistral_commons_token_sequences(name, version):
    """Our chat template, encoded by the chunker = mistral-common's InstructTokenizer, id for id."""
    chunker = _chunker(name, version=version)
    from mistral_common.tokens.tokenizers.instruct import (
        InstructTokenizerV3,
        InstructTokenizerV11,
        InstructTokenizerV13,
    )

    instruct_class = {"v3": InstructTokenizerV3, "v11": InstructTokenizerV11,
                      "v13": InstructTokenizerV13}[version]
    instruct = instruct_class(chunker.tokenizer)
    chat_template = grammar(name).chat_template
    meta = _meta(name)
    variables = {**meta["normalise"]["render_kwargs"], "mistral_v11": version == "v11"}
    renderer = ChatRenderer(chat_template, variables)
    template = grammar(name).template
    banned = reserved_strings(template, chat_template)
    thinking = name in ("magistral", "magistral_2506")
    tools = strategies.tool_schemas()
    content_with_calls = meta["normalise"].get("content_with_tool_calls") != "unsupported"
    cases = tools.flatmap(lambda ts: st.tuples(st.just(ts), strategies.assistant_messages(
        ts, banned, reasoning=thinking, call_ids="alnum9",
        content_with_calls=content_with_calls)))

    @settings(max_examples=80, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(cases)
    def same_tokens(case):
        tools, message = case
        assume(message.get("content") or message.get("tool_calls"))
        _, output = renderer.assistant_turn([{"role": "user", "content": "Hello"}], message, tools)
        mc_message = _assistant_message(message, thinking, chunked=version != "v3",
                                        plain_thinking=name == "magistral_2506")
        expected = instruct.encode_assistant_message(mc_message, False)
        assert chunker.encode(output) == expected, output

    same_tokens()


def test_rtc_check_mistral_uses_the_tokenizer(capsys):
    _chunker("mistral")  # fails with the install hint when mistral-common is missing
    assert main(["check", "mistral", "--examples", "40"]) == 0
    out, err = capsys.readouterr()
    assert "token chunks from mistral-common tekken_240911 (v13)" in err
    assert "ok: 40 round trips, whole and streamed, and at token boundaries (40 streams," in out


def test_without_mistral_common_the_message_says_to_install_it(monkeypatch, capsys):
    from rtcompiler.roundtrip import tokenizers

    monkeypatch.setitem(sys.modules, "mistral_common", None)  # import fails
    tokenizers.tekkenizer.cache_clear()
    with pytest.raises(TokenizerUnavailable,
                       match=r"'models' extra brings: pip install 'rtcompiler\[models\]'"):
        load_chunker(_meta("mistral")["tokenizer"])
    # rtc check says so and still checks, chunking at random.
    assert main(["check", "mistral", "--examples", "20"]) == 0
    out, err = capsys.readouterr()
    assert "mistral-common is not installed" in err and "chunking at random only" in err
    assert "ok: 20 round trips, whole and streamed\n" in out
    tokenizers.tekkenizer.cache_clear()


def test_stream_pieces_hold_unfinished_characters():
    raw = {1: b"a", 2: "🙂".encode()[:1], 3: "🙂".encode()[1:3], 4: "🙂".encode()[3:],
           5: "é".encode()[:1], 6: "é".encode()[1:] + b"b", 7: "\ufffd".encode()}

    def decode(ids):
        return b"".join(raw[i] for i in ids).decode("utf-8", "replace")

    assert stream_pieces([1, 2, 3, 4, 5, 6], decode) == ["a", "🙂", "éb"]
    # Text that really ends in U+FFFD is sent at the end of the stream.
    assert stream_pieces([1, 7], decode) == ["a", "\ufffd"]
    assert stream_pieces([1, 7, 1], decode) == ["a", "\ufffda"]
    # A stream cut in the middle of a character ends with what the decoder gives.
    assert stream_pieces([1, 2], decode) == ["a", "\ufffd"]
    assert stream_pieces([], decode) == []


def test_split_special_matches_longest_first():
    assert split_special("[/THINK]x[THINK]", ["[THINK]", "[/THINK]"]) == [
        ("[/THINK]", True), ("x", False), ("[THINK]", True)]
    assert split_special("<s>", ["<s", "<s>"]) == [("<s>", True)]
    assert split_special("", ["x"]) == []


def test_check_records_text_a_tokenizer_cannot_chunk():
    qwen3 = grammar("qwen3")
    meta = _meta("qwen3")

    def lossy(text: str) -> list[int]:
        if "\n\n" in text:
            raise ChunkingError("no blank lines here")
        return [1] * len(text)

    report = check(qwen3.template, qwen3.chat_template,
                   examples=40, normalise=meta.get("normalise"), chunker=lossy)
    assert report.ok
    assert report.chunking_errors and report.chunking_errors[0] == "no blank lines here"
    assert report.token_streams + len(report.chunking_errors) == report.examples
