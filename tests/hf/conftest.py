"""An offline tokenizer of the Qwen3 family, built here from nothing (no hub).

A byte-level BPE trained in a fraction of a second on a few sample turns, with the
family's special tokens, wrapped as transformers' ``PreTrainedTokenizerFast`` and
carrying the bundled qwen3 response template, as a checkpoint's tokenizer does.
"""

from __future__ import annotations

import pytest

from rtcompiler.grammars import grammar

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>",
           "<tool_call>", "</tool_call>"]
QWEN3_TEMPLATE = grammar("qwen3:strict").spec
SAMPLES = [
    "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n",
    "<think>\nThe user wants the weather; call the tool.\n</think>\n\n",
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n'
    "</tool_call><|im_end|>",
    "It is sunny in Paris, 21°C. Bonne journée 🙂<|im_end|>",
]


def build_tokenizer(response_template=QWEN3_TEMPLATE):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(SAMPLES * 4, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>",
                                  additional_special_tokens=SPECIAL[1:2] + SPECIAL[3:])
    tok.response_template = response_template
    return tok


@pytest.fixture(scope="session")
def tokenizer():
    return build_tokenizer()
