"""VerifierInputHook (docs/spec §9.2, §13–§14): parse-only → trace summary → Gatekeeper → payload.

The hook keeps no rules of its own (docs/spec §10.4): parse status comes from the parse-only
hook, every contract check from the Gatekeeper.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from veridiag.contracts.gatekeeper import GatekeeperReport
from veridiag.contracts.invocation import InvocationRecord, InvocationSource, InvocationView
from veridiag.contracts.json import JsonObject
from veridiag.contracts.material import ExecutorMaterial
from veridiag.contracts.parsing import ParsedOutput, parse_executor_output
from veridiag.contracts.trace import ToolTraceEntry
from veridiag.contracts.verifier import RetryContext, VerifierPayload
from veridiag.gatekeeper import Gatekeeper, normalize_output
from veridiag.tools.trace import build_trace_summary


class SessionInvocations(InvocationSource, Protocol):
    def list_invocations(self, session_id: str) -> list[InvocationRecord]: ...


@dataclass
class HookResult:
    parsed: ParsedOutput
    #: The normalised JSON as the Executor wrote it: what the audit stores and the verifier reads.
    structured: JsonObject | None
    #: The same, read once into types: what every later stage uses.
    material: ExecutorMaterial
    trace_summary: list[ToolTraceEntry]
    report: GatekeeperReport | None  # None when the Gatekeeper is switched off
    payload: VerifierPayload
    #: The session's invocations as the hook read them (for the trace summary): after the last
    #: round no tool runs, so what the composer input checks free text against is this list.
    invocations: list[InvocationRecord] = field(default_factory=list)


class _Preloaded:
    """This session's invocations, already read for the trace summary; only ids cited from
    elsewhere (another session, or none) go to the store."""

    def __init__(self, own: list[InvocationRecord], store: InvocationSource) -> None:
        self._own = {invocation.id: invocation for invocation in own}
        self._store = store

    def get_invocations(self, ids: Iterable[int]) -> Mapping[int, InvocationView]:
        wanted = list(ids)
        found: dict[int, InvocationView] = {i: self._own[i] for i in wanted if i in self._own}
        rest = [i for i in wanted if i not in found]
        if rest:
            found.update(self._store.get_invocations(rest))
        return found


def verifier_input(
    question: str,
    raw_output: str | None,
    *,
    session_id: str,
    round: int,
    invocations: SessionInvocations,
    gatekeeper: Gatekeeper | None,
    retry_context: RetryContext | None = None,
    extra_invocations: Iterable[InvocationRecord] = (),
) -> HookResult:
    parsed = parse_executor_output(raw_output)
    structured = normalize_output(parsed.value) if parsed.ok else None
    own = invocations.list_invocations(session_id)
    trace = build_trace_summary([*own, *extra_invocations])
    report = None
    if gatekeeper is not None:
        report = gatekeeper.validate(
            parsed.value,
            session_id=session_id,
            invocations=_Preloaded(own, invocations),
            parse_status=parsed.status,
            trace_summary=trace,
            question=question,
        )
    payload = VerifierPayload(
        original_query=question,
        executor_raw_output=raw_output,
        executor_final_answer=raw_output,
        executor_structured_output=None,
        executor_output_parse_status=parsed.status,
        tool_trace_summary=trace,
        gatekeeper_result=report.result if report else None,
        retry_context=retry_context,
        round=round,
    )
    # The parser's JSON, set as it is (as the Gatekeeper report's): validated again as JsonValue it
    # cost ~0.17 ms a payload, walking every node of the reply to copy it (measured).
    payload.executor_structured_output = structured
    return HookResult(parsed, structured, ExecutorMaterial.read(structured), trace, report, payload, own)
