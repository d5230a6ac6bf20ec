"""docs/spec §21 stage 2 acceptance lines, one named test each, plus the §12 result shape."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import SESSION, binding, claim, v2
from veridiag.contracts import InMemoryInvocations, parse_executor_output
from veridiag.gatekeeper import Gatekeeper, load_ruleset


def test_schema_invalid_but_parseable_json_is_parse_valid_and_gatekeeper_fail(
    gatekeeper: Gatekeeper, store: InMemoryInvocations
) -> None:
    raw = '{"answer_version": "executor_evidence_v2", "claims": "not an array"}'
    parsed, report = gatekeeper.check_raw(raw, session_id=SESSION, invocations=store)
    assert parsed.status.status == "valid"
    assert report.result.status == "fail"
    assert "schema.executor_v2" in report.result.failed_rules
    assert any(e.rule_id == "schema.executor_v2" and e.target == "claims" for e in report.result.errors)


def test_made_up_invocation_id_fails_invocation_ref(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    output = v2([claim(bindings=[binding([99999], "request timeout")])])
    report = gatekeeper.validate(output, session_id=SESSION, invocations=store)
    assert report.result.status == "fail"
    assert "evidence.invocation_ref" in report.result.failed_rules
    error = next(e for e in report.result.errors if e.rule_id == "evidence.invocation_ref")
    assert error.target == "claims[0].evidence_bindings[0]"
    assert "not found in current session" in error.message
    assert report.failed_rule_impacts["evidence.invocation_ref"] == "reject_on_fail"


def test_tool_name_mismatch_fails(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    output = v2([claim(bindings=[binding([394], "request timeout", tool_name="query_metrics")])])
    report = gatekeeper.validate(output, session_id=SESSION, invocations=store)
    assert report.result.status == "fail"
    error = next(e for e in report.result.errors if e.rule_id == "evidence.invocation_ref")
    assert error.target == "claims[0].evidence_bindings[0].tool_name"
    assert "query_metrics" in error.message and "query_logs" in error.message


def test_invocation_of_another_session_fails(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    output = v2([claim(text="order-service 出现锁等待。", bindings=[binding([500], "lock wait timeout")])])
    report = gatekeeper.validate(output, session_id=SESSION, invocations=store)
    assert "evidence.invocation_ref" in report.result.failed_rules
    assert any("another session" in e.message for e in report.result.errors)
    # the excerpt is verbatim in that other session's output, yet it is not evidence here
    assert report.targeted_claim_ids() == {"claim-1"}


def test_missing_optional_arrays_normalise_to_empty(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    output = v2()
    assert "hypotheses" not in output
    report = gatekeeper.validate(output, session_id=SESSION, invocations=store)
    assert report.result.status == "pass"
    assert report.normalized_output is not None
    for name in ("hypotheses", "recommended_actions", "missing_info"):
        assert report.normalized_output[name] == []
    assert "hypotheses" not in output, "the caller's object is not mutated"


def test_null_optional_arrays_normalise_to_empty(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = gatekeeper.validate(v2(hypotheses=None), session_id=SESSION, invocations=store)
    assert report.normalized_output is not None and report.normalized_output["hypotheses"] == []


@pytest.mark.parametrize("field", ["diagnosis_summary", "user_facing_answer"])
def test_removed_v1_fields_fail_the_schema_rule(field: str, gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    removed: dict[str, Any] = {field: "支付失败是因为连接池耗尽。"}
    report = gatekeeper.validate(v2(**removed), session_id=SESSION, invocations=store)
    assert report.result.status == "fail"
    assert report.result.failed_rules == ["schema.executor_v2"]
    assert report.result.errors[0].target == field
    assert report.failed_rule_impacts == {"schema.executor_v2": "low_confid_on_fail"}


def test_wrong_answer_version_fails_schema(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    output = v2()
    output["answer_version"] = "executor_evidence_v1"
    report = gatekeeper.validate(output, session_id=SESSION, invocations=store)
    assert [e.target for e in report.result.errors] == ["answer_version"]


def test_valid_output_passes_every_rule(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    output = v2(
        [
            claim(
                text="订单123支付失败期间出现 ERR_TIMEOUT，请求耗时 5.3 秒。",
                bindings=[binding([394], "order=123 ERR_TIMEOUT request timeout cost=5300ms")],
            ),
            claim(
                "claim-2",
                "payment-service 连接池活跃连接 200/200。",
                [binding([395], "hikaricp_connections_active 200/200", tool_name="query_metrics")],
            ),
        ],
        hypotheses=[
            {
                "hypothesis_text": "连接池耗尽可能是根因。",
                "basis": "活跃连接已满",
                "needed_evidence": ["pending 指标"],
            }
        ],
    )
    report = gatekeeper.validate(output, session_id=SESSION, invocations=store)
    assert report.result.model_dump() == {"status": "pass", "failed_rules": [], "warnings": [], "errors": []}
    assert [trace.claim_id for trace in report.claim_traces] == ["claim-1", "claim-2"]


def test_result_has_exactly_the_spec_fields(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = gatekeeper.validate(v2([claim(bindings=[binding([1], "x")])]), session_id=SESSION, invocations=store)
    dumped = report.result.model_dump()
    assert set(dumped) == {"status", "failed_rules", "warnings", "errors"}
    assert all(set(error) == {"rule_id", "target", "message"} for error in dumped["errors"])


def test_status_aggregation_fail_over_warn_over_pass(store: InMemoryInvocations) -> None:
    strict = {"ruleMetadata": {"evidence.excerpt_similarity": {"params": {"passThreshold": 0.95}}}}
    gatekeeper = Gatekeeper(load_ruleset().with_overrides(strict))
    loose = "ERROR payment-service request timed out upstream"  # like a real line, not one: warn
    warn_only = gatekeeper.validate(
        v2([claim(text="payment-service 出现异常。", bindings=[binding([394], loose)])]),
        session_id=SESSION,
        invocations=store,
    )
    assert warn_only.result.status == "warn", warn_only.result
    assert warn_only.result.warnings == ["evidence.excerpt_similarity"]
    both = gatekeeper.validate(
        v2(
            [
                claim(text="payment-service 出现异常。", bindings=[binding([394], loose)]),
                claim("claim-2", bindings=[binding([404], "request timeout")]),
            ]
        ),
        session_id=SESSION,
        invocations=store,
    )
    assert both.result.status == "fail"
    assert both.result.warnings == ["evidence.excerpt_similarity"]
    assert both.result.failed_rules == ["evidence.invocation_ref"]


def test_unparseable_output_fails_schema_rule_with_parse_detail(
    gatekeeper: Gatekeeper, store: InMemoryInvocations
) -> None:
    parsed, report = gatekeeper.check_raw(
        '{"answer_version": "executor_evidence_v2", "claims": [', session_id=SESSION, invocations=store
    )
    assert parsed.status.status == "malformed"
    assert report.result.failed_rules == ["schema.executor_v2"]
    assert report.result.errors[0].message.startswith("executor output is malformed")
    assert report.normalized_output is None


def test_parse_status_is_independent_of_schema() -> None:
    assert parse_executor_output('{"hello": "world"}').status.status == "valid"
