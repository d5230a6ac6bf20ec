"""Each rule's behaviour, including the edges a model's output reaches in practice."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import LOG_OUTPUT, SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper, load_ruleset
from veridiag.gatekeeper.registry import rule_class


def checks(report: Any, rule_id: str) -> list[Any]:
    found = [c for t in report.claim_traces for c in t.checks if c.rule_id == rule_id]
    return found + [c for c in report.other_checks if c.rule_id == rule_id]


def run(gatekeeper: Gatekeeper, store: InMemoryInvocations, *claims: dict[str, Any], **extra: Any) -> Any:
    return gatekeeper.validate(v2(list(claims), **extra), session_id=SESSION, invocations=store)


# --- evidence.invocation_ref -------------------------------------------------------------


def test_claim_without_bindings_fails(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(gatekeeper, store, claim(bindings=[]))
    assert ("evidence.invocation_ref", "claims[0].evidence_bindings") in {
        (e.rule_id, e.target) for e in report.result.errors
    }


def test_empty_invocation_id_list_fails(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(gatekeeper, store, claim(bindings=[binding([], "request timeout")]))
    assert "evidence.invocation_ref" in report.result.failed_rules


def test_errored_invocation_is_not_evidence(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(gatekeeper, store, claim(bindings=[binding([396], "backend down")]))
    assert any("errored" in e.message for e in report.result.errors if e.rule_id == "evidence.invocation_ref")


def test_errored_invocation_allowed_when_configured(store: InMemoryInvocations) -> None:
    lenient = load_ruleset().with_overrides(
        {"ruleMetadata": {"evidence.invocation_ref": {"params": {"failOnErroredInvocation": False}}}}
    )
    report = run(Gatekeeper(lenient), store, claim(bindings=[binding([396], "backend down")]))
    assert "evidence.invocation_ref" not in report.result.failed_rules


def test_no_data_invocation_can_support_an_absence_claim(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(
        gatekeeper,
        store,
        claim(text="日志中没有匹配的行。", bindings=[binding([397], "no log lines matched")]),
    )
    assert report.result.status == "pass", report.result


def test_digit_string_ids_are_looked_up_but_bools_are_not(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    as_string = run(gatekeeper, store, claim(bindings=[binding(["394"], "request timeout")]))
    assert "evidence.invocation_ref" not in as_string.result.failed_rules
    assert "schema.executor_v2" in as_string.result.failed_rules  # the contract still wants integers
    as_bool = run(gatekeeper, store, claim(bindings=[binding([True], "request timeout")]))
    assert any(e.target.endswith("source_invocation_ids[0]") for e in as_bool.result.errors)


def test_lookup_failure_fails_closed(gatekeeper: Gatekeeper) -> None:
    class Down:
        def get_invocations(self, ids: Any) -> Any:
            raise ConnectionError("database is down")

    report = gatekeeper.validate(v2(), session_id=SESSION, invocations=Down())
    assert report.result.status == "fail"
    assert any("database is down" in e.message for e in report.result.errors)


# --- evidence.excerpt_similarity ---------------------------------------------------------


def test_verbatim_excerpt_records_the_real_span(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    excerpt = "ERR_TIMEOUT request timeout cost=5300ms"
    report = run(gatekeeper, store, claim(bindings=[binding([394], excerpt)]))
    (check,) = checks(report, "evidence.excerpt_similarity")
    assert check.outcome == "pass" and check.score == 1.0
    span = check.matched_span
    assert span.source == "output" and LOG_OUTPUT[span.start : span.end] == excerpt == span.text


def test_paraphrased_excerpt_points_at_the_source_text(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(gatekeeper, store, claim(bindings=[binding([394], "ERR_TIMEOUT request timed out cost=5300ms")]))
    (check,) = checks(report, "evidence.excerpt_similarity")
    assert check.outcome == "pass" and 0.8 < check.score < 1.0
    assert "request timeout cost=5300ms" in check.matched_span.text  # the output's words, not the model's


def test_excerpt_is_compared_with_the_cited_invocation_only(gatekeeper: Gatekeeper) -> None:
    store = InMemoryInvocations([invocation(1, output="inventory-service stock sync finished in 12ms"), invocation(2)])
    report = gatekeeper.validate(
        v2([claim(bindings=[binding([1], "ERR_TIMEOUT request timeout cost=5300ms")])]),
        session_id=SESSION,
        invocations=store,
    )
    (check,) = checks(report, "evidence.excerpt_similarity")
    assert check.outcome == "fail", "found in invocation 2, but invocation 1 is the one cited"


def test_invented_excerpt_fails(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(gatekeeper, store, claim(bindings=[binding([394], "数据库死锁 deadlock detected on t_stock")]))
    (check,) = checks(report, "evidence.excerpt_similarity")
    assert check.outcome == "fail"
    assert report.failed_rule_impacts["evidence.excerpt_similarity"] == "low_confid_on_fail"


def test_thresholds_come_from_metadata(store: InMemoryInvocations) -> None:
    excerpt = "ERR_TIMEOUT request timed out cost=5300ms"
    strict = load_ruleset().with_overrides(
        {"ruleMetadata": {"evidence.excerpt_similarity": {"params": {"passThreshold": 0.99, "warnThreshold": 0.98}}}}
    )
    report = run(Gatekeeper(strict), store, claim(bindings=[binding([394], excerpt)]))
    assert "evidence.excerpt_similarity" in report.result.failed_rules


def test_chinese_excerpt_with_one_character_changed(gatekeeper: Gatekeeper) -> None:
    output = "2026-07-07 10:02 支付网关返回：连接池已耗尽，请求排队超时，订单123支付失败。\n" * 3
    store = InMemoryInvocations([invocation(7, output=output)])
    report = gatekeeper.validate(
        v2([claim(text="支付网关报告连接池耗尽。", bindings=[binding([7], "连接池已用尽，请求排队超时")])]),
        session_id=SESSION,
        invocations=store,
    )
    (check,) = checks(report, "evidence.excerpt_similarity")
    assert check.outcome == "pass" and check.score >= 0.8
    assert check.matched_span.text.startswith("连接池已")


def test_excerpt_found_in_retrieval_details(gatekeeper: Gatekeeper) -> None:
    store = InMemoryInvocations(
        [invocation(8, "lookup_knowledge", output="", retrieval_details={"title": "连接池耗尽排查手册"})]
    )
    report = gatekeeper.validate(
        v2(
            [
                claim(
                    text="知识库有连接池耗尽手册。",
                    bindings=[binding([8], "连接池耗尽排查手册", "lookup_knowledge")],
                )
            ]
        ),
        session_id=SESSION,
        invocations=store,
    )
    (check,) = checks(report, "evidence.excerpt_similarity")
    assert check.outcome == "pass" and check.matched_span.source == "retrieval_details"


def test_large_output_changed_word_found_at_its_line(gatekeeper: Gatekeeper) -> None:
    lines = [
        f"2026-07-07T10:{i % 60:02d}:00Z INFO order-service GET /api/orders/{1000 + i} status=200" for i in range(900)
    ]
    lines[640] = "2026-07-07T10:40:00Z ERROR payment-service order=77 ERR_TIMEOUT request timeout cost=5300ms"
    output = "\n".join(lines)
    assert len(output) > 60_000
    store = InMemoryInvocations([invocation(9, output=output)])
    report = gatekeeper.validate(
        v2(
            [
                claim(
                    text="payment-service 超时。",
                    bindings=[binding([9], "payment-service order=77 ERR_TIMEOUT request timed out")],
                )
            ]
        ),
        session_id=SESSION,
        invocations=store,
    )
    (check,) = checks(report, "evidence.excerpt_similarity")
    assert check.outcome == "pass"
    assert output.index(lines[640]) <= check.matched_span.start < output.index(lines[640]) + len(lines[640])


# --- claim.hallucination_phrases ---------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "根据经验，连接池耗尽导致超时。",
        "可能是数据库慢查询。",
        "The pool is probably exhausted.",
        "I think the gateway timed out.",
    ],
)
def test_speculative_wording_in_a_claim_fails(text: str, gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(gatekeeper, store, claim(text=text))
    assert "claim.hallucination_phrases" in report.result.failed_rules
    assert any(e.target == "claims[0].claim_text" for e in report.result.errors)


def test_speculative_wording_in_a_hypothesis_is_fine(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    hypothesis = {
        "hypothesis_text": "可能是连接池耗尽，根据经验推测如此。",
        "basis": "我认为值得排查",
        "needed_evidence": [],
    }
    report = run(gatekeeper, store, claim(), hypotheses=[hypothesis])
    assert "claim.hallucination_phrases" not in report.result.failed_rules


@pytest.mark.parametrize(
    "hedge", ["这很可能是支付超时的根因", "the pool is probably exhausted", "I think the pool caused it"]
)
@pytest.mark.parametrize(
    "typed",
    [
        ("root_cause", "indirect", True),
        ("symptom", "indirect", True),
        ("symptom", "direct", False),
        ("root_cause", "direct", False),
    ],
)
def test_hedging_a_claim_that_states_itself_an_inference_is_honest(
    hedge: str, typed: tuple[str, str, bool], gatekeeper: Gatekeeper, store: InMemoryInvocations
) -> None:
    claim_type, support, exempt = typed
    report = run(gatekeeper, store, claim(text=hedge, claim_type=claim_type, support_level=support))
    assert ("claim.hallucination_phrases" in report.result.failed_rules) is not exempt


def test_english_phrases_match_whole_words_only(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(gatekeeper, store, claim(text="Hi thinking theory: payment-service returned ERR_TIMEOUT."))
    assert "claim.hallucination_phrases" not in report.result.failed_rules


def test_word_list_is_data(store: InMemoryInvocations) -> None:
    custom = load_ruleset().with_overrides(
        {"ruleMetadata": {"claim.hallucination_phrases": {"params": {"blacklist": ["显然"]}}}}
    )
    report = run(Gatekeeper(custom), store, claim(text="显然 payment-service 出现超时。"))
    assert "claim.hallucination_phrases" in report.result.failed_rules
    disabled = load_ruleset().with_overrides({"rules": [{"id": "claim.hallucination_phrases", "enabled": False}]})
    report = run(Gatekeeper(disabled), store, claim(text="根据经验 payment-service 超时。"))
    assert "claim.hallucination_phrases" not in report.rules_run


# --- claim.evidence_utilization ----------------------------------------------------------


def test_evidence_utilization_is_off_by_default(gatekeeper: Gatekeeper) -> None:
    assert "claim.evidence_utilization" not in [rule.id for rule in gatekeeper.ruleset.enabled()]


def test_evidence_utilization_only_warns(store: InMemoryInvocations) -> None:
    enabled = load_ruleset().with_overrides({"rules": [{"id": "claim.evidence_utilization", "enabled": True}]})
    report = run(
        Gatekeeper(enabled),
        store,
        claim(text="支付服务数据库连接泄漏严重影响库存同步", bindings=[binding([394], "request timeout")]),
    )
    assert "claim.evidence_utilization" in report.result.warnings
    assert "claim.evidence_utilization" not in report.result.failed_rules
    (check,) = checks(report, "claim.evidence_utilization")
    assert check.outcome == "warn" and check.score is not None and check.score < 0.5


# --- claim.entity_grounding --------------------------------------------------------------


def test_changed_ratio_is_caught_where_similarity_is_fooled(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    """docs/DESIGN.md §4: ``200/200`` → ``100/200`` scores ~96 similar; grounding is exact."""
    changed = claim(
        text="payment-service 活跃连接 100/200。",
        bindings=[binding([395], "hikaricp_connections_active 100/200", "query_metrics")],
    )
    report = run(gatekeeper, store, changed)
    similarity = checks(report, "evidence.excerpt_similarity")[0]
    assert similarity.outcome == "pass" and similarity.score > 0.9
    assert "claim.entity_grounding" in report.result.failed_rules
    assert {e.target for e in report.result.errors if e.rule_id == "claim.entity_grounding"} == {
        "claims[0].claim_text",
        "claims[0].evidence_bindings[0].evidence_excerpt",
    }
    assert report.failed_rule_impacts["claim.entity_grounding"] == "reject_on_fail"


@pytest.mark.parametrize(
    ("text", "grounded"),
    [
        ("订单123支付失败期间出现 ERR_TIMEOUT，请求耗时 5.3 秒。", True),
        ("订单124支付失败。", False),
        ("payment-service 返回 ERR_POOL_EXHAUSTED。", False),
        ("请求耗时 5300ms。", True),
        ("请求耗时 6.3 秒。", False),
        ("10:01:02 出现超时。", True),
        ("10:07 出现超时。", False),
        ("redis 超时。", False),
        ("payment-service 等待连接数 37 个。", True),
    ],
)
def test_claim_facts_must_occur_in_cited_output(
    text: str, grounded: bool, gatekeeper: Gatekeeper, store: InMemoryInvocations
) -> None:
    report = run(gatekeeper, store, claim(text=text, bindings=[binding([394], "request timeout")]))
    assert ("claim.entity_grounding" not in report.result.failed_rules) is grounded, report.result.errors


def test_service_named_in_tool_arguments_is_grounded(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(
        gatekeeper,
        store,
        claim(text="payment-service CPU 92%。", bindings=[binding([395], "cpu_usage 92.4%", "query_metrics")]),
    )
    assert "claim.entity_grounding" not in report.result.failed_rules, report.result.errors


def test_misquoted_number_in_excerpt_fails_even_if_it_occurs_elsewhere(gatekeeper: Gatekeeper) -> None:
    output = "order=1 cost=120ms status=200\norder=2 ERR_TIMEOUT request timeout cost=5300ms\n"
    store = InMemoryInvocations([invocation(11, output=output * 80)])  # > 4 KB: anchored search
    report = gatekeeper.validate(
        v2(
            [
                claim(
                    text="订单2请求超时。",
                    bindings=[binding([11], "order=2 ERR_TIMEOUT request timeout cost=120ms")],
                )
            ]
        ),
        session_id=SESSION,
        invocations=store,
    )
    errors = [e for e in report.result.errors if e.rule_id == "claim.entity_grounding"]
    assert [e.target for e in errors] == ["claims[0].evidence_bindings[0].evidence_excerpt"]
    assert "120ms" in errors[0].message


def test_facts_are_checked_only_against_cited_invocations(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    # 200/200 is in invocation 395 (metrics) but the claim cites only 394 (logs).
    report = run(gatekeeper, store, claim(text="活跃连接 200/200。", bindings=[binding([394], "request timeout")]))
    assert "claim.entity_grounding" in report.result.failed_rules


# --- engine ------------------------------------------------------------------------------


def test_a_crashing_rule_fails_closed(monkeypatch: pytest.MonkeyPatch, store: InMemoryInvocations) -> None:
    def boom(self: Any, context: Any, metadata: Any) -> Any:
        raise RuntimeError("bug in rule")

    monkeypatch.setattr(rule_class("claim.hallucination_phrases"), "validate", boom)
    report = run(Gatekeeper(), store, claim())
    assert report.result.status == "fail"
    crashed = [e for e in report.result.errors if e.rule_id == "claim.hallucination_phrases"]
    assert [e.target for e in crashed] == ["$", "claims[0]"]  # the rule, and each claim it did not judge
    assert all("bug in rule" in e.message for e in crashed)


def test_severity_warning_turns_failures_into_warnings(store: InMemoryInvocations) -> None:
    soft = load_ruleset().with_overrides({"ruleMetadata": {"claim.hallucination_phrases": {"severity": "warning"}}})
    report = run(Gatekeeper(soft), store, claim(text="根据经验 payment-service 超时。"))
    assert report.result.failed_rules == [] and report.result.warnings == ["claim.hallucination_phrases"]
    assert report.result.status == "warn"


def test_duplicate_claim_ids_fail_schema(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    report = run(gatekeeper, store, claim(), claim())
    assert ("schema.executor_v2", "claims[1].claim_id") in {(e.rule_id, e.target) for e in report.result.errors}


def test_schema_errors_name_nested_targets(gatekeeper: Gatekeeper, store: InMemoryInvocations) -> None:
    broken = claim()
    del broken["evidence_bindings"][0]["tool_name"]
    broken["support_level"] = "certain"
    report = run(gatekeeper, store, broken)
    targets = {e.target for e in report.result.errors if e.rule_id == "schema.executor_v2"}
    assert {"claims[0].support_level", "claims[0].evidence_bindings[0].tool_name"} <= targets


@pytest.mark.parametrize("rule_id", ["claim.stated_content", "claim.entity_grounding", "claim.root_cause_support"])
def test_a_rule_that_crashes_leaves_every_claim_unconfirmed(rule_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule that raises (a regex group renamed under it, found by the eval sets) judged no claim:
    each is named by a failed check, so the verifier guard caps it — its silence confirms nothing."""
    rule = rule_class(rule_id)

    def crash(self: object, context: object, metadata: object) -> None:
        raise IndexError("no such group")

    monkeypatch.setattr(rule, "validate", crash)
    store = InMemoryInvocations([invocation(394, output=LOG_OUTPUT)])
    claims = [claim(text="payment-service 出现错误日志。", bindings=[binding([394], LOG_OUTPUT.splitlines()[0])])]
    report = Gatekeeper().validate(v2(claims), session_id=SESSION, invocations=store)
    assert rule_id in [*report.result.failed_rules, *report.result.warnings]
    (trace,) = report.claim_traces
    assert [c.reason for c in trace.checks if c.rule_id == rule_id] == [
        "rule crashed: IndexError: no such group (not judged)"
    ]
    if rule_id != "claim.root_cause_support":  # (warn only: it caps a cause, which this claim names none of)
        assert report.targeted_claim_ids() == {"claim-1"}
