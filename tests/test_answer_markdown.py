"""``veridiag ask --format markdown`` (and ``/sessions/{id}/answer.md``, the webhook's Markdown) in
the answer's shape (issue 28): the verdict badge, then the answer's own first line with its label;
the question and scope; at most five key facts in the composer input's order, each with its
evidence reference; hypotheses, next steps, gaps one line per kind — and every confirmed fact
still there, folded (``<details>``). A session stored before the answer had a ranking renders
too, with its first facts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import readable
from veridiag.agents.template import template_phrases
from veridiag.config import Settings
from veridiag.contracts.answer import AnswerDocument
from veridiag.contracts.composer import ActionItem, AllowedHypothesis
from veridiag.contracts.delivery import AnswerReport, ReportEvidence, ReportFact, ReportHypothesis
from veridiag.contracts.session import SessionRecord
from veridiag.delivery import Limit, render_markdown, session_report
from veridiag.delivery.markdown import FOLD_CLOSE
from veridiag.delivery.markup import commonmark
from veridiag.delivery.report import report_words
from veridiag.pipeline.composer_input import composer_wording
from veridiag.pipeline.report import answer_document, stored_document
from veridiag.pipeline.shape import MAX_KEY_FACTS, answer_lines

SETTINGS = Settings(home=Path("/nonexistent"))
QUESTIONS = [("订单123支付失败，帮我看看是什么原因", "zh"), ("Why is checkout slow since 10:00?", "en")]


def _lines(markdown: str) -> list[str]:
    return [line for line in markdown.split("\n") if line.strip()]


def _above_fold(markdown: str) -> str:
    return markdown.split("<details>", 1)[0]


def _fold(markdown: str) -> str:
    return markdown.split("<details>", 1)[1].split(FOLD_CLOSE, 1)[0]


def _section(markdown: str, title: str) -> list[str]:
    """The bullets under the bold ``title`` (empty when it is not there)."""
    heading = f"**{title}**\n"
    if heading not in markdown:
        return []
    return [line for line in markdown.split(heading, 1)[1].split("\n\n", 1)[0].split("\n") if line.startswith("- ")]


def _markdown(document: AnswerDocument, question: str, lang: Any) -> str:
    return render_markdown(session_report(SETTINGS, document, question, lang))


@pytest.mark.parametrize(("question", "lang"), QUESTIONS)
def test_the_markdown_opens_with_the_answer_then_its_key_facts_in_order_and_folds_every_fact(
    demo: Any, question: str, lang: Any
) -> None:
    result = demo.pipeline.run(question)
    composer_input = readable(result.self_evaluation)["verifier_evaluation"]["composer_input"]
    document = answer_document(result, demo.engine)
    markdown = _markdown(document, question, lang)
    words = report_words()[lang]
    lines = _lines(markdown)
    # the verdict badge, then the answer's own first line (after its scope), labelled
    first = answer_lines(result.answer, composer_input["scope"])[0]
    assert lines[0] == f"**{document.verdict} · {words.verdicts[document.verdict or '']}**"
    assert lines[1] == f"**{commonmark(first)}**" and composer_wording().patterns.label.search(first), lines[:3]
    assert lines[2].startswith(f"**{words.question}**") and lines[3] == commonmark(composer_input["scope"])
    # at most five key facts, in the composer input's order, each with its evidence reference
    texts = {c["claim_id"]: c["claim_text"] for c in composer_input["allowed_claims"]}
    keys = _section(_above_fold(markdown), words.key_facts)
    assert 0 < len(keys) <= MAX_KEY_FACTS
    assert len(keys) == len(composer_input["key_facts"])
    for bullet, claim_id in zip(keys, composer_input["key_facts"], strict=True):
        assert bullet.startswith(f"- {commonmark(texts[claim_id])}"), (bullet, texts[claim_id])
        ref = template_phrases()[lang]["evidence_ref"].split("{", 1)[0]
        assert ref in bullet and re.search(r"#\d+", bullet), bullet
    # no other claim listed above the fold
    above = _above_fold(markdown)
    listed = [c for c in texts.values() if f"- {commonmark(c)}" in above]
    assert len(listed) == len(keys), listed
    # every confirmed fact still there, in the fold, numbered, with its evidence
    fold = _fold(markdown)
    allowed = [c for c in document.claims if c.allowed]
    assert f"<summary>{words.all_facts.format(count=len(allowed))}</summary>" in fold
    numbered = [line for line in fold.split("\n") if re.match(r"\d+\. ", line)]
    assert [n.split(". ", 1)[1] for n in numbered] == [
        commonmark(c.claim_text or "") + ("（{}）" if lang == "zh" else " ({})").format(words.labels[c.verification])
        for c in allowed
        if c.verification
    ]
    assert markdown.count("<details>") == markdown.count(FOLD_CLOSE) == 1
    assert markdown.index(FOLD_CLOSE) < markdown.index(f"]({SETTINGS.delivery.workbench_url}")
    # the stored session (``deliver``, ``/sessions/{id}/answer.md``) renders the same
    session = demo.store.get_session(result.session_id)
    stored = stored_document(session, demo.engine)
    assert stored is not None and _markdown(stored, question, lang) == markdown


def test_a_stored_session_without_a_ranking_renders_its_first_facts(demo: Any) -> None:
    """Sessions stored before the answer's shape have no ``key_facts``, ``gap_lines`` (nor a
    scope, before that): their Markdown lists the first five allowed facts, every fact in the
    fold, each gap once."""
    question = "订单123支付失败，帮我看看是什么原因"
    result = demo.pipeline.run(question)
    session = demo.store.get_session(result.session_id)
    stored = readable(session.self_evaluation)
    composer_input = stored["verifier_evaluation"]["composer_input"]
    old_input = {k: v for k, v in composer_input.items() if k not in ("key_facts", "gap_lines")}
    old = SessionRecord.model_validate(
        {
            **session.model_dump(),
            "self_evaluation": {
                **stored,
                "verifier_evaluation": {**stored["verifier_evaluation"], "composer_input": old_input},
            },
        }
    )
    document = stored_document(old, demo.engine)
    assert document is not None
    allowed = [c.claim_id for c in document.claims if c.allowed]
    assert document.key_facts == allowed[:MAX_KEY_FACTS]
    markdown = _markdown(document, question, "zh")
    keys = _section(_above_fold(markdown), report_words()["zh"].key_facts)
    texts = {c.claim_id: c.claim_text or "" for c in document.claims}
    assert [k.split("（证据", 1)[0] for k in keys] == [f"- {commonmark(texts[i])}" for i in allowed[:MAX_KEY_FACTS]]
    assert len(re.findall(r"^\d+\. ", _fold(markdown), re.M)) == len(allowed)
    # an ``ask --json`` document of an older version: no scope, key facts or gap lines at all
    printed = document.model_dump(mode="json")
    older = AnswerDocument.model_validate(
        {k: v for k, v in printed.items() if k not in ("scope", "key_facts", "gap_lines")}
    )
    assert older.key_facts is None and older.gap_lines == []
    again = _markdown(older, question, "zh")
    assert _lines(again)[1] == f"**{commonmark(' '.join(older.headline.split()))}**"
    assert len(_section(_above_fold(again), report_words()["zh"].key_facts)) == MAX_KEY_FACTS


def test_gaps_are_the_answers_lines_and_no_need_is_said_twice() -> None:
    document = AnswerDocument(
        session_id="s-1",
        verdict="LOW_CONFID",
        final_answer="Time window: 10:00 – 11:00.\n\nCannot tell — no cause confirmed.",
        answer_source="template",
        claims=[],
        hypotheses=[AllowedHypothesis(hypothesis_text="slow SQL", needed_evidence=["check slow log"])],
        missing_info=[f"{s} has no logs during 10:00–11:00" for s in ("gateway", "redis")],
        recommended_actions=[ActionItem(action_text="check slow log"), ActionItem(action_text="page the DBA")],
        gatekeeper=None,
        rounds=1,
        engine={},
        status="completed",
        error=None,
        scope="Time window: 10:00 – 11:00.",
        key_facts=[],
        gap_lines=["gateway, redis have no logs during 10:00–11:00"],
    )
    markdown = _markdown(document, "why?", "en")
    words = report_words()["en"]
    assert _lines(markdown)[1] == "**Cannot tell — no cause confirmed.**"
    assert _section(markdown, words.gaps) == ["- gateway, redis have no logs during 10:00–11:00"]
    assert _section(markdown, words.next_steps) == ["- page the DBA"]  # the need is said under its hypothesis
    assert markdown.count("check slow log") == 1 and "<details>" not in markdown  # no fact: no fold


# -- any report, any limit --------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=120)


@st.composite
def reports(draw: st.DrawFn) -> AnswerReport:
    count = draw(st.integers(0, 30))
    facts = [
        ReportFact(
            claim_id=f"c{i}",
            text=draw(_text),
            verification=draw(st.sampled_from(["direct_observation", "reasonable_inference", None])),
            evidence=[
                ReportEvidence(invocation_id=draw(st.integers(1, 99)), tool_name="query_logs", excerpt=draw(_text))
                for _ in range(draw(st.integers(0, 2)))
            ],
        )
        for i in range(count)
    ]
    ids = [f.claim_id for f in facts]
    return AnswerReport(
        session_id="s-1",
        question=draw(_text),
        lang=draw(st.sampled_from(["zh", "en"])),
        status="completed",
        verdict=draw(st.sampled_from(["PASS", "LOW_CONFID", "REJECT", None])),
        summary=draw(_text),
        facts=facts,
        hypotheses=[ReportHypothesis(text=draw(_text), needs=draw(st.lists(_text, max_size=2))) for _ in range(3)],
        gaps=draw(st.lists(_text, max_size=4)),
        next_steps=draw(st.lists(_text, max_size=4)),
        link="https://veridiag.example.com/sessions/s-1",
        first_line=draw(_text | st.just("")),
        key_facts=(draw(st.permutations(ids)) if ids else [])[: draw(st.integers(0, MAX_KEY_FACTS))],
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reports(), st.one_of(st.none(), st.integers(200, 6000)))
def test_any_report_keeps_its_shape_and_its_fold_closed_within_any_limit(
    report: AnswerReport, size: int | None
) -> None:
    limit = None if size is None else Limit(size, "bytes")
    markdown = render_markdown(report, limit)
    assert markdown.startswith("**") and markdown.endswith(f"({report.link})")
    assert markdown.count("<details>") == markdown.count(FOLD_CLOSE) <= 1
    if limit is not None:
        assert limit.fits(markdown), (len(markdown.encode()), size)
        return
    words = report_words()[report.lang]
    keys = _section(_above_fold(markdown), words.key_facts)
    assert len(keys) == len(report.key_facts) <= MAX_KEY_FACTS
    if report.first_line:
        assert _lines(markdown)[1] == f"**{commonmark(report.first_line)}**"
    if report.facts:
        fold = _fold(markdown)
        assert len(re.findall(r"^\d+\. ", fold, re.M)) >= len(report.facts)
        for fact in report.facts:
            assert commonmark(fact.text) in fold
    else:
        assert "<details>" not in markdown
