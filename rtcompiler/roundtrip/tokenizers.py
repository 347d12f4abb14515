"""Chunk a model output at token boundaries, the way a server streams it.

A server decodes the tokens it has so far and sends the text that is new.
A token can end in the middle of a UTF-8 sequence (byte-level BPE splits an
emoji or a CJK character over several tokens); the decoded text then ends in
U+FFFD, and the server holds the text back until a later token completes it.
:func:`stream_pieces` does exactly that, and a :class:`TokenChunker` turns a
text into the chunk sizes of its tokens, for ``check(..., chunker=...)``.

>>> vocab = {1: "Hé", 2: "llo", 3: " wor", 4: "ld"}
>>> decode = lambda ids: "".join(vocab[i] for i in ids)
>>> stream_pieces([1, 2, 3, 4], decode)
['Hé', 'llo', ' wor', 'ld']

Bytes of an unfinished character decode to U+FFFD and are held back:

>>> raw = {1: b"a", 2: b"\\xf0\\x9f", 3: b"\\x99\\x82", 4: b"!"}
>>> decode = lambda ids: b"".join(raw[i] for i in ids).decode("utf-8", "replace")
>>> stream_pieces([1, 2, 3, 4], decode)
['a', '🙂', '!']

Tokenizers are optional dependencies, imported when a chunker is built:
``mistral-common`` for the Mistral grammars (:func:`mistral_common_chunker`),
``transformers`` for a model folder (:func:`transformers_chunker`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

REPLACEMENT = "\ufffd"

Chunker = Callable[[str], list[int]]


class ChunkingError(ValueError):
    """The tokenizer cannot give the chunks of this text (it does not decode back to it)."""


class TokenizerUnavailable(RuntimeError):
    """The tokenizer a grammar names needs a package that is not installed."""


def stream_pieces(ids: Sequence[int], decode: Callable[[Sequence[int]], str]) -> list[str]:
    """The text a server sends for ``ids``, token by token.

    After each token the prefix ``ids[:k]`` is decoded; the text past what was
    sent is sent, unless the decoded text ends in U+FFFD (an unfinished UTF-8
    sequence) or does not extend what was sent: then it is held until a later
    token settles it. Whatever is still held at the end is sent then, so the
    pieces always join to ``decode(ids)``.
    """
    pieces: list[str] = []
    sent = ""
    for k in range(1, len(ids) + 1):
        text = decode(ids[:k])
        if len(text) > len(sent) and text.startswith(sent) and not text.endswith(REPLACEMENT):
            pieces.append(text[len(sent):])
            sent = text
    final = decode(ids) if ids else ""
    if final != sent:
        if not final.startswith(sent):
            raise ChunkingError("the decoded text changed what was already streamed")
        pieces.append(final[len(sent):])
    return pieces


class IncrementalDecoder:
    """The text a server streams as a model writes tokens, one token at a time, in linear time.

    ``step(id)`` returns the new text the token settles ('' while it ends inside a
    character); ``finish()`` returns what is still held when generation stops (a row cut
    in the middle of a character), so that the pieces always join to ``decode(ids)``.
    With a transformers fast tokenizer the work is done by ``tokenizers``'
    ``DecodeStream`` (its pieces are :func:`stream_pieces`'); otherwise the growing prefix
    is decoded after each token (quadratic, for tokenizers without one).
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.pieces: list[str] = []
        self._sent = ""  # only kept up to date on the quadratic path
        backend = getattr(tokenizer, "backend_tokenizer", None)
        self._stream = None
        if backend is not None:
            from tokenizers.decoders import DecodeStream

            self._backend = backend
            self._stream = DecodeStream(skip_special_tokens=False)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False,
                                     clean_up_tokenization_spaces=False)

    def step(self, token: int) -> str:
        self.ids.append(token)
        if self._stream is not None:
            piece = self._stream.step(self._backend, token) or ""
        else:
            text = self.decode(self.ids)
            grows = len(text) > len(self._sent) and text.startswith(self._sent)
            piece = text[len(self._sent):] if grows and not text.endswith(REPLACEMENT) else ""
            self._sent += piece
        if piece:
            self.pieces.append(piece)
        return piece

    def finish(self) -> str:
        final = self.decode(self.ids) if self.ids else ""
        sent = "".join(self.pieces)
        if not final.startswith(sent):
            raise ChunkingError("the decoded text changed what was already streamed")
        rest = final[len(sent):]
        if rest:
            self.pieces.append(rest)
        return rest


class TokenChunker:
    """``chunker(text) -> chunk sizes``: ``text`` cut where its tokens end, as streamed.

    ``encode`` maps a text to token ids (format markers to their control
    tokens), ``decode`` maps ids back to text (control tokens kept).
    ``calls`` and ``chunks`` count what the chunker did, so a caller can see
    that the chunking really came from the tokenizer.
    """

    def __init__(self, name: str, encode: Callable[[str], list[int]],
                 decode: Callable[[Sequence[int]], str]) -> None:
        self.name = name
        self.encode = encode
        self.decode = decode
        self.calls = 0
        self.chunks = 0

    def pieces(self, text: str) -> list[str]:
        ids = self.encode(text)
        pieces = stream_pieces(ids, self.decode)
        if "".join(pieces) != text:
            raise ChunkingError(
                f"{self.name}: decoding the tokens of the text does not give the text back "
                f"({text[:60]!r} -> {''.join(pieces)[:60]!r})"
            )
        return pieces

    def __call__(self, text: str) -> list[int]:
        sizes = [len(p) for p in self.pieces(text)]
        self.calls += 1
        self.chunks += len(sizes)
        return sizes

    def __repr__(self) -> str:
        return f"TokenChunker({self.name!r})"


def split_special(text: str, specials: Sequence[str]) -> list[tuple[str, bool]]:
    """``text`` cut into ``(piece, is_special)``, the special strings matched longest first.

    >>> split_special("a[TOOL_CALLS]f[ARGS]{}", ["[TOOL_CALLS]", "[ARGS]"])
    [('a', False), ('[TOOL_CALLS]', True), ('f', False), ('[ARGS]', True), ('{}', False)]
    """
    if not specials:
        return [(text, False)] if text else []
    alternation = "|".join(re.escape(s) for s in sorted(set(specials), key=lambda s: (-len(s), s)))
    out: list[tuple[str, bool]] = []
    at = 0
    for m in re.finditer(alternation, text):
        if m.start() > at:
            out.append((text[at:m.start()], False))
        out.append((m.group(), True))
        at = m.end()
    if at < len(text):
        out.append((text[at:], False))
    return out


# -- mistral-common -------------------------------------------------------------------

MISSING_MISTRAL_COMMON = (
    "mistral-common is not installed: the Mistral grammars chunk their round trips with "
    "Mistral's real tokenizer, which the 'models' extra brings: "
    "pip install 'rtcompiler[models]'"
)


def _mistral_common() -> Any:
    try:
        import mistral_common
    except ImportError as e:
        raise TokenizerUnavailable(MISSING_MISTRAL_COMMON) from e
    return mistral_common


@lru_cache(maxsize=8)
def tekkenizer(file: str = "tekken_240911.json", version: str = "v13",
               control_tokens: tuple[tuple[str, int], ...] = ()) -> Any:
    """A mistral-common ``Tekkenizer`` built from a tokenizer file mistral-common ships.

    ``file`` names a file of ``mistral_common/data/`` (or is a path). Files that
    predate v7 carry no table of control tokens; mistral-common then uses its own
    table of the first twenty (``<unk>``, ``<s>``, ``</s>``, ``[INST]``, …,
    ``[TOOL_CALLS]``, …). ``control_tokens`` adds the later ones (``[ARGS]``,
    ``[CALL_ID]``, ``[THINK]``, …) at the ranks the published tokenizer files give
    them; the ranks between are filled with ``<SPECIAL_n>`` as in those files.
    ``version`` is the tokenizer version the instruct tokenizer follows.
    """
    mistral_common = _mistral_common()
    from mistral_common.tokens.tokenizers.base import TokenizerVersion
    from mistral_common.tokens.tokenizers.tekken import SpecialTokenInfo, Tekkenizer

    path = Path(file)
    if not path.is_absolute() and not path.exists():
        path = Path(mistral_common.__file__).parent / "data" / file
    if not path.exists():
        shipped = sorted(p.name for p in (Path(mistral_common.__file__).parent / "data").iterdir())
        raise FileNotFoundError(
            f"mistral-common ships no tokenizer file {file!r} (it has {shipped})")
    data = json.loads(path.read_text(encoding="utf-8"))
    config = data["config"]
    special = data.get("special_tokens")
    table = list(special) if special else list(Tekkenizer.DEPRECATED_SPECIAL_TOKENS)
    by_rank = {t["rank"]: t for t in table}
    for token, rank in control_tokens:
        if rank in by_rank and by_rank[rank]["token_str"] != token:
            if not by_rank[rank]["token_str"].startswith("<SPECIAL_"):
                raise ValueError(f"control token {token!r}: rank {rank} is "
                                 f"{by_rank[rank]['token_str']!r} in {path.name}")
        by_rank[rank] = SpecialTokenInfo(rank=rank, token_str=token, is_control=True)
    top = max(by_rank) + 1
    filler = Tekkenizer.SPECIAL_TOKEN_TEMPLATE
    table = [by_rank.get(r) or SpecialTokenInfo(rank=r, token_str=filler.format(id=r),
                                                is_control=True)
             for r in range(top)]
    return Tekkenizer(
        data["vocab"], table, config["pattern"], config["default_vocab_size"],
        config["default_num_special_tokens"], TokenizerVersion(version),
        name=path.name.replace(".json", ""),
    )


def mistral_common_chunker(spec: dict) -> TokenChunker:
    """The chunker of a grammar's ``meta.json`` ``tokenizer.mistral_common`` entry.

    ``spec``: ``{"file": "tekken_240911.json", "version": "v13",
    "control_tokens": {"[ARGS]": 32, ...}}``. Text is encoded the way
    mistral-common's instruct tokenizer builds a turn: every control-token
    string becomes its control token (``Tekkenizer.get_special_token``), the
    text between is encoded as text (``Tekkenizer.encode``); ids are decoded
    with the control tokens kept (``SpecialTokenPolicy.KEEP``).
    """
    _mistral_common()
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

    tok = tekkenizer(spec.get("file", "tekken_240911.json"), spec.get("version", "v13"),
                     tuple(sorted((spec.get("control_tokens") or {}).items())))
    specials = [s for s in tok._special_tokens_reverse_vocab if not s.startswith("<SPECIAL_")]

    def encode(text: str) -> list[int]:
        ids: list[int] = []
        for piece, special in split_special(text, specials):
            if special:
                ids.append(tok.get_special_token(piece))
            else:
                ids.extend(tok.encode(piece, bos=False, eos=False))
        return ids

    def decode(ids: Sequence[int]) -> str:
        return tok.decode(list(ids), special_token_policy=SpecialTokenPolicy.KEEP)

    name = f"mistral-common {tok._model.name} ({tok.version.value})"
    chunker = TokenChunker(name, encode, decode)
    chunker.tokenizer = tok  # type: ignore[attr-defined]
    return chunker


# -- transformers -----------------------------------------------------------------------


def transformers_chunker(tokenizer: Any, name: str | None = None) -> TokenChunker:
    """The chunker of a transformers tokenizer: added tokens in the text encode as themselves."""

    def encode(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False))

    def decode(ids: Sequence[int]) -> str:
        return tokenizer.decode(list(ids), skip_special_tokens=False,
                                clean_up_tokenization_spaces=False)

    chunker = TokenChunker(name or f"transformers {type(tokenizer).__name__}", encode, decode)
    chunker.tokenizer = tokenizer  # type: ignore[attr-defined]
    return chunker


def load_chunker(spec: dict | None) -> TokenChunker | None:
    """The chunker a grammar's ``meta.json`` ``tokenizer`` key names, or None without one.

    Raises :class:`TokenizerUnavailable` when the package it needs is missing.
    """
    if not spec:
        return None
    if "mistral_common" in spec:
        return mistral_common_chunker(spec["mistral_common"])
    raise ValueError(f"meta.json tokenizer: unknown kind {sorted(spec)} (known: mistral_common)")
