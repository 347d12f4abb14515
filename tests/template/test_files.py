"""``load_template_file``: the three forms a template comes in, and bad files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rtcompiler.template import TemplateError, load_template, load_template_file

SPEC: dict[str, Any] = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {},
    },
}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def tokenizer_config(spec: Any) -> dict[str, Any]:
    return {
        "tokenizer_class": "Qwen2Tokenizer",
        "model_max_length": 32768,
        "response_template": spec,
    }


def test_bare_template_file(tmp_path: Path) -> None:
    t = load_template_file(write(tmp_path / "qwen3.json", SPEC))
    assert t == load_template(SPEC)


def test_tokenizer_config_file(tmp_path: Path) -> None:
    t = load_template_file(write(tmp_path / "tokenizer_config.json", tokenizer_config(SPEC)))
    assert t.sha256 == load_template(SPEC).sha256


def test_tokenizer_config_under_another_name(tmp_path: Path) -> None:
    t = load_template_file(str(write(tmp_path / "config-copy.json", tokenizer_config(SPEC))))
    assert t == load_template(SPEC)


def test_model_folder(tmp_path: Path) -> None:
    write(tmp_path / "tokenizer_config.json", tokenizer_config(SPEC))
    write(tmp_path / "config.json", {"model_type": "qwen3"})
    assert load_template_file(tmp_path) == load_template(SPEC)
    assert load_template_file(str(tmp_path)) == load_template(SPEC)


def test_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(SPEC).encode())
    assert load_template_file(path) == load_template(SPEC)


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(TemplateError) as caught:
        load_template_file(missing)
    assert caught.value.path == str(missing)
    assert str(caught.value) == f"{missing}: no such file"


def test_folder_without_tokenizer_config(tmp_path: Path) -> None:
    with pytest.raises(TemplateError) as caught:
        load_template_file(tmp_path)
    assert caught.value.path == str(tmp_path / "tokenizer_config.json")
    assert "no such file" in str(caught.value)


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"start_anchor": "a",\n "fields": {', encoding="utf-8")
    with pytest.raises(TemplateError) as caught:
        load_template_file(path)
    assert caught.value.path == str(path)
    assert "not valid JSON" in str(caught.value) and "line 2" in str(caught.value)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b'{"start_anchor": "\xff"}')
    with pytest.raises(TemplateError) as caught:
        load_template_file(path)
    assert caught.value.path == str(path) and "UTF-8" in caught.value.rule


def test_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path / "t.json", [SPEC])
    with pytest.raises(TemplateError) as caught:
        load_template_file(path)
    assert caught.value.path == str(path) and "JSON object" in caught.value.rule


@pytest.mark.parametrize(
    "config", [{"tokenizer_class": "X"}, {"tokenizer_class": "X", "response_template": None}]
)
def test_tokenizer_config_without_response_template(tmp_path: Path, config: dict[str, Any]) -> None:
    path = write(tmp_path / "tokenizer_config.json", config)
    with pytest.raises(TemplateError) as caught:
        load_template_file(path)
    assert caught.value.path == str(path)
    assert "response_template" in caught.value.rule
    with pytest.raises(TemplateError) as in_folder:
        load_template_file(tmp_path)
    assert in_folder.value.path == str(path)


def test_json_file_that_is_neither(tmp_path: Path) -> None:
    path = write(tmp_path / "other.json", {"model_type": "llama"})
    with pytest.raises(TemplateError) as caught:
        load_template_file(path)
    assert caught.value.path == str(path) and "response_template" in caught.value.rule


def test_invalid_template_inside_a_file_has_a_template_path(tmp_path: Path) -> None:
    broken = {**SPEC, "fields": {"content": {"join": "\n"}}}
    for path in (
        write(tmp_path / "t.json", broken),
        write(tmp_path / "tokenizer_config.json", tokenizer_config(broken)),
    ):
        with pytest.raises(TemplateError) as caught:
            load_template_file(path)
        assert caught.value.path == "fields.content"
