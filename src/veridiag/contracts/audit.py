"""What a session keeps of its diagnosis (docs/spec §13.2, §23): ``self_evaluation``, typed.

The pipeline builds these; the store keeps their JSON; ``veridiag audit`` and the workbench
read it back with ``SelfEvaluation.model_validate``. The Executor's structured output stays
JSON here on purpose: it is the record of what the Executor wrote, valid or not.
"""

from __future__ import annotations

from typing import Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_serializer, with_config
from typing_extensions import TypedDict

from veridiag.contracts.build import ON_FIRST_USE
from veridiag.contracts.composer import ComposerInput, ComposerOutput, GuardResult
from veridiag.contracts.gatekeeper import ClaimTrace, GatekeeperResult, VerdictImpact
from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.json import JsonObject
from veridiag.contracts.parsing import ParseStatus
from veridiag.contracts.session import SessionRecord
from veridiag.contracts.trace import ToolTraceEntry
from veridiag.contracts.verifier import ClaimCheck, Correction, FactChecked, HypothesisCheck, Verdict


class _Record(BaseModel):
    # Sessions stored by older versions may carry fields this one no longer writes.
    model_config = ConfigDict(extra="allow")


class RoundRecord(_Record):
    """One Executor + Gatekeeper + Verifier round. The final round's structured output and
    trace summary live in ``VerifierEvaluationRecord`` and are not repeated here."""

    round: int
    executor_raw_output: str | None = None
    executor_output_parse_status: ParseStatus
    executor_structured_output: JsonObject | None = None
    tool_trace_summary: list[ToolTraceEntry] | None = None
    gatekeeper_result: GatekeeperResult | None = None
    gatekeeper_trace: list[ClaimTrace] | None = None
    gatekeeper_failed_rule_impacts: dict[str, VerdictImpact] | None = None
    gatekeeper_timings_ms: dict[str, float] | None = None
    verifier_status: str
    verifier_detail: str = ""
    verifier_problems: list[str] = Field(default_factory=list)
    verdict: Verdict
    verifier_verdict: Verdict | None = None
    corrections: list[Correction] = Field(default_factory=list)
    latency_ms: dict[str, float] = Field(default_factory=dict)


class VerifierEvaluationRecord(_Record):
    """``self_evaluation.verifier_evaluation``: the docs/spec §23 fields, then what a reviewer needs."""

    verdict: Verdict
    groundedness_score: float
    critical_fact_count: int
    claim_checks: list[ClaimCheck] = Field(default_factory=list)
    facts_checked: list[FactChecked] = Field(default_factory=list)
    hypothesis_checks: list[HypothesisCheck] = Field(default_factory=list)
    rationale: str = ""
    round: int
    traceability_version: str = "v2"
    executor_output_parse_status: ParseStatus
    executor_structured_output: JsonObject | None = None
    tool_trace_summary: list[ToolTraceEntry] = Field(default_factory=list)
    gatekeeper_result: GatekeeperResult | None = None
    composer_output: ComposerOutput | None = None
    composer_input: ComposerInput | None = None
    composer_guard: GuardResult | None = None
    #: Free text kept from the Composer: it named facts the session's evidence does not hold.
    composer_withheld: list[str] = Field(default_factory=list)
    answer_source: str
    answer_source_reason: str = ""
    verifier_verdict: Verdict | None = None
    verifier_status: str = "ok"
    corrections: list[Correction] = Field(default_factory=list)
    #: The pipeline's switches as it dumped them (``PipelineOptions`` lives above the contracts).
    switches: JsonObject = Field(default_factory=dict)


class EngineUse(BaseModel):
    """Which engine answered one role call; ``fallback_from`` and ``reason`` say which engine
    was asked first and why it did not answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: str = Field(description="The engine that answered: offline, template, scripted or llm:<model>.")
    fallback_from: str | None = Field(default=None, description="The engine asked first, when it failed.")
    reason: str | None = Field(default=None, description="Why the engine asked first did not answer.")

    @property
    def label(self) -> str:
        """The one string form of this record (``offline (fallback)``), as ``ask`` and the audit
        have always shown it."""
        return self.engine if self.fallback_from is None else f"{self.engine} (fallback)"

    @property
    def failure(self) -> str | None:
        """Why the engine asked first did not answer, worded as ``usage.fallbacks`` carries it."""
        return None if self.fallback_from is None else f"{self.fallback_from} failed: {self.reason}"


class RefusedCall(TypedDict):
    """A tool call the model asked for and was not given: ``duplicate`` names the invocation
    to cite instead; ``budget`` means the call budget was spent."""

    tool: str
    reason: Literal["duplicate", "budget"]
    invocation_id: NotRequired[int]


@with_config(ConfigDict(extra="allow"))  # an engine may report more; stored sessions keep it
class EngineUsage(TypedDict, total=False):
    """What one role call cost, as its engine reports it. A key is present only when that engine
    knows it (the offline engine reports nothing), so the stored JSON keeps only what was said."""

    model: str | None
    attempts: int
    requests: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    finish_reason: str | None
    #: The executor's evidence tools: calls run, calls refused, the budget they had.
    tool_calls_run: int
    tool_calls_refused: list[RefusedCall]
    budget: int
    #: The model planner: what it proposed that was not taken (the draft's value stands).
    kept_from_draft: list[str]
    #: Sessions stored before ``EngineUse`` existed kept a fallback's failure here.
    fallback: str


class RoleCall(_Record):
    """One role call of a session: who answered (``engine_use``; ``engine`` its string form,
    kept for existing readers) and the engine's own usage report (tokens, cost, tool calls)."""

    role: str
    engine: str
    engine_use: EngineUse
    usage: EngineUsage = Field(default_factory=EngineUsage)
    round: int | None = None


class RoleUsage(_Record):
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


class FallbackRecord(_Record):
    role: str
    round: int | None = None
    reason: str | None = None
    fallback_from: str | None = None
    engine: str


class UsageTotals(_Record):
    """Tokens and cost per role over the session; ``fallbacks`` lists each call that fell back."""

    per_role: dict[str, RoleUsage] = Field(default_factory=dict)
    fallbacks: list[FallbackRecord] = Field(default_factory=list)

    @classmethod
    def over(cls, calls: list[RoleCall]) -> UsageTotals:
        totals = cls()
        for call in calls:
            usage = call.usage
            total = totals.per_role.setdefault(call.role, RoleUsage())
            total.input_tokens += int(usage.get("input_tokens") or 0)
            total.output_tokens += int(usage.get("output_tokens") or 0)
            cost = usage.get("cost_usd")
            if cost is not None:
                total.cost_usd = round((total.cost_usd or 0) + float(cost), 6)
            used = call.engine_use
            if used.fallback_from is not None:
                totals.fallbacks.append(
                    FallbackRecord(
                        role=call.role,
                        round=call.round,
                        reason=used.failure,
                        fallback_from=used.fallback_from,
                        engine=used.engine,
                    )
                )
        return totals


class SelfEvaluation(_Record):
    verifier_evaluation: VerifierEvaluationRecord
    rounds: list[RoundRecord]
    timings_ms: dict[str, float] = Field(default_factory=dict)
    role_calls: list[RoleCall] = Field(default_factory=list)
    usage: UsageTotals = Field(default_factory=UsageTotals)

    def stored(self) -> JsonObject:
        """The JSON the session row keeps: the final round without the copies §23 already holds."""
        final = {len(self.rounds) - 1: {"executor_structured_output", "tool_trace_summary"}} if self.rounds else {}
        data: JsonObject = self.model_dump(mode="json", exclude={"rounds": final})
        return data


class PartialRun(_Record):
    """What a failed run keeps: the stage it reached and everything recorded before it."""

    model_config = ON_FIRST_USE

    stage: str
    role_calls: list[RoleCall] = Field(default_factory=list)
    plan: JsonObject | None = None
    rounds: list[RoundRecord] = Field(default_factory=list)


class FailedEvaluation(_Record):
    """``self_evaluation`` of a failed session: no §23 record, where it stopped, what it had."""

    model_config = ON_FIRST_USE

    verifier_evaluation: None = None
    failed_at: str
    partial: PartialRun


# ``veridiag audit`` and ``GET /api/v1/sessions/{id}/audit``: the chain from the final answer back
# to the invocations. Each section shows the stored JSON as it was written — a session kept by an
# older version, or a failed one with no record, reads as it is — so the sections' members stay
# ``JsonValue`` (None where the session has none); the sections themselves are named and fixed.


class _AuditSection(BaseModel):
    # Every key is always written, so the OpenAPI document lists them all as present.
    model_config = ConfigDict(**ON_FIRST_USE, json_schema_serialization_defaults_required=True)


class AuditedComposer(_AuditSection):
    input: JsonValue = None
    output: JsonValue = None
    guard: JsonValue = None
    reason: JsonValue = None


class AuditedVerifier(_AuditSection):
    """The verifier's part of ``verifier_evaluation``, under the record's own names."""

    verdict: JsonValue = None
    verifier_verdict: JsonValue = None
    verifier_status: JsonValue = None
    groundedness_score: JsonValue = None
    claim_checks: JsonValue = None
    hypothesis_checks: JsonValue = None
    facts_checked: JsonValue = None
    rationale: JsonValue = None
    corrections: JsonValue = None
    round: JsonValue = None


class AuditedGatekeeper(_AuditSection):
    result: JsonValue = None
    #: The final round's claim traces (the rounds keep them; the evaluation record does not).
    trace: JsonValue = None


class AuditedExecutor(_AuditSection):
    parse_status: JsonValue = None
    structured_output: JsonValue = None


class AuditChain(_AuditSection):
    """Final answer → composer → verifier → gatekeeper → invocations, for one session; its JSON
    dump is what ``veridiag audit --json`` prints and the API returns, and reads back into it."""

    session: SessionRecord
    final_answer: str | None = None
    answer_source: JsonValue = None
    composer: AuditedComposer = Field(default_factory=AuditedComposer)
    verifier: AuditedVerifier = Field(default_factory=AuditedVerifier)
    gatekeeper: AuditedGatekeeper = Field(default_factory=AuditedGatekeeper)
    executor: AuditedExecutor = Field(default_factory=AuditedExecutor)
    rounds: JsonValue = Field(default_factory=list)
    invocations: list[InvocationRecord] = Field(default_factory=list)
    failed_at: JsonValue = None
    timings_ms: JsonValue = Field(default_factory=dict)
    role_calls: JsonValue = Field(default_factory=list)
    usage: JsonValue = Field(default_factory=dict)

    @field_serializer("session")
    def _session_as_shown(self, session: SessionRecord) -> JsonObject:
        """The row without what the chain shows elsewhere (the answer) or takes apart (the record)."""
        shown: JsonObject = session.model_dump(mode="json", exclude={"self_evaluation", "final_answer"})
        return shown
