"""Batch parsing: many outputs, on one machine or a cluster.

:func:`batch_parser` compiles a template once and returns a
:class:`~rtcompiler.batch_worker.BatchParser`: a picklable callable that parses a
batch of columns (Ray Data ``map_batches``, ``datasets.Dataset.map(batched=True)``)
or a list of records. It carries the generated module's source, not a reference to
rtcompiler, so workers need nothing installed (see ``rtcompiler.batch_worker``).

:func:`parse_jsonl` is ``rtc parse TEMPLATE --jsonl IN -o OUT``: one output line
per input line, in order, each the input record plus ``message`` or ``error``;
worker processes (a worker that dies costs no line); a progress bar; and resumption
of an interrupted run, checked against what was read and written.

>>> parse = batch_parser({"start_anchor": "<|im_start|>assistant\\n",
...                       "fields": {"content": {"close": "<|im_end|>"}}})
>>> parse({"text": ["Hi<|im_end|>"]})
{'text': ['Hi<|im_end|>'], 'message': [{'content': 'Hi'}], 'error': [None]}
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import stat
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

    lines: int  # lines in the output once the run is over
    skipped: int  # already in the output from an earlier run
    parsed: int  # written by this run
    errors: int  # of those, lines that carry an error


class ResumeRefused(ValueError):
    """The output cannot be resumed: it is not what an earlier run with this parser
    wrote from this same input. ``reason`` says why, without the remedy."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{reason}; pass resume=False to start it afresh")


class WorkerDied(RuntimeError):
    """Recorded as the error of a line whose worker process died while parsing it."""


# Next to OUT, the journal of its run: what had been read from IN and written to OUT
# after each chunk.
JOURNAL_SUFFIX = ".rtc-resume"
_JOURNAL_FORMAT = "rtc-jsonl-resume/1"
_EMPTY_SHA256 = hashlib.sha256().hexdigest()


@dataclasses.dataclass
class _Mark:
    """A point where OUT's first ``written`` bytes are the output of IN's first ``read``
    bytes (``lines`` lines); the hashes are of those bytes."""

    lines: int = 0
    read: int = 0
    read_sha256: str = _EMPTY_SHA256
    written: int = 0
    written_sha256: str = _EMPTY_SHA256


def parse_jsonl(template: dict | Template | str | Path | CompiledParser | BatchParser,
                input_path: str | Path, output_path: str | Path, *, workers: int = 1,
                resume: bool = True, progress: bool = True, chunk_lines: int = CHUNK_LINES,
                **options) -> JsonlSummary:
    """Parse every line of ``input_path`` into ``output_path``, in order.

    The input is read once, front to back, so it may be a pipe. ``<output>.rtc-resume``
    records, after each chunk written, how many bytes of the input were read and of the
    output written, and the SHA-256 of each. With ``resume`` (the default) a run whose
    output already holds something continues after the last recorded chunk that the
    output still holds, once it has checked that the output's bytes up to there and the
    input's first bytes are the ones recorded, and that the parser (template and
    options) is the same; otherwise it raises :class:`ResumeRefused`. An interrupted
    run thus finishes into the file an uninterrupted one writes. With ``resume=False``
    the output starts afresh. ``options`` go to :func:`batch_parser` when ``template``
    is not one already.
    """
    parser = template if isinstance(template, BatchParser) else batch_parser(template, **options)
    if workers < 1:
        raise ValueError("workers must be at least 1")
    input_path, output_path = Path(input_path), Path(output_path)
    journal_path = output_path.with_name(output_path.name + JOURNAL_SUFFIX)
    fingerprint = _fingerprint(parser)
    from tqdm import tqdm

    class Bar(tqdm):
        monitor_interval = 0  # no monitor thread: the pool may fork again, after a crash

    errors = 0
    with contextlib.ExitStack() as stack:
        # The workers first: forked, they must not inherit the output file (nor its lock).
        pool = stack.enter_context(_Workers(parser, workers)) if workers > 1 else None
        source = stack.enter_context(open(input_path, "rb"))
        sink = stack.enter_context(open(output_path, "a+b"))  # read to resume, append to write
        _check_files(source, sink, output_path)
        _lock(sink, output_path)
        read_digest, written_digest = hashlib.sha256(), hashlib.sha256()
        mark = _Mark()
        if resume and os.fstat(sink.fileno()).st_size:
            mark = _resume_point(source, sink, journal_path, fingerprint, read_digest,
                                 written_digest, input_path, output_path)
        sink.truncate(mark.written)
        journal = stack.enter_context(_Journal(journal_path, fingerprint, mark))
        skipped = lines = mark.lines
        total = os.fstat(source.fileno()).st_size if _regular(source) else None
        bar = stack.enter_context(Bar(total=total, initial=mark.read, unit="B", unit_scale=True,
                                      unit_divisor=1024, file=sys.stderr, disable=not progress,
                                      desc=input_path.name, dynamic_ncols=True))
        for chunk, data, failed in _run(parser, _chunks(source, chunk_lines), pool):
            # Whole chunks, flushed, then recorded: an interruption leaves OUT holding at
            # most a chunk more than the journal says, which the next run cuts off.
            sink.write(data)
            sink.flush()
            block = b"".join(chunk)
            read_digest.update(block)
            written_digest.update(data)
            lines += len(chunk)
            read = len(block)
            mark = _Mark(lines, mark.read + read, read_digest.hexdigest(),
                         mark.written + len(data), written_digest.hexdigest())
            journal.record(mark)
            errors += failed
            bar.set_postfix_str(f"{lines} lines", refresh=False)
            bar.update(read)
    return JsonlSummary(lines=lines, skipped=skipped, parsed=lines - skipped, errors=errors)


def _check_files(source, sink, output_path: Path) -> None:
    if not _regular(sink):
        raise ValueError(f"{output_path} is not a regular file; the output is read back to "
                         "resume a run, so it must be one")
    if os.path.sameopenfile(source.fileno(), sink.fileno()):
        raise ValueError(f"{output_path} is the input file itself")


def _regular(file) -> bool:
    return stat.S_ISREG(os.fstat(file.fileno()).st_mode)


def _fingerprint(parser: BatchParser) -> str:
    """What makes two runs write the same output from the same input: the parser's
    source and its options."""
    options = json.dumps(parser.options, sort_keys=True, ensure_ascii=True, default=repr)
    data = parser.source.encode("utf-8", "surrogatepass") + b"\0" + options.encode("ascii")
    return hashlib.sha256(data).hexdigest()


def _resume_point(source, sink, journal_path: Path, fingerprint: str, read_digest,
                  written_digest, input_path: Path, output_path: Path) -> _Mark:
    """The mark to resume from, with both files read up to it (and the digests fed
    with what was read), or ResumeRefused."""
    marks = _Journal.marks(journal_path, fingerprint)
    if marks is None:
        raise ResumeRefused(f"{output_path} is not empty and no resumable run wrote it (there "
                            f"is no {journal_path.name} of this version next to it)")
    if marks == "other parser":
        raise ResumeRefused(f"{output_path} was written with another template or other "
                            "options (prefix, tools, fields)")
    size = os.fstat(sink.fileno()).st_size
    mark = max((m for m in marks if m.written <= size), key=lambda m: m.written, default=_Mark())
    sink.seek(0)
    if _feed(sink, mark.written, written_digest) is None or (
            written_digest.hexdigest() != mark.written_sha256):
        raise ResumeRefused(f"{output_path} has changed since rtc wrote it")
    last = _feed(source, mark.read, read_digest)
    if last is None or read_digest.hexdigest() != mark.read_sha256:
        raise ResumeRefused(f"{input_path} is not the input {output_path} was made from: its "
                            f"first {mark.lines} lines differ from the ones read then")
    if last not in (b"", b"\n") and source.peek(1)[:1]:
        # The last line read had no newline, and the input goes on: that line was cut.
        raise ResumeRefused(f"{input_path} has changed since {output_path} was made from it: "
                            f"its line {mark.lines}, then its last, now goes on")
    return mark


def _feed(stream, size: int, digest) -> bytes | None:
    """Feed ``digest`` the next ``size`` bytes of ``stream``; the last of them (``b""``
    if none), or None when the stream ends first."""
    last = b""
    while size:
        block = stream.read(min(size, 1 << 20))
        if not block:
            return None
        digest.update(block)
        size -= len(block)
        last = block[-1:]
    return last


class _Journal:
    """``<OUT>.rtc-resume``: a header line (format, parser fingerprint), then one mark
    per line, the last complete one being where OUT was last known to be whole."""

    def __init__(self, path: Path, fingerprint: str, start: _Mark) -> None:
        self.path = path
        self.header = {"format": _JOURNAL_FORMAT, "parser": fingerprint}
        self._rewrite(start)
        self.file = open(path, "a", encoding="utf-8")

    @staticmethod
    def marks(path: Path, fingerprint: str) -> list[_Mark] | str | None:
        """The marks ``path`` records, ``"other parser"``, or None when it is missing or
        not a journal."""
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            header = json.loads(lines[0])
            if header.get("format") != _JOURNAL_FORMAT:
                return None
            if header.get("parser") != fingerprint:
                return "other parser"
            marks = []
            for line in lines[1:]:
                try:
                    marks.append(_Mark(**json.loads(line)))
                except (ValueError, TypeError):
                    break  # a mark cut off mid-write, and whatever follows it
            return marks
        except (OSError, ValueError, AttributeError):
            return None

    def _rewrite(self, mark: _Mark) -> None:
        # The marks past the start are gone from OUT. Written aside and renamed over: the
        # journal is always whole.
        temporary = self.path.with_name(self.path.name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(json.dumps(self.header) + "\n" + json.dumps(dataclasses.asdict(mark)) + "\n")
        os.replace(temporary, self.path)

    def record(self, mark: _Mark) -> None:
        self.file.write(json.dumps(dataclasses.asdict(mark)) + "\n")
        self.file.flush()

    def __enter__(self) -> _Journal:
        return self

    def __exit__(self, *exc) -> None:
        self.file.close()


def _chunks(source, size: int) -> Iterator[list[bytes]]:
    chunk: list[bytes] = []
    for line in source:
        chunk.append(line)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _run(parser: BatchParser, chunks: Iterator[list[bytes]],
         pool: _Workers | None) -> Iterator[tuple[list[bytes], bytes, int]]:
    if pool is None:
        for chunk in chunks:
            yield (chunk, *parser.parse_lines(chunk))
    else:
        yield from pool.run(chunks)


class _Workers:
    """Worker processes parsing chunks, in input order; a worker that dies costs no line.

    ``concurrent.futures`` reports a dead worker (``multiprocessing.Pool`` would wait for
    its result forever), and takes every chunk in flight down with it. Those are sent
    again; the oldest first and alone, so that if it kills its worker again it is the
    culprit, then split into single lines, each sent alone: the line that kills its
    worker gets a ``WorkerDied`` error, the others their output.
    """

    def __init__(self, parser: BatchParser, workers: int) -> None:
        self.parser, self.workers = parser, workers
        self.executor = self._start()

    def _start(self):
        import multiprocessing
        import signal
        from concurrent.futures import ProcessPoolExecutor

        # Ctrl-C is the parent's to handle (it stops the pool and says how to resume);
        # workers that took it too would each print a traceback.
        executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context(),
                                       initializer=signal.signal,
                                       initargs=(signal.SIGINT, signal.SIG_IGN))
        executor.submit(int).result()  # start the workers now, before any file is open
        return executor

    def _restart(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.executor = self._start()

    def _submit(self, chunk: list[bytes]):
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        try:
            # The task is the BatchParser's bound method: it unpickles from source in each
            # worker.
            return self.executor.submit(self.parser.parse_lines, chunk)
        except BrokenProcessPool as e:
            # A worker died since the last submission: this chunk is lost with the others
            # in flight, and sent again with them when the oldest is collected.
            lost: Future = Future()
            lost.set_exception(e)
            return lost

    def run(self, chunks: Iterator[list[bytes]]) -> Iterator[tuple[list[bytes], bytes, int]]:
        # At most a few chunks per worker in flight, so a huge input is never all in memory.
        pending: deque = deque()
        for chunk in chunks:
            pending.append((self._submit(chunk), chunk))
            if len(pending) >= 4 * self.workers:
                yield self._collect(pending)
        while pending:
            yield self._collect(pending)

    def _collect(self, pending: deque) -> tuple[list[bytes], bytes, int]:
        from concurrent.futures.process import BrokenProcessPool

        future, chunk = pending.popleft()
        try:
            return (chunk, *future.result())
        except BrokenProcessPool:
            self._restart()
            data, failed = self._alone(chunk)
            for k, (other_future, other) in enumerate(pending):
                if not (other_future.done() and other_future.exception() is None):
                    pending[k] = (self._submit(other), other)
            return chunk, data, failed

    def _alone(self, chunk: list[bytes]) -> tuple[bytes, int]:
        from concurrent.futures.process import BrokenProcessPool

        try:
            return self._submit(chunk).result()
        except BrokenProcessPool:
            self._restart()
        out, failed = [], 0
        for line in chunk:
            try:
                data, bad = self._submit([line]).result()
            except BrokenProcessPool:
                self._restart()
                died = WorkerDied("the worker process parsing this line died")
                data, bad = (self.parser.unreadable_line(line, died) + "\n").encode("utf-8"), 1
            out.append(data)
            failed += bad
        return b"".join(out), failed

    def __enter__(self) -> _Workers:
        return self

    def __exit__(self, kind, *exc) -> None:
        # Interrupted: the chunks not yet started are dropped; the ones running finish.
        self.executor.shutdown(wait=kind is None, cancel_futures=True)


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


__all__ = ["BatchParser", "JsonlSummary", "ResumeRefused", "WorkerDied", "batch_parser",
           "parse_jsonl"]
