"""The Composer's input (assembled by code from the verifier's judgement, docs/spec §19.2) and
output (§19.3). The Composer sees nothing else: no tool output, no raw Executor text."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from veridiag.contracts.verifier import ClaimVerification, Verdict


class AllowedClaim(BaseModel):
    claim_id: str
    claim_type: str
    claim_text: str
    verification: ClaimVerification = Field(description="direct_observation or reasonable_inference.")
    answers: bool = Field(default=False, description="It answers what the question asked: the answer opens with it.")
    #: Where it was seen: the invocations its evidence cites, as ``#<id>`` (a key fact names them).
    evidence_refs: list[str] = Field(default_factory=list)


class AllowedHypothesis(BaseModel):
    hypothesis_text: str
    needed_evidence: list[str] = Field(default_factory=list)
    #: Where it came from: the Executor's own hypotheses (``executor``), a root cause claim held
    #: back as not yet shown (``root_cause``), or another claim that said more than its evidence
    #: (``overstated``: a symptom stretched to "every request", a number no tool stated) — only
    #: the first two are causes a first line may name (None: an input built by hand).
    origin: Literal["executor", "root_cause", "overstated"] | None = None


class ActionItem(BaseModel):
    action_text: str
    reason: str = ""


class KnownGap(BaseModel):
    """A gap the pipeline knows from the session's own records, whatever the Executor wrote: a
    tool call that failed, a named service without data. Every answer states each one."""

    text: str
    #: What the gap is about (a tool, a service): an answer naming it beside gap wording states it.
    subject: str


class ComposerInput(BaseModel):
    original_query: str
    lang: Literal["zh", "en"] = "zh"
    verdict: Verdict
    allowed_claims: list[AllowedClaim] = Field(default_factory=list)
    allowed_hypotheses: list[AllowedHypothesis] = Field(default_factory=list)
    missing_info: list[str] = Field(default_factory=list)
    recommended_actions: list[ActionItem] = Field(default_factory=list)
    rationale: str = ""
    #: The time window and services examined, as one line; every answer starts with it.
    scope: str = ""
    #: What is wrong and its most likely cause, from the allowed claims (``pipeline/headline.py``);
    #: the answer opens with it, right after the scope line. Empty when no claim is allowed.
    headline: str = ""
    #: Gaps known from the records (also in ``missing_info``); the composer guard refuses an
    #: answer that leaves one out, on every verdict.
    known_gaps: list[KnownGap] = Field(default_factory=list)
    #: Codes, ids and names the evidence holds only in lines that assert or order (issue 27
    #: D4): an answer names them only inside one of ``quotations`` (the asserting text as an
    #: allowed claim quotes it) or quote marks — never as its own cause, headline or step.
    quoted_only: list[str] = Field(default_factory=list)
    quotations: list[str] = Field(default_factory=list)
    #: The answer's shape (issue 28): the ids of at most five allowed claims, ranked by what the
    #: question asked, listed after the first line — the rest stay in the full claim list;
    #: and the gaps merged, one line per kind (``pipeline/shape.py``). Both derived by code;
    #: ``key_facts`` None (an input built by hand): the first claims.
    key_facts: list[str] | None = None
    gap_lines: list[str] = Field(default_factory=list)


class ComposerOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    answer_summary: str = Field(min_length=1)
    recommended_actions: list[ActionItem] = Field(default_factory=list)
    user_facing_answer: str = Field(min_length=1)


class GuardResult(BaseModel):
    """The composer guard's finding: which rules a composed answer broke."""

    passed: bool
    violations: list[str] = Field(default_factory=list)
    #: The ids of the registered checks that found something (``pipeline/composer_guard.py``);
    #: any of them sends the answer back to the template.
    failed_checks: list[str] = Field(default_factory=list)


AnswerSource = Literal["composer", "template"]
