"""Every listed word, in every case a case-blind pattern matches, is read without an error (issue
27: bad input gets a clear answer, never a crash). ``re.IGNORECASE`` matches four letters outside
ASCII to ASCII ones (İ ı ſ K): "mİnimum" and "ıs" matched a vocabulary pattern whose table then had
no such key (a KeyError in the Gatekeeper and in the answer's agreement). The words come from the
bundled word files themselves, so a word added to any of them is tried too."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from importlib.resources import files

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper
from veridiag.pipeline.shape import agree, line_size
from veridiag.text.concepts import concepts
from veridiag.text.entities import extract_entities
from veridiag.text.statistics import statistics
from veridiag.text.when import interpret_time, written_clocks

#: What re.IGNORECASE reads as i, s, k besides their two ASCII cases.
_CASE_BLIND = {"i": "I\u0130\u0131", "s": "S\u017f", "k": "K\u212a"}
_GATEKEEPER = Gatekeeper()
_OUTPUT = "2026-07-07T10:05:00Z ERROR payment-service pool exhausted: max 50, peak 50 connections (p99 2.3s)"


@cache
def _listed_words() -> list[str]:
    """Every ASCII word of two or more letters with an i, s or k in the bundled word files."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.update(w for w in re.findall(r"[A-Za-z]{2,}", value) if set(w.lower()) & set(_CASE_BLIND))
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted(files("veridiag").rglob("*.yaml")):  # type: ignore[attr-defined]
        walk(yaml.safe_load(path.read_text(encoding="utf-8")))
    return sorted(found)


def _spellings(word: str) -> list[str]:
    """``word`` with every i, s or k written each way ``re.IGNORECASE`` reads it (one letter form
    at a time for the whole word), and in capitals."""
    forms = {word.upper()}
    for letter, others in _CASE_BLIND.items():
        if letter in word.lower():
            forms.update("".join(o if c.lower() == letter else c for c in word) for o in others)
    return sorted(forms)


_FORMS = ["{w} 1303 ms", "the {w} was 50", "{w}：峰值 50 个连接", "services {w} slow at 10:05"]


def _read_everywhere(text: str) -> None:
    extract_entities(text)
    concepts().in_claim(text)
    concepts().times_ratios(text)
    statistics().named(text)
    statistics().near(text, 0, len(text), 24, 24)
    statistics().labelled([text])
    agree(" " + text, "en", subject=True)
    line_size(text, "en")
    written_clocks(text)
    interpret_time(text, anchor=datetime(2026, 7, 7, 12, tzinfo=UTC))


def test_every_listed_word_in_every_case_blind_spelling_is_read_without_error() -> None:
    """All of them (a closed vocabulary: tried whole, not sampled), by each reader and by the
    Gatekeeper's rules, twenty claims a run."""
    texts = [form.format(w=spelled) for word in _listed_words() for spelled in _spellings(word) for form in _FORMS[:2]]
    assert len(texts) > 2000
    for text in texts:
        _read_everywhere(text)
    for start in range(0, len(texts), 40):
        batch = texts[start : start + 40]
        report = _GATEKEEPER.validate(
            v2([claim(text=text, bindings=[binding([394], _OUTPUT)]) for text in batch]),
            session_id=SESSION,
            invocations=InMemoryInvocations([invocation(394, output="\n".join([_OUTPUT, *batch]))]),
        )
        checks = [*(c for trace in report.claim_traces for c in trace.checks), *report.other_checks]
        assert checks
        assert not [c.reason for c in checks if c.reason.startswith("rule crashed")], ascii(batch)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_listed_words()).flatmap(lambda w: st.sampled_from(_spellings(w))), st.sampled_from(_FORMS))
def test_listed_words_read_in_any_sentence_form(spelled: str, form: str) -> None:
    _read_everywhere(form.format(w=spelled))
