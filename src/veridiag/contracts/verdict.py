"""The verdict matrix of docs/spec §17, in code: the one place a verdict is computed from claim
labels and the Gatekeeper result. The pipeline's guardrails and the offline verifier share it."""

from __future__ import annotations

from veridiag.contracts.gatekeeper import GatekeeperReport
from veridiag.contracts.material import ClaimView
from veridiag.contracts.verifier import ClaimVerification, Verdict

#: How much each label counts toward groundedness; the rest count nothing.
_GROUNDEDNESS_WEIGHT: dict[str, float] = {"direct_observation": 1.0, "reasonable_inference": 0.6, "overstated": 0.3}


def groundedness(labels: list[ClaimVerification]) -> float:
    """The share of the claims the evidence carries, weighted by how directly (0 with no claims)."""
    if not labels:
        return 0.0
    return round(sum(_GROUNDEDNESS_WEIGHT.get(label, 0.0) for label in labels) / len(labels), 4)


def matrix_verdict(
    labelled: list[tuple[ClaimView, ClaimVerification]], report: GatekeeperReport | None
) -> tuple[Verdict, str]:
    """docs/spec §17 applied to final labels: (verdict, the reason for it)."""
    impacts = report.failed_rule_impacts if report else {}
    if any(impact == "reject_on_fail" for impact in impacts.values()):
        rules = ", ".join(rule for rule, impact in impacts.items() if impact == "reject_on_fail")
        return "REJECT", f"gatekeeper rule failed with verdictImpact reject_on_fail: {rules}"
    critical = [label for claim, label in labelled if claim.is_critical]
    if "contradicted" in critical:
        return "REJECT", "a core claim is contradicted by the evidence"
    if "external_unknown" in critical:
        return "REJECT", "a core claim brings in facts from outside the evidence"
    labels = [label for _claim, label in labelled]
    if not labelled:
        return "LOW_CONFID", "no claims: nothing is confirmed"
    if report is not None and report.result.status == "fail":
        return "LOW_CONFID", f"gatekeeper failed: {', '.join(report.result.failed_rules)}"
    weak = {"overstated", "unsupported", "external_unknown", "contradicted"} & set(labels)
    if weak:
        return "LOW_CONFID", f"claims labelled {', '.join(sorted(weak))}"
    if not any(label == "direct_observation" for label in critical):
        return "LOW_CONFID", "no core claim is directly observed"
    return "PASS", "every claim is observed or reasonably inferred, at least one core claim directly"
