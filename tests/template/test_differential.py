"""Differential test: ``load_template`` against transformers' ``load_response_template``.

For every drawn spec (mostly one rule broken, see ``strategies.py``):

* the reference raises ``ValueError``  ⇔  we raise ``TemplateError``, and our error's
  path lies where the reference's message says the problem is (same first rule);
* the reference accepts  ⇒  we accept with the same model (fields, delimiters in the
  same matching order, flags, transform, defaults), except for a pattern outside our
  dialect (``UnsupportedPatternError``), the one skipped case;
* the reference crashes (``TypeError``/``RecursionError`` instead of validating)  ⇒
  we raise ``TemplateError``: a deliberate, documented difference.

Reproduce or run longer with ``--hypothesis-seed=N`` / ``--hypothesis-show-statistics``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings

from rtcompiler.template import Template, TemplateError, UnsupportedPatternError, load_template

from ..sweeps import examples
from .reference import json_copy, path_agrees, reference_outcome
from .strategies import specs, valid_specs

DIFFERENTIAL = settings(
    max_examples=examples(600, 1500),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def ours(spec: Any) -> Template | TemplateError:
    try:
        return load_template(spec)
    except TemplateError as e:
        return e


def assert_same_model(mine: Template, ref: Any) -> None:
    assert [f.name for f in mine.fields] == list(ref.fields)
    assert mine.implicit == ref.implicit
    assert mine.defaults == ref.defaults
    assert mine.start_anchor.regex_source == ref.start_anchor_re.pattern
    assert mine.start_anchor.is_literal == (ref.start_anchor_literals is not None)
    for f in mine.fields:
        r = ref.fields[f.name]
        for ours_d, ref_re, ref_lits, ref_ext in (
            (f.open, r.open_re, r.open_literals, r.open_literal_can_extend),
            (f.close, r.close_re, r.close_literals, r.close_literal_can_extend),
        ):
            if ours_d is None:
                assert ref_re is None
                continue
            # The reference's compiled pattern is its matching order.
            assert ours_d.regex_source == ref_re.pattern
            assert ours_d.is_literal == (ref_lits is not None)
            assert ours_d.can_extend == ref_ext
            if ref_lits is not None:
                assert sorted(ours_d.literals or ()) == sorted(ref_lits)
            assert set(ours_d.group_names) == set(ref_re.groupindex)
        assert f.content == r.content
        assert f.content_args == r.content_args
        assert f.repeats == bool(r.repeats)
        assert f.optional == bool(r.optional)
        assert f.join == r.join
        assert f.transform == r.transform
        assert f.transform_each == r.transform_each


def check(spec: Any) -> None:
    # Each loader gets its own copy: neither may depend on what the other did.
    ref = reference_outcome(json_copy(spec))
    mine = ours(json_copy(spec))
    event(f"reference: {ref.verdict}")
    if ref.verdict == "accept":
        if isinstance(mine, UnsupportedPatternError):
            event("skipped: pattern outside the dialect")
            assume(False)
        assert isinstance(mine, Template), f"we reject what the reference accepts: {mine}"
        assert_same_model(mine, ref.template)
    elif ref.verdict == "reject":
        assert isinstance(mine, TemplateError), f"we accept what the reference rejects: {ref.error}"
        if not isinstance(mine, UnsupportedPatternError):
            assert path_agrees(str(ref.error), mine.path, spec), (mine, ref.error)
    else:
        event(f"reference crashes with {type(ref.error).__name__}")
        assert isinstance(mine, TemplateError), f"reference crashed ({ref.error!r}), we: {mine}"


@DIFFERENTIAL
@given(specs)
def test_reference_rejects_iff_we_reject(case: tuple[str, Any]) -> None:
    mutation, spec = case
    event(f"mutation {mutation}")
    check(spec)


@settings(DIFFERENTIAL, max_examples=300)
@given(valid_specs())
def test_valid_specs_load_like_the_reference(spec: Any) -> None:
    ref = reference_outcome(json_copy(spec))
    assert ref.verdict == "accept", ref.error  # the generator's own promise
    check(spec)
