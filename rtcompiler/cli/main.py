"""``rtc``: compile response templates, parse outputs, inspect automata.

Errors in the user's input (an invalid template, an unsupported pattern, a
missing file) print one line to stderr and exit with status 2; nothing else
prints a traceback unless ``RTC_DEBUG`` is set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .. import __version__
from ..dialect.errors import PatternError
from ..template import TemplateError
from . import batch
from .resolve import resolve_template

EXIT_INPUT_ERROR = 2


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_INPUT_ERROR
    try:
        return args.run(args)
    except (TemplateError, PatternError, FileNotFoundError, json.JSONDecodeError) as e:
        if os.environ.get("RTC_DEBUG"):
            raise
        print(f"rtc: error: {e}", file=sys.stderr)
        return EXIT_INPUT_ERROR


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rtc", description="Compile response templates into standalone parsers."
    )
    parser.add_argument("--version", action="version", version=f"rtc {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    compile_ = commands.add_parser(
        "compile",
        help="compile a template into a standalone parser module",
        description="TEMPLATE is a template JSON file, a tokenizer_config.json holding "
        "response_template, a model folder, or a bundled grammar name.",
    )
    compile_.add_argument("template", metavar="TEMPLATE")
    compile_.add_argument("-o", "--output", help="write here instead of stdout")
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
    parse.add_argument("template", metavar="TEMPLATE")
    parse.add_argument("file", nargs="?", help="the model output (default: stdin)")
    prefix = parse.add_mutually_exclusive_group()
    prefix.add_argument("--prefix", default=None, help="the chat prompt before the output")
    prefix.add_argument("--prefix-file", help="read the prefix from this file")
    parse.add_argument("--tools", help="a JSON file with the tools list (JSON schemas)")
    parse.add_argument("--stream", action="store_true", help="print events as JSON lines")
    parse.add_argument("--openai", action="store_true",
                       help="print chat.completion.chunk objects as JSON lines, live "
                       "(implies --stream)")
    batch.add_arguments(parse)
    parse.set_defaults(run=_parse)

    check = commands.add_parser(
        "check",
        help="property-test that the template inverts a chat template",
        description="Draw assistant messages, render them with the chat template, parse the "
        "assistant turn back (whole, in random chunks, and at a real tokenizer's token "
        "boundaries where one is available) and compare; print the smallest counterexample "
        "(exit 1). With --model DIR, the model folder's chat template, tokenizer and "
        "response_template drive the round trip; with --generate, its weights sample real "
        "generations and a table reports how the parser fares (exit 1 only if a stream "
        "parses differently from the whole output).",
    )
    check.add_argument("template", metavar="TEMPLATE", nargs="?",
                       help="template file, tokenizer_config.json, model folder or bundled grammar "
                       "(optional with --model: default the folder's response_template)")
    check.add_argument("--chat-template", help="jinja chat template (default: the grammar's or "
                       "the model folder's own)")
    check.add_argument("--meta", help="a grammar meta.json giving the normalisation and tokenizer "
                       "(default: the grammar's; with --model, the bundled grammar with the same "
                       "response template)")
    check.add_argument("--examples", type=int, default=300, help="examples to draw (default 300)")
    check.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    check.add_argument("--model", metavar="DIR",
                       help="a local Hugging Face model folder: its chat template renders, its "
                       "tokenizer chunks the streams (offline, HF_HUB_OFFLINE=1)")
    check.add_argument("--generate", action="store_true",
                       help="with --model: sample real generations with the folder's weights "
                       "(needs torch) and report parse exceptions, tool calls, schema failures "
                       "and stream != whole, instead of the round trip")
    check.add_argument("--samples", type=int, default=16,
                       help="with --generate: generations to sample (default 16)")
    check.add_argument("--max-new-tokens", type=int, default=64,
                       help="with --generate: tokens per generation at most (default 64)")
    check.add_argument("--show", action="store_true",
                       help="with --generate: print each generation and its outcome as JSON lines")
    check.set_defaults(run=_check)

    list_ = commands.add_parser("list", help="the bundled grammars and the families they cover")
    list_.set_defaults(run=_list)
    return parser


def _compile(args: argparse.Namespace) -> int:
    from ..codegen import automaton_data, generate_module

    template = resolve_template(args.template)
    if args.emit == "automaton":
        text = json.dumps(automaton_data(template), indent=1, ensure_ascii=False) + "\n"
    elif args.emit != "parser":
        diagram = _diagram(args, automaton_data(template))
        if diagram is None:
            return EXIT_INPUT_ERROR
        text = diagram
    else:
        text = generate_module(template, openai=args.openai)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"rtc: wrote {args.output} ({len(text.encode('utf-8')):,} bytes)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _diagram(args: argparse.Namespace, data: dict) -> str | None:
    """The diagram ``--emit`` asks for, or None after printing why there is none."""
    from ..codegen import diagram

    if args.emit in diagram.EMITTERS:
        return diagram.EMITTERS[args.emit](data) + "\n"
    if args.delimiter is None:
        print(f"rtc: error: --emit {args.emit} draws one delimiter: give --delimiter",
              file=sys.stderr)
        return None
    try:
        index = diagram.find_delimiter(data, args.delimiter)
    except KeyError as e:
        print(f"rtc: error: {e.args[0]}", file=sys.stderr)
        return None
    return diagram.DFA_EMITTERS[args.emit](data, index) + "\n"


def _parse(args: argparse.Namespace) -> int:
    from ..codegen import load_parser

    if batch.requested(args):
        return batch.run(args)
    template = resolve_template(args.template)
    module = load_parser(template)
    if args.prefix_file:
        prefix = Path(args.prefix_file).read_text(encoding="utf-8")
    else:
        prefix = args.prefix if args.prefix is not None else ""
    tools = json.loads(Path(args.tools).read_text(encoding="utf-8")) if args.tools else None
    source = open(args.file, encoding="utf-8") if args.file else sys.stdin
    try:
        if args.openai:
            return _parse_openai(template, prefix, tools, source)
        if not args.stream:
            message = module.parse_response(source.read(), prefix=prefix, tools=tools)
            print(json.dumps(message, ensure_ascii=False, indent=2))
            return 0
        parser = module.ResponseParser(prefix, tools=tools)
        for event in parser.initial_events:
            _print_event(event)
        while True:
            # Read what is available, not whole lines: a generator streams tokens.
            chunk = source.readline(64) if source is sys.stdin else source.read(4096)
            if not chunk:
                break
            for event in parser.feed(chunk):
                _print_event(event)
        message, events = parser.finalize()
        for event in events:
            _print_event(event)
        print(json.dumps({"type": "message", "message": message}, ensure_ascii=False))
        return 0
    except ValueError as e:
        print(f"rtc: parse error: {e}", file=sys.stderr)
        return 1
    finally:
        if source is not sys.stdin:
            source.close()


def _parse_openai(template, prefix, tools, source) -> int:
    """``rtc parse --stream --openai``: one chat.completion.chunk per line, live."""
    import time
    import uuid

    from ..openai import DeltaStream, chunk

    # Every chunk of one completion shares its id and creation time, as a server's do.
    completion, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

    def emit(deltas: list[dict], finish_reason: str | None = None) -> None:
        for delta in deltas:
            _print_event(chunk(delta, id=completion, created=created, finish_reason=finish_reason))

    stream = DeltaStream(template, prefix, tools=tools)
    emit(stream.initial_deltas)
    while True:
        text = source.readline(64) if source is sys.stdin else source.read(4096)
        if not text:
            break
        emit(stream.feed(text))
    emit(stream.finish())
    emit([{}], stream.finish_reason)
    return 0


def _check(args: argparse.Namespace) -> int:
    from ..roundtrip import check
    from ..roundtrip.tokenizers import TokenChunker, TokenizerUnavailable, load_chunker
    from .resolve import GRAMMARS, grammar_dir

    if args.generate and not args.model:
        print("rtc: error: --generate needs --model DIR", file=sys.stderr)
        return EXIT_INPUT_ERROR
    if not args.template and not args.model:
        print("rtc: error: give a TEMPLATE or --model DIR", file=sys.stderr)
        return EXIT_INPUT_ERROR
    template = resolve_template(args.template) if args.template else None
    folder = grammar_dir(args.template) if args.template else None
    meta_path = Path(args.meta) if args.meta else (folder / "meta.json" if folder else None)
    meta: dict | None = None
    if meta_path and meta_path.exists():
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    chat_path = args.chat_template
    if chat_path is None and folder and not args.model:
        chat_path = folder / "chat_template.jinja"
    chat_template = Path(chat_path).read_text(encoding="utf-8") if chat_path else None
    chunker: TokenChunker | None

    if args.model:
        from ..roundtrip.model import load_model_folder

        try:
            model = load_model_folder(args.model, template=template, chat_template=chat_template,
                                      meta=meta, grammars=GRAMMARS)
            source = (f"grammar {model.grammar}" if model.grammar else "--meta" if args.meta
                      else f"grammar {folder.name}" if meta and folder else "defaults")
            print(f"rtc check: model folder {model.path} (normalisation: {source})",
                  file=sys.stderr)
            if args.generate:
                from ..roundtrip.generate import report_generations

                return report_generations(model, args.samples, seed=args.seed,
                                          max_new_tokens=args.max_new_tokens, show=args.show)
        except (ImportError, OSError) as e:  # no transformers/torch, no weights in the folder
            if os.environ.get("RTC_DEBUG") or isinstance(e, FileNotFoundError):
                raise
            print(f"rtc: error: {e}", file=sys.stderr)
            return EXIT_INPUT_ERROR
        template, chat_template = model.template, model.chat_template
        meta = {**model.meta, "normalise": model.normalise, "variables": model.variables,
                "reserved": model.reserved}
        chunker = model.chunker()
    else:
        if chat_template is None:
            raise FileNotFoundError(
                "--chat-template is required for a template that is not a bundled grammar")
        meta = meta or {}
        try:
            chunker = load_chunker(meta.get("tokenizer"))
        except TokenizerUnavailable as e:
            print(f"rtc check: {e}; chunking at random only", file=sys.stderr)
            chunker = None
    assert template is not None and chat_template is not None and meta is not None
    chunking = f", token chunks from {chunker.name}" if chunker is not None else ""
    print(f"rtc check: {args.examples} examples, seed {args.seed}{chunking}", file=sys.stderr)
    report = check(template, chat_template, examples=args.examples, seed=args.seed,
                   normalise=meta.get("normalise"), variables=meta.get("variables"),
                   reserved=meta.get("reserved"), chunker=chunker)
    for finding in report.findings:
        print(f"finding: {finding}")
    if report.chunking_errors:
        print(f"note: {len(report.chunking_errors)} outputs the tokenizer does not decode back, "
              f"streamed at random only; first: {report.chunking_errors[0]}")
    if report.ok:
        tokens = (f", and at token boundaries ({report.token_streams} streams, "
                  f"{report.token_chunks} token chunks)" if chunker is not None else "")
        print(f"ok: {report.examples} round trips, whole and streamed{tokens}")
        return 0
    case = report.counterexample
    assert case is not None
    print(f"counterexample ({case['kind']}), after {report.examples} examples, shrunk:")
    for key in ("message", "tools", "output", "expected", "got", "chunks"):
        print(f"  {key}: {json.dumps(case.get(key), ensure_ascii=False)}")
    return 1


def _list(args: argparse.Namespace) -> int:
    from .resolve import GRAMMARS

    rows = []
    for folder in sorted(p for p in GRAMMARS.iterdir() if (p / "response_template.json").is_file()):
        meta_file = folder / "meta.json"
        meta = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file.exists() else {}
        families = ", ".join(meta.get("families", []))
        template = json.loads((folder / "response_template.json").read_text(encoding="utf-8"))
        used = template.get("extensions") or []
        extension = f" (extension: {', '.join(used)})" if used else ""
        rows.append((folder.name, families + extension))
    width = max((len(name) for name, _ in rows), default=0)
    for name, families in rows:
        print(f"{name.ljust(width)}  {families}")
    return 0


def _print_event(event: dict) -> None:
    print(json.dumps(event, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
