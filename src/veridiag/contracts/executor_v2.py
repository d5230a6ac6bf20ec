"""The Executor evidence contract V2 (docs/spec §2–§8).

The Executor returns structured diagnosis material only — never user-facing prose.
These models mirror the spec field for field; the JSON Schema exported from them is
committed under ``schemas/`` so other stacks can validate the same contract.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

ANSWER_VERSION = "executor_evidence_v2"
#: Fields V1 had and V2 removed (docs/spec §8): they tempt the Executor into writing a story.
REMOVED_FIELDS = ("diagnosis_summary", "user_facing_answer")
#: Optional arrays the Gatekeeper normalises to ``[]`` before the Verifier sees them (docs/spec §11.1).
OPTIONAL_ARRAYS = ("hypotheses", "recommended_actions", "missing_info")

SupportLevel = Literal["direct", "indirect"]


class _Contract(BaseModel):
    # Unknown fields are tolerated (forward compatible); the removed V1 fields are
    # rejected by the Gatekeeper's schema rule, not by the model.
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class EvidenceBinding(_Contract):
    """One pointer from a claim to the tool invocations that support it (docs/spec §5)."""

    source_type: str = Field(min_length=1, description="Evidence source type, e.g. `tool_trace`.")
    source_id: str | None = Field(
        default=None, description="Evidence block id or trace_ref; informational, not a hard check."
    )
    tool_name: str = Field(min_length=1, description="Name of the tool that produced the evidence.")
    source_invocation_ids: list[StrictInt] = Field(
        description="`tool_invocation.id` values of this session that the excerpt comes from."
    )
    evidence_excerpt: str = Field(
        min_length=1, description="Verbatim quote, metric value or log fragment from the tool output."
    )


class Claim(_Contract):
    """A confirmed or bounded fact, each bound to evidence (docs/spec §4)."""

    claim_id: str = Field(min_length=1)
    claim_type: str = Field(min_length=1, description="e.g. symptom / root_cause / impact / risk.")
    claim_text: str = Field(min_length=1)
    support_level: SupportLevel
    evidence_bindings: list[EvidenceBinding]
    answers: bool | None = Field(
        default=None,
        description="True: this claim answers what the question asked (the culprit, yes or no, the ranking, the "
        "onset, the count), and the answer's first sentence states it. Optional (beyond the spec).",
    )


class Hypothesis(_Contract):
    """A direction worth checking that the evidence does not confirm yet (docs/spec §6)."""

    hypothesis_text: str = Field(min_length=1)
    basis: str
    needed_evidence: list[str]


class RecommendedAction(_Contract):
    """A suggested next step (docs/spec §7); its bindings may be empty."""

    action_text: str = Field(min_length=1)
    reason: str
    evidence_bindings: list[EvidenceBinding] = Field(default_factory=list)


class ExecutorEvidenceV2(_Contract):
    """The whole Executor output (docs/spec §2–§3)."""

    answer_version: Literal["executor_evidence_v2"]
    claims: list[Claim]
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    recommended_actions: list[RecommendedAction] = Field(default_factory=list)
    missing_info: list[str] = Field(default_factory=list)
