"""A fact followed by the effect it had ("…, which broke checkout", "…, resulting in failed
payments") names a cause, as "…, leading to …" does (issue 27, deliverable 3: causal content its
excerpts do not state is at most an inference). Found by the red team: such a symptom, adopting a
code as the reason other requests failed, reached CONFIRMED. The property composes services,
codes, effect clauses and effects; the line shows the code and nothing of the effect."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper

_GATEKEEPER = Gatekeeper()
_CODE = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=3, max_size=10).map(lambda s: f"ERR_{s}")
_SERVICE = st.sampled_from(["auth-gateway", "payment-service", "ledger-service", "edge-proxy"])
_CLAUSE = st.sampled_from(["which broke", "that broke", "resulting in", "which took down", "and brought down"])
_EFFECT = st.sampled_from(["checkout", "the order flow", "failed payments for most users", "the storefront"])


@given(_SERVICE, _CODE, _CLAUSE, _EFFECT, st.sampled_from(["symptom", "observation"]))
def test_an_effect_clause_names_a_cause(service: str, code: str, clause: str, effect: str, kind: str) -> None:
    line = f"2026-07-07T10:05:00.000Z WARN {service} [ops] code={code} request rejected"
    output = f"query_logs service={service}\n{line}\n"
    text = f"{service} logged {code}, {clause} {effect}."
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([394], line)], claim_type=kind)]),
        session_id=SESSION,
        invocations=InMemoryInvocations([invocation(394, output=output)]),
    )
    checks = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.root_cause_support"]
    assert checks and checks[0].outcome != "pass" and "names a cause" in checks[0].reason, (text, checks)
