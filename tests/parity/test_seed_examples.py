"""Every example of the response-template documentation, as unit tests.

The source is the French user documentation of the format
(the seed ``response-templates.fr.txt``, transformers' "Analyse de la
réponse" page). Each test runs the example through transformers' reference and through
the parser rtcompiler generates, checks that they agree (message, events, exception
type), and, where the documentation shows a result, asserts that result literally.
Where the page gives only a template fragment (``field = {...}``), it is wrapped in a
template with a ChatML start anchor; where it elides text (``...``), the elision is
filled in and said so.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from transformers.utils.chat_parsing import ResponseParser as RefParser
from transformers.utils.chat_parsing import parse_response as ref_parse_response

from rtcompiler.codegen import load_parser
from rtcompiler.template import TemplateError, load_template

from .test_parity import Run, canon, run_stream, run_whole

CHATML_ANCHOR = "<|im_start|>assistant\n"

# "Avancé : Écrire un modèle de réponse" -- the SmolLM template, verbatim.
SMOLLM = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {
            "close": "<|im_end|>",
            "content": "text",
        },
    },
}

SMOLLM_OUTPUT = (
    "<think>\nI should greet the user\n</think>\n\n"
    '<tool_call>{"name": "greet_user", "arguments": {"greeting": "Hi!"}}</tool_call>'
)
GREET_CALL = {
    "type": "function",
    "function": {"name": "greet_user", "arguments": {"greeting": "Hi!"}},
}


def fragment(fields: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A template around a documented ``field = {...}`` fragment."""
    return {"start_anchor": CHATML_ANCHOR, **top, "fields": fields}


# -- running both ---------------------------------------------------------------------


def ours(spec: dict[str, Any]) -> Any:
    return load_parser(load_template(copy.deepcopy(spec)))


def _explain(what: str, spec: Any, ref: Run, mine: Run) -> str:
    return (
        f"{what}: reference and rtcompiler disagree\n  template = {json.dumps(spec)}\n"
        f"  reference:\n{ref.describe()}\n  ours:\n{mine.describe()}"
    )


def parse_both(spec: dict[str, Any], text: str, prefix: str = "", tools: Any = None) -> Any:
    """``parse_response`` on both sides; they must agree. Returns the message."""
    module = ours(spec)
    ref = run_whole(
        lambda t, p, tl: ref_parse_response(t, copy.deepcopy(spec), prefix=p, tools=tl),
        text,
        prefix,
        tools,
    )
    mine = run_whole(
        lambda t, p, tl: module.parse_response(t, prefix=p, tools=tl), text, prefix, tools
    )
    assert ref.outcome() == mine.outcome(), _explain("parse_response", spec, ref, mine)
    assert ref.error is None, f"reference raised {ref.error}: {ref.error_text}"
    return mine.raw_message


def stream_both(
    spec: dict[str, Any], chunks: list[str], prefix: str = "", tools: Any = None
) -> tuple[list[dict], Any, list[dict]]:
    """Streaming on both sides; they must agree.

    Returns ``(initial_events, message, events)`` where ``events`` is every event in
    order, the initial ones included.
    """
    module = ours(spec)
    ref = run_stream(
        lambda p, tl: RefParser(copy.deepcopy(spec), prefix=p, tools=tl), prefix, chunks, tools
    )
    mine = run_stream(lambda p, tl: module.ResponseParser(p, tools=tl), prefix, chunks, tools)
    assert ref.outcome() == mine.outcome(), _explain("streaming", spec, ref, mine)
    assert ref.error is None, f"reference raised {ref.error}: {ref.error_text}"
    initial = module.ResponseParser(prefix, tools=tools).initial_events
    return initial, mine.raw_message, mine.raw_events


def raises_both(spec: dict[str, Any], text: str, prefix: str = "") -> str:
    """Both sides raise on ``text`` (any chunking); same type, and our message starts
    with the reference's. Returns the type name."""
    module = ours(spec)
    ref = run_whole(
        lambda t, p, tl: ref_parse_response(t, copy.deepcopy(spec), prefix=p), text, prefix, None
    )
    mine = run_whole(lambda t, p, tl: module.parse_response(t, prefix=p), text, prefix, None)
    assert ref.error is not None, "the reference did not raise"
    assert ref.outcome() == mine.outcome(), _explain("parse_response", spec, ref, mine)
    assert mine.error_text.startswith(ref.error_text), _explain("message", spec, ref, mine)
    for chunks in ([text], list(text)):
        ref_s = run_stream(
            lambda p, tl: RefParser(copy.deepcopy(spec), prefix=p), prefix, chunks, None
        )
        mine_s = run_stream(lambda p, tl: module.ResponseParser(p), prefix, chunks, None)
        assert ref_s.outcome() == mine_s.outcome(), _explain("streaming", spec, ref_s, mine_s)
        assert mine_s.error_text.startswith(ref_s.error_text), _explain(
            "message", spec, ref_s, mine_s
        )
    return ref.error[1]


def refused_by_both(spec: Any) -> None:
    from transformers.utils.chat_parsing.response_templates import load_response_template

    with pytest.raises(ValueError):
        load_response_template(copy.deepcopy(spec))
    with pytest.raises(TemplateError):
        load_template(copy.deepcopy(spec))


def every_chunking(text: str) -> list[list[str]]:
    return [[text], list(text), [text[i : i + 3] for i in range(0, len(text), 3)]]


def assert_same_message_for_chunkings(
    spec: dict[str, Any], text: str, expected: Any, **kw: Any
) -> None:
    for chunks in every_chunking(text):
        _, message, _ = stream_both(spec, chunks, **kw)
        assert message == expected
        assert canon(message) == canon(expected)


# -- "Avancé : Écrire un modèle de réponse" --------------------------------------------


def test_smollm_example() -> None:
    expected = {
        "role": "assistant",
        "reasoning_content": "I should greet the user",
        "tool_calls": [GREET_CALL],
    }
    message = parse_both(SMOLLM, SMOLLM_OUTPUT)
    assert message == expected
    assert canon(message) == canon(expected)  # key order and types too
    assert_same_message_for_chunkings(SMOLLM, SMOLLM_OUTPUT, expected)


def test_implicit_content_field_takes_the_leftover_text() -> None:
    # "content n'a pas de open ... un champ implicite / résiduel qui récupère tout texte
    # non réclamé par une autre région".
    text = "<think>hmm</think>Hello there!<|im_end|>"
    assert parse_both(SMOLLM, text) == {
        "role": "assistant",
        "reasoning_content": "hmm",
        "content": "Hello there!",
    }


def test_multi_turn_prefix_is_cut_after_the_last_start_anchor() -> None:
    prefix = (
        "<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello!<|im_end|>\n"
        "<|im_start|>user\nAgain?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    # "en écartant le tour antérieur "Hello!"": nothing of it reaches the message.
    initial, message, _ = stream_both(SMOLLM, ["Hi again!<|im_end|>"], prefix=prefix)
    assert initial == []
    assert message == {"role": "assistant", "content": "Hi again!"}
    assert parse_both(SMOLLM, "Hi again!<|im_end|>", prefix=prefix) == message
    # Without the anchor in the prefix, the whole prefix is parsed ("Hello!" leaks in).
    assert "Hello!" in json.dumps(parse_both(SMOLLM, "", prefix="Hello!<|im_end|>"))


def test_anchor_applies_to_the_prefix_only_never_to_the_output() -> None:
    # "L'ancre n'est appliquée qu'au prefix, jamais à la réponse/génération".
    text = "one<|im_end|><|im_start|>assistant\ntwo"
    message = parse_both(SMOLLM, text, prefix=CHATML_ANCHOR)
    assert message["content"] == "<|im_start|>assistant\ntwo"


def test_start_anchor_pattern_cuts_the_prefix_too() -> None:
    spec = {**SMOLLM, "start_anchor_pattern": r"<\|im_start\|>assistant\s*"}
    del spec["start_anchor"]
    prefix = "<|im_start|>assistant\nold<|im_end|><|im_start|>assistant\n<think>\n"
    initial, message, _ = stream_both(spec, ["new</think>done"], prefix=prefix)
    assert initial[0] == {"type": "region_open", "field": "reasoning_content"}
    assert message == {"role": "assistant", "reasoning_content": "new", "content": "done"}


def test_exactly_one_start_anchor_is_required() -> None:
    both = {**SMOLLM, "start_anchor_pattern": "x"}
    refused_by_both(both)
    neither = {k: v for k, v in SMOLLM.items() if k != "start_anchor"}
    refused_by_both(neither)


# -- streaming -------------------------------------------------------------------------


def test_documented_event_stream() -> None:
    # "Un flux d'événements typique pourrait ressembler à ceci": the documented chunks,
    # fed as the model would write them.
    chunks = [
        "<think>",
        "I should ",
        "greet the user",
        "</think>",
        "<tool_call>",
        '{"name": "greet_user", ',
        '"arguments": {"greeting": "Hi!"}}',
        "</tool_call>",
    ]
    documented = [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_chunk", "field": "reasoning_content", "text": "I should ", "dirty": False},
        {
            "type": "region_chunk",
            "field": "reasoning_content",
            "text": "greet the user",
            "dirty": False,
        },
        {"type": "region_close", "field": "reasoning_content", "value": "I should greet the user"},
        {"type": "region_open", "field": "tool_calls"},
        {
            "type": "region_chunk",
            "field": "tool_calls",
            "text": '{"name": "greet_user", ',
            "dirty": True,
        },
        {
            "type": "region_chunk",
            "field": "tool_calls",
            "text": '"arguments": {"greeting": "Hi!"}}',
            "dirty": True,
        },
        {"type": "region_close", "field": "tool_calls", "value": GREET_CALL},
    ]
    _, message, events = stream_both(SMOLLM, chunks)
    assert events == documented
    assert message == {
        "role": "assistant",
        "reasoning_content": "I should greet the user",
        "tool_calls": [GREET_CALL],
    }


@pytest.mark.parametrize(
    ("content", "body", "dirty"),
    [
        ("text", "hello", False),
        ("int", "42", False),
        ("float", "1.5", False),
        ("bool", "true", False),
        ("json", '{"a": 1}', True),
        ("xml-inline", "<a>1</a>", True),
        ("kv-lines", "a: 1", True),
    ],
)
def test_dirty_flag_per_content_parser(content: str, body: str, dirty: bool) -> None:
    # text/int/float/bool stream dirty=False; structured parsers dirty=True.
    args = {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</\w+>"} if content == "xml-inline" else {}
    spec = fragment(
        {"f": {"open": "<f>", "close": "</f>", "content": content, "content_args": args}}
    )
    _, _, events = stream_both(spec, ["<f>", body, "</f>"])
    chunks = [e for e in events if e["type"] == "region_chunk"]
    assert chunks and all(e["dirty"] is dirty for e in chunks)
    assert events[-1]["type"] == "region_close"


def test_partial_delimiters_are_held_back() -> None:
    # "nous retenons les jetons jusqu'à ce que nous soyons certains qu'ils sont à
    # l'intérieur de la région et ne font pas partie de la frontière".
    _, message, events = stream_both(SMOLLM, ["Hello <|im", "_end|>"])
    texts = [e["text"] for e in events if e["type"] == "region_chunk"]
    assert "".join(texts) == "Hello "
    assert message == {"role": "assistant", "content": "Hello"}
    # A false alarm is released once it cannot be a delimiter any more.
    _, _, events = stream_both(SMOLLM, ["a <thin", "g> b"])
    assert "".join(e["text"] for e in events if e["type"] == "region_chunk") == "a <thing> b"


def test_prefix_regions_become_initial_events() -> None:
    # An opened think block in the prompt: the model's text continues the region.
    prefix = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    initial, message, _ = stream_both(SMOLLM, ["Let me think</think>Hi!<|im_end|>"], prefix=prefix)
    assert initial[0] == {"type": "region_open", "field": "reasoning_content"}
    assert message == {"role": "assistant", "reasoning_content": "Let me think", "content": "Hi!"}
    # A region opened and closed in the prefix: a full open/chunk/close sequence, and
    # "leur valeur analysée est insérée dans le dictionnaire de sortie".
    prefix = CHATML_ANCHOR + "<think>planned</think>"
    initial, message, _ = stream_both(SMOLLM, ["Answer.<|im_end|>"], prefix=prefix)
    assert [e["type"] for e in initial] == ["region_open", "region_chunk", "region_close"]
    assert initial[-1] == {"type": "region_close", "field": "reasoning_content", "value": "planned"}
    assert message == {"role": "assistant", "reasoning_content": "planned", "content": "Answer."}


def test_prefix_is_required() -> None:
    # "prefix est obligatoire. Son omission provoque une erreur." ... prefix="" opts out.
    module = ours(SMOLLM)
    with pytest.raises(ValueError):
        ref_parse_response("hi", SMOLLM)
    with pytest.raises(ValueError):
        module.parse_response("hi")
    with pytest.raises(ValueError):
        RefParser(SMOLLM)
    with pytest.raises(ValueError):
        module.ResponseParser()
    assert parse_both(SMOLLM, "hi", prefix="") == {"role": "assistant", "content": "hi"}


def test_finalize_twice_is_an_error() -> None:
    module = ours(SMOLLM)
    for parser in (RefParser(SMOLLM, prefix=""), module.ResponseParser("")):
        parser.feed("x")
        parser.finalize()
        with pytest.raises(RuntimeError):
            parser.finalize()
        with pytest.raises(RuntimeError):
            parser.feed("y")


# -- "Avancé : Référence de l'API des champs" ------------------------------------------


def test_repeats_collects_a_list() -> None:
    # The documented input elides the bodies ("..."); filled in with empty arguments.
    text = (
        '<tool_call>{"name": "a", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    )
    message = parse_both(SMOLLM, text)
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["a", "b"]


def test_join_example() -> None:
    spec = fragment(
        {
            "reasoning_content": {
                "open": "<think>",
                "close": "</think>",
                "repeats": True,
                "join": "\n",
            }
        }
    )
    text = "<think>first</think>...<think>second</think>"
    assert parse_both(spec, text) == {"reasoning_content": "first\nsecond"}
    # "Lors du streaming, region_close conserve toujours la valeur propre à chaque bloc".
    _, message, events = stream_both(spec, list(text))
    closes = [e["value"] for e in events if e["type"] == "region_close"]
    assert closes == ["first", "second"]
    assert message == {"reasoning_content": "first\nsecond"}


def test_join_needs_string_values() -> None:
    # "Chaque correspondance d'un champ join doit être analysée en chaîne de caractères."
    spec = fragment(
        {"n": {"open": "<n>", "close": "</n>", "content": "int", "repeats": True, "join": ","}}
    )
    assert raises_both(spec, "<n>1</n><n>2</n>") == "ValueError"


def test_join_requires_repeats() -> None:
    refused_by_both(fragment({"r": {"open": "<a>", "join": ""}}))


def test_optional_false_missing_field_raises() -> None:
    spec = fragment({"answer": {"open": "<answer>", "close": "</answer>", "optional": False}})
    assert raises_both(spec, "no answer here") == "ValueError"
    assert parse_both(spec, "<answer>42</answer>") == {"answer": "42"}


def test_end_of_generation_closes_open_regions() -> None:
    # "La fin de la génération fermera et finalisera toutes les régions ouvertes".
    assert parse_both(SMOLLM, "<think>still thinking") == {
        "role": "assistant",
        "reasoning_content": "still thinking",
    }


def test_field_without_close_runs_to_the_end() -> None:
    spec = fragment({"answer": {"open": "ANSWER:"}})
    assert parse_both(spec, "noise ANSWER: 42 </x>") == {"answer": "42 </x>"}


def test_open_and_open_pattern_are_exclusive() -> None:
    refused_by_both(fragment({"x": {"open": "<a>", "open_pattern": "<a>"}}))


def test_at_most_one_implicit_field() -> None:
    refused_by_both(fragment({"content": {}, "other": {"close": "</x>"}}))


def test_defaults_are_kept_other_empty_keys_dropped() -> None:
    # "Les clés présentes ici sont toujours conservées ... les autres clés sont
    # supprimées lorsque leur champ n'a capturé aucune valeur."
    spec = {**SMOLLM, "defaults": {"role": "assistant", "content": ""}}
    assert parse_both(spec, "") == {"role": "assistant", "content": ""}
    assert parse_both(SMOLLM, "<think> </think>") == {"role": "assistant"}


def test_null_sink_without_implicit_field() -> None:
    # Without an implicit field, text outside every region is dropped.
    spec = fragment({"answer": {"open": "<a>", "close": "</a>"}})
    _, message, events = stream_both(spec, ["junk <a>kept</a> more junk"])
    assert message == {"answer": "kept"}
    assert all(e["field"] == "answer" for e in events)


# -- "Analyse du contenu d'un champ" ---------------------------------------------------


def test_int_example() -> None:
    spec = fragment({"count": {"open": "<n>", "close": "</n>", "content": "int"}})
    message = parse_both(spec, "<n> 42 </n>")
    assert message == {"count": 42} and canon(message) == canon({"count": 42})


@pytest.mark.parametrize(
    ("content", "args", "body", "expected"),
    [
        ("text", {}, "  padded  ", "padded"),
        ("text", {"strip": False}, "  padded  ", "  padded  "),
        ("float", {}, " 1.5 ", 1.5),
        ("bool", {}, "True", True),
        ("bool", {}, "1", True),
        ("bool", {}, "no", False),
    ],
)
def test_basic_types(content: str, args: dict, body: str, expected: Any) -> None:
    spec = fragment(
        {"v": {"open": "<v>", "close": "</v>", "content": content, "content_args": args}}
    )
    message = parse_both(spec, f"<v>{body}</v>")
    assert canon(message) == canon({"v": expected})


def test_json_unquoted_keys_example() -> None:
    spec = fragment(
        {
            "args": {
                "open": "<args>",
                "close": "</args>",
                "content": "json",
                "content_args": {"unquoted_keys": True},
            }
        }
    )
    assert parse_both(spec, '<args>{city: "London"}</args>') == {"args": {"city": "London"}}


def test_json_string_delims() -> None:
    spec = fragment(
        {
            "args": {
                "open": "<args>",
                "close": "</args>",
                "content": "json",
                "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
            }
        }
    )
    text = '<args>{city:<|"|>London, "UK"<|"|>,n:3}</args>'
    assert parse_both(spec, text) == {"args": {"city": 'London, "UK"', "n": 3}}


def test_json_allow_non_json() -> None:
    spec = fragment(
        {
            "v": {
                "open": "<v>",
                "close": "</v>",
                "content": "json",
                "content_args": {"allow_non_json": True},
            }
        }
    )
    assert parse_both(spec, "<v> plain text </v>") == {"v": "plain text"}
    strict = fragment({"v": {"open": "<v>", "close": "</v>", "content": "json"}})
    assert raises_both(strict, "<v> plain text </v>") == "ValueError"


QWEN_XML_TOOL_CALLS = {
    "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>",
    "close": "</tool_call>",
    "repeats": True,
    "content": "xml-inline",
    "content_args": {
        "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
        "value_parser": {"name": "json", "args": {"allow_non_json": True}},
    },
    "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
}


def test_xml_inline_qwen3_example() -> None:
    spec = fragment({"tool_calls": QWEN_XML_TOOL_CALLS})
    text = (
        "<tool_call><function=get_weather><parameter=city>London</parameter>"
        "<parameter=units>celsius</parameter></function></tool_call>"
    )
    expected = {
        "tool_calls": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "arguments": {"city": "London", "units": "celsius"},
                },
            }
        ]
    }
    assert parse_both(spec, text) == expected
    assert_same_message_for_chunkings(spec, text, expected)


def test_xml_inline_value_parser_and_merge_duplicates() -> None:
    args = {
        "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
        "value_parser": {"name": "json", "args": {"allow_non_json": True}},
        "merge_duplicates": True,
    }
    spec = fragment(
        {"a": {"open": "<a>", "close": "</a>", "content": "xml-inline", "content_args": args}}
    )
    text = (
        "<a><parameter=x>1</parameter><parameter=x>[2]</parameter><parameter=y>hi</parameter></a>"
    )
    assert parse_both(spec, text) == {"a": {"x": [1, [2]], "y": "hi"}}
    no_merge = fragment(
        {
            "a": {
                "open": "<a>",
                "close": "</a>",
                "content": "xml-inline",
                "content_args": {**args, "merge_duplicates": False},
            }
        }
    )
    assert parse_both(no_merge, text) == {"a": {"x": [2], "y": "hi"}}


def test_kv_lines_example() -> None:
    spec = fragment({"metadata": {"open": "<meta>", "close": "</meta>", "content": "kv-lines"}})
    assert parse_both(spec, "<meta>name: alice\nage: 30</meta>") == {
        "metadata": {"name": "alice", "age": "30"}
    }


def test_kv_lines_value_parser_int() -> None:
    # "ajoutez un value_parser de {"name": "int"} pour le convertir en 30" -- which
    # applies to every value: "alice" is then not an int and the parse fails.
    spec = fragment(
        {
            "metadata": {
                "open": "<meta>",
                "close": "</meta>",
                "content": "kv-lines",
                "content_args": {"value_parser": {"name": "int"}},
            }
        }
    )
    message = parse_both(spec, "<meta>age: 30</meta>")
    assert canon(message) == canon({"metadata": {"age": 30}})
    assert raises_both(spec, "<meta>name: alice\nage: 30</meta>") == "ValueError"


def test_kv_lines_separators_and_skipped_lines() -> None:
    spec = fragment(
        {
            "m": {
                "open": "<m>",
                "close": "</m>",
                "content": "kv-lines",
                "content_args": {"line_sep": ";", "kv_sep": "=", "strip": True},
            }
        }
    )
    # Only the first kv_sep splits; empty lines and lines without kv_sep are skipped.
    assert parse_both(spec, "<m> a = 1 ;; junk ;b=x=y</m>") == {"m": {"a": "1", "b": "x=y"}}


# -- "Typage des arguments d'appel d'outil" --------------------------------------------

SET_ALARM = [
    {
        "type": "function",
        "function": {
            "name": "set_alarm",
            "parameters": {
                "type": "object",
                "properties": {
                    "hour": {"type": "integer"},
                    "enabled": {"type": "boolean"},
                    "label": {"type": "string"},
                },
            },
        },
    }
]
TYPED_ARGUMENTS = {"hour": 7, "enabled": True, "label": "wake up"}
SET_ALARM_CALL = (
    '<tool_call>{"name": "set_alarm", '
    '"arguments": {"hour": "7", "enabled": "true", "label": "wake up"}}</tool_call>'
)


def test_tool_argument_typing_example() -> None:
    # The page does not show ``model_out``; a Qwen3-style XML call carries every
    # argument as text, so typing is what turns them into 7 / True.
    spec = fragment({"tool_calls": QWEN_XML_TOOL_CALLS})
    spec["fields"]["tool_calls"]["content_args"] = {
        "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>"
    }
    model_out = (
        "<tool_call><function=set_alarm><parameter=hour>7</parameter>"
        "<parameter=enabled>true</parameter><parameter=label>wake up</parameter>"
        "</function></tool_call>"
    )
    message = parse_both(spec, model_out, tools=SET_ALARM)
    arguments = message["tool_calls"][0]["function"]["arguments"]
    assert arguments == TYPED_ARGUMENTS and canon(arguments) == canon(TYPED_ARGUMENTS)
    # Without tools the values stay strings.
    untyped = parse_both(spec, model_out)["tool_calls"][0]["function"]["arguments"]
    assert untyped == {"hour": "7", "enabled": "true", "label": "wake up"}
    # "les consommateurs du streaming voient des arguments typés par schéma sur
    # region_close plutôt qu'après finalize()".
    _, _, events = stream_both(spec, list(model_out), tools=SET_ALARM)
    close = next(e for e in events if e["type"] == "region_close")
    assert close["value"]["function"]["arguments"] == TYPED_ARGUMENTS


def test_tool_argument_typing_json_strings() -> None:
    text = SET_ALARM_CALL
    message = parse_both(SMOLLM, text, tools=SET_ALARM)
    assert canon(message["tool_calls"][0]["function"]["arguments"]) == canon(TYPED_ARGUMENTS)


def test_tool_argument_typing_from_python_function() -> None:
    # "ou fonctions Python avec des annotations de types et des docstrings": both the
    # reference and a generated module convert the function themselves, the same way.

    def set_alarm(hour: int, enabled: bool, label: str):
        """Set an alarm.

        Args:
            hour: Hour of day
            enabled: Whether it rings
            label: What it says
        """

    text = SET_ALARM_CALL
    ref = ref_parse_response(text, SMOLLM, prefix="", tools=[set_alarm])
    mine = ours(SMOLLM).parse_response(text, prefix="", tools=[set_alarm])
    assert canon(ref) == canon(mine)
    stream = ours(SMOLLM).ResponseParser("", tools=[set_alarm])
    stream.feed(text)
    assert canon(stream.finalize()[0]) == canon(ref)
    assert canon(mine["tool_calls"][0]["function"]["arguments"]) == canon(TYPED_ARGUMENTS)


# -- "Transformer" ---------------------------------------------------------------------


def test_transform_wraps_the_call() -> None:
    text = '<tool_call>{"name": "greet_user", "arguments": {"greeting": "Hi!"}}</tool_call>'
    assert parse_both(SMOLLM, text)["tool_calls"] == [GREET_CALL]


DOTTED = fragment(
    {
        "tool_calls": {
            "open": "<tool>",
            "close": "</tool>",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.args}"},
            },
        }
    }
)


def test_dotted_placeholder() -> None:
    text = '<tool>{"name": "greet_user", "args": {"greeting": "Hi!"}}</tool>'
    assert parse_both(DOTTED, text) == {"tool_calls": [GREET_CALL]}


def test_dotted_placeholder_that_does_not_resolve_raises() -> None:
    # "Un chemin qui ne se résout pas ... lève une erreur".
    assert raises_both(DOTTED, '<tool>{"name": "greet_user"}</tool>') == "ValueError"


def test_dotted_path_errors_read_as_the_references() -> None:
    """transformers' own test_transform_dotted_path_errors, against our module: code
    written against transformers matches on these messages."""

    def spec_with(transform: Any) -> dict[str, Any]:
        return {
            "start_anchor": "<|assistant|>",
            "fields": {
                "x": {"open": "<x>", "close": "</x>", "content": "json", "transform": transform}
            },
        }

    for transform, text, error, message in [
        ({"a": "{content.args}"}, '<x>{"name": "n"}</x>', ValueError, "missing key 'args'"),
        ({"a": "{content.name.x}"}, '<x>{"name": "n"}</x>', ValueError, "cannot index into str"),
        ({"a": "{missing}"}, "<x>{}</x>", KeyError, "is not defined"),
    ]:
        assert raises_both(spec_with(transform), text) == error.__name__
        with pytest.raises(error, match=message):
            ours(spec_with(transform)).parse_response(text, prefix="")


def test_placeholder_mixed_with_text_is_refused() -> None:
    # "mélanger du texte et des emplacements réservés ("abc {name} def") n'est pas autorisé"
    refused_by_both(fragment({"x": {"open": "<x>", "transform": "abc {content} def"}}))


def test_whole_string_placeholder_keeps_the_type() -> None:
    spec = fragment(
        {
            "n": {
                "open": "<n>",
                "close": "</n>",
                "content": "int",
                "transform": {"value": "{content}"},
            }
        }
    )
    message = parse_both(spec, "<n>5</n>")
    assert canon(message) == canon({"n": {"value": 5}})


def test_gpt_oss_example() -> None:
    spec = fragment(
        {
            "tool_calls": {
                "open_pattern": (
                    r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>"
                ),
                "close": "<|call|>",
                "repeats": True,
                "content": "json",
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            }
        }
    )
    text = (
        "<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>"
        '{"location": "San Francisco, CA"}<|call|>'
    )
    expected = {
        "tool_calls": [
            {
                "type": "function",
                "function": {
                    "name": "get_current_weather",
                    "arguments": {"location": "San Francisco, CA"},
                },
            }
        ]
    }
    assert parse_both(spec, text) == expected
    assert_same_message_for_chunkings(spec, text, expected)


def test_cohere_transform_each_example() -> None:
    spec = fragment(
        {
            "tool_calls": {
                "open": "<|START_ACTION|>",
                "close": "<|END_ACTION|>",
                "content": "json",
                "transform_each": True,
                "transform": {
                    "type": "function",
                    "function": {"name": "{tool_name}", "arguments": "{parameters}"},
                },
            }
        }
    )
    body = """[
    {"tool_name": "greet_user", "parameters": {"greeting": "Hi!"}},
    {"tool_name": "search", "parameters": {"query": "weather tomorrow"}}
]"""
    expected = [
        {"type": "function", "function": {"name": "greet_user", "arguments": {"greeting": "Hi!"}}},
        {
            "type": "function",
            "function": {"name": "search", "arguments": {"query": "weather tomorrow"}},
        },
    ]
    text = f"<|START_ACTION|>{body}<|END_ACTION|>"
    assert parse_both(spec, text) == {"tool_calls": expected}
    assert_same_message_for_chunkings(spec, text, {"tool_calls": expected})
    # transform_each needs a list.
    assert raises_both(spec, '<|START_ACTION|>{"tool_name": "x"}<|END_ACTION|>') == "ValueError"


def test_transform_each_requires_transform() -> None:
    refused_by_both(fragment({"x": {"open": "<x>", "content": "json", "transform_each": True}}))


def test_named_groups_need_a_transform() -> None:
    refused_by_both(fragment({"x": {"open_pattern": r"<x (?P<name>\w+)>"}}))


# -- "Portabilité des expressions régulières" ------------------------------------------


def test_regex_dotall_and_unicode_word() -> None:
    # DOTALL: "." crosses newlines. Unicode: \w matches "é".
    spec = fragment(
        {
            "tool_calls": {
                "open_pattern": r"<call(?P<name>\w+).*?>",
                "close": "</call>",
                "content": "json",
                "transform": {"name": "{name}", "arguments": "{content}"},
            }
        }
    )
    text = '<callmétéo\nid="1">{"ville": "Paris"}</call>'
    assert parse_both(spec, text) == {
        "tool_calls": {"name": "météo", "arguments": {"ville": "Paris"}}
    }


def test_regex_dollar_matches_only_at_the_end() -> None:
    # MULTILINE off: "$" is the end of the input (or before a final newline), not each line end.
    spec = fragment({"answer": {"open": "<a>", "close_pattern": "$"}, "content": {}})
    assert parse_both(spec, "<a>line one\nline two") == {"answer": "line one\nline two"}
    assert parse_both(spec, "<a>line one\nline two\n") == {"answer": "line one\nline two"}
