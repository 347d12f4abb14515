"""The batch parser on a cluster: Ray Data (run locally) and Hugging Face datasets (num_proc=2).

Ray starts its workers as fresh processes, so the Ray test can show what the batch
parser promises: the workers parse without rtcompiler, regex or transformers ever
being imported there. Both runs are checked record by record against transformers.
"""

from __future__ import annotations

import json
import time

from transformers.utils.chat_parsing import parse_response as reference

from rtcompiler.batch import batch_parser
from rtcompiler.cli.resolve import GRAMMARS

QWEN3 = json.loads((GRAMMARS / "qwen3" / "response_template.json").read_text("utf-8"))
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


def test_ray_data_map_batches_in_workers_that_never_import_rtcompiler():
    import ray
    import ray.data

    started = time.monotonic()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        namespace: dict = {}
        exec(PROBE, namespace)
        parse = batch_parser("qwen3", prefix=PROMPT)
        rows = (ray.data.from_items(RECORDS, override_num_blocks=4)
                .map_batches(parse, batch_size=32)
                .map_batches(namespace["probe"])
                .take_all())
    finally:
        ray.shutdown()
    check_rows(rows)
    assert {r["worker_loaded"] for r in rows} == {""}
    print(f"ray: {len(rows)} records in {time.monotonic() - started:.1f}s, init included")


def test_datasets_map_batched_with_two_processes(tmp_path):
    from datasets import Dataset, disable_progress_bars

    disable_progress_bars()
    started = time.monotonic()
    parse = batch_parser("qwen3", prefix=PROMPT)
    dataset = Dataset.from_list(RECORDS).map(parse, batched=True, batch_size=16, num_proc=2,
                                             cache_file_name=str(tmp_path / "parsed.arrow"))
    check_rows(dataset.to_list())
    # As JSON text the message column has one Arrow type, whatever the tool arguments.
    as_json = Dataset.from_list(RECORDS).map(
        batch_parser("qwen3", prefix=PROMPT, message_json=True), batched=True, num_proc=2,
        cache_file_name=str(tmp_path / "as_json.arrow"))
    assert as_json.features["message"].dtype == "string"
    assert [json.loads(m) if m else None for m in as_json["message"]] == dataset["message"]
    print(f"datasets: {len(dataset)} records twice in {time.monotonic() - started:.1f}s")
