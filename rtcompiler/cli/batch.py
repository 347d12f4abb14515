"""``rtc parse TEMPLATE --jsonl IN -o OUT``: the batch mode of ``rtc parse``.

Kept apart from ``main.py``, which only registers these options and hands over when
``--jsonl`` is given.
"""

from __future__ import annotations

import argparse
import sys

from ..grammars import resolve_template
from .streams import InputError, path_argument, prefix_and_tools, say

# More processes than this would be a typing mistake, not a machine.
MAX_WORKERS = 256


def add_arguments(parse: argparse.ArgumentParser) -> None:
    group = parse.add_argument_group(
        "batch (--jsonl)",
        "Parse a JSON Lines file: one output line per input line, in order, each the input "
        "record plus 'message', or plus 'error' ({type, message}) when that line fails. "
        "--prefix, --prefix-file and --tools apply to every line, unless --prefix-field or "
        "--tools-field name a field of the record. Rerun the same command to resume an "
        "interrupted run: OUT.rtc-resume, next to OUT, records what was read and written, "
        "and a rerun refuses to resume when the input, the output or the options have "
        "changed.")
    group.add_argument("--jsonl", metavar="IN", type=path_argument,
                       help="the input JSON Lines file")
    group.add_argument("--text-field", default="text", metavar="F",
                       help="the field holding the model output (default: text)")
    group.add_argument("--prefix-field", metavar="P", help="the field holding each prompt")
    group.add_argument("--tools-field", metavar="T",
                       help="the field holding each tools list (JSON schemas, or their JSON text)")
    group.add_argument("-o", "--output", metavar="OUT", type=path_argument,
                       help="the output JSON Lines file")
    group.add_argument("--workers", type=int, default=1, metavar="N",
                       help=f"worker processes, at most {MAX_WORKERS} (default 1: parse in "
                       "this process)")
    group.add_argument("--overwrite", action="store_true",
                       help="start OUT afresh instead of resuming it")
    group.add_argument("--quiet", action="store_true", help="no progress bar")


_BATCH_ONLY = {"text_field": "text", "prefix_field": None, "tools_field": None, "output": None,
               "workers": 1, "overwrite": False, "quiet": False}


def requested(args: argparse.Namespace) -> bool:
    """Whether the command line asks for the batch mode (``--jsonl`` or one of its options)."""
    return bool(args.jsonl) or any(getattr(args, k) != v for k, v in _BATCH_ONLY.items())


def run(args: argparse.Namespace) -> int:
    from ..batch import ResumeRefused, batch_parser, parse_jsonl

    misuse = ("the batch options need --jsonl IN" if not args.jsonl else
              "FILE" if args.file else "--stream" if args.stream else
              "--openai" if args.openai else
              "-o OUT is required" if not args.output else
              f"--workers must be between 1 and {MAX_WORKERS}"
              if not 1 <= args.workers <= MAX_WORKERS else None)
    if misuse:
        raise InputError(misuse if " " in misuse else f"{misuse} cannot be used with --jsonl")
    prefix, tools = prefix_and_tools(args)
    parser = batch_parser(resolve_template(args.template), text_field=args.text_field,
                          prefix_field=args.prefix_field, tools_field=args.tools_field,
                          prefix=prefix, tools=tools)
    try:
        summary = parse_jsonl(parser, args.jsonl, args.output, workers=args.workers,
                              resume=not args.overwrite, progress=not args.quiet)
    except ResumeRefused as e:
        raise InputError(f"{e.reason}; rerun with --overwrite to start {args.output} "
                         "afresh") from None
    except ValueError as e:  # OUT is IN, is not a regular file, or another run writes it
        raise InputError(str(e)) from None
    except KeyboardInterrupt:
        sys.stderr.write("\n")  # after the progress bar
        say(f"rtc: interrupted; run the same command again to resume {args.output}")
        return 130
    resumed = f", {summary.skipped} already there" if summary.skipped else ""
    say(f"rtc: {summary.lines} lines -> {args.output}: {summary.parsed} parsed{resumed}, "
        f"{summary.errors} with an error")
    return 0
