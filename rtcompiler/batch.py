"""Batch parsing: many outputs, on one machine or a cluster.

:func:`batch_parser` compiles a template once and returns a
:class:`~rtcompiler.batch_worker.BatchParser`: a picklable callable that parses a
batch of columns (Ray Data ``map_batches``, ``datasets.Dataset.map(batched=True)``)
or a list of records. It carries the generated module's source, not a reference to
rtcompiler, so workers need nothing installed (see ``rtcompiler.batch_worker``).

:func:`parse_jsonl` is ``rtc parse TEMPLATE --jsonl IN -o OUT``: one output line
per input line, in order, each the input record plus ``message`` or ``error``;
worker processes; a progress bar; and resumption of an interrupted run.

>>> parse = batch_parser({"start_anchor": "<|im_start|>assistant\\n",
...                       "fields": {"content": {"close": "<|im_end|>"}}})
>>> parse({"text": ["Hi<|im_end|>"]})
{'text': ['Hi<|im_end|>'], 'message': [{'content': 'Hi'}], 'error': [None]}
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from .api import CompiledParser, _schemas, compile_template
from .batch_worker import BatchParser
from .template import Template

# Lines per task sent to a worker: large enough that the per-task pickle of the parser
# (its source, ~100 kB) is small next to the work, small enough for a smooth progress bar.
CHUNK_LINES = 500


def batch_parser(template: dict | Template | str | Path | CompiledParser, **options) -> BatchParser:
    """A picklable batch parser for ``template`` (a spec, a file or folder, or a grammar name).

    ``options`` are :class:`~rtcompiler.batch_worker.BatchParser`'s: ``text_field``,
    ``prefix_field``, ``tools_field``, ``prefix``, ``tools`` (JSON schemas or Python
    functions), ``message_field``, ``error_field``, ``message_json``.
    """
    compiled = template if isinstance(template, CompiledParser) else compile_template(template)
    if options.get("tools") is not None:
        # Python functions become their JSON schemas here: the workers get data, not code.
        options["tools"] = _schemas(options["tools"])
    return BatchParser(compiled.source, **options)


@dataclasses.dataclass
class JsonlSummary:
    """What a :func:`parse_jsonl` run did."""

    lines: int  # lines in the input
    skipped: int  # already in the output from an earlier run
    parsed: int  # written by this run
    errors: int  # of those, lines that carry an error


def parse_jsonl(template: dict | Template | str | Path | CompiledParser | BatchParser,
                input_path: str | Path, output_path: str | Path, *, workers: int = 1,
                resume: bool = True, progress: bool = True, chunk_lines: int = CHUNK_LINES,
                **options) -> JsonlSummary:
    """Parse every line of ``input_path`` into ``output_path``, in order.

    With ``resume`` (the default) the complete lines already in ``output_path`` are
    kept and their input lines skipped; a partly written last line is cut off and
    redone, so an interrupted run finishes into the file an uninterrupted one writes.
    ``options`` go to :func:`batch_parser` when ``template`` is not one already.
    """
    parser = template if isinstance(template, BatchParser) else batch_parser(template, **options)
    input_path, output_path = Path(input_path), Path(output_path)
    if output_path.exists() and os.path.samefile(input_path, output_path):
        raise ValueError(f"{output_path} is the input file itself")
    total = _count_lines(input_path)
    from tqdm import tqdm

    errors = 0
    with contextlib.ExitStack() as stack:
        # The pool first: its forked workers must not inherit the output file (nor its
        # lock), and forking once tqdm has started its monitor thread is unsafe.
        pool = stack.enter_context(_pool(workers)) if workers > 1 else None
        sink = stack.enter_context(open(output_path, "a+b"))  # read to resume, append to write
        _lock(sink, output_path)
        if resume:
            done = _keep_complete_lines(sink)
        else:
            done = 0
            sink.truncate(0)
        if done > total:
            raise ValueError(f"{output_path} has {done} lines but {input_path} only {total}: it "
                             "is not an output of this input (pass resume=False to overwrite)")
        source = stack.enter_context(open(input_path, "rb"))
        bar = stack.enter_context(tqdm(total=total, initial=done, unit=" lines", file=sys.stderr,
                                       disable=not progress, desc=input_path.name,
                                       dynamic_ncols=True))
        for _ in range(done):
            source.readline()
        for data, failed, count in _run(parser, _chunks(source, chunk_lines), pool, workers):
            # Whole chunks, flushed: an interruption leaves complete lines and at most one
            # partial line, which the next run cuts off.
            sink.write(data)
            sink.flush()
            errors += failed
            bar.update(count)
    return JsonlSummary(lines=total, skipped=done, parsed=total - done, errors=errors)


def _chunks(source, size: int) -> Iterator[list[bytes]]:
    chunk: list[bytes] = []
    for line in source:
        chunk.append(line)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _pool(workers: int):
    import multiprocessing
    import signal

    # Ctrl-C is the parent's to handle (it stops the pool and says how to resume); workers
    # that took it too would each print a traceback.
    return multiprocessing.get_context().Pool(
        workers, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))


def _run(parser: BatchParser, chunks: Iterator[list[bytes]], pool,
         workers: int) -> Iterator[tuple[bytes, int, int]]:
    if pool is None:
        for chunk in chunks:
            yield (*parser.parse_lines(chunk), len(chunk))
        return
    # The task is the BatchParser's bound method: it unpickles from source in each worker.
    # At most a few chunks per worker in flight, so a huge input is never all in memory.
    pending: deque = deque()
    for chunk in chunks:
        pending.append((pool.apply_async(parser.parse_lines, (chunk,)), len(chunk)))
        if len(pending) >= 4 * workers:
            task, count = pending.popleft()
            yield (*task.get(), count)
    while pending:
        task, count = pending.popleft()
        yield (*task.get(), count)


def _count_lines(path: Path) -> int:
    lines = 0
    last = b"\n"
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")  # a last line without its newline is a line


def _lock(sink, path: Path) -> None:
    """Refuse to write where another run is writing: two appenders interleave their lines."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return
    try:
        fcntl.flock(sink.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise ValueError(f"another run is writing {path}") from None


def _keep_complete_lines(sink) -> int:
    """The number of newline-terminated lines in ``sink``, after cutting off any partial one."""
    lines = 0
    end = 0  # just past the last newline
    offset = 0
    sink.seek(0)
    while block := sink.read(1 << 20):
        count = block.count(b"\n")
        if count:
            lines += count
            end = offset + block.rindex(b"\n") + 1
        offset += len(block)
    if end != offset:
        sink.truncate(end)
    return lines


__all__ = ["BatchParser", "JsonlSummary", "batch_parser", "parse_jsonl"]
