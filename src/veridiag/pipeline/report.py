"""The answer as other programs see it: one stable document for the CLI and the HTTP API."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

from pydantic import ValidationError

from veridiag.agents.template import gap_lines, key_claims
from veridiag.contracts.answer import AnswerDocument, ClaimItem, EvidenceItem
from veridiag.contracts.audit import EngineUse, RoleCall, SelfEvaluation, UsageTotals
from veridiag.contracts.json import JsonValue, json_object
from veridiag.contracts.material import ExecutorMaterial
from veridiag.contracts.session import SessionRecord
from veridiag.pipeline.service import FAILURE_ANSWER, DiagnosisResult

#: A role this session never called (the Verifier skipped on unusable output, a composer
#: switched off): nothing of it answered.
NOT_RUN = "not run"


def engines_used(role_calls: list[RoleCall], configured: dict[str, str]) -> dict[str, list[EngineUse]]:
    """Per role, what answered it in this session (each distinct record once, in order): the
    engine, and after a fallback the engine that failed and why. A role never called has none."""
    roles = dict.fromkeys([*configured, *(call.role for call in role_calls)])
    used: dict[str, list[EngineUse]] = {role: [] for role in roles}
    for call in role_calls:
        if call.engine_use not in used[call.role]:
            used[call.role].append(call.engine_use)
    return used


def engine_labels(used: dict[str, list[EngineUse]]) -> dict[str, str]:
    """``engines_used`` as one string per role (``offline (fallback)``; rounds that differ
    joined in order, ``not run`` for a role never called)."""
    return {role: ", ".join(dict.fromkeys(u.label for u in uses)) or NOT_RUN for role, uses in used.items()}


def answer_document(result: DiagnosisResult, engine: dict[str, str]) -> AnswerDocument:
    """The stable answer document of ``veridiag ask --json`` and ``POST /api/v1/chat``.

    ``engines`` records what answered each role in this session (fallbacks included: which
    engine failed and why), ``engine`` says the same in one string per role,
    ``engine_configured`` what the settings asked for. A failed run has no record: its role
    calls come from what it kept before failing. ``scope``, ``key_facts`` and ``gap_lines`` are
    the answer's shape as its composer input holds it (issue 28): every rendering of the answer
    (the terminal, ``--format markdown``, chat) lists the same key facts in the same order — an
    input stored without a ranking gives its first allowed claims, as the template lists them."""
    completed = result.record
    role_calls = completed.role_calls if completed else _partial_calls(result.self_evaluation)
    used = engines_used(role_calls, engine)
    evaluation = completed.verifier_evaluation if completed else None
    composer_input = evaluation.composer_input if evaluation else None
    labels = {c.claim_id: c.verification for c in evaluation.claim_checks} if evaluation else {}
    allowed = {c.claim_id for c in composer_input.allowed_claims} if composer_input else set()
    material = ExecutorMaterial.read(evaluation.executor_structured_output if evaluation else None)
    claims = [
        ClaimItem(
            claim_id=claim.claim_id,
            claim_text=claim.claim_text,
            verification=labels.get(claim.claim_id),
            allowed=claim.claim_id in allowed,
            evidence=[
                EvidenceItem(invocation_id=i, tool_name=b.tool_name, excerpt=b.evidence_excerpt)
                for b in claim.bindings
                for i in b.source_invocation_ids
            ],
        )
        for claim in material.claims
    ]
    return AnswerDocument(
        session_id=result.session_id,
        verdict=result.verdict,
        final_answer=result.answer,
        answer_source=result.answer_source,
        claims=claims,
        hypotheses=composer_input.allowed_hypotheses if composer_input else [],
        missing_info=composer_input.missing_info if composer_input else [],
        recommended_actions=composer_input.recommended_actions if composer_input else [],
        gatekeeper=evaluation.gatekeeper_result if evaluation else None,
        rounds=result.rounds,
        engine=engine_labels(used),
        engine_configured=dict(engine),
        engines=used,
        status=result.status,
        error=result.error,
        usage=completed.usage if completed else UsageTotals.over(role_calls),
        headline=composer_input.headline if composer_input else "",
        scope=composer_input.scope if composer_input else "",
        key_facts=[c.claim_id for c in key_claims(composer_input)] if composer_input else None,
        gap_lines=gap_lines(composer_input) if composer_input else [],
    )


def stored_document(session: SessionRecord, engine: dict[str, str]) -> AnswerDocument | None:
    """The answer document of a stored, completed session — what ``ask --json`` printed when it
    ran — read back from its audit (``veridiag deliver`` re-posts it). None for a session that
    did not complete or whose audit this version cannot read: nothing verified to show."""
    if session.status != "completed" or not session.final_answer or session.self_evaluation is None:
        return None
    try:
        record = SelfEvaluation.model_validate(session.self_evaluation)
    except ValidationError:
        return None
    source = record.verifier_evaluation.answer_source
    result = DiagnosisResult(
        session.id,
        "completed",
        session.verdict,
        session.final_answer,
        "composer" if source == "composer" else "template",
        session.rounds,
        session.self_evaluation,
        record=record,
    )
    return answer_document(result, engine)


def shown_document(session: SessionRecord, engine: dict[str, str], lang: Literal["zh", "en"]) -> AnswerDocument:
    """What ``ask`` printed for this session: the stored document, or — with no verified answer
    to show (failed, interrupted, still running, an audit this version cannot read) — the
    document of a failed run: no claims, the failure answer, so a copy says so instead of
    inventing one."""
    document = stored_document(session, engine)
    if document is not None:
        return document
    kept = session.self_evaluation if session.status == "failed" else None
    result = DiagnosisResult(
        session.id, "failed", None, FAILURE_ANSWER[lang], "failure", 0, kept or {}, session.error or session.status
    )
    try:
        return answer_document(result, engine)
    except ValidationError:  # role calls this version cannot read: still no verified answer
        return answer_document(replace(result, self_evaluation={}), engine)


def _partial_calls(stored: Mapping[str, JsonValue]) -> list[RoleCall]:
    """The role calls a failed run kept, read from its stored JSON."""
    calls = json_object(stored.get("partial")).get("role_calls")
    return [RoleCall.model_validate(call) for call in calls or []] if isinstance(calls, list) else []
