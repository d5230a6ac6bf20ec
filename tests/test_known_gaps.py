"""Gaps stated whatever the verdict (issue 27 D7): a failed tool call and a named service no
call read data for reach the final answer on PASS, LOW_CONFID and REJECT, worded by code from
the session's records even when the Executor's report leaves them out; the scope line names the
services without data; a composed answer that drops one goes back to the template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import LOG_OUTPUT, binding, claim, readable, v2
from veridiag.agents import scripted_roles
from veridiag.contracts.composer import ComposerInput, ComposerOutput, KnownGap
from veridiag.delivery.compact import DETAILS, compact
from veridiag.delivery.report import build_report
from veridiag.pipeline import DiagnosisPipeline, PipelineOptions
from veridiag.pipeline.composer_guard import guard_composed
from veridiag.pipeline.report import answer_document
from veridiag.redaction import default_redactor
from veridiag.store import SessionStore

QUESTION = "Why did order 123 fail on payment-service and billing-service?"
PLAN = json.dumps(
    {
        "skill": "scripted",
        "services": ["payment-service", "billing-service"],
        "start": "2026-07-07T09:30:00Z",
        "end": "2026-07-07T10:30:00Z",
        "steps": [],
    }
)
FAILURE = "prometheus unavailable: connection refused"
CLAIM = claim(
    "claim-1",
    "Order 123 timed out (ERR_TIMEOUT) after 5300ms.",
    [binding([394], "order=123 ERR_TIMEOUT request timeout cost=5300ms")],
)
VERDICTS = [
    ("PASS", "direct_observation"),
    ("LOW_CONFID", "reasonable_inference"),
    ("REJECT", "contradicted"),
]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(f"sqlite:///{tmp_path / 'store.db'}")


def evidence(store: SessionStore) -> Any:
    """One call that read payment-service's logs, one that failed (the metrics backend down);
    billing-service, named by the question, is never read."""

    def setup(session_id: str) -> None:
        store.record_invocation(
            session_id=session_id,
            tool_name="query_logs",
            arguments={"service": "payment-service"},
            status="ok",
            output=LOG_OUTPUT,
            invocation_id=394,
        )
        store.record_invocation(
            session_id=session_id,
            tool_name="query_metrics",
            arguments={"service": "payment-service", "metric": "http_request_p99_ms"},
            status="error",
            output=f"query_metrics error: {FAILURE}",
            error=FAILURE,
        )

    return setup


def diagnose(store: SessionStore, verdict: str, label: str, composed: str | None) -> Any:
    verifier = json.dumps(
        {
            "verdict": verdict,
            "groundedness_score": 0.9,
            "rationale": "logs",
            "claim_checks": [{"claim_id": "claim-1", "verification": label, "detail": "…"}],
        }
    )
    composer = (
        json.dumps(
            {"answer_summary": "Order 123 timed out.", "recommended_actions": [], "user_facing_answer": composed}
        )
        if composed is not None
        else None
    )
    # the Executor's report names no gap at all: the pipeline knows them from its records
    roles = scripted_roles(planner=PLAN, executor=json.dumps(v2([CLAIM])), verifier=verifier, composer=composer)
    pipeline = DiagnosisPipeline(store, roles, options=PipelineOptions(max_rounds=1))
    return pipeline.run(QUESTION, on_session=evidence(store))


@pytest.mark.parametrize(("verdict", "label"), VERDICTS)
@pytest.mark.parametrize("composed", [None, "Order 123 timed out (ERR_TIMEOUT) after 5300ms."])
def test_a_failed_call_and_a_service_without_data_are_stated_on_every_verdict(
    store: SessionStore, verdict: str, label: str, composed: str | None
) -> None:
    result = diagnose(store, verdict, label, composed)
    assert result.verdict == verdict
    answer = result.answer
    assert "query_metrics" in answer and FAILURE in answer, answer
    assert "No data was read for billing-service" in answer, answer
    scope = answer.split("\n", 1)[0]
    assert "No data was read for billing-service." in scope, scope
    assert "payment-service." not in scope
    if composed is not None:  # the composed answer dropped both gaps: the template instead
        assert result.answer_source == "template"
        guard = readable(result.self_evaluation)["verifier_evaluation"]["composer_guard"]
        assert "composer.known_gap" in guard["failed_checks"]


def test_a_composed_answer_stating_the_gaps_in_its_own_words_is_kept(store: SessionStore) -> None:
    composed = (
        "Confirmed: order 123 timed out (ERR_TIMEOUT) after 5300ms.\n\n"
        "The query_metrics call failed, so latency was not checked; billing-service: no data was read."
    )
    result = diagnose(store, "PASS", "direct_observation", composed)
    assert result.answer_source == "composer", readable(result.self_evaluation)
    assert "The query_metrics call failed" in result.answer


def test_the_guard_refuses_an_answer_without_a_known_gap_on_any_verdict() -> None:
    gap = KnownGap(text=f"query_metrics failed: {FAILURE}", subject="query_metrics")
    for verdict, _ in VERDICTS:
        composer_input = ComposerInput(original_query=QUESTION, lang="en", verdict=verdict, known_gaps=[gap])
        silent = ComposerOutput(answer_summary="x", user_facing_answer="Nothing is missing here.")
        stated = ComposerOutput(answer_summary="x", user_facing_answer=f"Gaps:\n- {gap.text}")
        assert "composer.known_gap" in guard_composed(silent, composer_input).failed_checks
        assert "composer.known_gap" not in guard_composed(stated, composer_input).failed_checks


_OWN_GAPS = st.lists(
    st.builds(
        "{} {} could not be checked".format,
        st.sampled_from(["The heap", "Disk usage on node-7", "The retry budget", "GC pauses", "订单 123 的链路"]),
        st.sampled_from(["of payment-service", "before 10:00", "in the window", "此前"]),
    ),
    min_size=1,
    max_size=4,
    unique=True,
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(own=_OWN_GAPS, verdict=st.sampled_from(VERDICTS), unsupported=st.integers(0, 3))
def test_a_known_gap_leads_the_gaps_so_no_shorter_rendering_drops_it_first(
    tmp_path_factory: pytest.TempPathFactory, own: list[str], verdict: tuple[str, str], unsupported: int
) -> None:
    """However many gaps the Executor lists and claims fail, a failed call and a named service
    without data lead the gaps: a chat message at a size that shows only its first gaps (and
    counts the rest) shows them, not a claim left unconfirmed."""
    extra = [
        claim(f"claim-{n}", f"Heap use rose {n}0% on payment-service.", [binding([394], "no such line here")])
        for n in range(2, 2 + unsupported)
    ]
    checks = [{"claim_id": "claim-1", "verification": verdict[1], "detail": "…"}]
    checks += [{"claim_id": c["claim_id"], "verification": "unsupported", "detail": "…"} for c in extra]
    verifier = json.dumps(
        {"verdict": verdict[0], "groundedness_score": 0.5, "rationale": "logs", "claim_checks": checks}
    )
    executor = json.dumps(v2([CLAIM, *extra], missing_info=own))
    roles = scripted_roles(planner=PLAN, executor=executor, verifier=verifier)
    store = SessionStore(f"sqlite:///{tmp_path_factory.mktemp('gaps') / 'store.db'}")  # the invocation ids repeat
    result = DiagnosisPipeline(store, roles, options=PipelineOptions(max_rounds=1)).run(
        QUESTION, on_session=evidence(store)
    )
    report = build_report(
        answer_document(result, {}), question=QUESTION, lang="en", link="http://x", redactor=default_redactor()
    )
    for detail in DETAILS:
        shown = [item.text for group in compact(report, detail).groups for item in group.items]
        if detail.gaps >= 2:
            assert any("query_metrics" in text for text in shown), (detail, report.gaps)
            assert any("billing-service" in text for text in shown), (detail, report.gaps)
        elif detail.gaps == 1 or detail.facts > 0:  # no fact is shown without what could not be checked
            assert any("query_metrics" in t or "billing-service" in t for t in shown), (detail, report.gaps)
