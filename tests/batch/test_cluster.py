"""The batch parser on a cluster: Ray Data (run locally) and Hugging Face datasets (num_proc=2).

Ray starts its workers as fresh processes, so the Ray test can show what the batch
parser promises: the workers parse without rtcompiler, regex or transformers ever
being imported there. Both runs are checked record by record against transformers.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from transformers.utils.chat_parsing import parse_response as reference

from rtcompiler.batch import batch_parser
from rtcompiler.cli.main import main
from rtcompiler.grammars import grammar

DOC = (Path(__file__).resolve().parents[2] / "docs" / "batch.md").read_text(encoding="utf-8")

QWEN3 = grammar("qwen3").spec
PROMPT = "<|im_start|>assistant\n"
CALL = '<tool_call>\n{"name": "f", "arguments": {"n": %s}}\n</tool_call><|im_end|>'
TEXTS = ["<think>\nhm\n</think>\n\nHi 🙂<|im_end|>", CALL % "1", CALL % '"one"',
         "<tool_call>\nnot json\n</tool_call>", "plain<|im_end|>"]
RECORDS = [{"id": i, "text": TEXTS[i % len(TEXTS)]} for i in range(200)]

# A probe stage built from source, so that it is shipped by value (cloudpickle) and
# imports nothing of the test suite's in the worker.
PROBE = '''
import sys

def probe(batch):
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("rtcompiler", "regex",
                                                                  "transformers"))
    batch["worker_loaded"] = [",".join(loaded)] * len(batch["id"])
    return batch
'''


def expected(record: dict) -> tuple[dict | None, str | None]:
    try:
        return reference(record["text"], QWEN3, prefix=PROMPT), None
    except Exception as e:
        return None, type(e).__name__


def check_rows(rows: list[dict]) -> None:
    assert [r["id"] for r in rows] == [r["id"] for r in RECORDS]  # every record, in order
    for row, record in zip(rows, RECORDS, strict=True):
        message, error = expected(record)
        assert row["text"] == record["text"]
        assert row["message"] == message, row
        assert (row["error"] or {}).get("type") == error, row
    assert sum(r["error"] is not None for r in rows) == len(RECORDS) // len(TEXTS)


def snippet(name: str) -> str:
    """The python block that follows ``<!-- snippet: NAME -->`` in docs/batch.md."""
    match = re.search(rf"<!-- snippet: {re.escape(name)} -->\n```python\n(.*?)```", DOC, re.S)
    assert match, name
    return match.group(1)


def test_ray_data_snippets_run_in_workers_that_never_import_rtcompiler(tmp_path, monkeypatch):
    import ray

    started = time.monotonic()
    monkeypatch.chdir(tmp_path)
    assert main(["compile", "qwen3", "-o", "qwen3_parser.py"]) == 0  # what ray-bare reads
    namespace: dict = {"records": RECORDS}
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        exec(snippet("ray"), namespace)
        check_rows(namespace["rows"])
        probe: dict = {}
        exec(PROBE, probe)
        loaded = namespace["parsed"].map_batches(probe["probe"]).take_all()
        assert [r["id"] for r in loaded] == [r["id"] for r in RECORDS]
        assert {r["worker_loaded"] for r in loaded} == {""}
        # The bare function raises on a broken tool call: give it the records that parse.
        namespace["records"] = [r for r in RECORDS if expected(r)[1] is None]
        exec(snippet("ray-bare"), namespace)
        assert [r["message"] for r in namespace["bare"]] == [
            expected(r)[0] for r in namespace["records"]]
    finally:
        ray.shutdown()
    print(f"ray: {time.monotonic() - started:.1f}s, cluster start included")


def test_datasets_snippet_maps_batched_with_two_processes(tmp_path):
    from datasets import Dataset, disable_progress_bars
    from datasets.fingerprint import Hasher

    disable_progress_bars()
    started = time.monotonic()
    namespace: dict = {"records": RECORDS}
    exec(snippet("datasets"), namespace)
    dataset = namespace["dataset"]
    check_rows(dataset.to_list())
    # As JSON text the message column has one Arrow type, whatever the tool arguments.
    as_json = Dataset.from_list(RECORDS).map(
        batch_parser("qwen3", prefix=PROMPT, message_json=True), batched=True, num_proc=2)
    assert as_json.features["message"].dtype == "string"
    assert [json.loads(m) if m else None for m in as_json["message"]] == dataset["message"]
    # Built twice, the parser hashes the same: datasets' cache can recognise the map.
    assert Hasher.hash(batch_parser("qwen3", prefix=PROMPT)) == Hasher.hash(namespace["parse"])
    print(f"datasets: {time.monotonic() - started:.1f}s")
