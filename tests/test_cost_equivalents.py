"""Cheaper forms of deterministic work (issue 27, deliverable 8) answer as the forms they replace.

Each shortcut is checked against the plain form it stands for, on generated text: a pre-check that
skips a search must never skip one that finds something, and a rewritten pattern must find what
the old one found.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from veridiag.agents import scripted_roles
from veridiag.bench.pipeline import Recorder, _scenario, _shift_ids
from veridiag.contracts.composer import AllowedClaim
from veridiag.contracts.gatekeeper import CheckRecord
from veridiag.contracts.json import JsonObject
from veridiag.gatekeeper.rules.stated_content import (
    _ARROW,
    StatedContent,
    StatedParams,
    _day_words,
    _has_arrow,
    _relative_day,
)
from veridiag.gatekeeper.ruleset import load_ruleset
from veridiag.pipeline import DiagnosisPipeline, PipelineOptions
from veridiag.pipeline.guardrails import GuardContext
from veridiag.pipeline.shape import _LANGS, _OPEN, _asides, _plain, _without_asides, stated_by
from veridiag.redaction.engine import _SPLIT_TAIL, _SPLIT_TAIL_MARKED, Redaction, Redactor, _has, _lower
from veridiag.store import ProgressItem, SessionStore, StoreError
from veridiag.store.database import _json_text, _json_text_py
from veridiag.text.concepts import ConceptFile, concepts
from veridiag.text.normalize import reader_text
from veridiag.text.wordfiles import bundled_words


def _pieces(parts: Sequence[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(parts), max_size=24).map("".join)


@given(_pieces(["→", "-", ">", "⇒", "=", "⟶", " ", "\t", "\n", "a", "服务", "->", "=>"]))
def test_an_arrow_is_found_where_the_pattern_finds_one(text: str) -> None:
    assert _has_arrow(text) == (_ARROW.search(text) is not None)


#: Letters ``re.IGNORECASE`` matches to ASCII ones, and case changes of the words.
_FOLDS = {"i": "İı", "s": "ſ", "k": "K"}


@st.composite
def _recovery_texts(draw: st.DrawFn) -> str:
    listed = bundled_words("veridiag.text", "concepts.yaml", ConceptFile).recovery_words
    words = sorted({*listed, *concepts()._recovery_heads})
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        word = draw(st.sampled_from(words))
        word = "".join(
            draw(st.sampled_from([ch, ch.upper(), *_FOLDS.get(ch, "")])) if ch.isascii() else ch for ch in word
        )
        cut = draw(st.integers(0, len(word)))  # a word cut short is no word
        parts.append(draw(st.sampled_from([word, word, word, word[:cut], word.replace(" ", "  ")])))
        parts.append(draw(st.sampled_from(["", " ", "x", "_", "9", "，", "\n", "已经"])))
    return "".join(parts)


@given(_recovery_texts())
@example("BACK to baseline")
def test_a_recovery_is_said_where_the_pattern_finds_one(text: str) -> None:
    found = concepts()._recovered.search(text) is not None
    assert concepts().says_recovered(text) == found


def _asides_by_character(text: str) -> list[tuple[int, int]]:
    """``_asides`` as it read every character."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[int, str]] = []
    for index, ch in enumerate(text):
        if ch in _OPEN:
            stack.append((index, _OPEN[ch]))
        elif stack and ch == stack[-1][1]:
            start, _ = stack.pop()
            if not stack:
                spans.append((start, index + 1))
    return spans


@given(_pieces(["(", ")", "（", "）", "a", " ", "说明", "1"]))
def test_asides_are_the_bracket_spans_a_character_walk_finds(text: str) -> None:
    assert _asides(text) == _asides_by_character(text)


#: The assignment signs as the split-key patterns wrote them before: a set among the alternatives.
_OLD_SIGNS = "(?:>=|=:|[=:：＝])"


#: Keys broken by a mark, then a sign (":=" too), as the split-key patterns read them reversed.
_SPLIT_KEYS = st.lists(
    st.tuples(
        st.sampled_from(["pass", "密", "to", "9", "é", ""]),
        st.sampled_from(["_", "-", " ", "\u200b", "", "　"]),
        st.sampled_from(["word", "码", "ken", "x"]),
        st.sampled_from(["", " ", '"', "]", "'"]),
        st.sampled_from(["=", ":", "：", "＝", "=>", ":=", "=:", ">=", ""]),
        st.sampled_from(["", " ", "v", "值"]),
    ).map("".join),
    max_size=6,
).map(lambda keys: "".join(keys)[::-1])


@given(_SPLIT_KEYS)
def test_the_split_key_patterns_find_what_they_found(text: str) -> None:
    for pattern in (_SPLIT_TAIL, _SPLIT_TAIL_MARKED):
        old = re.compile(_OLD_SIGNS + pattern.pattern.removeprefix("(?:>=|=:?|:|：|＝)"))
        assert old.pattern != pattern.pattern
        found = [(m.span(), m.groupdict()) for m in pattern.finditer(text)]
        assert found == [(m.span(), m.groupdict()) for m in old.finditer(text)]


class _Unrequired(Redactor):
    """The redactor as it searched a long text: every rule without a prefilter, whatever it requires."""

    def _finds(self, text: str, guarded: Sequence[tuple[int, int]]) -> list[tuple[int, int, int, str]]:
        if len(text) <= 4096:
            return super()._finds(text, guarded)
        low, seen = _lower(text), dict[str, bool]()
        rules = [r for r in self._rules if not r.prefilter or any(_has(low, x, seen) for x in r.literals)]
        return [
            (start, order, -end, kind)
            for order, rule in enumerate(rules)
            for start, end, kind in rule.spans(text, low)
            if not any(start < b and a < end for a, b in guarded)
        ]


_SNIPPETS = [
    "password: |\n  Zq8xW2vL9pQ4\n",
    "password:\n  Zq8xW2vL9pQ4\n",
    '"Zq8xW2vL9pQ4" == password ',
    "'Zq8xW2vL9pQ4' != db_password ",
    "'Zq8xW2vL9pQ4' !== token ",
    '{"claim_text": "日志显示：ok", "n": 1}',
    "pass word=Zq8xW2vL9pQ4 ",
    "key: >-\n  Zq8xW2vL9pQ4\n",
    "平常的一行日志 ",
    "\n",
]


@given(st.lists(st.sampled_from(_SNIPPETS), min_size=1, max_size=12), st.sampled_from(["x", "日"]))
def test_a_long_text_is_redacted_as_when_every_rule_searched_it(snippets: list[str], filler: str) -> None:
    text = filler * 4100 + "".join(snippets)
    found: Redaction = Redactor()._redact(text)
    assert found == _Unrequired()._redact(text)


def _stated_by_every_form(first_line: str, claim: AllowedClaim) -> bool:
    """``stated_by`` as it read the claim in each language's form, asides or none."""
    text = claim.claim_text
    forms = {_plain(text), *(_plain(_without_asides(text, lang, None)) for lang in _LANGS)}
    return any(p and p in _plain(first_line) for p in forms)


_LINE_PIECES = ["池", "满", " ", "\n", "(", ")", "（", "）", "pool", "50", "。", ".", "；", "\t"]


@st.composite
def _lines_and_claims(draw: st.DrawFn) -> tuple[str, str]:
    """A claim, perhaps with an aside, and a first line that may state it with or without the aside."""
    head, aside, tail = (draw(_pieces(_LINE_PIECES)) for _ in range(3))
    opening, closing = draw(st.sampled_from([("(", ")"), ("（", "）"), ("", "")]))
    text = head + opening + aside + closing + tail
    first_line = draw(st.sampled_from([head + tail, head + " " + tail, text, draw(_pieces(_LINE_PIECES))]))
    return first_line, text


@given(_lines_and_claims())
def test_a_claim_is_stated_by_a_line_as_when_every_form_was_read(line_and_text: tuple[str, str]) -> None:
    first_line, text = line_and_text
    claim = AllowedClaim(claim_id="c1", claim_type="symptom", claim_text=text, verification="direct_observation")
    assert stated_by(first_line, claim) == _stated_by_every_form(first_line, claim)


_CHECK_RECORDS = st.lists(
    st.builds(
        CheckRecord,
        rule_id=st.sampled_from(["claim.stated_content", "claim.entity_grounding", "claim.root_cause_support"]),
        target=st.just("claims[0]"),
        outcome=st.sampled_from(["pass", "warn", "fail"]),
        reason=st.text(alphabet="abc", max_size=3),
    ),
    max_size=12,
)


@given(st.dictionaries(st.sampled_from(["c1", "c2"]), _CHECK_RECORDS))
def test_a_claims_reasons_are_its_checks_of_that_outcome_and_rule(checks: dict[str, list[CheckRecord]]) -> None:
    context = object.__new__(GuardContext)
    context.__dict__["_checks"] = checks  # what the report's traces give, by claim
    for claim_id in ("c1", "c2", "c3"):
        for outcome in ("pass", "warn", "fail"):
            for rule_id in (None, "claim.stated_content", "claim.entity_grounding", "evidence.instruction_language"):
                expected = [
                    c.reason
                    for c in checks.get(claim_id, ())
                    if c.outcome == outcome and (rule_id is None or c.rule_id == rule_id)
                ]
                assert context.checks_of(claim_id, outcome, rule_id) == expected


#: Stage events as a run's are: a stage name and JSON details (text in any script, numbers, lists).
_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["session", "plan", "verifier", "composer", "done"]),
        st.dictionaries(
            st.sampled_from(["session_id", "verdict", "reason", "rounds", "failed_rules"]),
            st.one_of(
                st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12),
                st.integers(-3, 3),
                st.none(),
                st.lists(st.sampled_from(["claim.stated_content", "服务", '"q"']), max_size=2),
            ),
            max_size=4,
        ),
    ),
    max_size=4,
)


def _raw_progress(store: SessionStore, session_id: str) -> object:
    with store.engine.connect() as connection:
        return connection.execute(
            text("SELECT progress FROM diagnosis_session WHERE id = :id"), {"id": session_id}
        ).scalar()


@settings(max_examples=30, deadline=None)
@given(_EVENTS, _EVENTS, _EVENTS)
def test_events_a_session_write_carries_are_stored_as_each_on_its_own(
    first: list[ProgressItem], middle: list[ProgressItem], last: list[ProgressItem]
) -> None:
    """Events stored in a session write's transaction (``progress=``) are what ``record_progress``
    stores one transaction each: the same column, byte for byte, and the same events read back."""
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(f"sqlite:///{Path(tmp) / 'store.db'}")
        alone, carried = store.create_session("q").id, store.create_session("q", progress=first).id
        for stage, details in first:
            store.record_progress(alone, stage, details)
        for stage, details in middle:
            store.record_progress(alone, stage, details)
        store.update_session(alone, rounds=1)
        store.update_session(carried, rounds=1, progress=middle)
        store.complete_session(alone, verdict="PASS", final_answer="a")
        for stage, details in last:
            store.record_progress(alone, stage, details)
        store.complete_session(carried, verdict="PASS", final_answer="a", progress=last)
        assert _raw_progress(store, carried) == _raw_progress(store, alone)
        read_alone, read_carried = store.session_progress(alone), store.session_progress(carried)
        assert read_alone is not None and read_carried is not None
        assert read_carried.events == read_alone.events and read_carried.read == len(first + middle + last)
        store.close()


def test_a_refused_completion_stores_none_of_the_events_it_carries(tmp_path: Path) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    session_id = store.create_session("q", progress=[("session", {"lang": "zh"})]).id
    store.fail_session(session_id, error="stopped")
    with pytest.raises(StoreError):
        store.complete_session(session_id, verdict="PASS", final_answer="a", progress=[("done", {"rounds": 1})])
    read = store.session_progress(session_id)
    assert read is not None and [e.stage for e in read.events] == ["session"]


@pytest.mark.parametrize("stop", [None, "plan", "gatekeeper", "verifier", "composer", "done"])
def test_a_run_stores_the_events_its_listener_heard_wherever_it_stops(tmp_path: Path, stop: str | None) -> None:
    """Events stored with the run's session writes (``DiagnosisRun.hold``/``written``) end as when
    each was stored just before it was heard: the stored events are the heard ones, in order, also
    when the listener stops the run at any stage (the failure's path stores what was held)."""
    outputs, executor, verifier, composer = _scenario()
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    setup = Recorder(store, outputs)
    heard: list[ProgressItem] = []

    def listener(stage: str, details: JsonObject) -> None:
        heard.append((stage, details))
        if stage == stop:
            raise RuntimeError("the listener stops the run")

    roles = scripted_roles(executor=_shift_ids(executor, 0), verifier=verifier, composer=composer)
    result = DiagnosisPipeline(store, roles, options=PipelineOptions(max_rounds=1)).run(
        "为什么下单接口报错？", on_session=setup, progress=listener
    )
    stored = store.session_progress(result.session_id)
    assert stored is not None
    assert [(e.stage, e.details) for e in stored.events] == heard
    assert heard[-1][0] == ("done" if stop is None else "failed")
    assert result.status == ("completed" if stop is None else "failed")


#: JSON values as the store's columns hold them: strings with any character a text may keep
#: (lone surrogates included), numbers of any size and form, NaN and the infinities.
_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats()
    | st.sampled_from([1e-05, 1e16, -0.0, 5e-324, 1.7976931348623157e308, 0.1])
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=24,
)


@given(_JSON_VALUES)
def test_a_json_column_reads_back_as_the_json_module_wrote_it(value: object) -> None:
    """The store's JSON column text (pydantic-core's encoder) reads back as the ``json`` module's
    text of the same value did: decoded and written again by the ``json`` module, it is that text."""
    fast = _json_text(value)
    assert _json_text_py(json.loads(fast)) == _json_text_py(value)


def _relative_day_words() -> list[str]:
    rule = load_ruleset().get(StatedContent.id)
    assert rule is not None
    return list(rule.typed_params(StatedParams).relative_days)


@st.composite
def _relative_day_texts(draw: st.DrawFn) -> str:
    words = _relative_day_words()
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        word = draw(st.sampled_from(words))
        cut = draw(st.integers(0, len(word)))
        word = draw(
            st.sampled_from([word, word.upper(), word.title(), word[:cut], word[cut:], word.replace(" ", "  ")])
        )
        parts += [word, draw(st.sampled_from(["", " ", "x", "的", "9", "，", "\n", "2026-07-07"]))]
    return "".join(parts)


@given(_relative_day_texts())
def test_a_relative_day_is_found_as_when_the_pattern_searched_every_claim(text: str) -> None:
    """The relative-day check looks for its words before its pattern: the same finding, and the
    same word named, as the pattern's search of every claim."""
    words = _relative_day_words()
    found = _day_words(tuple(words)).search(reader_text(text).lower())
    expected = [] if found is None else [found.group()]
    assert [named for _kind, why in _relative_day(text, [], words) for named in [why.split("'")[1]]] == expected
