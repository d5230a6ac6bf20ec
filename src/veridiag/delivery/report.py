"""A finished session as a report, and the report as an outline every destination renders.

``build_report`` reads the answer document the pipeline already made (``ask --json``), so no
fact is derived again: facts are the claims the verifier allowed, with the bindings the
Executor cited; hypotheses, gaps and next steps are the composer input's. The whole report
then passes the configured redactor — the one the tool boundary uses — so nothing a user or a
model wrote around the evidence can carry a secret into chat.

``outline`` words the report once (``words.yaml``, zh/en) for the Markdown rendering and for
Slack's Block Kit, so the two say the same things in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from veridiag.config import Settings
from veridiag.contracts.answer import AnswerDocument
from veridiag.contracts.composer import ComposerInput
from veridiag.contracts.delivery import AnswerReport, ReportEvidence, ReportFact, ReportHypothesis
from veridiag.contracts.invocation import InvocationRecord
from veridiag.delivery.answer import Ranking, confirming_needs, culprit_trend, first_line, rank_facts, trend_invocation
from veridiag.redaction import Redactor, build_redactor
from veridiag.text.wordfiles import AnyOf, Bilingual, Word, WordModel, bundled_words

#: An excerpt longer than this is cut (with "…") where it is shown; the workbench has it whole.
EXCERPT_CHARS = 300


class ReportWords(WordModel):
    verdicts: dict[str, Word]
    failed: Word
    question: Word
    facts: Word
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
    quiet: AnyOf


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
    composer_input: ComposerInput | None = None,
    invocations: Mapping[int, InvocationRecord] | None = None,
) -> AnswerReport:
    """The report of one session, redacted. Only allowed claims become facts; the others are
    only counted. ``composer_input`` types the claims the key facts are ranked by (without it
    they keep the document's order); ``invocations`` holds the metrics invocations the facts
    cite (``trend_invocation``), whose series a chat message draws."""
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
    line = first_line(document, composer_input)
    ranking = Ranking(
        claims={c.claim_id: c for c in composer_input.allowed_claims} if composer_input is not None else {},
        first_line=line,
        quiet=report_words()[lang].quiet,
    )
    trend_id = trend_invocation(facts, ranking)
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
        gaps=document.missing_info,
        next_steps=[action.action_text for action in document.recommended_actions],
        unconfirmed=sum(1 for claim in document.claims if not claim.allowed),
        link=link,
        first_line=line,
        key_facts=rank_facts(facts, ranking),
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
    composer_input: ComposerInput | None = None,
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
        composer_input=composer_input,
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
    """The report worded in its language, in the order every destination shows it."""

    title: str
    question_label: str
    colon: str
    question: str
    summary: str
    sections: tuple[Section, ...]
    notes: tuple[str, ...]
    more: str
    link_text: str
    link: str


def cut(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` in at most ``limit`` characters, "…" marking a cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def outline(report: AnswerReport) -> Outline:
    words = report_words()[report.lang]
    zh = report.lang == "zh"
    colon = "：" if zh else ": "
    verdict = words.verdicts.get(report.verdict or "", words.failed)
    facts = tuple(
        Item(
            fact.text + (("（{}）" if zh else " ({})").format(label) if label else ""),
            tuple(Evidence(_ref(e), cut(" ".join(e.excerpt.split()))) for e in fact.evidence),
            number=index,
        )
        for index, fact in enumerate(report.facts, 1)
        for label in [words.labels.get(fact.verification or "")]
    )
    hypotheses = tuple(
        Item(
            f"{words.hypothesis}{colon}{h.text}"
            + (f" — {words.needs}{colon}{('；' if zh else '; ').join(h.needs)}" if h.needs else "")
        )
        for h in report.hypotheses
    )
    sections = (
        Section(words.facts, facts),
        Section(words.hypotheses, hypotheses),
        Section(words.gaps, tuple(Item(gap) for gap in report.gaps)),
        Section(words.next_steps, tuple(Item(step) for step in report.next_steps)),
    )
    return Outline(
        title=f"{report.verdict or 'FAILED'} · {verdict}",
        question_label=words.question,
        colon=colon,
        question=report.question,
        summary=report.summary,
        sections=tuple(section for section in sections if section.items),
        notes=(words.unconfirmed.format(count=report.unconfirmed),) if report.unconfirmed else (),
        more=words.more,
        link_text=words.open.format(session_id=report.session_id),
        link=report.link,
    )


def _ref(evidence: ReportEvidence) -> str:
    where = f"#{evidence.invocation_id}" if evidence.invocation_id is not None else "#?"
    return f"{where} {evidence.tool_name or ''}".strip()
