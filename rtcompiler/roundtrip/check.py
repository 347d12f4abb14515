"""The round-trip property ``parse(render(m)) == normalise(m)``, and static findings.

A case is drawn as: tools (random JSON-schema tools, or none), an assistant
message for them, and a chunking of the rendered assistant turn. The turn is
cut out of the rendered conversation after the generation prompt; the compiled
parser parses it with the prompt as ``prefix``, once whole and once fed in the
drawn chunks, and, given a ``chunker`` (a real tokenizer, :mod:`.tokenizers`),
once more fed token by token as a server streams it. Hypothesis shrinks the
first failure to a smallest counterexample.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jinja2
from hypothesis import HealthCheck, assume, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

from ..automata import compile_regex
from ..codegen import load_parser
from ..grammars import validate_normalise
from ..template import Template
from . import strategies
from .render import ChatRenderer, ChatTemplateError
from .tokenizers import ChunkingError

DEFAULT_NORMALISE: dict[str, Any] = {
    "strip_content": True,
    "strip_reasoning": True,
    "drop_empty": True,
    "content_with_tool_calls": "keep",
    "max_tool_calls": 3,
    "reasoning": None,  # None: draw reasoning when the template has a reasoning_content field
    "tool_call_id": None,  # "alnum9": calls carry 9-character ids (Mistral), dropped on comparison
    "end_of_turn": None,  # a stop token: generation ends right after it
    "reasoning_without_tool_calls": "keep",  # "drop": the format renders reasoning only with calls
    "unsupported_argument_values": [],  # ["null"]: the chat template cannot render null arguments
    "identifier_keys": False,  # keys of object arguments are identifiers (unquoted-key formats)
}

# Special-token shapes: a model's text cannot contain them (the tokenizer keeps
# them whole), so the strategies do not put them in text.
_SPECIAL = re.compile(
    r"<\|[^|<>\s]{1,40}\|>|<｜[^｜]{1,40}｜>|\[/?[A-Z_]{2,20}\]|<[/a-z_]{1,20}\|>"
    r"|<\|[a-z_\"]{1,20}>"
)


@dataclass
class CheckReport:
    examples: int = 0
    counterexample: dict | None = None
    findings: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # messages the chat template rejected
    # With a chunker: streams fed at token boundaries, their chunks, and the
    # outputs the tokenizer could not chunk (they do not decode back to the text).
    chunker: str | None = None
    token_streams: int = 0
    token_chunks: int = 0
    chunking_errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.counterexample is None


def normalisation(meta_normalise: dict | None) -> dict:
    """The normalisation a ``meta.json``'s ``normalise`` asks for, with defaults filled in.

    ``meta_normalise`` follows the meta schema (``rtcompiler/grammars/meta.schema.json``):
    an unknown key or a wrong value is a :class:`~rtcompiler.grammars.MetaError`.
    """
    given = validate_normalise(meta_normalise or {})
    norm = {**DEFAULT_NORMALISE, "render_kwargs": {}, **given}
    if norm["reasoning"] is not None:  # "keep" / "drop": draw reasoning or not
        norm["reasoning"] = norm["reasoning"] == "keep"
    return norm


def reserved_strings(
    template: Template, chat_template: str, extra: list[str] | None = None
) -> tuple[str, ...]:
    found: set[str] = set(extra or [])
    for f in template.fields:
        for d in (f.open, f.close):
            if d is not None and d.is_literal:
                found.update(d.literals or ())
    if template.start_anchor.is_literal:
        found.update(s.strip() for s in template.start_anchor.literals or () if s.strip())
    found.update(_SPECIAL.findall(chat_template))
    for f in template.fields:
        for d in (f.open, f.close):
            if d is not None and not d.is_literal:
                found.update(_SPECIAL.findall(d.pattern or ""))
                found.update(re.findall(r"<[/a-z_]{2,20}>", (d.pattern or "").replace("\\", "")))
    return tuple(sorted(s for s in found if s))


def expected_message(template: Template, message: dict, normalise: dict) -> dict:
    out: dict[str, Any] = dict(template.defaults)
    content = message.get("content")
    reasoning = message.get("reasoning_content")
    calls = message.get("tool_calls")
    if reasoning is not None:
        out["reasoning_content"] = reasoning.strip() if normalise["strip_reasoning"] else reasoning
    mode = normalise["content_with_tool_calls"]
    if calls and mode == "to_reasoning" and content is not None and content.strip():
        # gpt-oss: a message with tool calls says its text on the analysis channel.
        out["reasoning_content"] = content.strip() if normalise["strip_reasoning"] else content
        content = None
    if not calls and normalise["reasoning_without_tool_calls"] == "drop":
        out.pop("reasoning_content", None)
    if content is not None and not (calls and mode == "drop"):
        out["content"] = content.strip() if normalise["strip_content"] else content
    if calls:
        out["tool_calls"] = [
            {k: v for k, v in call.items() if k != "id"} for call in calls
        ]
    if normalise["drop_empty"]:
        out = {k: v for k, v in out.items() if k in template.defaults or v not in ("", [], None)}
    return out


def cut_at_stop(output: str, stops: str | list[str] | None) -> str:
    """The turn as a model generates it: it stops right after its first stop token."""
    if not stops:
        return output
    stops = [stops] if isinstance(stops, str) else stops
    ends = [output.find(s) + len(s) for s in stops if s in output]
    return output[: min(ends)] if ends else output


def _outcome(run: Any) -> Any:
    try:
        return ("ok", run())
    except Exception as e:  # the outcome is compared, whatever it is
        return ("error", f"{type(e).__name__}: {e}")


def check(
    template: Template,
    chat_template: str,
    examples: int = 300,
    seed: int = 0,
    normalise: dict | None = None,
    variables: dict | None = None,
    reserved: list[str] | None = None,
    chunker: Callable[[str], list[int]] | None = None,
) -> CheckReport:
    """Round-trip ``examples`` drawn messages; the first failure is shrunk.

    ``chunker`` maps an assistant turn to the sizes of the chunks a real
    tokenizer streams it in (see :mod:`.tokenizers`); each case is then also
    fed in those chunks, beside one random chunking. A ``ChunkingError`` from
    it (text the tokenizer does not give back) is recorded in
    ``report.chunking_errors`` and that case is streamed at random only.
    """
    norm = normalisation(normalise)
    variables = {**norm["render_kwargs"], **(variables or {})}
    names = {f.name for f in template.fields}
    if norm["reasoning"] is None:
        norm["reasoning"] = "reasoning_content" in names
    if "tool_calls" not in names:
        norm["max_tool_calls"] = 0
    report = CheckReport(findings=static_findings(template, chat_template, variables))
    if chunker is not None:
        report.chunker = getattr(chunker, "name", None) or getattr(chunker, "__name__", "chunker")
    module = load_parser(template)
    renderer = usable_renderer(chat_template, variables)
    banned = reserved_strings(template, chat_template, reserved)
    history = [{"role": "user", "content": "Hello"}]

    @st.composite
    def cases(draw: Any) -> dict:
        null = "null" not in norm["unsupported_argument_values"]
        tools = draw(st.one_of(st.none(), strategies.tool_schemas(null=null)))
        message = draw(strategies.assistant_messages(
            tools, banned, reasoning=norm["reasoning"], max_calls=norm["max_tool_calls"] or 0,
            call_ids=norm["tool_call_id"], null=null, identifiers=norm["identifier_keys"],
            content_with_calls=norm["content_with_tool_calls"] != "unsupported"))
        try:
            prompt, output = renderer.assistant_turn(history, message, tools)
        except jinja2.exceptions.TemplateError as e:
            # The chat template refuses this message (raise_exception): not a
            # conversation the model can have, so not a case.
            report.refused.append(str(e))
            assume(False)
        output = cut_at_stop(output, norm["end_of_turn"])
        chunks = draw(strategies.chunkings(output))
        return {
            "tools": tools, "message": message, "prompt": prompt, "output": output,
            "chunks": chunks,
        }

    def failure(case: dict) -> str | None:
        report.examples += 1
        expected = expected_message(template, case["message"], norm)
        whole = _outcome(lambda: module.parse_response(case["output"], prefix=case["prompt"],
                                                       tools=case["tools"]))
        case["expected"], case["got"] = expected, whole
        if whole != ("ok", expected):
            case["kind"] = "parse(render(m)) != m"
            return case["kind"]

        def streamed(chunks: list[int]) -> Any:
            parser = module.ResponseParser(case["prompt"], tools=case["tools"])
            at = 0
            for n in chunks:
                parser.feed(case["output"][at:at + n])
                at += n
            return parser.finalize()[0]

        stream = _outcome(lambda: streamed(case["chunks"]))
        if stream != whole:
            case["kind"], case["got"] = "streamed != whole", stream
            return case["kind"]
        if chunker is not None:
            try:
                tokens = chunker(case["output"])
            except ChunkingError as e:
                report.chunking_errors.append(str(e))
                return None
            if sum(tokens) != len(case["output"]):
                raise ChunkingError(f"the chunker's sizes cover {sum(tokens)} characters "
                                    f"of {len(case['output'])}")
            report.token_streams += 1
            report.token_chunks += len(tokens)
            stream = _outcome(lambda: streamed(tokens))
            if stream != whole:
                case["kind"], case["got"] = "token-streamed != whole", stream
                case["chunks"] = tokens
                return case["kind"]
        return None

    try:
        smallest = find(
            cases(),
            lambda case: failure(case) is not None,
            settings=settings(max_examples=examples, database=None, deadline=None,
                              suppress_health_check=list(HealthCheck)),
            random=random.Random(seed),
        )
    except NoSuchExample:
        return report
    except Unsatisfiable:
        first = f": {report.refused[0]}" if report.refused else ""
        raise ChatTemplateError(f"it refuses every message drawn{first}") from None
    failure(smallest)  # recompute the details for the shrunk case
    report.counterexample = smallest
    return report


def usable_renderer(chat_template: str, variables: dict | None = None) -> ChatRenderer:
    """The chat template's renderer, once it has rendered a plain answer, or
    :class:`ChatTemplateError`: a template that cannot be used fails at once, not in the
    search, which would shrink its failure at length."""
    renderer = ChatRenderer(chat_template, variables)
    try:
        renderer.assistant_turn([{"role": "user", "content": "Hello"}],
                                {"role": "assistant", "content": "Hi"})
    except jinja2.exceptions.TemplateError:
        pass  # it refuses this message (raise_exception); others may do
    return renderer


def static_findings(
    template: Template, chat_template: str, variables: dict | None = None
) -> list[str]:
    findings = []
    delimiters = []
    for f in template.fields:
        for kind, d in (("open", f.open), ("close", f.close)):
            if d is not None:
                delimiters.append((f.name, kind, d))
    for name, kind, d in delimiters:
        rx = compile_regex(d.regex_source)
        data = rx.to_data()["dfa"]
        fires = any(cell[2] is not None for cell in data["cells"]) or any(
            m is not None for m, _ in data["eof"]
        )
        if not fires:
            findings.append(f"fields.{name}.{kind}: this delimiter can never match")
        if kind == "close" and rx.search("") is not None:
            findings.append(f"fields.{name}.{kind}: the close can match the empty string")
    for name, kind, d in delimiters:
        if kind != "open" or not d.is_literal:
            continue
        for other, other_kind, e in delimiters:
            if other == name or not e.is_literal:
                continue
            for lit in d.literals or ():
                for longer in e.literals or ():
                    if longer != lit and longer.startswith(lit):
                        findings.append(
                            f"fields.{name}.open {lit!r} is a prefix of "
                            f"fields.{other}.{other_kind} {longer!r}: text meant for one can "
                            "open the other"
                        )
    try:
        prompt = ChatRenderer(chat_template, variables).render(
            [{"role": "user", "content": "Hello"}], add_generation_prompt=True)
    except Exception as e:  # a template that cannot render is itself a finding
        findings.append(
            f"chat template: cannot render a generation prompt ({type(e).__name__}: {e})"
        )
        return findings
    anchor = compile_regex(template.start_anchor.regex_source)
    ends = [m.end for m in anchor.finditer(prompt)]
    if not ends:
        findings.append("start_anchor: the generation prompt never contains it")
    return findings
