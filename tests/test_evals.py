"""The eval harness: the regression suite passes, broken fixtures are refused with file,
line and field, and a failing expectation fails the case (and the command)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veridiag.cli.app import app
from veridiag.evals import FixtureError, load_case, load_suite, run_suite

SUITE = Path(__file__).resolve().parents[1] / "evals" / "regression"
REALDATA = Path(__file__).resolve().parents[1] / "evals" / "realdata"
runner = CliRunner()

GOOD = """
id: tiny
query: 订单123支付失败
invocations:
  - id: 7
    tool_name: query_logs
    output: "2026-07-07T10:01:02Z ERROR payment-service order=123 ERR_TIMEOUT request timeout cost=5300ms"
executor_output: |
  {"answer_version": "executor_evidence_v2", "claims": [{"claim_id": "claim-1", "claim_type": "symptom",
   "claim_text": "订单123出现 ERR_TIMEOUT。", "support_level": "direct",
   "evidence_bindings": [{"source_type": "tool_trace", "tool_name": "query_logs", "source_invocation_ids": [7],
   "evidence_excerpt": "order=123 ERR_TIMEOUT"}]}]}
verifier_output: '{"verdict": "PASS", "claim_checks": [{"claim_id": "claim-1", "verification": "direct_observation"}]}'
expect:
  verdict: PASS
  allowed_claims: [claim-1]
"""


def write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_regression_suite_passes_quickly() -> None:
    cases = load_suite([SUITE])
    assert len(cases) >= 40
    assert {"zh", "en"} <= {("zh" if any("\u4e00" <= ch <= "\u9fff" for ch in c.query) else "en") for c in cases}
    started = time.process_time()  # this process's CPU: other test workers do not count
    results = run_suite(cases)
    elapsed = time.process_time() - started
    failed = {r.id: r.failures for r in results if not r.passed}
    assert not failed, failed
    assert elapsed < 30, f"suite took {elapsed:.1f}s"
    verdicts = {r.verdict for r in results}
    assert verdicts == {"PASS", "LOW_CONFID", "REJECT"}


def test_the_realdata_suite_passes() -> None:
    """Questions on imported real-format data (NAB, Apache 2005, syslog, JSON lines, a change
    feed) answered by the offline engine: named failing service, period and template, every
    number grounded, nothing invented for a quiet period."""
    cases = load_suite([REALDATA])
    assert len(cases) >= 10 and all(case.engine == "offline" for case in cases)
    results = run_suite(cases)
    failed = {r.id: r.failures for r in results if not r.passed}
    assert not failed, failed
    assert all(r.verdict != "REJECT" for r in results)


def test_an_offline_case_fails_when_its_data_says_otherwise(tmp_path: Path) -> None:
    """The realdata expectations can fail: a claim about the wrong service, a number the
    output lacks, a cause for a quiet period."""
    (tmp_path / "cpu.csv").write_text(
        "timestamp,value\n"
        + "".join(
            f"2014-02-16 {h:02d}:{m:02d}:00,{40 + (h * 7 + m) % 5}\n" for h in range(24) for m in range(0, 60, 5)
        ),
        encoding="utf-8",
    )
    case = write(
        tmp_path,
        "id: quiet-but-expects-a-spike\nengine: offline\nquery: edge-api 在 2014-02-16 下午有问题吗？\n"
        "data:\n  metrics:\n    - {file: cpu.csv, service: edge-api, metric: cpu, unit: '%'}\n"
        "expect:\n  answer_contains: [异常升高]\n  answer_matches: ['峰值 99']\n  numbers_grounded: true\n",
    )
    (result,) = run_suite([load_case(case)])
    assert not result.passed
    assert any("异常升高" in f for f in result.failures) and any("峰值 99" in f for f in result.failures)
    assert not any("found in no tool output" in f for f in result.failures), "its own numbers are grounded"


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        (("verdict: PASS", "verdict: PAS"), "expect.verdict: Input should be 'PASS'"),
        (("  allowed_claims: [claim-1]", "  alowed_claims: [claim-1]"), "expect.alowed_claims: Extra inputs"),
        (("  - id: 7", "  - id: -7"), "invocations.0.id: Input should be greater than 0"),
        (("executor_output: |", "executor_outputz: |"), "exactly one of executor_output"),
        (("query: 订单123支付失败", "query: ''"), "query: String should have at least 1 character"),
    ],
)
def test_broken_fixtures_name_file_line_and_field(tmp_path: Path, mutation: tuple[str, str], message: str) -> None:
    path = write(tmp_path, GOOD.replace(*mutation))
    with pytest.raises(FixtureError) as raised:
        load_case(path)
    assert str(path) in str(raised.value) and message in str(raised.value)
    assert f"{path}:" in str(raised.value) and str(raised.value).split(":")[1].isdigit(), "a line number"


def test_invalid_yaml_and_duplicate_ids(tmp_path: Path) -> None:
    bad = write(tmp_path, "id: [unclosed\n", "bad.yaml")
    with pytest.raises(FixtureError, match=r"bad\.yaml:\d+: invalid YAML"):
        load_case(bad)
    bad.unlink()
    write(tmp_path, GOOD, "a.yaml")
    write(tmp_path, GOOD, "b.yaml")
    with pytest.raises(FixtureError, match="already used"):
        load_suite([tmp_path])


def test_a_wrong_expectation_fails_the_case(tmp_path: Path) -> None:
    case = load_case(write(tmp_path, GOOD.replace("verdict: PASS", "verdict: REJECT")))
    (result,) = run_suite([case])
    assert not result.passed and result.failures == ["verdict PASS, expected REJECT"]


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    good = write(tmp_path, GOOD, "good.yaml")
    ok = runner.invoke(app, ["eval", str(good), "--json"])
    assert ok.exit_code == 0, ok.stderr
    document = json.loads(ok.stdout)
    assert document["summary"] == {"total": 1, "passed": 1, "failed": 0}
    assert set(document["cases"][0]) == {
        "id",
        "passed",
        "failures",
        "verdict",
        "parse_status",
        "gatekeeper_status",
        "failed_rules",
        "allowed_claims",
        "answer_source",
        "final_answer",
    }
    failing = write(
        tmp_path, GOOD.replace("id: tiny", "id: tiny2").replace("verdict: PASS", "verdict: REJECT"), "f.yaml"
    )
    failed = runner.invoke(app, ["eval", str(good), str(failing)])
    assert failed.exit_code == 1 and "1 passed, 1 failed" in failed.stdout
    broken = write(tmp_path, GOOD.replace("verdict: PASS", "verdict: MAYBE"), "broken.yaml")
    refused = runner.invoke(app, ["eval", str(broken)])
    assert refused.exit_code == 2 and "broken.yaml" in refused.stderr
    filtered = runner.invoke(app, ["eval", str(SUITE), "--filter", "clean-pass-zh", "--json"])
    assert json.loads(filtered.stdout)["summary"]["total"] == 1


@st.composite
def _unreadable_fixtures(draw: st.DrawFn) -> str:
    """A fixture no run can read: a field nested deeper than the YAML parsers recurse (flow or
    block style, lists or mappings), or an invocation id past the store's 64-bit integers."""
    if draw(st.booleans()):
        return GOOD.replace("  - id: 7", f"  - id: {draw(st.integers(2**63, 10**40))}").replace("[7]", "[1]")
    depth = draw(st.integers(1500, 6000))
    style = draw(st.sampled_from(["list", "map"]))
    nested = "[" * depth + "]" * depth if style == "list" else "{a: " * depth + "1" + "}" * depth
    return GOOD.replace("    tool_name: query_logs\n", f"    tool_name: query_logs\n    arguments: {{q: {nested}}}\n")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_unreadable_fixtures())
def test_a_fixture_no_run_can_read_is_an_invalid_fixture_never_a_crash(tmp_path: Path, text: str) -> None:
    """`veridiag eval` says which file is invalid (exit 2) — no traceback, no case failed by setup."""
    path = write(tmp_path, text)
    with pytest.raises(FixtureError, match=r"case\.yaml:"):
        load_case(path)
    result = runner.invoke(app, ["eval", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output[-500:]
