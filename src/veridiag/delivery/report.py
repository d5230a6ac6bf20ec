"""A finished session as a report, and the report as an outline every destination renders.

``build_report`` reads the answer document the pipeline already made (``ask --json``), so no
fact is derived again: facts are the claims the verifier allowed, with the bindings the
Executor cited; the one-line answer, the key facts (their order), hypotheses, gaps and next
steps are the answer's own (``delivery/answer.py``). The whole report then passes the
configured redactor — the one the tool boundary uses — so nothing a user or a model wrote
around the evidence can carry a secret into chat.

``outline`` words the report once (``words.yaml``, zh/en) in the answer's shape (issue 28) for
the Markdown rendering: the verdict and the one-line answer, the question and scope, at most
five key facts each with its evidence reference, hypotheses with what would confirm each, next
steps, gaps one line per kind — then every confirmed fact with its evidence, folded. The compact
chat message (``compact.py``) reads the same key facts, hypotheses and steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from veridiag.agents.template import template_phrases, worded_fact
from veridiag.config import Settings
from veridiag.contracts.answer import AnswerDocument
from veridiag.contracts.delivery import AnswerReport, ReportEvidence, ReportFact, ReportHypothesis
from veridiag.contracts.invocation import InvocationRecord
from veridiag.delivery.answer import (
    confirming_needs,
    culprit_trend,
    first_line,
    fresh_steps,
    key_fact_ids,
    trend_invocation,
)
from veridiag.redaction import Redactor, build_redactor
from veridiag.text.wordfiles import Bilingual, Word, WordModel, bundled_words

#: An excerpt longer than this is cut (with "…") where it is shown; the workbench has it whole.
EXCERPT_CHARS = 300


class ReportWords(WordModel):
    verdicts: dict[str, Word]
    failed: Word
    question: Word
    all_facts: Word
    hypotheses: Word
    hypothesis: Word
    needs: Word
    gaps: Word
    next_steps: Word
    unconfirmed: Word
    more: Word
    open: Word
    labels: dict[str, Word]
    no_answer: Word
    key_facts: Word
    more_facts: Word
    more_hypotheses: Word
    more_gaps: Word
    trend: Word


class _WordFile(Bilingual[ReportWords]):
    pass


@lru_cache(maxsize=1)
def report_words() -> _WordFile:
    """``words.yaml``, read once."""
    return bundled_words("veridiag.delivery", "words.yaml", _WordFile)


def session_link(workbench_url: str, session_id: str, lang: str) -> str:
    return f"{workbench_url.rstrip('/')}/sessions/{session_id}?lang={lang}"


def build_report(
    document: AnswerDocument,
    *,
    question: str,
    lang: Literal["zh", "en"],
    link: str,
    redactor: Redactor,
    invocations: Mapping[int, InvocationRecord] | None = None,
) -> AnswerReport:
    """The report of one session, redacted. Only allowed claims become facts; the others are
    only counted. The key facts are the answer's (``AnswerDocument.key_facts``, in its order);
    ``invocations`` holds the metrics invocations the facts cite (``trend_invocation``), whose
    series a chat message draws."""
    facts = [
        ReportFact(
            claim_id=claim.claim_id or "",
            text=claim.claim_text or "",
            verification=claim.verification,
            evidence=[
                ReportEvidence(invocation_id=e.invocation_id, tool_name=e.tool_name, excerpt=e.excerpt)
                for e in claim.evidence
                if e.excerpt
            ],
        )
        for claim in document.claims
        if claim.allowed and claim.claim_text
    ]
    confirmed = [fact.text for fact in facts if fact.verification == "direct_observation"]
    needs = confirming_needs([(h.hypothesis_text, h.needed_evidence) for h in document.hypotheses], confirmed)
    key_facts = key_fact_ids(document, facts)
    trend_id = trend_invocation(facts, key_facts)
    report = AnswerReport(
        session_id=document.session_id,
        question=question,
        lang=lang,
        status=document.status,
        verdict=document.verdict,
        summary=_summary(document),
        facts=facts,
        hypotheses=[
            ReportHypothesis(text=h.hypothesis_text, needs=shown)
            for h, shown in zip(document.hypotheses, needs, strict=True)
        ],
        gaps=document.gap_lines or list(dict.fromkeys(document.missing_info)),
        next_steps=[action.action_text for action in document.recommended_actions],
        unconfirmed=sum(1 for claim in document.claims if not claim.allowed),
        link=link,
        first_line=first_line(document),
        key_facts=key_facts,
        trend=culprit_trend((invocations or {}).get(trend_id)) if trend_id is not None else None,
    )
    return redactor.redact_data(report)


def _summary(document: AnswerDocument) -> str:
    """The answer's scope line, then the headline built from the allowed claims: what a chat
    reader sees before the list. The headline is the pipeline's own (every fact in it is an
    allowed claim's), whatever wording a model composer chose for its answer."""
    scope = document.final_answer.strip().split("\n\n", 1)[0]
    return f"{scope}\n\n{document.headline}" if document.headline and document.headline != scope else scope


def session_report(
    settings: Settings,
    document: AnswerDocument,
    question: str,
    lang: Literal["zh", "en"],
    *,
    invocations: Mapping[int, InvocationRecord] | None = None,
) -> AnswerReport:
    """The report every destination and ``ask --format markdown`` show, with the configured
    workbench link and redaction."""
    link = session_link(settings.delivery.workbench_url, document.session_id, lang)
    return build_report(
        document,
        question=question,
        lang=lang,
        link=link,
        redactor=build_redactor(settings),
        invocations=invocations,
    )


@dataclass(frozen=True)
class Evidence:
    ref: str
    excerpt: str


@dataclass(frozen=True)
class Item:
    text: str
    evidence: tuple[Evidence, ...] = ()
    #: Facts are numbered, so a reply in chat can name one.
    number: int | None = None


@dataclass(frozen=True)
class Section:
    title: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Outline:
    """The report worded in its language, in the order the Markdown shows it: the answer's shape,
    then every confirmed fact in ``fold``."""

    title: str
    first_line: str
    question_label: str
    colon: str
    question: str
    scope: str
    sections: tuple[Section, ...]
    fold: Section | None
    notes: tuple[str, ...]
    more: str
    link_text: str
    link: str


def cut(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` in at most ``limit`` characters, "…" marking a cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def scope(report: AnswerReport) -> str:
    """The answer's scope line: the summary's first paragraph."""
    return report.summary.split("\n\n", 1)[0]


def key_facts(report: AnswerReport) -> list[ReportFact]:
    """The facts listed after the first line, in the answer's order (``AnswerReport.key_facts``)."""
    by_id = {fact.claim_id: fact for fact in report.facts}
    return [by_id[claim_id] for claim_id in report.key_facts if claim_id in by_id]


def hypothesis_line(hypothesis: ReportHypothesis, lang: str) -> str:
    """A hypothesis, labelled, with what would confirm it."""
    words = report_words()[lang]
    zh = lang == "zh"
    colon = "：" if zh else ": "
    needs = ("；" if zh else "; ").join(hypothesis.needs)
    return f"{words.hypothesis}{colon}{hypothesis.text}" + (f" — {words.needs}{colon}{needs}" if needs else "")


def steps_shown(report: AnswerReport, hypotheses: Sequence[ReportHypothesis]) -> list[str]:
    """The next steps to list beside ``hypotheses``: none that is a need one of them shows."""
    return fresh_steps(report.next_steps, (need for h in hypotheses for need in h.needs))


def fact_label(fact: ReportFact, lang: str, limit: int | None = None) -> str:
    """The fact (cut to ``limit``) with how the Verifier labelled it: "…（直接观察）" / "… (observed)"."""
    label = report_words()[lang].labels.get(fact.verification or "")
    text = fact.text if limit is None else cut(fact.text, limit)
    return text + (("（{}）" if lang == "zh" else " ({})").format(label) if label else "")


def outline(report: AnswerReport) -> Outline:
    words = report_words()[report.lang]
    zh = report.lang == "zh"
    phrases = template_phrases()[report.lang]
    verdict = words.verdicts.get(report.verdict or "", words.failed)
    key = tuple(Item(worded_fact(fact.text, fact.verification, _refs(fact), phrases)) for fact in key_facts(report))
    every = tuple(
        Item(
            fact_label(fact, report.lang),
            tuple(Evidence(evidence_ref(e), cut(" ".join(e.excerpt.split()))) for e in fact.evidence),
            number=index,
        )
        for index, fact in enumerate(report.facts, 1)
    )
    sections = (
        Section(words.key_facts, key),
        Section(words.hypotheses, tuple(Item(hypothesis_line(h, report.lang)) for h in report.hypotheses)),
        Section(words.next_steps, tuple(Item(step) for step in steps_shown(report, report.hypotheses))),
        Section(words.gaps, tuple(Item(gap) for gap in report.gaps)),
    )
    return Outline(
        title=f"{report.verdict or 'FAILED'} · {verdict}",
        first_line=report.first_line,
        question_label=words.question,
        colon="：" if zh else ": ",
        question=report.question,
        scope=scope(report),
        sections=tuple(section for section in sections if section.items),
        fold=Section(words.all_facts.format(count=len(every)), every) if every else None,
        notes=(words.unconfirmed.format(count=report.unconfirmed),) if report.unconfirmed else (),
        more=words.more,
        link_text=words.open.format(session_id=report.session_id),
        link=report.link,
    )


def _refs(fact: ReportFact) -> list[str]:
    """The invocations a fact cites, as "#8", each once."""
    return list(dict.fromkeys(f"#{e.invocation_id}" for e in fact.evidence if e.invocation_id is not None))


def evidence_ref(evidence: ReportEvidence) -> str:
    """Where a piece of evidence was seen: "#8 query_metrics"."""
    where = f"#{evidence.invocation_id}" if evidence.invocation_id is not None else "#?"
    return f"{where} {evidence.tool_name or ''}".strip()
