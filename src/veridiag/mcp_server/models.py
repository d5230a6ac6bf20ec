"""What the MCP tools return besides the documents the API already defines (``AnswerDocument``,
``AuditChain``): an evidence call as stored, and a Gatekeeper check of a client's own claims."""

from __future__ import annotations

from pydantic import BaseModel, Field

from veridiag.contracts.gatekeeper import CheckRecord, ClaimTrace, GatekeeperResult, VerdictImpact
from veridiag.contracts.invocation import InvocationStatus
from veridiag.contracts.parsing import ParseStatus


class EvidenceCall(BaseModel):
    """One evidence tool call, stored before this answer was sent: cite ``invocation_id`` in an
    Executor V2 document's ``evidence_bindings`` and check it with ``check_claims``."""

    session_id: str = Field(description="The evidence session: pass it to later calls and to check_claims.")
    invocation_id: int
    tool_name: str
    status: InvocationStatus
    output: str = Field(description="The output as a model sees it: bounded, every line a line of the stored output.")
    error: str | None = None


class ClaimsCheck(BaseModel):
    """The Gatekeeper's verdict on a client's Executor V2 document against one session's invocations."""

    session_id: str
    parse_status: ParseStatus
    result: GatekeeperResult
    failed_rule_impacts: dict[str, VerdictImpact] = Field(default_factory=dict)
    claim_traces: list[ClaimTrace] = Field(
        default_factory=list, description="Per claim, every check and the span its excerpt matched."
    )
    other_checks: list[CheckRecord] = Field(default_factory=list)
