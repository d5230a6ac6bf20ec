"""Builders for Executor outputs and invocations as plain data, like a model would send."""

from __future__ import annotations

from typing import Any

from veridiag.contracts import InvocationRecord
from veridiag.contracts.audit import AuditChain
from veridiag.contracts.json import JsonObject
from veridiag.contracts.parsing import ParseStatus
from veridiag.contracts.verifier import VerifierPayload

SESSION = "s-1"

LOG_OUTPUT = "\n".join(
    [
        "2026-07-07T10:00:58Z INFO  payment-service [http-nio-8080-exec-3] order=122 paid cost=120ms",
        "2026-07-07T10:01:02Z ERROR payment-service [http-nio-8080-exec-7] order=123 ERR_TIMEOUT "
        "request timeout cost=5300ms",
        "2026-07-07T10:01:05Z WARN  payment-service [HikariPool-1 housekeeper] HikariPool-1 - "
        "Pool stats (total=200, active=200, idle=0, waiting=37)",
    ]
)
METRIC_OUTPUT = "payment-service hikaricp_connections_active 200/200 at 2026-07-07T10:01:00Z; cpu_usage 92.4%"


def invocation(
    id: int,
    tool_name: str = "query_logs",
    output: str = LOG_OUTPUT,
    session_id: str = SESSION,
    **extra: Any,
) -> InvocationRecord:
    return InvocationRecord(id=id, session_id=session_id, tool_name=tool_name, output=output, **extra)


def binding(ids: list[Any], excerpt: str, tool_name: str = "query_logs", **extra: Any) -> dict[str, Any]:
    return {
        "source_type": "tool_trace",
        "source_id": "trace-1",
        "tool_name": tool_name,
        "source_invocation_ids": ids,
        "evidence_excerpt": excerpt,
        **extra,
    }


def claim(
    claim_id: str = "claim-1",
    text: str = "payment-service 出现请求超时日志。",
    bindings: list[dict[str, Any]] | None = None,
    claim_type: str = "symptom",
    support_level: str = "direct",
) -> dict[str, Any]:
    return {
        "claim_id": claim_id,
        "claim_type": claim_type,
        "claim_text": text,
        "support_level": support_level,
        "evidence_bindings": bindings if bindings is not None else [binding([394], "request timeout")],
    }


def v2(claims: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "answer_version": "executor_evidence_v2",
        "claims": claims if claims is not None else [claim()],
        **extra,
    }


#: The stable keys of ``veridiag ask --json`` and ``POST /api/v1/chat`` (additive changes only).
ASK_JSON_KEYS = frozenset(
    {
        "session_id",
        "verdict",
        "final_answer",
        "answer_source",
        "claims",
        "hypotheses",
        "missing_info",
        "recommended_actions",
        "gatekeeper",
        "rounds",
        "engine",
        "engine_configured",
        "engines",
    }
)


def verifier_payload(structured: dict[str, Any] | None = None) -> VerifierPayload:
    """A docs/spec §14 verifier payload around ``structured`` (what the hook would hand the Verifier)."""
    return VerifierPayload(
        original_query="q",
        executor_raw_output=None,
        executor_final_answer=None,
        executor_structured_output=structured,
        executor_output_parse_status=ParseStatus(status="valid" if structured else "missing", detail=""),
    )


def audit_chain_of(**sections: Any) -> AuditChain:
    """An audit chain as ``veridiag audit --json`` prints it, for a session ``SESSION`` with only
    ``sections`` stored."""
    session = {"id": SESSION, "created_at": "2026-07-07T10:00:00Z", "updated_at": "2026-07-07T10:05:00Z", "query": "q"}
    return AuditChain.model_validate({"session": session, **sections})


def readable(document: JsonObject) -> dict[str, Any]:
    """Stored JSON (a run's ``self_evaluation``, a tool's ``retrieval_details``) for a test to index
    into: a missing key or another shape fails the test all the same."""
    return document
