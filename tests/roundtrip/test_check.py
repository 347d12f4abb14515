"""rtc check: finds real counterexamples, reports static findings, and passes good grammars."""

from __future__ import annotations

import json
import subprocess
import sys

from rtcompiler.roundtrip import check
from rtcompiler.roundtrip.check import static_findings
from rtcompiler.template import load_template

CHATML = (
    "{%- for m in messages -%}"
    "{{- '<|im_start|>' + m.role + '\\n' -}}"
    "{%- if m.reasoning_content %}"
    "{{- '<think>\\n' + m.reasoning_content + '\\n</think>\\n\\n' -}}"
    "{%- endif -%}"
    "{{- m.content + '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
GOOD = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {"close": "<|im_end|>"},
    },
}
NORMALISE = {"end_of_turn": ["<|im_end|>"], "max_tool_calls": 0}


def test_a_template_that_inverts_the_chat_template_passes():
    report = check(load_template(GOOD), CHATML, examples=150, normalise=NORMALISE)
    assert report.ok, report.counterexample
    assert report.examples == 150
    assert report.findings == []


def test_a_wrong_template_gives_a_shrunk_counterexample():
    wrong = json.loads(json.dumps(GOOD))
    wrong["fields"]["reasoning_content"]["close"] = "</thought>"  # never closes
    report = check(load_template(wrong), CHATML, examples=150, normalise=NORMALISE)
    assert not report.ok
    case = report.counterexample
    assert case["kind"] == "parse(render(m)) != m"
    # Shrinking leaves the smallest message that shows it: empty content, some reasoning.
    assert case["message"]["content"] == ""
    assert "reasoning_content" in case["message"]


def test_static_findings():
    spec = {
        "start_anchor": "<|im_start|>model\n",
        "fields": {
            "a": {"open": "<t", "close_pattern": r"\s*"},
            "b": {"open": "<tool>", "close": "</tool>"},
            "never": {"open_pattern": r"x(?!y)y", "close": "z"},
            "content": {},
        },
    }
    findings = "\n".join(static_findings(load_template(spec), CHATML))
    assert "fields.a.close: the close can match the empty string" in findings
    assert "fields.a.open '<t' is a prefix of fields.b.open '<tool>'" in findings
    assert "fields.never.open: this delimiter can never match" in findings
    assert "start_anchor: the generation prompt never contains it" in findings


def test_cli_exit_codes(tmp_path):
    (tmp_path / "good.json").write_text(json.dumps(GOOD))
    (tmp_path / "chat.jinja").write_text(CHATML)
    (tmp_path / "meta.json").write_text(json.dumps({"normalise": NORMALISE}))
    wrong = json.loads(json.dumps(GOOD))
    wrong["fields"]["content"]["close"] = "<|im_end|>\n"
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))

    def rtc(name):
        return subprocess.run(
            [sys.executable, "-m", "rtcompiler.cli.main", "check", str(tmp_path / name),
             "--chat-template", str(tmp_path / "chat.jinja"), "--meta", str(tmp_path / "meta.json"),
             "--examples", "60", "--seed", "3"],
            capture_output=True, text=True,
        )

    good = rtc("good.json")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "ok: 60 round trips" in good.stdout
    bad = rtc("wrong.json")
    assert bad.returncode == 1
    assert "counterexample" in bad.stdout
