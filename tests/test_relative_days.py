"""A day named by its distance from another ("次日 13:40", "the next day at 14:30Z") states a change
of date; cited outputs on one date do not show one, so the claim is at most an inference (issue
27, deliverable 3). Found by the red team: 42 of 50 such mutations of true confirmed claims
reached CONFIRMED, the clock alone matching. The property draws the words from the rule's own
data, the clocks and the dates."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper
from veridiag.gatekeeper.rules.stated_content import StatedParams
from veridiag.gatekeeper.ruleset import bundled_ruleset

_GATEKEEPER = Gatekeeper()


def _words() -> list[str]:
    return bundled_ruleset()["claim.stated_content"].typed_params(StatedParams).relative_days


def _reason(text: str, output: str) -> str:
    store = InMemoryInvocations([invocation(394, output=output)])
    line = output.splitlines()[1]
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([394], line)])]), session_id=SESSION, invocations=store
    )
    checks = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    return checks[0].reason if checks else ""


@given(st.sampled_from(_words()), st.integers(0, 23), st.integers(0, 59), st.booleans())
def test_a_relative_day_needs_two_dates_in_the_cited_output(word: str, hour: int, minute: int, two: bool) -> None:
    clock = f"{hour:02d}:{minute:02d}"
    lines = [f"2026-07-07T{clock}:05Z ERROR payment-service order=123 ERR_TIMEOUT"]
    if two:
        lines.append(f"2026-07-08T{clock}:09Z ERROR payment-service order=124 ERR_TIMEOUT")
    output = "query_logs service=payment-service\n" + "\n".join(lines)
    reason = _reason(f"payment-service logged ERR_TIMEOUT {word} at {clock}.", output)
    assert ("puts it on another day" in reason) is not two, (word, reason)
