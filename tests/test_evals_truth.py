"""Truth labels on eval cases (issue 27 D8): the rates count what reached the user, a bad
label is refused with its file and field, and the command reports the rates additively."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veridiag.cli.app import app
from veridiag.evals import ClaimOutcome, FixtureError, load_case, load_suite, run_suite, truth_rates
from veridiag.evals.fixtures import MISTAKE_KINDS

runner = CliRunner()

OUTPUT = "2026-07-07T10:01:02Z ERROR payment-service order=123 ERR_TIMEOUT request timeout cost=5300ms"


def case_text(case_id: str, claims: list[tuple[str, str, str]], verdicts: dict[str, str], truth: str) -> str:
    """A scripted case: claims (id, text, excerpt) citing one log line, the verifier's labels, the truth block."""
    body = [
        {
            "claim_id": claim_id,
            "claim_type": "symptom",
            "claim_text": text,
            "support_level": "direct",
            "evidence_bindings": [
                {
                    "source_type": "tool_trace",
                    "tool_name": "query_logs",
                    "source_invocation_ids": [7],
                    "evidence_excerpt": excerpt,
                }
            ],
        }
        for claim_id, text, excerpt in claims
    ]
    executor = json.dumps({"answer_version": "executor_evidence_v2", "claims": body}, ensure_ascii=False)
    checks = [{"claim_id": claim_id, "verification": label} for claim_id, label in verdicts.items()]
    verdict = "REJECT" if "contradicted" in verdicts.values() else "PASS"
    verifier = json.dumps({"verdict": verdict, "claim_checks": checks})
    return (
        f"id: {case_id}\nquery: 订单123支付失败\nsource: written for the test\n"
        f"invocations:\n  - id: 7\n    tool_name: query_logs\n    output: {json.dumps(OUTPUT)}\n"
        f"executor_output: {json.dumps(executor, ensure_ascii=False)}\n"
        f"verifier_output: {json.dumps(verifier)}\n"
        f"claim_truth:\n{truth}"
    )


def outcome(truth: bool, shown: str, mistake: str | None = None) -> ClaimOutcome:
    return ClaimOutcome("c", "symptom", "text", truth, mistake, shown, None)  # type: ignore[arg-type]


def test_rates_count_what_reaches_the_user() -> None:
    sessions = [
        ("PASS", [outcome(True, "confirmed"), outcome(True, "inferred"), outcome(False, "inferred", "wrong_number")]),
        ("REJECT", [outcome(True, "withheld"), outcome(True, "confirmed")]),
        ("REJECT", [outcome(False, "withheld", "direction"), outcome(True, "confirmed")]),
        ("LOW_CONFID", [outcome(False, "confirmed", "wrong_number")]),
        ("PASS", []),  # not labelled: not counted
    ]
    rates = truth_rates(sessions)
    assert (rates.true_claims, rates.true_kept) == (5, 4)
    assert (rates.false_claims, rates.false_caught) == (3, 2)
    assert rates.faithful_kept == pytest.approx(0.8)
    assert rates.mistakes_caught == pytest.approx(2 / 3)
    assert (rates.labelled_sessions, rates.reject_sessions) == (4, 2)
    assert (rates.sessions_without_false_claims, rates.reject_without_false_claims) == (1, 1)
    assert rates.by_kind == {"wrong_number": [1, 2], "direction": [1, 1]}
    assert rates.public()["mistakes_by_kind"]["direction"] == [1, 1]
    assert truth_rates([]).faithful_kept is None


def test_a_labelled_case_reports_each_claim(tmp_path: Path) -> None:
    text = case_text(
        "labelled",
        [
            ("claim-1", "订单123出现 ERR_TIMEOUT。", "order=123 ERR_TIMEOUT"),
            ("claim-2", "订单123耗时 53 秒。", "cost=5300ms"),
        ],
        {"claim-1": "direct_observation", "claim-2": "contradicted"},
        "  claim-1: {truth: true}\n  claim-2: {truth: false, mistake: wrong_number, note: 5300ms is 5.3 s}\n",
    )
    (tmp_path / "case.yaml").write_text(text, encoding="utf-8")
    [result] = run_suite(load_suite([tmp_path]))
    claims = {c.claim_id: c for c in result.claims}
    assert claims["claim-1"].truth and claims["claim-1"].kept
    assert not claims["claim-2"].truth and claims["claim-2"].caught and claims["claim-2"].shown == "withheld"
    assert claims["claim-2"].mistake == "wrong_number"
    public = result.public()
    assert [c["claim_id"] for c in public["claims"]] == ["claim-1", "claim-2"]
    rates = truth_rates([(result.verdict, result.claims)])
    assert (rates.true_kept, rates.true_claims, rates.false_caught, rates.false_claims) == (1, 1, 1, 1)


def test_the_command_reports_rates_additively(tmp_path: Path) -> None:
    text = case_text(
        "cli",
        [("claim-1", "订单123出现 ERR_TIMEOUT。", "order=123 ERR_TIMEOUT")],
        {"claim-1": "direct_observation"},
        "  claim-1: {truth: true}\n",
    )
    (tmp_path / "case.yaml").write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["eval", str(tmp_path), "--json"])
    data = json.loads(result.stdout)
    assert {"total", "passed", "failed"} <= set(data["summary"])
    truth = data["summary"]["truth"]
    assert truth["true_claims"] == 1 and truth["faithful_kept_rate"] == 1.0 and truth["mistakes_caught_rate"] is None
    assert data["cases"][0]["claims"][0]["shown"] == "confirmed"
    text_run = runner.invoke(app, ["eval", str(tmp_path)])
    assert "faithful kept: 1/1" in text_run.stdout


def test_an_unlabelled_suite_reports_no_truth(tmp_path: Path) -> None:
    text = case_text("plain", [("claim-1", "订单123出现 ERR_TIMEOUT。", "order=123 ERR_TIMEOUT")], {}, "")
    (tmp_path / "case.yaml").write_text(text.replace("claim_truth:\n", ""), encoding="utf-8")
    data = json.loads(runner.invoke(app, ["eval", str(tmp_path), "--json"]).stdout)
    assert "truth" not in data["summary"] and "claims" not in data["cases"][0]


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("{truth: false, mistake: typo_kind}", "unknown mistake kind 'typo_kind'"),
        ("{truth: false}", "a false claim names its mistake"),
        ("{truth: true, mistake: wrong_number}", "a true claim names no mistake"),
        ("{truth: maybe}", "claim_truth"),
        ("{truth: true, severity: high}", "severity"),
    ],
)
def test_a_bad_label_is_refused(tmp_path: Path, label: str, message: str) -> None:
    text = case_text(
        "bad", [("claim-1", "订单123出现 ERR_TIMEOUT。", "order=123 ERR_TIMEOUT")], {}, f"  claim-1: {label}\n"
    )
    path = tmp_path / "case.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FixtureError, match=message) as info:
        load_case(path)
    assert str(path) in str(info.value)


def test_every_mistake_kind_is_accepted(tmp_path: Path) -> None:
    for kind in MISTAKE_KINDS:
        text = case_text("k", [("claim-1", "x", "order=123")], {}, f"  claim-1: {{truth: false, mistake: {kind}}}\n")
        path = tmp_path / f"{kind}.yaml"
        path.write_text(text, encoding="utf-8")
        assert load_case(path).claim_truth["claim-1"].mistake == kind


def test_a_label_for_a_missing_claim_fails_the_case(tmp_path: Path) -> None:
    text = case_text(
        "missing",
        [("claim-1", "订单123出现 ERR_TIMEOUT。", "order=123 ERR_TIMEOUT"), ("claim-3", "y", "order=123")],
        {"claim-1": "direct_observation"},
        "  claim-1: {truth: true}\n  claim-2: {truth: true}\n",
    )
    (tmp_path / "case.yaml").write_text(text, encoding="utf-8")
    [result] = run_suite(load_suite([tmp_path]))
    assert not result.passed
    assert any("claim-2" in f and "lacks" in f for f in result.failures)
    assert any("claim-3 has no claim_truth label" in f for f in result.failures)


HONEST = Path(__file__).resolve().parents[1] / "evals" / "honest"


def test_the_honest_set_is_labelled_and_quotes_its_outputs() -> None:
    """evals/honest: about two dozen sessions in both languages, every claim labelled, about a
    fifth of them false, each session naming its source, every excerpt copied from the output it cites."""
    cases = load_suite([HONEST])
    assert len(cases) >= 20
    assert {"zh", "en"} <= {"zh" if any("\u4e00" <= ch <= "\u9fff" for ch in c.query) else "en" for c in cases}
    labels = [label for case in cases for label in case.claim_truth.values()]
    false = [label for label in labels if not label.truth]
    assert 0.12 <= len(false) / len(labels) <= 0.3
    assert len({label.mistake for label in false}) >= 8
    for case in cases:
        assert case.source, case.id
        outputs = {invocation.id: invocation.output for invocation in case.invocations}
        executor = json.loads(case.executor_output or "")
        assert {c["claim_id"] for c in executor["claims"]} == set(case.claim_truth), case.id
        for claim in executor["claims"]:
            for binding in claim["evidence_bindings"]:
                cited = " ".join(outputs[i] for i in binding["source_invocation_ids"])
                assert binding["evidence_excerpt"] in cited, (case.id, claim["claim_id"])


def test_the_honest_set_runs_and_reports_rates() -> None:
    results = run_suite(load_suite([HONEST]))
    failed = {r.id: r.failures for r in results if not r.passed}
    assert not failed, failed
    rates = truth_rates([(r.verdict, r.claims) for r in results])
    assert rates.labelled_sessions == len(results)
    assert rates.faithful_kept is not None and rates.mistakes_caught is not None


#: The held-out sets, each written blind to the checks' code, and the rates measured on them when
#: this test was written (2026-12-07): kept true claims and caught mistakes may rise, never fall
#: (a floor, as a regression guard; the figures and what is still missed are in the README).
_HELD_OUT_FLOORS = {
    "heldout": (87, 30),
    "blind": (105, 21),
    "blind2": (82, 20),
    "blind3": (64, 21),
    # "两次 canceled（都是 oimagea5.ydstatic.com:80）" quotes one of the two lines it counts: a name
    # every member shares is no count's alone (blind7's "pri 都是 …"), so it is an inference
    "blind4": (60, 20),
    "blind5": (40, 13),
    "blind6": (61, 16),
    "blind7": (63, 22),
    # claim-3 of its HealthApp session relabelled false (its epoch is 16:00 UTC, not 00:00): 68 of 76
    "blind8": (68, 24),
    "blind9": (58, 26),
    "blind10": (73, 42),
    "blind11": (65, 43),
    "blind12": (40, 39),
}


@pytest.mark.parametrize("name", sorted(_HELD_OUT_FLOORS))
def test_a_held_out_set_keeps_and_catches_no_less_than_measured(name: str) -> None:
    cases = load_suite([HONEST.parent / name])
    for case in cases:  # every excerpt copied from the output it cites
        outputs = {invocation.id: invocation.output for invocation in case.invocations}
        for claim in json.loads(case.executor_output or "")["claims"]:
            for binding in claim["evidence_bindings"]:
                assert binding["evidence_excerpt"] in " ".join(outputs[i] for i in binding["source_invocation_ids"])
    results = run_suite(cases)
    assert not {r.id: r.failures for r in results if not r.passed}
    rates = truth_rates([(r.verdict, r.claims) for r in results])
    kept, caught = _HELD_OUT_FLOORS[name]
    assert rates.true_kept >= kept and rates.false_caught >= caught, rates
