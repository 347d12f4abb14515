"""The batched sampling loop (rtcompiler.roundtrip.sampling) on a tiny random model.

What it must get right whatever the model: a row does not depend on what else is in its
batch (left padding, its own random stream); a constrained row writes only what its
grammar allows and stops where the grammar ends; stop tokens and stop strings end a row
and are kept or cut as documented; the pieces are what a server streams; the work is what
the rows need (one mask per constrained token, one forward per token that continues).
"""

from __future__ import annotations

import re

import pytest

from rtcompiler.roundtrip.tokenizers import IncrementalDecoder, stream_pieces

from .models_extra import require

SHORT = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
LONG = ("<|im_start|>user\nHello there, how are you? Tell me about the weather in Lyon, "
        "please, and be brief.<|im_end|>\n<|im_start|>assistant\n")


@pytest.fixture(scope="module")
def lm():
    require("torch", "llguidance", "transformers")
    import torch

    torch.set_num_threads(1)
    from .tiny_lm import tiny_lm

    return tiny_lm()


def _ids(tok, text):
    return tok.encode(text, add_special_tokens=False)


def _decode(tok):
    return lambda ids: tok.decode(list(ids), skip_special_tokens=False,
                                  clean_up_tokenization_spaces=False)


def test_a_row_is_the_same_alone_and_left_padded_among_others(lm):
    from rtcompiler.roundtrip.sampling import Request, sample

    tok, model = lm
    short, long = _ids(tok, SHORT), _ids(tok, LONG)
    assert len(long) > len(short) + 10  # the short prompt really is padded
    alone, _ = sample(model, tok, [Request(short, seed=7)], max_new_tokens=16)
    mixed, _ = sample(model, tok, [Request(long, seed=1), Request(short, seed=7),
                                   Request(long, seed=2)], max_new_tokens=16)
    assert len(set(alone[0].ids)) > 3  # sampled, not a constant
    assert mixed[1].ids == alone[0].ids
    assert mixed[0].ids != mixed[2].ids  # same prompt, own seeds


def test_a_seed_reproduces_its_row(lm):
    from rtcompiler.roundtrip.sampling import Request, sample

    tok, model = lm
    prompt = _ids(tok, SHORT)
    first, _ = sample(model, tok, [Request(prompt, seed=3), Request(prompt, seed=4)],
                      max_new_tokens=12)
    again, _ = sample(model, tok, [Request(prompt, seed=3), Request(prompt, seed=4)],
                      max_new_tokens=12)
    assert [c.ids for c in first] == [c.ids for c in again]
    assert first[0].ids != first[1].ids


def _matcher(tok, grammar):
    import llguidance.hf
    from llguidance import LLMatcher

    matcher = LLMatcher(llguidance.hf.from_tokenizer(tok), LLMatcher.grammar_from_lark(grammar),
                        log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    return matcher


def test_constrained_rows_write_only_what_their_grammar_allows(lm):
    from rtcompiler.roundtrip.sampling import Request, sample

    tok, model = lm
    eos = tok.eos_token_id
    ending = 'start: /[a-e]{2,6}/ " " ("yes" | "no") <|im_end|>'
    literal = 'start: "ok" /[0-9]{1,3}/ "."'
    prompt = _ids(tok, SHORT)
    requests = [Request(prompt, matcher=_matcher(tok, ending), stop_ids=frozenset({eos}),
                        keep_stop_text=frozenset({eos}), seed=s) for s in range(4)]
    requests += [Request(prompt, matcher=_matcher(tok, literal), stop_ids=frozenset({eos}),
                         seed=s) for s in range(4)]
    out, timing = sample(model, tok, requests, max_new_tokens=40, grammar_vocab=len(tok))
    for c in out[:4]:
        assert re.fullmatch(r"[a-e]{2,6} (yes|no)<\|im_end\|>", c.text), c.text
        assert c.stop == "grammar" and c.ids[-1] == eos
    for c in out[4:]:
        assert re.fullmatch(r"ok[0-9]{1,3}\.", c.text), c.text
        assert c.stop == "grammar" and eos not in c.ids
    # One mask per constrained token; one forward per token after which the row went on.
    assert timing.masks == sum(len(c.ids) for c in out)
    assert timing.step_rows == sum(len(c.ids) - 1 for c in out)
    assert len({c.text for c in out[:4]}) > 1  # sampled within the grammar


def test_a_stop_tokens_text_is_kept_only_when_asked(lm):
    from rtcompiler.roundtrip.sampling import Request, sample

    tok, model = lm
    everything = frozenset(range(len(tok)))  # whatever comes first is a stop token
    prompt = _ids(tok, SHORT)
    out, timing = sample(model, tok, [Request(prompt, stop_ids=everything, seed=1),
                                      Request(prompt, stop_ids=everything,
                                              keep_stop_text=everything, seed=1)],
                         max_new_tokens=8)
    assert [len(c.ids) for c in out] == [1, 1]
    assert [c.stop for c in out] == ["stop token", "stop token"]
    assert out[0].text == ""
    assert out[1].text == _decode(tok)(out[1].ids) != ""
    assert timing.steps == 0  # no row went on: no forward pass after the prefill


def test_a_stop_string_cuts_the_text_right_after_it(lm):
    from rtcompiler.roundtrip.sampling import Request, sample

    tok, model = lm
    stops = tuple("aeiou")
    out, _ = sample(model, tok, [Request(_ids(tok, SHORT), stop_strings=stops, seed=s)
                                 for s in range(6)], max_new_tokens=60)
    stopped = [c for c in out if c.stop == "stop string"]
    assert len(stopped) >= 4
    for c in stopped:
        assert c.text[-1] in stops and not any(s in c.text[:-1] for s in stops), c.text
        assert _decode(tok)(c.ids).startswith(c.text)


def test_a_capped_row_streams_all_it_wrote(lm):
    from rtcompiler.roundtrip.sampling import Request, sample

    tok, model = lm
    out, timing = sample(model, tok, [Request(_ids(tok, SHORT), seed=s) for s in range(3)],
                         max_new_tokens=9)
    decode = _decode(tok)
    for c in out:
        assert c.stop == "capped" and len(c.ids) == 9
        assert c.pieces == stream_pieces(c.ids, decode)  # what a server sends, token by token
        assert c.text == decode(c.ids)
    assert timing.steps == 8 and timing.step_rows == 3 * 8


class _SlowTokenizer:
    """A tokenizer without a ``tokenizers`` backend: decoding the prefix is the only way."""

    def __init__(self, tok):
        self.tok = tok

    def decode(self, ids, **kwargs):
        return self.tok.decode(ids, **kwargs)


TEXTS = ["plain text", "emoji 🙂🙂 and 中文, naïve ﬁ", "<|im_start|>a\u0301<|im_end|>\n",
         "\ufffd a real replacement character", "👩‍👩‍👧 ZWJ"]


@pytest.mark.parametrize("text", TEXTS)
def test_incremental_decoding_sends_what_decoding_the_prefix_sends(lm, text):
    tok, _ = lm
    ids = _ids(tok, text)
    expected = stream_pieces(ids, _decode(tok))
    assert "".join(expected) == text
    for tokenizer in (tok, _SlowTokenizer(tok)):
        decoder = IncrementalDecoder(tokenizer)
        for i in ids:
            decoder.step(i)
        decoder.finish()
        assert decoder.pieces == expected


def test_a_row_cut_inside_a_character_flushes_what_decoding_gives(lm):
    tok, _ = lm
    ids = _ids(tok, "ab🙂")
    decode = _decode(tok)
    cut = next(k for k in range(1, len(ids)) if decode(ids[:k]).endswith("\ufffd"))
    decoder = IncrementalDecoder(tok)
    for i in ids[:cut]:
        decoder.step(i)
    held = "".join(decoder.pieces)
    assert decoder.finish() == decode(ids[:cut])[len(held):] != ""
    assert "".join(decoder.pieces) == decode(ids[:cut])



class _GivingUpMatcher:
    """A matcher whose lexer gave up after the first token: llguidance then lets only the
    stop token through and says it is stopped, with an error (a deepseek_v4 grammar did
    this on SmolLM2's '<think', its lexer's budget spent)."""

    def __init__(self):
        self.tokens = 0

    def consume_token(self, token):
        self.tokens += 1
        return True

    def is_stopped(self):
        return self.tokens >= 2

    def is_error(self):
        return self.tokens >= 2

    def get_error(self):
        return "lexer error: too many expressions constructed"


def test_a_matcher_that_gives_up_is_a_grammar_error_not_the_grammars_end(lm):
    from rtcompiler.roundtrip.sampling import Completion, Request, _advance

    tok, _ = lm
    eos = tok.eos_token_id
    request = Request(_ids(tok, SHORT), matcher=_GivingUpMatcher(), stop_ids=frozenset({eos}))
    out = Completion()
    decoder = IncrementalDecoder(tok)
    texts = [""]
    first = _ids(tok, "Hi")[0]
    assert _advance(request, out, decoder, texts, 0, first)
    assert not _advance(request, out, decoder, texts, 0, eos)
    assert out.stop == "grammar error"
    assert out.error == "lexer error: too many expressions constructed"
