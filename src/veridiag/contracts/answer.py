"""The answer as other programs see it: the one document ``veridiag ask --json`` prints and
``POST /api/v1/chat`` returns (its OpenAPI schema is ``ChatResponse``, this model)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from veridiag.contracts.audit import EngineUse, UsageTotals
from veridiag.contracts.composer import ActionItem, AllowedHypothesis
from veridiag.contracts.gatekeeper import GatekeeperResult


class EvidenceItem(BaseModel):
    invocation_id: int | None
    tool_name: str | None
    excerpt: str | None


class ClaimItem(BaseModel):
    claim_id: str | None
    claim_text: str | None
    verification: str | None
    allowed: bool
    evidence: list[EvidenceItem]


class AnswerDocument(BaseModel):
    session_id: str
    verdict: str | None
    final_answer: str
    answer_source: str
    claims: list[ClaimItem]
    hypotheses: list[AllowedHypothesis]
    missing_info: list[str]
    recommended_actions: list[ActionItem]
    gatekeeper: GatekeeperResult | None
    rounds: int
    engine: dict[str, str]
    engine_configured: dict[str, str] = Field(default_factory=dict)
    engines: dict[str, list[EngineUse]] = Field(
        default_factory=dict,
        description="Per role, what answered it in this session; after a fallback, which engine failed and why.",
    )
    status: str
    error: str | None
    usage: UsageTotals = Field(default_factory=UsageTotals)
    headline: str = Field(
        default="",
        description="What is wrong and its most likely cause, worded from the allowed claims only "
        "(the template answer opens with it); empty when nothing was confirmed.",
    )
    scope: str = Field(
        default="",
        description="The answer's first line: the time window and services examined (the answer starts with it); "
        "empty when the session has none.",
    )
    key_facts: list[str] | None = Field(
        default=None,
        description="The ids of the claims the answer lists as its key facts, in its order (at most five, ranked by "
        "what the question asked); null in a document that does not say (its first allowed claims are shown).",
    )
    gap_lines: list[str] = Field(
        default_factory=list,
        description="The gaps as the answer states them, one line per kind (`missing_info` holds every one).",
    )
