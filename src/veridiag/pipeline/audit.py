"""The audit chain (docs/spec §13.2, §23): ``diagnosis_session.self_evaluation.verifier_evaluation``
and, for ``veridiag audit``, the walk from the final answer back to the tool invocations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from veridiag.contracts.audit import (
    AuditChain,
    AuditedComposer,
    AuditedExecutor,
    AuditedGatekeeper,
    AuditedVerifier,
    RoleCall,
    RoundRecord,
    SelfEvaluation,
    UsageTotals,
    VerifierEvaluationRecord,
)
from veridiag.contracts.composer import ComposerInput, ComposerOutput, GuardResult
from veridiag.contracts.json import json_object
from veridiag.store import SessionStore

if TYPE_CHECKING:
    from veridiag.pipeline.service import RoundState


def round_record(state: RoundState) -> RoundRecord:
    """One Executor + Verifier round, as audited."""
    report = state.hook.report
    evaluation = state.evaluation
    record = RoundRecord(
        round=state.round,
        executor_raw_output=state.raw_output,
        executor_output_parse_status=state.hook.parsed.status,
        executor_structured_output=None,
        tool_trace_summary=state.hook.trace_summary,
        gatekeeper_result=report.result if report else None,
        gatekeeper_trace=report.claim_traces if report else None,
        gatekeeper_failed_rule_impacts=report.failed_rule_impacts if report else None,
        gatekeeper_timings_ms=report.timings_ms if report else None,
        verifier_status=state.parsed_verifier.status,
        verifier_detail=state.parsed_verifier.detail,
        verifier_problems=state.parsed_verifier.problems,
        verdict=evaluation.verdict,
        verifier_verdict=evaluation.verifier_verdict,
        corrections=evaluation.corrections,
        latency_ms=state.latency_ms,
    )
    record.executor_structured_output = state.hook.structured  # set as it is: see ``self_evaluation``
    return record


def self_evaluation(
    rounds: list[RoundState],
    *,
    composer_input: ComposerInput,
    output: ComposerOutput,
    source: str,
    guard: GuardResult | None,
    reason: str,
    options: BaseModel,
    timings: dict[str, float],
    role_calls: list[RoleCall] | None = None,
    withheld: Sequence[str] = (),
) -> SelfEvaluation:
    final = rounds[-1]
    evaluation = final.evaluation
    report = final.hook.report
    verifier_evaluation = VerifierEvaluationRecord(
        verdict=evaluation.verdict,
        groundedness_score=evaluation.groundedness_score,
        critical_fact_count=sum(1 for fact in evaluation.facts_checked if fact.is_critical),
        claim_checks=evaluation.claim_checks,
        facts_checked=evaluation.facts_checked,
        hypothesis_checks=evaluation.hypothesis_checks,
        rationale=evaluation.rationale,
        round=final.round,
        executor_output_parse_status=final.hook.parsed.status,
        executor_structured_output=None,
        tool_trace_summary=final.hook.trace_summary,
        gatekeeper_result=report.result if report else None,
        composer_output=output,
        composer_input=composer_input,
        composer_guard=guard,
        composer_withheld=list(withheld),
        answer_source=source,
        answer_source_reason=reason,
        verifier_verdict=evaluation.verifier_verdict,
        verifier_status=evaluation.verifier_status,
        corrections=evaluation.corrections,
        switches=options.model_dump(),
    )
    # The parser's JSON, set as it is (as the hook's payload): validated again as JsonValue it
    # cost ~0.17 ms a record, walking every node of the reply to copy it (measured).
    verifier_evaluation.executor_structured_output = final.hook.structured
    return SelfEvaluation(
        verifier_evaluation=verifier_evaluation,
        rounds=[round_record(state) for state in rounds],
        timings_ms=timings,
        role_calls=role_calls or [],
        usage=UsageTotals.over(role_calls or []),
    )


def audit_chain(store: SessionStore, session_id: str) -> AuditChain | None:
    """Final answer → composer → verifier → gatekeeper → invocations, for one session.

    The stored columns are shown as they were written, so a session kept by an older version (or
    a failed one, which has no record) reads as it is."""
    session = store.get_session(session_id)
    if session is None:
        return None
    stored = session.self_evaluation or {}
    evaluation = json_object(stored.get("verifier_evaluation"))
    rounds = stored.get("rounds") or []
    final_round = json_object(rounds[-1]) if isinstance(rounds, list) and rounds else {}
    return AuditChain(
        session=session,
        final_answer=session.final_answer,
        answer_source=evaluation.get("answer_source"),
        composer=AuditedComposer(
            input=evaluation.get("composer_input"),
            output=evaluation.get("composer_output"),
            guard=evaluation.get("composer_guard"),
            reason=evaluation.get("answer_source_reason"),
        ),
        verifier=AuditedVerifier.model_validate(evaluation),
        gatekeeper=AuditedGatekeeper(
            result=evaluation.get("gatekeeper_result"), trace=final_round.get("gatekeeper_trace")
        ),
        executor=AuditedExecutor(
            parse_status=evaluation.get("executor_output_parse_status"),
            structured_output=evaluation.get("executor_structured_output"),
        ),
        rounds=rounds,
        invocations=store.list_invocations(session_id),
        failed_at=stored.get("failed_at"),
        timings_ms=stored.get("timings_ms") or {},
        role_calls=stored.get("role_calls") or [],
        usage=stored.get("usage") or {},
    )
