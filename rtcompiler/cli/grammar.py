"""``rtc grammar``: the template's output language as a constrained-decoding grammar."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..grammars import resolve_grammar, resolve_template, validate_meta
from .streams import (
    InputError,
    path_argument,
    prefix_and_tools,
    read_json,
    say,
    write_file,
    write_out,
)

EPILOG = """\
The grammar writes the regions in the order the family writes them (the grammar's
meta.json "export.turn", else reasoning, content, calls), then the end of turn. Every
string it accepts parses without error. What a form cannot say exactly is narrowed and
named, as a comment in the grammar and one line on stderr. --max-text/--max-calls bound
it for generation: unbounded, a small model may never finish. See docs/grammar-export.md.
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "grammar",
        help="the template's output language as a grammar for constrained decoding",
        description="Write the output language of TEMPLATE (a template file, a "
        "tokenizer_config.json, a model folder or a bundled grammar) as a Lark grammar, or "
        "in llguidance's Lark dialect (%json for schemas, special tokens by reference) for "
        "vLLM and SGLang structured outputs.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("template", metavar="TEMPLATE", type=path_argument)
    p.add_argument("--tools", type=path_argument,
                   help="a JSON file with the tools list (JSON schemas); without it, calls "
                   "name any function with any arguments")
    p.add_argument("--tool-choice", default="auto", metavar="auto|required|none|NAME",
                   help="auto: calls optional (default); required: at least one; none: no "
                   "call; NAME: calls of that tool only, at least one")
    p.add_argument("--format", choices=["lark", "llguidance"], default="lark",
                   help="lark (loads in lark.Lark; default) or llguidance")
    p.add_argument("-o", "--output", type=path_argument, help="write here instead of stdout")
    prefix = p.add_mutually_exclusive_group()
    prefix.add_argument("--prefix", default=None,
                        help="the prompt the model continues (default: the grammar's "
                        "generation prompt); a prompt that opens a region starts inside it")
    prefix.add_argument("--prefix-file", type=path_argument,
                        help="read the prefix from this file")
    p.add_argument("--meta", type=path_argument,
                   help="a grammar meta.json giving the turn, end of turn and generation "
                   "prompt (default: the bundled grammar's)")
    p.add_argument("--tokenizer", metavar="PATH", type=path_argument,
                   help="with --format llguidance: the target tokenizer (tokenizer.json or "
                   "its folder); its special tokens are written as token references")
    p.add_argument("--max-text", type=int, metavar="N",
                   help="bound free text to N characters (and JSON strings, objects, arrays, "
                   "numbers to small sizes): for generation")
    p.add_argument("--max-calls", type=int, metavar="K",
                   help="at most K tool calls per turn: for generation")
    p.add_argument("--check", action="store_true",
                   help="also load the grammar (lark.Lark; llguidance's validation with "
                   "--tokenizer) and say so on stderr")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..export import Bounds, ExportError, export_grammar, tokenizer_special_tokens

    template = resolve_template(args.template)
    if args.tokenizer is not None and args.format != "llguidance":
        raise InputError("--tokenizer applies to --format llguidance only")
    for flag, value in (("--max-text", args.max_text), ("--max-calls", args.max_calls)):
        if value is not None and value < 1:
            raise InputError(f"{flag} must be at least 1, got {value}")
    args.prefix_file = getattr(args, "prefix_file", None)
    prefix, tools = prefix_and_tools(args)
    if args.prefix is None and args.prefix_file is None:
        prefix = None
    meta = _meta(args)
    bounds = None
    if args.max_text is not None or args.max_calls is not None:
        defaults = Bounds()
        bounds = Bounds(max_text=args.max_text or defaults.max_text,
                        max_calls=args.max_calls or defaults.max_calls)
    special = None
    if args.format == "llguidance":
        if args.tokenizer is None:
            say("rtc grammar: no --tokenizer: every marker is written as text (a model whose "
                "tokenizer has them as special tokens could not write them)")
        else:
            special = _special_tokens(args.tokenizer, tokenizer_special_tokens)
    grammar = resolve_grammar(args.template)
    name = grammar.spelling if grammar is not None else Path(args.template).name
    try:
        export = export_grammar(template, tools=tools, tool_choice=args.tool_choice,
                                format=args.format, prefix=prefix, special_tokens=special,
                                bounds=bounds, meta=meta, name=name)
    except ExportError as e:
        raise InputError(str(e)) from None
    for note in export.notes:
        say(f"rtc grammar: approximation: {note}")
    if args.check:
        _check(export.text, args)
    if args.output:
        write_file(args.output, export.text, "-o ")
        say(f"rtc: wrote {args.output} ({len(export.text.encode('utf-8')):,} bytes)")
    else:
        write_out(export.text)
    return 0


def _meta(args: argparse.Namespace) -> dict | None:
    if args.meta is not None:
        return validate_meta(read_json(args.meta, "--meta "), f"--meta {args.meta}")
    grammar = resolve_grammar(args.template)
    return grammar.meta if grammar is not None else None


def _special_tokens(path: str, read) -> dict:
    try:
        return read(path)
    except FileNotFoundError:
        raise InputError(f"--tokenizer {path}: no tokenizer.json there") from None
    except (OSError, ValueError, AttributeError) as e:
        raise InputError(f"--tokenizer {path}: not a tokenizer.json ({e})") from None


def _check(text: str, args: argparse.Namespace) -> None:
    if args.format == "lark":
        import lark

        try:
            lark.Lark(text, parser="earley", lexer="dynamic")
        except lark.exceptions.LarkError as e:  # a bug of the exporter's
            raise RuntimeError(f"lark refuses the exported grammar: {e}") from e
        say("rtc grammar: checked: lark.Lark loads it")
        return
    from .._extras import require

    require("rtc grammar --check --format llguidance", models=["llguidance"])
    import llguidance

    if args.tokenizer is None:
        raise InputError("--check --format llguidance needs --tokenizer (llguidance "
                         "validates a grammar against a tokenizer)")
    tokenizer_json = Path(args.tokenizer)
    if tokenizer_json.is_dir():
        tokenizer_json = tokenizer_json / "tokenizer.json"
    tokenizer = llguidance.LLTokenizer(str(tokenizer_json))
    error = llguidance.LLMatcher.validate_grammar(
        llguidance.LLMatcher.grammar_from_lark(text), tokenizer)
    if error:
        raise RuntimeError(f"llguidance refuses the exported grammar: {error.splitlines()[0]}")
    say("rtc grammar: checked: llguidance validates it against "
        f"{json.dumps(str(tokenizer_json))}")
