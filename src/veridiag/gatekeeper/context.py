"""What a rule sees (``ValidationContext``) and what it returns (``RuleResult``).

Rules never raise on odd input: the helpers below walk the parsed output defensively
(claims that are not objects, bindings that are not lists) and name every place they
look at with a field path, so an error can always say which target it is about.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from veridiag.contracts.gatekeeper import CheckRecord, RuleStatus
from veridiag.contracts.invocation import InvocationView
from veridiag.contracts.parsing import ParseStatus
from veridiag.contracts.trace import ToolTraceEntry
from veridiag.gatekeeper.matching import ExcerptMatcher


@dataclass
class ValidationContext:
    """One Gatekeeper run: the (normalised) output and the cited invocations."""

    output: Any
    normalized: dict[str, Any] | None
    session_id: str
    invocations: Mapping[int, InvocationView]
    parse_status: ParseStatus | None = None
    trace_summary: list[ToolTraceEntry] = field(default_factory=list)
    matcher: ExcerptMatcher | None = None
    #: Per-run memo for rules (lowered texts, entity look-ups); never outlives the run.
    memo: dict[Any, Any] = field(default_factory=dict)

    def claims(self) -> Iterator[tuple[int, str, dict[str, Any]]]:
        """``(index, target path, claim)`` for every claim that is a JSON object."""
        claims = self.normalized.get("claims") if self.normalized else None
        if not isinstance(claims, list):
            return
        for index, claim in enumerate(claims):
            if isinstance(claim, dict):
                yield index, f"claims[{index}]", claim

    def usable_invocation(self, raw_id: Any) -> InvocationView | None:
        """The invocation behind a cited id if it exists and belongs to this session."""
        invocation_id = as_invocation_id(raw_id)
        if invocation_id is None:
            return None
        invocation = self.invocations.get(invocation_id)
        if invocation is None or invocation.session_id != self.session_id:
            return None
        return invocation


def bindings(claim_target: str, claim: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(target path, binding)`` for each binding of a claim that is a JSON object."""
    items = claim.get("evidence_bindings")
    if not isinstance(items, list):
        return
    for index, binding in enumerate(items):
        if isinstance(binding, dict):
            yield f"{claim_target}.evidence_bindings[{index}]", binding


def cited_ids(binding: Mapping[str, Any]) -> list[Any]:
    ids = binding.get("source_invocation_ids")
    return ids if isinstance(ids, list) else []


def as_invocation_id(raw: Any) -> int | None:
    """Accept ints and digit strings (a harmless model habit); reject bools and the rest."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit() and len(raw.strip()) < 19:
        return int(raw.strip())
    return None


@dataclass
class RuleResult:
    """A rule's checks; its status is the worst outcome among them."""

    rule_id: str
    checks: list[CheckRecord] = field(default_factory=list)

    def add(self, target: str, outcome: RuleStatus, reason: str = "", **extra: Any) -> CheckRecord:
        record = CheckRecord(rule_id=self.rule_id, target=target, outcome=outcome, reason=reason, **extra)
        self.checks.append(record)
        return record

    @property
    def status(self) -> RuleStatus:
        outcomes = {check.outcome for check in self.checks}
        if "fail" in outcomes:
            return "fail"
        if "warn" in outcomes:
            return "warn"
        return "pass"
