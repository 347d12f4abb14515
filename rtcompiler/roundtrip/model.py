"""A local Hugging Face model folder as the source of a round trip.

``load_model_folder(DIR)`` reads what ``rtc check --model DIR`` needs, without
the network (``HF_HUB_OFFLINE=1``): the response template from
``tokenizer_config.json``, the chat template (``chat_template`` there, or
``chat_template.jinja``), and the tokenizer (``AutoTokenizer``), whose special
tokens become chat-template variables (as ``apply_chat_template`` passes them),
whose added tokens are reserved (a model's text cannot contain them), whose
end-of-sequence tokens end a turn, and which chunks streams at its token
boundaries. The normalisation comes from ``--meta``, else from the bundled
grammar whose response template is the folder's, else the defaults.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..grammars import bundled_grammar_of
from ..template import Template, load_template_file
from .tokenizers import TokenChunker, transformers_chunker

TOKENIZER_CONFIG = "tokenizer_config.json"


def offline() -> None:
    """No model hub: everything comes from the folder."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@dataclass
class ModelFolder:
    path: Path
    tokenizer: Any
    template: Template
    chat_template: str
    meta: dict = field(default_factory=dict)
    grammar: str | None = None  # the bundled grammar whose normalisation is used
    variables: dict = field(default_factory=dict)
    reserved: list[str] = field(default_factory=list)
    end_of_turn: list[str] = field(default_factory=list)

    @property
    def normalise(self) -> dict:
        norm = dict(self.meta.get("normalise") or {})
        if not norm.get("end_of_turn") and self.end_of_turn:
            norm["end_of_turn"] = self.end_of_turn
        return norm

    def chunker(self) -> TokenChunker:
        return transformers_chunker(self.tokenizer, f"transformers {self.path.name}")


def _chat_template(path: Path, config: dict) -> str:
    value = config.get("chat_template")
    if isinstance(value, list):  # named templates: [{"name": ..., "template": ...}]
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
        value = named.get("default") or next(iter(named.values()), None)
    if isinstance(value, str) and value:
        return value
    file = path / "chat_template.jinja"
    if file.is_file():
        return file.read_text(encoding="utf-8")
    raise FileNotFoundError(f"{path}: no chat template (neither 'chat_template' in "
                            f"{TOKENIZER_CONFIG} nor chat_template.jinja)")


def _eos_tokens(path: Path, tokenizer: Any) -> list[str]:
    ids: list[int] = []
    generation = path / "generation_config.json"
    if generation.is_file():
        value = json.loads(generation.read_text(encoding="utf-8")).get("eos_token_id")
        ids = value if isinstance(value, list) else ([value] if value is not None else [])
    tokens = [tokenizer.convert_ids_to_tokens(int(i)) for i in ids]
    if tokenizer.eos_token and tokenizer.eos_token not in tokens:
        tokens.append(tokenizer.eos_token)
    return [t for t in tokens if t]


def load_model_folder(path: str | os.PathLike[str], template: Template | None = None,
                      chat_template: str | None = None, meta: dict | None = None) -> ModelFolder:
    """Read a model folder; ``template``/``chat_template``/``meta`` override the folder's.

    Without ``meta``, the bundled grammar whose response template is the folder's gives it.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: not a model folder")
    config_file = folder / TOKENIZER_CONFIG
    if not config_file.is_file():
        raise FileNotFoundError(f"{folder}: no {TOKENIZER_CONFIG}")
    config = json.loads(config_file.read_text(encoding="utf-8-sig"))
    if template is None:
        template = load_template_file(config_file)
    if chat_template is None:
        chat_template = _chat_template(folder, config)
    grammar = None
    if meta is None:
        found = bundled_grammar_of(config.get("response_template"))
        meta = (found.meta if found is not None else None) or {}
        if found is not None:
            grammar = found.name

    offline()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    variables = {k: v for k, v in tokenizer.special_tokens_map.items() if isinstance(v, str)}
    added = [t.content for t in tokenizer.added_tokens_decoder.values() if t.content.strip()]
    reserved = sorted(set(meta.get("reserved") or []) | set(added))
    return ModelFolder(
        path=folder, tokenizer=tokenizer, template=template, chat_template=chat_template,
        meta=meta, grammar=grammar, variables=variables,
        reserved=reserved, end_of_turn=_eos_tokens(folder, tokenizer),
    )
