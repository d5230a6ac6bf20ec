"""A finished session as it is posted to chat (``veridiag.delivery``), and what each posting
attempt did. The report is built from the answer document the pipeline already produced
(``AnswerDocument``): nothing in it is derived again, and only claims the verifier allowed are
facts."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from veridiag.contracts.build import ON_FIRST_USE
from veridiag.contracts.json import JsonValue


class ReportEvidence(BaseModel):
    """One place a fact rests on: the invocation, its tool and the excerpt quoted from it."""

    model_config = ON_FIRST_USE

    invocation_id: int | None
    tool_name: str | None
    excerpt: str


class ReportFact(BaseModel):
    """An allowed claim, with how the verifier labelled it."""

    model_config = ON_FIRST_USE

    claim_id: str
    text: str
    verification: str | None
    evidence: list[ReportEvidence] = Field(default_factory=list)


class ReportHypothesis(BaseModel):
    """Not confirmed: shown as a hypothesis, with the evidence it still needs."""

    model_config = ON_FIRST_USE

    text: str
    needs: list[str] = Field(default_factory=list)


class ReportTrend(BaseModel):
    """The culprit's metric series, drawn as a text sparkline where no image can go: the
    points the cited invocation's stored output lists, in order (finite values only)."""

    model_config = ON_FIRST_USE

    invocation_id: int
    service: str
    metric: str
    unit: str = ""
    values: list[float] = Field(default_factory=list)


class AnswerReport(BaseModel):
    """What every destination shows, in the answer's shape (issue 28): the verdict with
    ``first_line``, the ``key_facts`` (at most five, in the answer's order), hypotheses
    (labelled), next steps, gaps one line per kind, every confirmed fact with its evidence, and
    the session's workbench link. A chat message shows the compact form (with the ``trend``);
    the whole report stays one click away."""

    model_config = ON_FIRST_USE

    session_id: str
    question: str
    lang: Literal["zh", "en"]
    status: str
    verdict: str | None
    #: The answer's scope line, then the headline (paragraphs): a webhook's plain summary.
    summary: str
    facts: list[ReportFact] = Field(default_factory=list)
    hypotheses: list[ReportHypothesis] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list)
    next_steps: list[str] = Field(default_factory=list)
    #: Claims the session did not confirm: counted, never shown as facts.
    unconfirmed: int = 0
    link: str
    #: The one-line answer every rendering opens with, after the verdict badge.
    first_line: str = ""
    #: The claim ids of the key facts, in the answer's order (at most five); the rest are listed
    #: only in full (the Markdown's fold, the workbench).
    key_facts: list[str] = Field(default_factory=list)
    trend: ReportTrend | None = None


DeliveryOutcome = Literal["delivered", "retrying", "failed"]


class DeliveryAttempt(BaseModel):
    """One HTTP attempt to post a session to one destination, as the session keeps it:
    ``retrying`` — it failed and another attempt follows; ``failed`` — the last one failed."""

    model_config = ON_FIRST_USE

    destination: str
    kind: str
    attempt: int = Field(ge=1)
    at: datetime
    outcome: DeliveryOutcome
    status_code: int | None = None
    error: str | None = None
    latency_ms: float = 0.0


def read_attempts(records: Iterable[JsonValue]) -> tuple[list[DeliveryAttempt], int]:
    """The stored attempts that still read, and how many do not: a record a later version or a
    hand edit broke is counted where it is shown (audit, workbench), never a crash."""
    attempts, unreadable = [], 0
    for record in records:
        try:
            attempts.append(DeliveryAttempt.model_validate(record))
        except ValidationError:
            unreadable += 1
    return attempts, unreadable
