"""Batched, seeded sampling from a causal language model, optionally masked by a grammar.

:func:`sample` runs many generations (:class:`Request`) at once on CPU. Each distinct
prompt is prefilled once, at batch 1; the rows of a batch then share one KV cache, the
prompts left-padded to the longest (an attention mask hides the padding, explicit
positions keep each row's own). Rows leave the batch as they finish, so a step costs what
the rows still running cost.

A row with a ``matcher`` (an ``llguidance.LLMatcher``) is constrained: before each step
the matcher writes its allowed tokens into a bitmask (llguidance's numpy helper; its
torch module compiles kernels at import) and the disallowed logits become -inf. Text the
grammar forces is masked to its canonical tokens already, so sampling takes them as they
are. The row ends when the grammar is complete. A row without one ends at a stop token or
once its text holds a stop string.

Sampling: softmax at ``temperature`` and inverse-CDF with one uniform per step from the
row's own generator (``Request.seed``), so that a row draws the same numbers whatever
else is in its batch. Its logits may still differ in the last bits with the batch's shape
(BLAS), so a generation is reproduced exactly by the same requests, batch size and thread
count.

Each row is detokenised as it is written (:class:`~.tokenizers.IncrementalDecoder`), so
``Completion.pieces`` are the chunks a server streams, at the model's own token boundaries.
:class:`Timing` counts CPU time: the model's forward steps and the grammar's masks.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .tokenizers import IncrementalDecoder

DEFAULT_TEMPERATURE = 0.8
DEFAULT_BATCH = 48


@dataclass
class Request:
    prompt: Sequence[int]  # token ids
    matcher: Any = None  # an llguidance LLMatcher, or None: unconstrained
    # Tokens that end the row (the model's end-of-sequence tokens). Their text is kept in
    # the output when it is listed in keep_stop_text (the format's own end-of-turn marker,
    # such as <|im_end|> for ChatML formats), and dropped otherwise, as a server drops
    # special tokens.
    stop_ids: frozenset[int] = frozenset()
    keep_stop_text: frozenset[int] = frozenset()
    # Unconstrained rows also end once their text holds one of these (an end-of-turn marker
    # the tokenizer spells with several tokens); the text is cut right after it.
    stop_strings: tuple[str, ...] = ()
    seed: int = 0  # the row's own random stream: its draws do not depend on the other rows


@dataclass
class Completion:
    ids: list[int] = field(default_factory=list)  # every token sampled, stop token included
    pieces: list[str] = field(default_factory=list)  # streamed text; joins to ``text``
    stop: str = ""  # "grammar" | "stop token" | "stop string" | "capped" | "grammar error"
    error: str | None = None  # the matcher's error, for "grammar error"
    batch: int = 0
    row: int = 0

    @property
    def text(self) -> str:
        return "".join(self.pieces)


@dataclass
class Timing:
    prompts: int = 0
    prompt_tokens: int = 0
    prefill_cpu: float = 0.0
    steps: int = 0  # forward passes after prefill
    step_rows: int = 0  # rows over all those steps (tokens they computed logits for)
    model_cpu: float = 0.0  # CPU seconds in those forward passes
    masks: int = 0  # grammar masks computed (one per constrained row and step)
    mask_cpu: float = 0.0
    mask_max: float = 0.0  # the slowest single mask, seconds
    sample_cpu: float = 0.0  # applying masks, softmax and drawing, for every row

    @property
    def step_ms(self) -> float:
        return 1e3 * self.model_cpu / self.steps if self.steps else 0.0

    @property
    def token_ms(self) -> float:
        """The model's CPU time per row and step: what one generated token costs."""
        return 1e3 * self.model_cpu / self.step_rows if self.step_rows else 0.0

    @property
    def mask_ms(self) -> float:
        return 1e3 * self.mask_cpu / self.masks if self.masks else 0.0

    def add(self, other: Timing) -> None:
        for name in self.__dataclass_fields__:
            if name == "mask_max":
                self.mask_max = max(self.mask_max, other.mask_max)
            else:
                setattr(self, name, getattr(self, name) + getattr(other, name))


def _torch() -> Any:
    import torch

    return torch


def _mask_table(torch: Any) -> Any:
    """Byte value -> its eight bits as additive logit masks (0 allowed, -inf not)."""
    return torch.tensor([[0.0 if (b >> j) & 1 else float("-inf") for j in range(8)]
                         for b in range(256)])


class _Prefills:
    """Each prompt's KV cache and last logits, computed once at batch 1 and kept while needed."""

    def __init__(self, model: Any, timing: Timing) -> None:
        self.model = model
        self.timing = timing
        self.done: dict[tuple[int, ...], tuple[list[tuple[Any, Any]], Any]] = {}

    def get(self, prompt: tuple[int, ...]) -> tuple[list[tuple[Any, Any]], Any]:
        if prompt not in self.done:
            torch = _torch()
            started = time.process_time()
            out = self.model(input_ids=torch.tensor([prompt]), use_cache=True, logits_to_keep=1)
            layers = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
            self.done[prompt] = (layers, out.logits[0, -1])
            self.timing.prompts += 1
            self.timing.prompt_tokens += len(prompt)
            self.timing.prefill_cpu += time.process_time() - started
        return self.done[prompt]

    def keep_only(self, prompts: set[tuple[int, ...]]) -> None:
        for prompt in [p for p in self.done if p not in prompts]:
            del self.done[prompt]


def _stacked_cache(prefills: list[tuple[list[tuple[Any, Any]], Any]], owner: list[int],
                   width: int) -> Any:
    """One DynamicCache for the rows: row i holds prompt ``owner[i]``, left-padded to ``width``."""
    torch = _torch()
    from transformers import DynamicCache

    data = []
    for layer in range(len(prefills[0][0])):
        keys, values = [], []
        for layers, _ in prefills:
            k, v = layers[layer]
            pad = width - k.shape[2]
            keys.append(torch.nn.functional.pad(k, (0, 0, pad, 0)))
            values.append(torch.nn.functional.pad(v, (0, 0, pad, 0)))
        index = torch.tensor(owner)
        data.append((torch.cat(keys).index_select(0, index),
                     torch.cat(values).index_select(0, index)))
    return DynamicCache(ddp_cache_data=data)


def sample(model: Any, tokenizer: Any, requests: Sequence[Request], *,
           max_new_tokens: int = 192, batch_size: int = DEFAULT_BATCH,
           temperature: float = DEFAULT_TEMPERATURE,
           grammar_vocab: int | None = None) -> tuple[list[Completion], Timing]:
    """One :class:`Completion` per request, in order, and the time they took.

    Requests are taken ``batch_size`` at a time, in order: put the rows of one prompt
    next to each other so that a batch holds few distinct prompts. ``grammar_vocab`` is
    the vocabulary size of the matchers' tokenizer (llguidance's ``vocab_size``).
    """
    torch = _torch()
    timing = Timing()
    prefills = _Prefills(model, timing)
    table = _mask_table(torch) if any(r.matcher is not None for r in requests) else None
    completions: list[Completion] = []
    with torch.inference_mode():
        for batch, start in enumerate(range(0, len(requests), batch_size)):
            rows = list(requests[start:start + batch_size])
            later = {tuple(r.prompt) for r in requests[start + batch_size:]}
            completions += _sample_batch(model, tokenizer, rows, prefills, timing, table,
                                         batch=batch, max_new_tokens=max_new_tokens,
                                         temperature=temperature, grammar_vocab=grammar_vocab)
            prefills.keep_only(later)
    return completions, timing


def _sample_batch(model: Any, tokenizer: Any, rows: list[Request], prefills: _Prefills,
                  timing: Timing, table: Any, *, batch: int, max_new_tokens: int,
                  temperature: float, grammar_vocab: int | None) -> list[Completion]:
    torch = _torch()
    prompts: list[tuple[int, ...]] = []
    owner: list[int] = []
    for r in rows:
        key = tuple(r.prompt)
        if key not in prompts:
            prompts.append(key)
        owner.append(prompts.index(key))
    filled = [prefills.get(p) for p in prompts]
    width = max(len(p) for p in prompts)
    cache = _stacked_cache(filled, owner, width)
    n = len(rows)
    attention = torch.zeros(n, width, dtype=torch.long)
    positions = torch.zeros(n, dtype=torch.long)
    for i, p in enumerate(owner):
        attention[i, width - len(prompts[p]):] = 1
        positions[i] = len(prompts[p])
    logits = torch.stack([filled[p][1] for p in owner]).float()
    vocab = logits.shape[1]

    out = [Completion(batch=batch, row=i) for i in range(n)]
    decoders = [IncrementalDecoder(tokenizer) for _ in range(n)]
    texts = ["" for _ in range(n)]  # unconstrained rows with stop strings: the text so far
    active = list(range(n))
    generators = [torch.Generator().manual_seed(r.seed) for r in rows]
    bitmask = None
    if table is not None:
        import llguidance.numpy as llg_numpy

        words = ((grammar_vocab or vocab) + 31) // 32
        bitmask = llg_numpy.allocate_token_bitmask(n, words * 32)
    for step in range(max_new_tokens):
        started = time.process_time()
        bias = None
        if bitmask is not None:
            bias = _grammar_bias(rows, active, bitmask, table, vocab, timing)
        timing.sample_cpu += time.process_time() - started
        started = time.process_time()
        scaled = logits / temperature if bias is None else (logits + bias) / temperature
        probs = torch.softmax(scaled, dim=-1)
        cdf = probs.cumsum(-1)
        uniforms = torch.cat([torch.rand(1, 1, generator=generators[i]) for i in active])
        drawn = torch.searchsorted(cdf, uniforms * cdf[:, -1:]).clamp_(max=vocab - 1)
        tokens = drawn.squeeze(1).tolist()
        timing.sample_cpu += time.process_time() - started
        keep = []
        for j, i in enumerate(active):
            if _advance(rows[i], out[i], decoders[i], texts, i, tokens[j]):
                keep.append(j)
        if len(keep) < len(active):
            active = [active[j] for j in keep]
            if not active:
                break
            index = torch.tensor(keep)
            cache.batch_select_indices(index)
            attention, positions = attention[index], positions[index]
            tokens = [tokens[j] for j in keep]
        if step == max_new_tokens - 1:
            break  # the rows still running are capped: no logits needed
        attention = torch.cat([attention, torch.ones(len(active), 1, dtype=torch.long)], 1)
        started = time.process_time()
        forward = model(input_ids=torch.tensor(tokens).unsqueeze(1), past_key_values=cache,
                        attention_mask=attention, position_ids=positions.unsqueeze(1),
                        use_cache=True)
        timing.model_cpu += time.process_time() - started
        timing.steps += 1
        timing.step_rows += len(active)
        cache = forward.past_key_values
        logits = forward.logits[:, -1].float()
        positions = positions + 1
    for i in active:
        out[i].stop = "capped"
        _finish(rows[i], out[i], decoders[i])
    return out


def _grammar_bias(rows: list[Request], active: list[int], bitmask: Any, table: Any, vocab: int,
                  timing: Timing) -> Any:
    """Additive logit masks for the active rows: 0 where the row's grammar allows, else -inf."""
    torch = _torch()
    import llguidance.numpy as llg_numpy

    for j, i in enumerate(active):
        matcher = rows[i].matcher
        if matcher is None:
            bitmask[j] = -1
            continue
        started = time.process_time()
        llg_numpy.fill_next_token_bitmask(matcher, bitmask, j)
        spent = time.process_time() - started
        timing.masks += 1
        timing.mask_cpu += spent
        timing.mask_max = max(timing.mask_max, spent)
    words = torch.from_numpy(bitmask[:len(active)])
    # Little-endian int32 words: byte b of word w holds tokens 32w + 8b ... 32w + 8b + 7.
    bias = table[words.view(torch.uint8).long()].flatten(1)
    if bias.shape[1] >= vocab:
        return bias[:, :vocab]
    extra = torch.full((len(active), vocab - bias.shape[1]), float("-inf"))
    return torch.cat([bias, extra], 1)  # logits the grammar's tokenizer does not know


def _advance(request: Request, out: Completion, decoder: IncrementalDecoder, texts: list[str],
             i: int, token: int) -> bool:
    """Take the row's next token; False once the row ends."""
    matcher = request.matcher
    if matcher is not None:
        if not matcher.consume_token(token):
            out.ids.append(token)
            out.stop, out.error = "grammar error", matcher.get_error()
            _finish(request, out, decoder)
            return False
    out.ids.append(token)
    ends = matcher.is_stopped() if matcher is not None else token in request.stop_ids
    if ends:
        if token not in request.stop_ids or token in request.keep_stop_text:
            decoder.step(token)
        out.stop = "grammar" if matcher is not None else "stop token"
        if matcher is not None and matcher.is_error():
            # The matcher gave up (its lexer's budget, say) and let only the stop token
            # through: the row did not end where the grammar ends.
            out.stop, out.error = "grammar error", matcher.get_error()
        _finish(request, out, decoder)
        return False
    piece = decoder.step(token)
    if matcher is None and request.stop_strings and piece:
        before = len(texts[i])
        texts[i] += piece
        ends = [texts[i].find(s, max(0, before - len(s) + 1)) for s in request.stop_strings]
        ends = [at + len(s) for at, s in zip(ends, request.stop_strings, strict=True) if at >= 0]
        if ends:
            out.stop = "stop string"
            _finish(request, out, decoder, cut=min(ends))
            return False
    return True


def _finish(request: Request, out: Completion, decoder: IncrementalDecoder,
            cut: int | None = None) -> None:
    decoder.finish()
    pieces = decoder.pieces
    if cut is not None:  # keep the text up to the end of the stop string
        kept, size = [], 0
        for piece in pieces:
            if size + len(piece) >= cut:
                kept.append(piece[:cut - size])
                break
            kept.append(piece)
            size += len(piece)
        pieces = [p for p in kept if p]
    out.pieces = pieces
