"""transformers integration: parse what a transformers user holds, with a compiled parser.

``parse_response(tokenizer, response, prefix=...)`` takes what
``tokenizer.parse_response`` takes in transformers 5.23.0 -- a string, token ids, a
batch (a list of strings or of id sequences), a numpy array or a torch tensor, 1-D or
2-D -- and returns the same: one message for one sequence, a list for a batch. The
template is the tokenizer's own ``response_template`` unless ``schema`` (a template
dict, like transformers' second argument) or ``grammar`` (a bundled grammar name)
says otherwise. It is compiled once per process and cached by the template's
SHA-256, so a loop over generations pays for compilation once.

Token ids are decoded as transformers decodes them (``tokenizer.decode``: special
tokens kept, since they are the delimiters) with one difference: padding. A padded
row decoded whole puts the pad tokens in the text, where the parser takes them for
output (a right-padded Qwen3 row parses to ``content == "<|endoftext|>..."`` in
transformers). With ``skip_padding=True``, the default, runs of the tokenizer's pad
token at either end of a row are dropped before decoding, and only those: a pad id
inside a row is text, and when the pad token is also the end-of-sequence token the
first of a trailing run is kept as the real end. ``skip_padding=False`` decodes
exactly as transformers does.

numpy and torch are never imported here: arrays and tensors are read through their
``tolist()``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from .api import CompiledParser, _schemas
from .template import load_template

_compiled: dict[str, CompiledParser] = {}
_grammars: dict[str, dict] = {}


def compiled_parser(tokenizer: Any = None, *, schema: dict | None = None,
                    grammar: str | None = None) -> CompiledParser:
    """The compiled parser for ``schema``, else ``grammar``, else ``tokenizer.response_template``.

    Compiled on first use, then served from a cache keyed by the template's SHA-256.
    """
    spec = _template_spec(tokenizer, schema, grammar)
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    key = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
    parser = _compiled.get(key)
    if parser is None:
        parser = _compiled.setdefault(key, CompiledParser(load_template(spec)))
    return parser


def parse_response(tokenizer: Any, response: Any, *, prefix: Any = None,
                   tools: list[dict | Callable] | None = None, schema: dict | None = None,
                   grammar: str | None = None, skip_padding: bool = True) -> dict | list[dict]:
    """Parse one generation or a batch, as ``tokenizer.parse_response`` does.

    ``prefix`` (required, as in transformers: ``""`` to opt out) is the prompt before
    the generation, in any form ``response`` takes; for a batch, one prefix for all or
    one per item. ``tools`` are JSON schemas or Python functions.
    """
    parser = compiled_parser(tokenizer, schema=schema, grammar=grammar)
    if prefix is None:
        raise ValueError(
            "parse_response needs prefix=: the prompt before the generation, since a chat "
            "template may open a region (such as <think>) before the model writes; pass "
            'prefix="" if the generation holds the whole message')
    texts, batched = _decode(tokenizer, response, skip_padding)
    if isinstance(prefix, (list, tuple)) and not prefix:
        prefixes, prefix_batched = [""], False  # transformers: an empty list means no prefix
    else:
        prefixes, prefix_batched = _decode(tokenizer, prefix, skip_padding)
    if not prefix_batched:
        prefixes = prefixes * len(texts)
    elif len(prefixes) != len(texts):
        raise ValueError(f"got {len(texts)} response(s) but {len(prefixes)} prefixes: give one "
                         "prefix for every response, or a single one for all")
    schemas = _schemas(tools)
    messages = [parser.module.parse_response(text, prefix=pfx, tools=schemas)
                for text, pfx in zip(texts, prefixes, strict=True)]
    return messages if batched else messages[0]


def get_response_parser(tokenizer: Any, *, prefix: Any = None,
                        tools: list[dict | Callable] | None = None, schema: dict | None = None,
                        grammar: str | None = None, skip_padding: bool = True) -> Any:
    """A streaming parser (``initial_events``, ``feed(text)``, ``finalize()``), as
    ``tokenizer.get_response_parser`` gives; ``prefix`` is one sequence, text or ids."""
    parser = compiled_parser(tokenizer, schema=schema, grammar=grammar)
    if isinstance(prefix, (list, tuple)) and not prefix:
        prefix = ""  # no ids: transformers decodes them to the empty prompt
    elif prefix is not None and not isinstance(prefix, str):
        texts, batched = _decode(tokenizer, prefix, skip_padding)
        if batched:
            raise ValueError("get_response_parser takes one prefix (a string, ids, or a 1-D "
                             "tensor), not a batch")
        prefix = texts[0]
    return parser.response_parser(prefix, tools=tools)


def _template_spec(tokenizer: Any, schema: dict | None, grammar: str | None) -> dict:
    if schema is not None and grammar is not None:
        raise ValueError("give a schema or a grammar, not both")
    if schema is not None:
        return schema
    if grammar is not None:
        spec = _grammars.get(grammar)
        if spec is None:
            from .grammars import grammar as bundled

            spec = _grammars.setdefault(grammar, bundled(grammar).template.raw)
        return spec
    spec = getattr(tokenizer, "response_template", None)
    if spec is None:  # a tokenizer that keeps unknown config keys in its init kwargs
        spec = (getattr(tokenizer, "init_kwargs", None) or {}).get("response_template")
    if spec is None:
        raise AttributeError("this tokenizer has no response_template: pass grammar= (a bundled "
                             "grammar name) or schema= (a response template dict)")
    return spec


def _decode(tokenizer: Any, value: Any, skip_padding: bool) -> tuple[list[str], bool]:
    """The texts ``value`` holds, and whether it is a batch (the rules of transformers)."""
    if isinstance(value, str):
        return [value], False
    if isinstance(value, (list, tuple)) and (not value or isinstance(value[0], str)):
        return list(value), True
    ids = _python(value)
    if isinstance(ids, int):
        ids = [ids]
    if ids and isinstance(ids[0], (list, tuple)):
        return [_decode_row(tokenizer, row, skip_padding) for row in ids], True
    return [_decode_row(tokenizer, ids, skip_padding)], False


def _python(value: Any) -> Any:
    tolist = getattr(value, "tolist", None)
    if tolist is not None:
        return tolist()
    if isinstance(value, (list, tuple)):
        return [_python(v) for v in value]
    return value


def _decode_row(tokenizer: Any, ids: list[int], skip_padding: bool) -> str:
    if skip_padding:
        ids = _unpad(ids, getattr(tokenizer, "pad_token_id", None),
                     getattr(tokenizer, "eos_token_id", None))
    return tokenizer.decode(ids)


def _unpad(ids: list[int], pad: int | None, eos: int | None) -> list[int]:
    """``ids`` without the runs of ``pad`` at its ends (left and right padding).

    >>> _unpad([0, 0, 5, 0, 6, 0, 0], 0, 2)
    [5, 0, 6]
    >>> _unpad([5, 6, 2, 2, 2], 2, 2)  # pad is eos: the first of the run ends the text
    [5, 6, 2]
    >>> _unpad([2, 2], 2, 2)  # an end of text at once, then padding
    [2]
    """
    if pad is None:
        return list(ids)
    start, end = 0, len(ids)
    while end > 0 and ids[end - 1] == pad:
        end -= 1
    while start < end and ids[start] == pad:
        start += 1
    if pad == eos and end < len(ids):
        end += 1
    return list(ids[start:end])


__all__ = ["compiled_parser", "get_response_parser", "parse_response"]
