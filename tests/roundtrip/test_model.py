"""rtc check --model DIR [--generate N] on a model folder built here, from nothing.

The folder is what a Hugging Face checkpoint holds, made small: a byte-level
BPE tokenizer trained (``tokenizers``) on a few hundred conversations that the
qwen3 grammar's chat template renders, with the family's special tokens, saved
as a ``PreTrainedTokenizerFast`` whose ``tokenizer_config.json`` carries the chat
template and the qwen3 response template; and a tiny ``LlamaForCausalLM``
(random weights, then a few seconds of training on the same conversations so
that it writes the format). No download: everything is made in ``tmp_path``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest

from rtcompiler.cli.main import main
from rtcompiler.grammars import grammar
from rtcompiler.roundtrip import strategies
from rtcompiler.roundtrip.render import ChatRenderer

try:
    import torch
except ImportError:  # a dev dependency: fail, do not skip
    torch = None

QWEN3 = grammar("qwen3:strict")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>",
           "<tool_call>", "</tool_call>"]
CONVERSATIONS = 300
TRAIN_SECONDS = 15.0
TAIL = 320
BATCH = 8


def _conversations(chat_template: str) -> list[str]:
    """Rendered [user, assistant] conversations, some with tools, drawn by the strategies."""
    renderer = ChatRenderer(chat_template)
    reserved = tuple(SPECIAL)
    st = strategies.st

    @st.composite
    def conversation(draw):
        tools = draw(st.one_of(st.none(), strategies.tool_schemas()))
        user = draw(strategies.texts(reserved, min_size=1, max_size=30))
        message = draw(strategies.assistant_messages(tools, reserved, max_calls=2))
        if tools and not message.get("tool_calls"):  # offered tools, the model calls one
            fn = draw(st.sampled_from(tools))["function"]
            message["tool_calls"] = [{"type": "function", "function": {
                "name": fn["name"], "arguments": {k: 1 for k in fn["parameters"]["properties"]}}}]
        return [{"role": "user", "content": user}, message], tools

    out = []
    for messages, tools in strategies.draw_examples(conversation(), CONVERSATIONS, seed=7):
        out.append(renderer.render(messages, tools))
    return out


def _build_folder(path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    chat_template = QWEN3.chat_template
    response_template = QWEN3.spec
    texts = _conversations(chat_template)

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=768, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(texts, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>",
                                  additional_special_tokens=SPECIAL[1:2] + SPECIAL[3:])
    tok.chat_template = chat_template
    tok.response_template = response_template
    tok.save_pretrained(path)

    eos, pad = tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")
    config = LlamaConfig(vocab_size=len(tok), hidden_size=48, intermediate_size=96,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=1024, eos_token_id=eos, pad_token_id=pad,
                         bos_token_id=None, tie_word_embeddings=True)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    # A few seconds of training on the conversations (their last TAIL tokens: the
    # assistant turn and what precedes it), so that it writes the format.
    rows = [tok(t, add_special_tokens=False)["input_ids"][-TAIL:] for t in texts]
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    started, steps = time.monotonic(), 0
    generator = torch.Generator().manual_seed(0)
    while time.monotonic() - started < TRAIN_SECONDS:
        picks = torch.randint(len(rows), (BATCH,), generator=generator).tolist()
        width = max(len(rows[i]) for i in picks)
        ids = torch.full((BATCH, width), pad)
        labels = torch.full((BATCH, width), -100)
        for j, i in enumerate(picks):
            ids[j, : len(rows[i])] = torch.tensor(rows[i])
            labels[j, : len(rows[i])] = torch.tensor(rows[i])
        loss = model(input_ids=ids, attention_mask=(labels != -100).long(), labels=labels).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        steps += 1
    model.eval()
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = pad
    model.save_pretrained(path)
    return {"steps": steps, "loss": round(loss.item(), 3), "vocab": len(tok)}


def test_rtc_check_on_a_model_folder(tmp_path, capsys):
    """One test, so that under pytest-xdist one worker builds the folder and uses it."""
    if torch is None:
        pytest.fail("torch is not installed: `pip install torch==2.13.0` (it is in "
                    "rtcompiler's dev extra: pip install -e .[dev])", pytrace=False)
    # A tiny model runs fastest on one thread; more only fight over the cores.
    torch.set_num_threads(1)
    info = _build_folder(tmp_path)
    print(f"tiny model: {info}")
    _folder_is_a_real_hugging_face_folder(tmp_path)
    _check_model_round_trips_with_the_folders_tokenizer(tmp_path, capsys)
    _check_model_chunks_at_the_tokenizers_boundaries(tmp_path)
    _check_model_generate_reports_figures(tmp_path, capsys)


def _folder_is_a_real_hugging_face_folder(model_dir):
    config = json.loads((model_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["response_template"] == QWEN3.spec
    assert (model_dir / "config.json").is_file()
    assert (model_dir / "model.safetensors").is_file()
    assert "chat_template" in config or (model_dir / "chat_template.jinja").is_file()


def _check_model_round_trips_with_the_folders_tokenizer(model_dir, capsys):
    code = main(["check", "--model", str(model_dir), "--examples", "150"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "normalisation: grammar qwen3" in err
    assert f"token chunks from transformers {model_dir.name}" in err
    m = re.search(r"ok: (\d+) round trips, whole and streamed, and at token boundaries "
                  r"\((\d+) streams, (\d+) token chunks\)", out)
    assert m, out
    examples, streams, chunks = map(int, m.groups())
    assert examples == streams == 150
    assert chunks > 3 * streams  # real token boundaries, not one chunk per output


def _check_model_chunks_at_the_tokenizers_boundaries(model_dir):
    from rtcompiler.roundtrip.model import load_model_folder

    folder = load_model_folder(model_dir)
    chunker = folder.chunker()
    text = "<think>\nhm 🙂\n</think>\n\nOK<tool_call>\n{\"name\": \"f\"}\n</tool_call><|im_end|>"
    ids = folder.tokenizer.encode(text, add_special_tokens=False)
    pieces = chunker.pieces(text)
    assert "".join(pieces) == text
    for token in ("<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>"):
        assert token in pieces  # special tokens are single tokens and single chunks
    # Every boundary is a token boundary; a chunk spans several tokens only to finish a character.
    assert len(pieces) <= len(ids)
    assert any("🙂" in p for p in pieces)


def table_rows(out: str) -> dict[str, dict[str, int]]:
    """The report's table: grammar -> column -> figure."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("grammar  "))
    columns = re.split(r"\s{2,}", lines[at].strip())[1:]
    rows = {}
    for line in lines[at + 1:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(columns) + 1 or not all(c.isdigit() for c in cells[1:]):
            break
        rows[cells[0]] = dict(zip(columns, map(int, cells[1:]), strict=True))
    return rows


def _check_model_generate_reports_figures(model_dir, capsys):
    code = main(["check", "--model", str(model_dir), "--generate", "8", "--seed", "1",
                 "--max-new-tokens", "48"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    figures = table_rows(out)["qwen3"]
    assert figures["rows"] == 8 and figures["forced"] == 4, out
    assert figures["stream=whole"] == 8, out
    assert 0 < figures["tokens"] <= 8 * 48, out
    assert figures["round trip"] <= figures["parsed"] <= 8, out
    assert figures["valid calls"] <= figures["calls"], out
    assert "ms of CPU per step" in out and "ok: every row streams as it parses whole" in out


def test_generate_needs_a_model():
    result = subprocess.run(
        [sys.executable, "-m", "rtcompiler.cli.main", "check", "qwen3", "--generate", "4"],
        capture_output=True, text=True)
    assert result.returncode == 2
    assert "--generate needs --model" in result.stderr
