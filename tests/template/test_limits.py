"""Templates too large to compile are refused when they load, naming the field.

transformers accepts all of these (they are deviations, docs/deviations.md); compiled,
they took minutes and gigabytes, or never finished. What can be told from the template
alone (the number of fields, a pattern's NFA size, how deeply its lookaheads nest) is
checked before anything is built; DFA tables are refused as soon as their work budget
is spent. Each test counts the work done before the refusal.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompiler.automata import compile_regex, nfa
from rtcompiler.automata.dfa import MAX_DFA_WORK, MAX_TEMPLATE_DFA_WORK, Dfa
from rtcompiler.codegen import generate_module
from rtcompiler.dialect.parser import MAX_LOOKAHEAD_DEPTH
from rtcompiler.template import Delimiter, TemplateError, UnsupportedPatternError, load_template
from rtcompiler.template.load import MAX_FIELDS

from .reference import reference_outcome


def _one_field(**keys) -> dict:
    return {"start_anchor": "<s>", "fields": {"t": {"close": "</t>", **keys}}}


@pytest.fixture
def nfa_states_built(monkeypatch):
    """How many NFA states get built (the NFA builder's ``add`` counted)."""
    count = [0]
    add = nfa._Builder.add

    def counted(self, state):
        count[0] += 1
        return add(self, state)

    monkeypatch.setattr(nfa._Builder, "add", counted)
    compile_regex.cache_clear()
    return count


@pytest.mark.parametrize("pattern, states", [
    ("a{2000}", 2001),
    ("a{10000}", 10001),
    ("(?:(?:ab){1000}){1000}", 2_000_001),
    ("x{1000000000}", 1_000_000_001),
])
def test_an_nfa_over_the_limit_is_refused_before_any_state_is_built(
    pattern, states, nfa_states_built
):
    spec = _one_field(open_pattern=pattern)
    if states < 20_000:  # regex expands repetitions: the reference takes gigabytes beyond
        assert reference_outcome(spec).verdict == "accept"  # a deviation
    with pytest.raises(TemplateError) as caught:
        load_template(spec)
    assert caught.value.path == "fields.t.open_pattern"
    assert f"needs {states} automaton states" in str(caught.value)
    assert f"limit of {nfa.MAX_STATES}" in str(caught.value)
    assert nfa_states_built[0] == 0


def test_literals_count_towards_the_nfa_limit(nfa_states_built):
    # One state per character, one to choose between literals, one to accept.
    many = [f"<w{i:04d}>" for i in range(400)]  # 7 * 400 + 2 states
    with pytest.raises(TemplateError) as caught:
        load_template(_one_field(open=many))
    assert caught.value.path == "fields.t.open"
    assert "needs 2802 automaton states" in str(caught.value)
    assert nfa_states_built[0] == 0
    text = ("lorem ipsum dolor sit amet, " * 80)[:2000]
    with pytest.raises(TemplateError, match="fields.t.close: the pattern needs 2001"):
        load_template({"start_anchor": "<s>", "fields": {"t": {"close": text}}})
    load_template({"start_anchor": "<s>", "fields": {"t": {"close": text[:-1]}}})


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="ab<>\n\\|.", min_size=1, max_size=6), min_size=1, max_size=6))
def test_the_size_worked_out_is_the_size_built(literals):
    source = Delimiter.from_literals(literals).regex_source
    built = nfa.compile_nfa(source)
    assert nfa.nfa_size(nfa.parse_pattern(source).root) + 1 == len(built.states)


@pytest.mark.parametrize("pattern", [
    r"a{3,7}b*?(?:c|d{2,}|(?=e)f)+?$", r"(?P<x>\s*<a>)?(?:\b|\B)\Z", r"(?:x|y){0}z{1,}",
])
def test_the_size_worked_out_is_the_size_built_for_patterns(pattern):
    assert nfa.nfa_size(nfa.parse_pattern(pattern).root) + 1 == len(
        nfa.compile_nfa(pattern).states
    )


def _cjk(n: int) -> list[str]:
    return [chr(0x4E00 + 2 * i) + chr(0x4E01 + 2 * i) for i in range(n)]


@pytest.mark.parametrize("key, value", [
    ("open_pattern", "a{1500}"),
    ("open_pattern", "(?:a|b)*a(?:a|b){14}"),
    ("open", _cjk(400)),
])
def test_dfa_tables_past_their_budget_are_refused_after_bounded_work(key, value, monkeypatch):
    builds = []
    build_all = Dfa.build_all

    def counted(self, *args, **kwargs):
        builds.append(self)
        return build_all(self, *args, **kwargs)

    monkeypatch.setattr(Dfa, "build_all", counted)
    compile_regex.cache_clear()
    with pytest.raises(TemplateError) as caught:
        load_template(_one_field(**{key: value}))
    assert caught.value.path == f"fields.t.{key}"
    assert f"needs more than {MAX_DFA_WORK} units of work" in str(caught.value)
    [dfa] = builds
    assert MAX_DFA_WORK < dfa.work <= MAX_DFA_WORK + dfa.alphabet.size


def test_the_tables_of_all_delimiters_together_have_a_budget_too(monkeypatch):
    """Each of these fits the budget of one pattern (~400,000 units); three do not fit
    the template's. The third is refused at its path, within what was left."""
    builds = []
    build_all = Dfa.build_all

    def counted(self, *args, **kwargs):
        builds.append(self)
        return build_all(self, *args, **kwargs)

    monkeypatch.setattr(Dfa, "build_all", counted)
    compile_regex.cache_clear()
    fields = {
        name: {"open_pattern": f"{name}{{400}}", "close": "</t>"} for name in ("a", "b", "c")
    }
    with pytest.raises(TemplateError) as caught:
        load_template({"start_anchor": "<s>", "fields": fields})
    assert caught.value.path == "fields.c.open_pattern"
    assert f"more than {MAX_TEMPLATE_DFA_WORK} units of work" in str(caught.value)
    assert "limit for a template" in str(caught.value)
    first, second, third = (b for b in builds if b.nfa.source.endswith("{400}"))
    assert first.work + second.work <= MAX_TEMPLATE_DFA_WORK
    assert sum(b.work for b in builds) <= MAX_TEMPLATE_DFA_WORK + third.alphabet.size + 1


def test_a_pattern_used_by_many_fields_counts_once():
    fields = {f"f{i}": {"open_pattern": "a{400}", "close": f"</f{i}>"} for i in range(50)}
    assert len(load_template({"start_anchor": "<s>", "fields": fields}).fields) == 50


def test_two_hundred_cjk_literals_compile_with_work_in_proportion():
    """The case that took 30 s: one closure per state, and a module that parses."""
    compile_regex.cache_clear()
    spec = _one_field(open=_cjk(200))
    template = load_template(spec)
    dfa = compile_regex(template.fields[0].open.regex_source).dfa
    assert dfa.complete and dfa.work <= 4 * len(dfa.keys) * dfa.alphabet.size
    namespace: dict = {"__name__": "cjk_parser"}
    exec(compile(generate_module(template), "cjk_parser", "exec"), namespace)
    text = f"x{_cjk(200)[137]}body</t>"
    assert namespace["parse_response"](text, prefix="") == {"t": "body"}


def test_too_many_fields_are_refused_before_any_field_is_read(nfa_states_built):
    def fields(n: int) -> dict:
        return {f"f{i}": {"open": f"<f{i}>", "close": f"</f{i}>"} for i in range(n)}

    with pytest.raises(TemplateError) as caught:
        load_template({"start_anchor": "<s>", "fields": fields(10_000)})
    assert caught.value.path == "fields"
    assert f"10000 fields, more than rtcompiler's limit of {MAX_FIELDS}" in str(caught.value)
    assert nfa_states_built[0] == 0
    spec = {"start_anchor": "<s>", "fields": fields(MAX_FIELDS)}
    assert len(load_template(spec).fields) == MAX_FIELDS


def test_a_template_at_the_field_limit_builds_each_table_once(monkeypatch):
    """The loader builds every delimiter's tables and the generator reuses them: the
    cache of compiled patterns holds a whole template (513 patterns here; it held 512,
    and evicted in the order used, every table was built twice)."""
    built = []
    init = Dfa.__init__

    def counted(self, nfa):
        built.append(nfa.source)
        init(self, nfa)

    monkeypatch.setattr(Dfa, "__init__", counted)
    compile_regex.cache_clear()
    fields = {f"f{i}": {"open": f"<f{i}>", "close": f"</f{i}>"} for i in range(MAX_FIELDS)}
    generate_module(load_template({"start_anchor": "<s>", "fields": fields}))
    assert len(built) == len(set(built)) == 2 * MAX_FIELDS + 1


def test_lookaheads_nested_too_deeply_are_refused_with_their_column():
    deep = "(?=a" * (MAX_LOOKAHEAD_DEPTH + 1) + "a" + ")" * (MAX_LOOKAHEAD_DEPTH + 1)
    spec = _one_field(open_pattern=deep)
    assert reference_outcome(spec).verdict == "accept"
    with pytest.raises(UnsupportedPatternError) as caught:
        load_template(spec)
    assert caught.value.path == "fields.t.open_pattern"
    assert caught.value.column == 4 * MAX_LOOKAHEAD_DEPTH  # the first one too deep
    ok = "(?=a" * MAX_LOOKAHEAD_DEPTH + "a" + ")" * MAX_LOOKAHEAD_DEPTH
    load_template(_one_field(open_pattern=ok))


def test_a_loop_over_a_nullable_body_is_refused_at_load_with_its_path():
    # It used to load, then fail when compiling with no path.
    with pytest.raises(UnsupportedPatternError) as caught:
        load_template(_one_field(open_pattern="<(?:a|)*>"))
    assert caught.value.path == "fields.t.open_pattern"
    assert "can match the empty string" in str(caught.value)


def test_a_tag_pattern_past_the_budget_is_refused_when_compiling():
    spec = _one_field(
        open="<t>", content="xml-inline",
        content_args={"tag_pattern": "(?P<key>a{1500})(?P<value>b)"},
    )
    template = load_template(spec)  # content_args are not read when loading
    with pytest.raises(TemplateError) as caught:
        generate_module(template)
    assert caught.value.path == "fields.t.content_args.tag_pattern"
    assert "units of work" in str(caught.value)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab", min_size=1, max_size=4), min_size=1, max_size=8))
def test_can_extend_without_comparing_every_pair(literals):
    unique = list(dict.fromkeys(literals))
    pairwise = any(a != b and b.startswith(a) for a in unique for b in unique)
    assert Delimiter.from_literals(literals).can_extend == pairwise


def test_a_bundled_size_pattern_is_far_below_the_limits():
    pattern = (
        r"(?: to=functions\.(?P<name>[^\s<]+)\s*<\|channel\|>(?:commentary|analysis)"
        r"|<\|channel\|>(?:commentary|analysis) to=functions\.(?P<name>[^\s<]+))"
        r"[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>"
    )
    compile_regex.cache_clear()
    regex = compile_regex(pattern)
    regex.dfa.build_all()
    assert len(regex.nfa.states) * 10 < nfa.MAX_STATES
    assert regex.dfa.work * 20 < MAX_DFA_WORK
