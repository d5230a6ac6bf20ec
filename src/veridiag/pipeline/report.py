"""The answer as other programs see it: one stable document for the CLI and the HTTP API."""

from __future__ import annotations

from typing import Any

from veridiag.pipeline.service import DiagnosisResult

#: A role this session never called (the Verifier skipped on unusable output, a composer
#: switched off): nothing of it answered.
NOT_RUN = "not run"


def engines_that_ran(role_calls: list[dict[str, Any]], configured: dict[str, str]) -> dict[str, str]:
    """Per role, the engine that answered it in this session — ``offline (fallback)`` when the
    configured model failed; several rounds that differ are listed in order."""
    ran: dict[str, str] = {}
    for role in [*configured, *(c.get("role") for c in role_calls if c.get("role") not in configured)]:
        engines = list(dict.fromkeys(str(c.get("engine")) for c in role_calls if c.get("role") == role))
        ran[str(role)] = ", ".join(engines) if engines else NOT_RUN
    return ran


def answer_document(result: DiagnosisResult, engine: dict[str, str]) -> dict[str, Any]:
    """The stable answer document of ``veridiag ask --json`` and ``POST /api/v1/chat``.

    ``engine`` names what answered each role in this session (fallbacks included);
    ``engine_configured`` what the settings asked for."""
    evaluation = result.self_evaluation.get("verifier_evaluation") or {}
    structured = evaluation.get("executor_structured_output") or {}
    composer_input = evaluation.get("composer_input") or {}
    role_calls = result.self_evaluation.get("role_calls") or (result.self_evaluation.get("partial") or {}).get(
        "role_calls"
    )
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
        "engine": engines_that_ran(role_calls or [], engine),
        "engine_configured": dict(engine),
        "status": result.status,
        "error": result.error,
        "usage": result.self_evaluation.get("usage") or {},
    }
