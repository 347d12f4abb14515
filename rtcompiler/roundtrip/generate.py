"""Real generations: how the compiled parser fares on what a model actually writes.

``sample_generations(folder, samples)`` loads the model folder's weights
(``AutoModelForCausalLM``, torch), and for each sample draws a user message
(half of them with random JSON-schema tools), renders the prompt with
``apply_chat_template(..., add_generation_prompt=True)``, samples a completion
(``do_sample=True``, seeded), and parses it with the compiled parser twice:
whole, and streamed token by token as a server would (:func:`.stream_pieces`).

A malformed generation may make the parser raise: that is the model's doing
and is counted by exception type. A stream whose outcome differs from the whole
parse is the parser's doing: ``stream_mismatches`` must stay 0. Tool calls are
checked against their tool's JSON schema (``jsonschema``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .._extras import require
from ..codegen import load_parser
from . import strategies
from .check import _outcome, normalisation
from .model import ModelFolder, offline
from .tokenizers import ChunkingError, stream_pieces


@dataclass
class GenerationReport:
    generations: int = 0
    with_tools: int = 0
    ended: int = 0  # stopped on an end-of-turn token (not at max_new_tokens)
    tokens: int = 0
    parsed: int = 0
    exceptions: Counter = field(default_factory=Counter)  # exception type -> generations
    tool_calls: int = 0
    unknown_tools: int = 0  # calls naming no offered tool
    schema_failures: int = 0  # calls whose arguments fail the tool's parameters schema
    detokenize_errors: int = 0
    stream_mismatches: int = 0
    samples: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.stream_mismatches == 0

    def table(self) -> str:
        exc = ", ".join(f"{name} {n}" for name, n in sorted(self.exceptions.items())) or "-"
        rows = [
            ("generations", self.generations,
             f"{self.with_tools} with tools, {self.ended} ended by an end-of-turn token"),
            ("tokens generated", self.tokens, ""),
            ("parsed", self.parsed, ""),
            ("parse exceptions", sum(self.exceptions.values()), exc),
            ("tool calls found", self.tool_calls, ""),
            ("  unknown tool", self.unknown_tools, ""),
            ("  args fail schema", self.schema_failures, "jsonschema"),
            ("stream != whole", self.stream_mismatches, "must be 0"),
        ]
        if self.detokenize_errors:
            rows.append(("detokenize errors", self.detokenize_errors, "not streamed"))
        width = max(len(r[0]) for r in rows)
        return "\n".join(f"{name.ljust(width)}  {value:>5}  {note}".rstrip()
                         for name, value, note in rows)


def _calls(message: dict) -> list[Any]:
    calls = message.get("tool_calls")
    if calls is None:
        return []
    return calls if isinstance(calls, list) else [calls]


def _check_call(call: Any, tools: list[dict] | None, report: GenerationReport) -> str | None:
    import jsonschema

    report.tool_calls += 1
    fn = call.get("function", call) if isinstance(call, dict) else {}
    name = fn.get("name") if isinstance(fn, dict) else None
    by_name = {t["function"]["name"]: t["function"] for t in tools or []}
    if name not in by_name:
        report.unknown_tools += 1
        return f"unknown tool {name!r}"
    arguments = fn.get("arguments")
    try:
        jsonschema.validate(arguments, by_name[name].get("parameters") or {})
    except jsonschema.ValidationError as e:
        report.schema_failures += 1
        return f"schema: {e.message}"
    return None


def sample_generations(folder: ModelFolder, samples: int, seed: int = 0, max_new_tokens: int = 64,
                       on_sample: Any = None) -> GenerationReport:
    require("sampling generations", models=["torch", "transformers"])
    offline()
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    tok = folder.tokenizer
    if not (folder.path / "config.json").is_file():
        raise FileNotFoundError(f"{folder.path}: no config.json; --generate needs the model")
    try:
        model: Any = AutoModelForCausalLM.from_pretrained(str(folder.path), local_files_only=True)
    except (OSError, ValueError) as e:
        raise OSError(f"{folder.path}: cannot load the model: {e}") from e
    model.eval()
    module = load_parser(folder.template)
    chunker = folder.chunker()
    norm = normalisation(folder.normalise)
    render_kwargs = {**norm["render_kwargs"]}
    null = "null" not in norm["unsupported_argument_values"]
    stops = [tok.convert_tokens_to_ids(t) for t in folder.end_of_turn]
    stops = [i for i in stops if isinstance(i, int) and i >= 0]
    pad = tok.pad_token_id if tok.pad_token_id is not None else (stops[0] if stops else 0)
    reserved = tuple(folder.reserved)
    prompts = strategies.draw_examples(
        strategies.user_prompts(reserved, tools=False), samples, seed)
    # Every other prompt offers tools.
    tool_sets = strategies.draw_examples(strategies.tool_schemas(null=null), samples, seed + 1)

    report = GenerationReport()
    for i in range(samples):
        text, _ = prompts[i % len(prompts)]
        tools = tool_sets[i % len(tool_sets)] if i % 2 else None
        messages = [{"role": "user", "content": text}]
        prefix = tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True,
                                         tokenize=False, **render_kwargs)
        inputs = tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True,
                                         return_dict=True, return_tensors="pt", **render_kwargs)
        torch.manual_seed(seed * 100_003 + i)
        with torch.no_grad():
            out = model.generate(**inputs, do_sample=True, max_new_tokens=max_new_tokens,
                                 eos_token_id=stops or None, pad_token_id=pad)
        ids = out[0, inputs["input_ids"].shape[1]:].tolist()
        report.generations += 1
        report.with_tools += tools is not None
        report.tokens += len(ids)
        report.ended += bool(ids) and ids[-1] in stops
        output = chunker.decode(ids)
        sample: dict = {"prompt": text, "tools": tools, "output": output}
        whole = _outcome(lambda: module.parse_response(output, prefix=prefix, tools=tools))  # noqa: B023
        sample["whole"] = whole
        if whole[0] == "ok":
            report.parsed += 1
            sample["calls"] = [_check_call(c, tools, report) for c in _calls(whole[1])]
        else:
            report.exceptions[whole[1].split(":", 1)[0]] += 1
        try:
            pieces = stream_pieces(ids, chunker.decode)
        except ChunkingError:
            report.detokenize_errors += 1
            pieces = None
        if pieces is not None:
            def streamed(prefix: str = prefix, tools: Any = tools,
                         pieces: list[str] = pieces) -> Any:
                parser = module.ResponseParser(prefix, tools=tools)
                for piece in pieces:
                    parser.feed(piece)
                return parser.finalize()[0]

            stream = _outcome(streamed)
            sample["pieces"] = len(pieces)
            if stream != whole:
                report.stream_mismatches += 1
                sample["stream"] = stream
                sample["chunks"] = pieces
        report.samples.append(sample)
        if on_sample is not None:
            on_sample(sample)
    return report


def report_generations(folder: ModelFolder, samples: int, seed: int = 0, max_new_tokens: int = 64,
                       show: bool = False) -> int:
    """``rtc check --model DIR --generate``: print the table; 1 if a stream differed."""
    import json
    import sys

    from .check import static_findings

    for finding in static_findings(folder.template, folder.chat_template, folder.variables):
        print(f"finding: {finding}")
    print(f"rtc check: sampling {samples} generations, seed {seed}, "
          f"at most {max_new_tokens} new tokens", file=sys.stderr)

    def on_sample(sample: dict) -> None:
        if show:
            print(json.dumps(sample, ensure_ascii=False, default=str), flush=True)

    report = sample_generations(folder, samples, seed=seed, max_new_tokens=max_new_tokens,
                                on_sample=on_sample)
    print(report.table())
    for sample in report.samples:
        if "stream" in sample:
            print("stream != whole (a parser bug):")
            for key in ("output", "whole", "stream", "chunks"):
                print(f"  {key}: {json.dumps(sample.get(key), ensure_ascii=False, default=str)}")
    return 0 if report.ok else 1
