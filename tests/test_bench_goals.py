"""The goals table: data in goals.yaml, checked against whatever a bench report measured."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from veridiag.bench.goals import Goal, check_goals, goals

#: The keys issue 15 asks `veridiag bench --json` to report, each with a goal.
PROMISED = {
    "tools.query_logs_p99_ms",
    "tools.query_logs_10m_p99_ms",
    "tools.import_10m_seconds",
    "tools.import_10m_rss_mb",
    "sessions.list_p50_ms",
    "sessions.bytes_per_session",
    "api.requests_per_s",
    "gatekeeper.record_ms_per_64kb",
    "startup.help_ms",
    "startup.ask_ms",
    "api.idle_rss_mb",
    "clickhouse.query_logs_10m_p99_ms",  # issue 18
    "traces.clickhouse_10m_p99_ms",  # issue 29
    "traces.embedded_import_seconds",
    "traces.embedded_query_traces_p99_ms",
    "pipeline.p50_ms",  # issue 27
    "gatekeeper.p50_ms",
}


def by_key(report: dict[str, object]) -> dict[str, tuple[float | None, str]]:
    return {check.key: (check.value, check.status) for check in check_goals(report)}


def test_every_promised_key_has_a_goal() -> None:
    keys = {goal.key for goal in goals()} | {goal.per for goal in goals() if goal.per}
    assert PROMISED | {"api.inprocess_sessions_per_s", "startup.python_ms"} <= keys


def test_bounds_are_checked_in_their_direction() -> None:
    checks = by_key(
        {"tools": {"query_logs_p99_ms": 149.9, "query_logs_10m_p99_ms": 300.5}, "gatekeeper": {"speedup": 30}}
    )
    assert checks["tools.query_logs_p99_ms"] == (149.9, "met")
    assert checks["tools.query_logs_10m_p99_ms"] == (300.5, "missed")
    assert checks["gatekeeper.speedup"] == (30.0, "met")  # at_least is inclusive
    checks = by_key({"gatekeeper": {"p50_ms": 4.2}, "pipeline": {"p50_ms": 14.9}})
    assert checks["gatekeeper.p50_ms"] == (4.2, "missed")
    assert checks["pipeline.p50_ms"] == (14.9, "met")


def test_a_ratio_goal_divides_by_its_baseline_from_the_same_report() -> None:
    checks = by_key({"startup": {"help_ms": 300.0, "python_ms": 20.0, "ask_ms": 2100.0}})
    assert checks["startup.help_ms"] == (15.0, "met")
    assert checks["startup.ask_ms"] == (105.0, "missed")  # a guard at 100×: its libraries alone exceed 40×
    assert by_key({"startup": {"python_ms": 20.0, "ask_ms": 1900.0}})["startup.ask_ms"] == (95.0, "met")
    checks = by_key({"api": {"requests_per_s": 60.0, "inprocess_sessions_per_s": 100.0, "errors": 1}})
    assert checks["api.requests_per_s"] == (0.6, "missed")
    assert checks["api.errors"] == (1.0, "missed")


@pytest.mark.parametrize(
    "report",
    [
        {},  # the benchmark did not run
        {"startup": {"help_ms": 300.0}},  # no baseline
        {"startup": {"help_ms": 300.0, "python_ms": 0}},  # a baseline of zero measures nothing
        {"startup": {"help_ms": True, "python_ms": 20.0}},  # not a number
        {"startup": {"help_ms": "fast", "python_ms": 20.0}},
        {"startup": [1, 2]},
    ],
)
def test_what_was_not_measured_is_never_met(report: dict[str, object]) -> None:
    assert by_key(report)["startup.help_ms"] == (None, "not measured")


def test_a_goal_needs_exactly_one_bound() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        Goal(what="x", key="a.b", at_most=1, at_least=0)
    with pytest.raises(ValidationError, match="exactly one"):
        Goal(what="x", key="a.b")
    assert Goal(what="x", key="a.b", per="a.c", at_least=0.7).target == "≥ 0.7×"
