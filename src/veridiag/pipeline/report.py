"""The answer as other programs see it: one stable document for the CLI and the HTTP API."""

from __future__ import annotations

from typing import Any

from veridiag.contracts.audit import EngineUse, RoleCall
from veridiag.pipeline.service import DiagnosisResult

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


def answer_document(result: DiagnosisResult, engine: dict[str, str]) -> dict[str, Any]:
    """The stable answer document of ``veridiag ask --json`` and ``POST /api/v1/chat``.

    ``engines`` records what answered each role in this session (fallbacks included: which
    engine failed and why), ``engine`` says the same in one string per role,
    ``engine_configured`` what the settings asked for."""
    evaluation = result.self_evaluation.get("verifier_evaluation") or {}
    structured = evaluation.get("executor_structured_output") or {}
    composer_input = evaluation.get("composer_input") or {}
    role_calls = result.self_evaluation.get("role_calls") or (result.self_evaluation.get("partial") or {}).get(
        "role_calls"
    )
    used = engines_used([RoleCall.model_validate(call) for call in role_calls or []], engine)
    labels = {c["claim_id"]: c["verification"] for c in evaluation.get("claim_checks") or []}
    allowed = {c["claim_id"] for c in composer_input.get("allowed_claims") or []}
    claims = [
        {
            "claim_id": claim.get("claim_id"),
            "claim_text": claim.get("claim_text"),
            "verification": labels.get(str(claim.get("claim_id"))),
            "allowed": claim.get("claim_id") in allowed,
            "evidence": [
                {"invocation_id": i, "tool_name": b.get("tool_name"), "excerpt": b.get("evidence_excerpt")}
                for b in claim.get("evidence_bindings") or []
                if isinstance(b, dict)
                for i in b.get("source_invocation_ids") or []
            ],
        }
        for claim in structured.get("claims") or []
        if isinstance(claim, dict)
    ]
    return {
        "session_id": result.session_id,
        "verdict": result.verdict,
        "final_answer": result.answer,
        "answer_source": result.answer_source,
        "claims": claims,
        "hypotheses": composer_input.get("allowed_hypotheses", []),
        "missing_info": composer_input.get("missing_info", []),
        "recommended_actions": composer_input.get("recommended_actions", []),
        "gatekeeper": evaluation.get("gatekeeper_result"),
        "rounds": result.rounds,
        "engine": engine_labels(used),
        "engine_configured": dict(engine),
        "engines": {role: [u.model_dump() for u in uses] for role, uses in used.items()},
        "status": result.status,
        "error": result.error,
        "usage": result.self_evaluation.get("usage") or {},
    }
