"""A tiny causal language model and its tokenizer, made here in a second, for sampling tests.

The tokenizer is a byte-level BPE (every byte a token, so emoji and CJK split across
tokens as in real byte-level vocabularies) trained on a few lines, with ChatML's special
tokens; the model a two-layer ``LlamaForCausalLM`` with random weights. It writes noise,
which is all the sampling loop's tests need: its mechanics, not the text.
"""

from __future__ import annotations

from functools import lru_cache

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CORPUS = [
    "<|im_start|>user\nHello there, how are you?<|im_end|>\n<|im_start|>assistant\nFine!<|im_end|>",
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"}}\n</tool_call>',
    "<think>\nThe user wants the weather.\n</think>\n\nSure, one moment.",
    "Ünïcödé 🙂 中文 ﬁ naïve café — «quotes» and 'single' ones.",
] * 4


@lru_cache(maxsize=1)
def tiny_lm(seed: int = 0):
    """``(tokenizer, model)``; the model's vocabulary is the tokenizer's."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(CORPUS, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>", bos_token="<|im_start|>")
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=512, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id, bos_token_id=None,
                         tie_word_embeddings=True)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    return tok, model
