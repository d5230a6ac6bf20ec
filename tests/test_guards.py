"""The code guardrails are registered units with one on-fail vocabulary, documented where they live."""

from __future__ import annotations

import pytest

from veridiag.contracts.material import ClaimView
from veridiag.contracts.verifier import OnFail
from veridiag.pipeline import guardrails
from veridiag.pipeline.guardrails import ClaimGuard, GuardContext, claim_guard, claim_guards, verdict_guards


def test_every_registered_guard_is_documented_with_its_id() -> None:
    doc = guardrails.__doc__ or ""
    ids = [*claim_guards(), *verdict_guards(), "verifier.missing_claim", "parse.unusable", "verdict.matrix"]
    assert all(f"``{guard_id}``" in doc for guard_id in ids), [g for g in ids if f"``{g}``" not in doc]
    assert all(guard.on_fail in OnFail for guard in claim_guards().values())
    assert all(guard.on_fail in OnFail for guard in verdict_guards().values())


def test_a_guard_id_cannot_be_registered_twice() -> None:
    with pytest.raises(ValueError, match="registered twice"):

        @claim_guard
        class Again(ClaimGuard):
            id = "root_cause.inference_only"
            ceiling = "unsupported"

            def fires(self, claim: ClaimView, context: GuardContext) -> str | None:
                return None


def test_root_cause_guards_run_after_the_evidence_guards() -> None:
    """Order is part of the contract: the audit shows the strongest cap first."""
    order = list(claim_guards())
    assert order.index("gatekeeper.targeted_claim") < order.index("root_cause.single_source")
    assert order.index("root_cause.single_source") < order.index("root_cause.inference_only")
