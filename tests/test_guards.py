"""The code guardrails are registered units with one on-fail vocabulary, documented where they live."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veridiag.contracts.composer import ComposerInput, ComposerOutput
from veridiag.contracts.gatekeeper import CheckRecord, ClaimTrace, GatekeeperReport, GatekeeperResult
from veridiag.contracts.material import ClaimView
from veridiag.contracts.verifier import OnFail
from veridiag.pipeline import composer_guard, guardrails
from veridiag.pipeline.composer_guard import composer_checks, guard_composed
from veridiag.pipeline.guardrails import ClaimGuard, GuardContext, claim_guard, claim_guards, verdict_guards
from veridiag.pipeline.hook import HookResult
from veridiag.pipeline.verifier_reply import ParsedVerifier


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


def test_every_composer_check_is_documented_and_falls_back() -> None:
    doc = composer_guard.__doc__ or ""
    assert composer_checks(), "the composer guard has checks"
    assert all(f"``{check_id}``" in doc for check_id in composer_checks())
    assert {check.on_fail for check in composer_checks().values()} == {OnFail.FALLBACK}


@pytest.mark.parametrize(
    ("answer", "check"),
    [
        ('{"claims": []}', "composer.raw_json"),
        ("订单123失败，错误码 ERR_DB_DOWN。", "composer.unknown_fact"),
        ("根本原因已确认：数据库连接池耗尽。", "composer.unconfirmed_root_cause"),
    ],
)
def test_a_violation_names_the_check_that_found_it(answer: str, check: str) -> None:
    composer_input = ComposerInput(
        original_query="订单123支付失败", lang="zh", verdict="LOW_CONFID", missing_info=["缺少日志"]
    )
    output = ComposerOutput(answer_summary="s", recommended_actions=[], user_facing_answer=answer)
    result = guard_composed(output, composer_input)
    assert not result.passed and check in result.failed_checks, result


def test_an_answer_within_its_input_fails_no_check() -> None:
    composer_input = ComposerInput(
        original_query="订单123支付失败", lang="zh", verdict="LOW_CONFID", missing_info=["缺少日志"]
    )
    output = ComposerOutput(answer_summary="s", recommended_actions=[], user_facing_answer="证据不足：缺少日志。")
    result = guard_composed(output, composer_input)
    assert result.passed and result.failed_checks == [], result


_OUTCOMES = ("pass", "warn", "fail")
_RULES = ("claim.entity_grounding", "claim.stated_content", "claim.root_cause_support")
_traces = st.lists(
    st.tuples(
        st.sampled_from(["claim-1", "claim-2", "claim-3"]),  # a claim id may repeat (a malformed output)
        st.lists(st.tuples(st.sampled_from(_RULES), st.sampled_from(_OUTCOMES), st.text(max_size=3)), max_size=4),
    ),
    max_size=5,
)


@given(_traces)
def test_the_checks_of_a_claim_are_those_its_traces_hold_in_order(traces: list[Any]) -> None:
    """The guards' look-up of a claim's checks (indexed once per evaluation) answers as a walk of
    every trace does, repeated claim ids and all."""
    report = GatekeeperReport(
        result=GatekeeperResult(status="pass"),
        claim_traces=[
            ClaimTrace(claim_id, index, [CheckRecord(rule, "t", outcome, reason) for rule, outcome, reason in checks])
            for index, (claim_id, checks) in enumerate(traces)
        ],
    )
    context = GuardContext(ParsedVerifier("ok"), cast(HookResult, SimpleNamespace(report=report)), frozenset())
    for claim_id in ("claim-1", "claim-2", "claim-3", "claim-9"):
        for outcome in _OUTCOMES:
            for rule in (None, *_RULES):
                walked = [
                    c.reason
                    for t in report.claim_traces
                    if t.claim_id == claim_id
                    for c in t.checks
                    if c.outcome == outcome and (rule is None or c.rule_id == rule)
                ]
                assert context.checks_of(claim_id, outcome, rule) == walked
