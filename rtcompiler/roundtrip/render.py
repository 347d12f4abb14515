"""Render chat templates the way transformers' ``apply_chat_template`` does.

The environment matches transformers 5.23.0 in what a template can observe:
jinja2's immutable sandbox with ``trim_blocks``/``lstrip_blocks`` and loop
controls; a ``tojson`` filter that does not escape HTML and takes
``ensure_ascii``/``indent``/``separators``/``sort_keys``; ``raise_exception``;
``strftime_now``; ``dict``; a ``namespace`` that refuses underscore names; and
reasoning given as ``reasoning_content`` also visible as ``thinking``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import jinja2
import jinja2.ext
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment


def _tojson(value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _raise_exception(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class _Namespace(jinja2.utils.Namespace):
    """``namespace()`` without underscore attributes (no way into interpreter internals)."""

    def __init__(*args: Any, **kwargs: Any) -> None:
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _Namespace._check(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _Namespace._check(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"namespace attribute {name!r} is not allowed")


class _Dict:
    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


def environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _Dict()
    env.globals["namespace"] = _Namespace
    return env


def _with_reasoning_aliases(messages: list[dict]) -> list[dict]:
    out = []
    for message in messages:
        reasoning = next(
            (message[k] for k in ("reasoning_content", "thinking", "reasoning")
             if message.get(k) is not None),
            None,
        )
        if reasoning is not None:
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


class ChatTemplateError(ValueError):
    """A chat template that cannot be used: it does not compile, it fails while rendering
    (other than by refusing the messages, with ``raise_exception``), or the conversation
    it renders does not extend its generation prompt."""


class ChatRenderer:
    """A compiled chat template plus the variables a tokenizer would pass (``bos_token``, ...)."""

    def __init__(self, source: str, variables: dict[str, Any] | None = None) -> None:
        try:
            self.template = environment().from_string(source)
        except jinja2.exceptions.TemplateSyntaxError as e:
            raise ChatTemplateError(f"line {e.lineno}: {e.message}") from e
        self.variables = dict(variables or {})

    def render(self, messages: list[dict], tools: list[dict] | None = None,
               add_generation_prompt: bool = False, **variables: Any) -> str:
        context = {**self.variables, **variables}
        try:
            return self.template.render(
                messages=_with_reasoning_aliases(json.loads(json.dumps(messages))),
                tools=tools,
                add_generation_prompt=add_generation_prompt,
                **context,
            )
        except jinja2.exceptions.TemplateError:
            raise  # the template refuses these messages (raise_exception, an undefined name)
        except Exception as e:
            raise ChatTemplateError(f"rendering fails: {type(e).__name__}: {e}") from e

    def assistant_turn(self, history: list[dict], message: dict,
                       tools: list[dict] | None = None) -> tuple[str, str]:
        """``(prompt, output)``: the prompt up to the generation prompt, and what follows it.

        Raises :class:`ChatTemplateError` when the rendering with the message does not
        start with the generation prompt (the template rewrites history, so the turn
        cannot be cut out).
        """
        prompt = self.render(history, tools, add_generation_prompt=True)
        full = self.render(history + [message], tools)
        if not full.startswith(prompt):
            raise ChatTemplateError(
                "the rendered conversation does not start with the generation prompt")
        return prompt, full[len(prompt):]
