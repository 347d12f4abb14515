"""Real generations: how the compiled parser fares on what a model actually writes.

``rtc check NAME... --model M --generate N [--constrained]``. For each format (a
bundled grammar, or a template with its chat template) N rows are generated:

- **Conversations.** A user message and tools are drawn with the round-trip strategies
  (at most two parameters per tool, bounded values: maximal string lengths, number
  ranges, small arrays and objects, no extra keys, so that a generation under them ends).
  The format's chat template renders the prompt, with the format's own variables (never
  the model tokenizer's special tokens); the model's tokenizer encodes it.
- **Forced calls.** Every other row must call a tool: constrained, its grammar has
  ``tool_choice="required"``; unconstrained, its user message asks for the call.
- **Generation** (:mod:`.sampling`): sampled, seeded, batched across rows and formats,
  masked by the grammar exported for the row's tools and prompt when constrained.
- **Checks**, per row: the output parses (``parse_response``, the prompt as prefix); the
  stream at the model's token boundaries gives the same outcome as the whole text; each
  parsed message round-trips (``parse(render(m)) == m`` under the format's normalisation,
  rendered after the same user message); every call names an offered tool and its
  arguments are valid against the tool's schema (``jsonschema``); a forced row calls.

Constrained rows must pass every check and end within the token budget; any row's stream
must equal its whole parse. Unconstrained outputs are messy real text, and the share that
parses is reported, not required.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from .._extras import require
from ..codegen import load_parser
from ..template import Template
from . import strategies
from .check import _outcome, cut_at_stop, expected_message, normalisation
from .render import ChatRenderer
from .sampling import Completion, Request, Timing, sample

TOOL_PARAMETERS = 2  # per tool, at most: short prompts, short calls
GENERATION_TEXT = 24  # characters per free text region in a constrained generation
# One call per turn: two, in the families whose delimiters SmolLM2 spells in many tokens
# (DeepSeek's, GLM's tags around every argument), overran the token budget.
GENERATION_CALLS = 1
ROWS_PER_CONVERSATION = 2
SIMPLEST = 3  # the first draws of a strategy, which are its simplest examples


# -- formats ---------------------------------------------------------------------------------


@dataclass
class Format:
    """A template and what its round trip needs: chat template, variables, normalisation."""

    name: str
    template: Template
    chat_template: str
    variables: dict = field(default_factory=dict)
    normalise: dict = field(default_factory=dict)  # meta.json's, as written
    reserved: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)  # the whole meta.json, for the grammar export

    def __post_init__(self) -> None:
        self.norm = normalisation(self.normalise)
        self.renderer = ChatRenderer(self.chat_template,
                                     {**self.norm["render_kwargs"], **self.variables})
        self.module = load_parser(self.template)

    @property
    def end_of_turn(self) -> list[str]:
        stops = self.norm.get("end_of_turn") or []
        return [stops] if isinstance(stops, str) else list(stops)

    @property
    def null(self) -> bool:
        return "null" not in self.norm["unsupported_argument_values"]

    @property
    def calls(self) -> bool:
        return any(f.name == "tool_calls" for f in self.template.fields)


def format_from_folder(folder: Any) -> Format:
    """A model folder's format (:class:`.model.ModelFolder`): its response template, chat
    template and tokenizer's special tokens as variables."""
    return Format(folder.grammar or folder.path.name, folder.template, folder.chat_template,
                  variables=dict(folder.variables), normalise=folder.normalise,
                  reserved=list(folder.reserved), meta=dict(folder.meta))


def format_from_meta(name: str, template: Template, chat_template: str,
                     meta: dict | None) -> Format:
    meta = meta or {}
    return Format(name, template, chat_template,
                  normalise=dict(meta.get("normalise") or {}),
                  reserved=list(meta.get("reserved") or []), meta=meta)


def bundled_format(name: str) -> Format:
    """The bundled grammar ``name``'s format."""
    from .. import grammars

    found = grammars.grammar(name)
    chat_template = found.chat_template
    assert chat_template is not None, f"the bundled grammar {name} has no chat template"
    return format_from_meta(found.spelling, found.template, chat_template, found.meta)


# -- conversations ---------------------------------------------------------------------------


_SMALL_VALUE = {"anyOf": [{"type": "integer", "minimum": -999, "maximum": 999},
                          {"type": "boolean"}, {"type": "string", "maxLength": 12}]}


def bounded_parameters(parameters: dict) -> dict:
    """``parameters`` with every value bounded, so that a generation under them ends."""
    out = json.loads(json.dumps(parameters))
    out["additionalProperties"] = False
    for schema in out.get("properties", {}).values():
        kind = schema.get("type")
        if kind == "string":
            schema["maxLength"] = 24
        elif kind in ("integer", "number"):
            schema.update(minimum=-10**6, maximum=10**6)
        elif kind == "array":
            schema.update(maxItems=3, items=_SMALL_VALUE)
        elif kind == "object":
            schema.update(maxProperties=2, additionalProperties=_SMALL_VALUE)
    return out


def generation_tools(tools: list[dict]) -> list[dict]:
    out = []
    for tool in tools:
        fn = dict(tool["function"])
        params = fn["parameters"]
        keep = list(params.get("properties", {}))[:TOOL_PARAMETERS]
        params = {**params, "properties": {k: params["properties"][k] for k in keep},
                  "required": [k for k in params.get("required", []) if k in keep]}
        fn["parameters"] = bounded_parameters(params)
        out.append({**tool, "function": fn})
    return out


@dataclass
class Conversation:
    format: Format
    index: int
    user: str  # the user message
    tools: list[dict] | None
    force: bool  # the row must call a tool
    prompt: str = ""  # rendered, generation prompt included: the parser's prefix
    ids: list[int] = field(default_factory=list)


def _encodable(tokenizer: Any) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        ids = tokenizer.encode(text, add_special_tokens=False)
        return tokenizer.decode(ids, skip_special_tokens=False,
                                clean_up_tokenization_spaces=False) == text
    return check


def conversations(fmt: Format, tokenizer: Any, count: int, seed: int,
                  constrained: bool) -> list[Conversation]:
    """``count`` drawn conversations of ``fmt``, forced and not; unconstrained, the forced
    ones are separate prompts that ask for the call."""
    salt = zlib.crc32(fmt.name.encode("utf-8"))
    reserved = tuple(sorted(set(fmt.reserved) | set(fmt.end_of_turn)))
    encodable = _encodable(tokenizer)
    texts = strategies.texts(reserved, min_size=1, max_size=40).filter(
        lambda s: s.strip() != "" and encodable(s))
    # Hypothesis draws its simplest examples first (one tool "a" without parameters, a
    # one-character message), whatever the seed: they would be every run's first
    # conversations, so they are dropped.
    users = strategies.draw_examples(texts, count + SIMPLEST, seed + salt)[SIMPLEST:]
    tool_sets = strategies.draw_examples(strategies.tool_schemas(null=fmt.null),
                                         count + SIMPLEST, seed + salt + 1)[SIMPLEST:]
    out = []
    for i in range(count):
        tools = generation_tools(tool_sets[i % len(tool_sets)]) if fmt.calls else None
        user = users[i % len(users)]
        variants = [False] if constrained else [False, True]
        for force in variants:
            text = user
            if force and tools:
                text = f"{user}\nCall the {tools[0]['function']['name']} tool."
            out.append(Conversation(fmt, i, text, tools, force))
    return out


def render_prompt(conv: Conversation, tokenizer: Any) -> None:
    conv.prompt = conv.format.renderer.render([{"role": "user", "content": conv.user}],
                                              conv.tools, add_generation_prompt=True)
    conv.ids = list(tokenizer.encode(conv.prompt, add_special_tokens=False))


# -- rows and their checks -------------------------------------------------------------------


@dataclass
class Row:
    conversation: Conversation
    index: int  # within its format
    seed: int
    constrained: bool
    tool_choice: str  # "auto" or "required"
    completion: Completion | None = None
    whole: Any = None  # ("ok", message) or ("error", "Type: message")
    stream: Any = None
    round_trip: Any = None  # None when not parsed; ("ok"|"error", detail) otherwise
    calls: int = 0
    valid_calls: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def forced(self) -> bool:
        return self.tool_choice == "required"

    @property
    def text(self) -> str:
        return self.completion.text if self.completion else ""

    def summary(self) -> dict:
        """One line of ``--show``: the output and what it parses to."""
        out = {"grammar": self.conversation.format.name, "row": self.index, "seed": self.seed,
               "tool_choice": self.tool_choice,
               "tools": [t["function"]["name"] for t in self.conversation.tools or []],
               "output": self.text}
        out["message" if self.whole[0] == "ok" else "error"] = self.whole[1]
        out["failures"] = self.failures
        return out

    def describe(self) -> dict:
        c = self.completion
        out = {"grammar": self.conversation.format.name, "row": self.index, "seed": self.seed,
               "constrained": self.constrained, "tool_choice": self.tool_choice,
               "failures": self.failures, "stop": c.stop if c else None,
               "tokens": len(c.ids) if c else 0, "user": self.conversation.user,
               "tools": self.conversation.tools, "prompt": self.conversation.prompt,
               "output": self.text, "whole": self.whole}
        if self.stream != self.whole:
            out["stream"] = self.stream
            out["chunks"] = c.pieces if c else None
        if self.round_trip is not None and self.round_trip[0] != "ok":
            out["round_trip"] = self.round_trip[1]
        if c is not None and c.error:
            out["grammar_error"] = c.error
        return out


def check_call(call: Any, tools: list[dict] | None) -> str | None:
    """Why a parsed call is not a valid call of an offered tool, or None."""
    import jsonschema

    fn = call.get("function", call) if isinstance(call, dict) else {}
    name = fn.get("name") if isinstance(fn, dict) else None
    by_name = {t["function"]["name"]: t["function"] for t in tools or []}
    if name not in by_name:
        return f"unknown tool {name!r}"
    try:
        jsonschema.validate(fn.get("arguments"), by_name[name].get("parameters") or {})
    except jsonschema.ValidationError as e:
        return f"arguments of {name}: {e.message}"
    return None


def _calls(message: dict) -> list[Any]:
    calls = message.get("tool_calls")
    if calls is None:
        return []
    return calls if isinstance(calls, list) else [calls]


def round_trip(conv: Conversation, message: dict) -> tuple[str, Any]:
    """``("ok", m)`` when rendering the parsed ``message`` after the same user message and
    parsing the turn again gives it back (under the format's normalisation)."""
    fmt = conv.format
    history = [{"role": "user", "content": conv.user}]
    rendered = message
    if fmt.norm.get("tool_call_id") == "alnum9" and message.get("tool_calls"):
        # Mistral's chat templates refuse calls without 9-character ids, which a family
        # like Magistral 2506 never writes (so never parses); the comparison drops them.
        rendered = {**message, "tool_calls": [
            {"id": f"{n:09d}", **call} if "id" not in call else call
            for n, call in enumerate(message["tool_calls"])]}
    try:
        prompt, output = fmt.renderer.assistant_turn(history, rendered, conv.tools)
    except jinja2.exceptions.TemplateError as e:
        return ("error", f"the chat template refuses the message: {e}")
    output = cut_at_stop(output, fmt.norm["end_of_turn"])
    again = _outcome(lambda: fmt.module.parse_response(output, prefix=prompt, tools=conv.tools))
    expected = expected_message(fmt.template, message, fmt.norm)
    if again == ("ok", expected):
        return again
    return ("error", {"rendered": output, "expected": expected, "got": again})


def check_row(row: Row) -> None:
    conv, fmt, c = row.conversation, row.conversation.format, row.completion
    assert c is not None
    text = c.text
    row.whole = _outcome(lambda: fmt.module.parse_response(text, prefix=conv.prompt,
                                                           tools=conv.tools))

    def streamed() -> Any:
        parser = fmt.module.ResponseParser(conv.prompt, tools=conv.tools)
        for piece in c.pieces:
            parser.feed(piece)
        return parser.finalize()[0]

    row.stream = _outcome(streamed)
    if row.stream != row.whole:
        row.failures.append("stream != whole")
    if row.constrained and c.stop in ("capped", "grammar error"):
        row.failures.append(c.stop)
    if row.whole[0] != "ok":
        if row.constrained:
            row.failures.append("parse error")
        return
    message = row.whole[1]
    row.round_trip = round_trip(conv, message)
    problems = []
    for call in _calls(message):
        row.calls += 1
        problem = check_call(call, conv.tools)
        if problem is None:
            row.valid_calls += 1
        else:
            problems.append(problem)
    if row.constrained:
        if row.round_trip[0] != "ok":
            row.failures.append("round trip")
        row.failures += problems
        if row.forced and not row.calls:
            row.failures.append("forced, no call")


# -- the run -----------------------------------------------------------------------------------


GrammarHook = Callable[[Conversation, str], str]
"""``(conversation, tool_choice) -> grammar``: the llguidance grammar a row is generated under."""


@dataclass
class Model:
    """What generates: a name for the report, a transformers tokenizer and a causal LM."""

    name: str
    tokenizer: Any
    model: Any

    def stop_ids(self) -> set[int]:
        ids = set()
        config = getattr(self.model, "generation_config", None)
        value = getattr(config, "eos_token_id", None)
        for i in value if isinstance(value, list) else [value]:
            if isinstance(i, int):
                ids.add(i)
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        return ids


@dataclass
class GenerationReport:
    model: str
    constrained: bool
    seed: int
    rows: list[Row] = field(default_factory=list)
    timing: Timing = field(default_factory=Timing)
    batch_size: int = 0
    threads: int = 1

    @property
    def ok(self) -> bool:
        return not any(r.failures for r in self.rows)

    def failing(self) -> list[Row]:
        return [r for r in self.rows if r.failures]

    def smallest_failure(self) -> Row | None:
        failing = self.failing()
        return min(failing, key=lambda r: (len(r.text), r.index)) if failing else None

    def counts(self, rows: Sequence[Row]) -> dict[str, int]:
        parsed = [r for r in rows if r.whole and r.whole[0] == "ok"]
        return {
            "rows": len(rows),
            "forced": sum(r.forced for r in rows),
            "parsed": len(parsed),
            "stream=whole": sum(r.stream == r.whole for r in rows),
            "round trip": sum(r.round_trip is not None and r.round_trip[0] == "ok"
                              for r in parsed),
            "calls": sum(r.calls for r in rows),
            "valid calls": sum(r.valid_calls for r in rows),
            "forced+call": sum(r.forced and r.calls > 0 for r in rows),
            "capped": sum(bool(r.completion) and r.completion.stop == "capped" for r in rows),
            "tokens": sum(len(r.completion.ids) for r in rows if r.completion),
        }

    def table(self) -> str:
        names: list[str] = []
        for r in self.rows:
            if r.conversation.format.name not in names:
                names.append(r.conversation.format.name)
        lines = [(name, self.counts([r for r in self.rows
                                     if r.conversation.format.name == name])) for name in names]
        if len(names) > 1:
            lines.append(("all", self.counts(self.rows)))
        columns = list(lines[0][1]) if lines else []
        width = max([len("grammar")] + [len(n) for n, _ in lines])
        head = "grammar".ljust(width) + "".join(f"  {c:>{max(len(c), 5)}}" for c in columns)
        body = [name.ljust(width) + "".join(f"  {v:>{max(len(c), 5)}}"
                                            for c, v in counts.items())
                for name, counts in lines]
        return "\n".join([head, *body])

    def timing_lines(self) -> list[str]:
        t = self.timing
        tokens = sum(len(r.completion.ids) for r in self.rows if r.completion)
        rows_per_step = t.step_rows / t.steps if t.steps else 0.0
        lines = [f"model: {t.step_ms:.0f} ms of CPU per step with {rows_per_step:.1f} rows on "
                 f"average, {t.token_ms:.1f} ms per token ({t.steps} steps, {tokens} tokens, "
                 f"{self.threads} torch thread{'s' if self.threads != 1 else ''}); prefill "
                 f"{t.prompts} prompts, {t.prompt_tokens} tokens, {t.prefill_cpu:.1f} s"]
        if t.masks:
            share = t.mask_ms / t.token_ms if t.token_ms else math.inf
            lines.append(f"grammar mask: {t.mask_ms:.2f} ms of CPU per token (mean over "
                         f"{t.masks} masks, slowest {1e3 * t.mask_max:.1f} ms), "
                         f"{100 * share:.1f}% of the model's {t.token_ms:.1f} ms per token")
        return lines


def _row_seed(seed: int, fmt: Format, index: int) -> int:
    return (seed * 1_000_003 + zlib.crc32(fmt.name.encode("utf-8")) * 1009 + index) % 2**63


def run(formats: Sequence[Format], model: Model, rows_per_format: int, *, seed: int = 0,
        constrained: bool = False, grammar: GrammarHook | None = None,
        max_new_tokens: int = 192, batch_size: int = 48, threads: int = 1,
        on_row: Callable[[Row], None] | None = None) -> GenerationReport:
    """Generate ``rows_per_format`` rows for each format and check them."""
    if constrained and grammar is None:
        raise ValueError("constrained generation needs a grammar hook")
    tok = model.tokenizer
    stop_ids = model.stop_ids()
    rows: list[Row] = []
    for fmt in formats:
        count = math.ceil(rows_per_format / ROWS_PER_CONVERSATION)
        convs = conversations(fmt, tok, count, seed, constrained)
        for conv in convs:
            render_prompt(conv, tok)
        for r in range(rows_per_format):
            force = r % 2 == 1 and fmt.calls
            index = r // ROWS_PER_CONVERSATION
            if constrained:
                conv = convs[index]
            else:
                conv = next(c for c in convs if c.index == index and c.force == force)
            rows.append(Row(conv, r, _row_seed(seed, fmt, r), constrained,
                            "required" if force else "auto"))
    # The rows of one prompt next to each other: each batch prefills few prompts.
    order = {id(fmt): i for i, fmt in enumerate(formats)}
    rows.sort(key=lambda r: (order[id(r.conversation.format)], r.conversation.index,
                             r.conversation.force, r.index))
    requests = [_request(row, model, stop_ids, grammar) for row in rows]
    grammar_vocab = None
    if constrained:
        grammar_vocab = _llg_tokenizer(tok).vocab_size
    completions, timing = sample(model.model, tok, requests, max_new_tokens=max_new_tokens,
                                 batch_size=batch_size, grammar_vocab=grammar_vocab)
    report = GenerationReport(model.name, constrained, seed, timing=timing,
                              batch_size=batch_size, threads=threads)
    for row, completion in zip(rows, completions, strict=True):
        row.completion = completion
        check_row(row)
        report.rows.append(row)
        if on_row is not None:
            on_row(row)
    report.rows.sort(key=lambda r: (order[id(r.conversation.format)], r.index))
    return report


_LLG_TOKENIZERS: dict[int, tuple[Any, Any]] = {}


def _llg_tokenizer(tokenizer: Any) -> Any:
    """llguidance's view of a transformers fast tokenizer (about a second to build: kept,
    with the tokenizer, so that its id is not reused)."""
    key = id(tokenizer)
    if key not in _LLG_TOKENIZERS:
        import llguidance.hf

        _LLG_TOKENIZERS[key] = (tokenizer, llguidance.hf.from_tokenizer(tokenizer))
    return _LLG_TOKENIZERS[key][1]


# llguidance's lexer may spend a mask step's default fuel (200,000) on an exported grammar's
# text, whose exclusions of markers intersect with a bounded length: deepseek_v4's content
# after "<think" needed more, and the matcher then let only the stop token through. Ten
# times the default costs that step about 40 ms, a tenth of a model step.
LEXER_FUEL = 2_000_000


def grammar_matcher(tokenizer: Any, lark: str) -> Any:
    """An llguidance matcher of ``lark`` (an exported grammar) for ``tokenizer``."""
    from llguidance import LLMatcher, LLParserLimits

    return LLMatcher(_llg_tokenizer(tokenizer), LLMatcher.grammar_from_lark(lark), log_level=0,
                     limits=LLParserLimits(step_lexer_fuel=LEXER_FUEL))


def _request(row: Row, model: Model, stop_ids: set[int], grammar: GrammarHook | None) -> Request:
    conv, fmt = row.conversation, row.conversation.format
    tok = model.tokenizer
    turn_ends = set(fmt.end_of_turn)
    single = {}
    for marker in turn_ends:
        ids = tok.encode(marker, add_special_tokens=False)
        if len(ids) == 1:
            single[marker] = ids[0]
    stops = frozenset(stop_ids | set(single.values()))
    keep = frozenset(i for i in stops
                     if tok.decode([i], skip_special_tokens=False) in turn_ends)
    matcher = None
    if row.constrained:
        assert grammar is not None
        text = grammar(conv, row.tool_choice)
        matcher = grammar_matcher(tok, text)
        if matcher.is_error():
            raise ValueError(f"{fmt.name}: the exported grammar does not load in llguidance: "
                             f"{matcher.get_error()}")
    strings = tuple(sorted(m for m in turn_ends if m not in single))
    return Request(conv.ids, matcher=matcher, stop_ids=stops, keep_stop_text=keep,
                   stop_strings=strings, seed=row.seed)


def print_report(report: GenerationReport, write: Callable[[str], None]) -> int:
    """The table, the timings and the smallest failing row; the exit status."""
    kind = "constrained" if report.constrained else "unconstrained"
    write(f"{kind} generations with {report.model}, seed {report.seed}, "
          f"batches of {report.batch_size}")
    for line in report.table().splitlines():
        write(line)
    for line in report.timing_lines():
        write(line)
    smallest = report.smallest_failure()
    if smallest is None:
        checks = ("every row parses, streams as it parses whole, round-trips, calls validly, "
                  "and ends" if report.constrained else "every row streams as it parses whole")
        write(f"ok: {checks}")
        return 0
    write(f"{len(report.failing())} failing rows; the smallest:")
    for key, value in smallest.describe().items():
        write(f"  {key}: {json.dumps(value, ensure_ascii=False, default=str)}")
    return 1


def model_path_kind(spec: str) -> str:
    """``"smollm2"``, ``"gguf"`` or ``"folder"``: what ``--model`` names."""
    if spec == "smollm2":
        return "smollm2"
    if spec.endswith(".gguf"):
        return "gguf"
    return "folder"


def load_model(spec: str) -> Model:
    """The model ``--model`` names: ``smollm2`` (the pinned SmolLM2-135M-Instruct), a .gguf
    file, or a local Hugging Face folder; fp32, eval mode, offline."""
    from . import smollm2

    kind = model_path_kind(spec)
    if kind == "smollm2":
        tokenizer, model = smollm2.load()
        return Model("SmolLM2-135M-Instruct", tokenizer, model)
    transformers = smollm2._transformers()
    path = Path(spec)
    if kind == "gguf":
        if not path.is_file():
            raise FileNotFoundError(f"{spec}: no such GGUF file")
        smollm2._need_gguf()
        where = {"gguf_file": path.name, "local_files_only": True}
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path.parent), **where)
        model = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), **where)
        return Model(path.name, tokenizer, model.eval())
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"{spec}: no config.json; --generate needs the model's weights")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(str(path),
                                                                  local_files_only=True)
    except (OSError, ValueError) as e:
        raise OSError(f"{spec}: cannot load the model: {e}") from e
    return Model(path.name, tokenizer, model.eval())


def load_tokenizer(spec: str) -> Any:
    """Only the tokenizer of the model ``--model`` names."""
    from . import smollm2

    kind = model_path_kind(spec)
    if kind == "smollm2":
        return smollm2.tokenizer()
    transformers = smollm2._transformers()
    path = Path(spec)
    if kind == "gguf":
        smollm2._need_gguf()
        return transformers.AutoTokenizer.from_pretrained(
            str(path.parent), gguf_file=path.name, local_files_only=True)
    return transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)


THREADS_VARIABLE = "RTC_TORCH_THREADS"


def torch_threads() -> int:
    """Set torch's threads from ``$RTC_TORCH_THREADS`` (default 1) and return the number.

    One thread by default: on a shared machine, a second OpenMP thread spin-waits and a
    step costs several times more CPU; raise it on a dedicated runner.
    """
    import os

    text = os.environ.get(THREADS_VARIABLE, "1")
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"${THREADS_VARIABLE} must be a whole number at least 1, got {text!r}")
    require("--generate", models=["torch"])
    import torch

    torch.set_num_threads(threads)
    return threads


def special_tokens(tokenizer: Any) -> dict[str, int | None]:
    """The tokenizer's special tokens as the exporter takes them (llguidance's view)."""
    import tempfile

    from ..export import tokenizer_special_tokens

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tokenizer.json"
        path.write_text(tokenizer.backend_tokenizer.to_str(), encoding="utf-8")
        return tokenizer_special_tokens(path)


def exported_grammar(tokenizer: Any, bounds: Any = None) -> GrammarHook:
    """The hook that gives each row the grammar ``rtc grammar`` exports for its template,
    tools, tool choice and prompt, in llguidance's form for ``tokenizer``, bounded."""
    require("--constrained", models=["llguidance"])
    from ..export import Bounds, export_grammar
    special = special_tokens(tokenizer)
    bounds = bounds or Bounds(max_text=GENERATION_TEXT, max_calls=GENERATION_CALLS)

    def grammar(conv: Conversation, tool_choice: str) -> str:
        fmt = conv.format
        return export_grammar(fmt.template, tools=conv.tools, tool_choice=tool_choice,
                              format="llguidance", prefix=conv.prompt, special_tokens=special,
                              bounds=bounds, meta=fmt.meta, name=fmt.name).text

    return grammar
