"""What a measure was: the metric asked about and its value at the moment asked, quoted from
the query_metrics output line that shows it — generated outputs, and the demo as asked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.builders import answer_line
from veridiag.agents.offline.value import NEAREST, asked_metric, point_line
from veridiag.text.render import iso

START = datetime(2026, 7, 7, 15, 0, tzinfo=UTC)


def _output(values: list[float], step: int) -> str:
    points = [f"{iso(START + timedelta(minutes=i * step))} {v:g}ms" for i, v in enumerate(values)]
    return "\n".join(["query_metrics service=x metric=y", "window: min …", "points:", *points])


@given(
    values=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=60),
    step=st.sampled_from([1, 2, 5]),
    offset=st.integers(-20, 400),
)
def test_the_point_nearest_the_moment_is_quoted_as_written(values: list[float], step: int, offset: int) -> None:
    text = _output(values, step)
    at = START + timedelta(minutes=offset)
    found = point_line(text, at)
    times = [START + timedelta(minutes=i * step) for i in range(len(values))]
    nearest = min(times, key=lambda t: abs((t - at).total_seconds()))
    if abs(nearest - at) > NEAREST:
        assert found is None  # no point near the moment: no value "at" it
        return
    assert found is not None
    moment, line, shown = found
    assert abs(moment - at) == abs(nearest - at)
    assert line in text.splitlines() and line.endswith(shown)


@given(values=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=30))
def test_without_a_moment_the_newest_point_is_the_value(values: list[float]) -> None:
    found = point_line(_output(values, 1), None)
    assert found is not None and found[0] == START + timedelta(minutes=len(values) - 1)


def test_an_output_without_points_gives_no_value() -> None:
    assert point_line("query_metrics …\nwindow: min 1ms, max 2ms\n", None) is None


def test_the_metric_named_by_most_parts_wins_and_the_service_name_names_none() -> None:
    metrics = ["mysql_lock_wait_p99_seconds", "mysql_threads_running", "mysql_slow_queries_per_minute"]
    assert asked_metric("how high did the threads of mysql go?", {"latency"}, metrics, "mysql") == metrics[1]
    assert asked_metric("mysql 的慢查询是多少", set(), metrics, "mysql") == metrics[2]
    assert asked_metric("what is mysql's value?", set(), metrics, "mysql") is None
    latency = ["http_request_p50_ms", "http_request_p99_ms"]
    assert asked_metric("what was the p99 latency?", {"latency"}, latency) == "http_request_p99_ms"
    assert asked_metric("X 的 p99 是多少", set(), ["mysql_threads_running", *latency]) == "http_request_p99_ms"


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        (
            "what was order-service's p99 latency at 15:20?",
            "http_request_p99_ms of order-service at 15:20: 8898ms; its peak during 14:50–15:50 was 9798ms (15:19).",
        ),
        ("order-service 15:20 的 p99 延迟是多少？", "order-service 的 http_request_p99_ms 在 15:20 为 8898ms；"),
        ("how high did the threads of mysql go around 15:20?", "mysql_threads_running of mysql at 15:20: 89 threads"),
        ("payment-service 的错误率是多少？10:05", "payment-service 的 http_error_percent 在 10:05 为 18.56%"),
        # a gauge counted ("how many threads"), a measure by part of its name, no service named
        ("how many threads were running on mysql at 15:18?", "mysql_threads_running of mysql at 15:18: 96 threads"),
        (
            "how many pending connections did payment-service have at 10:10?",
            "hikaricp_connections_pending of payment-service at 10:10: 34 connections",
        ),
        ("what was mysql's lock wait at 15:30?", "mysql_lock_wait_p99_seconds of mysql at 15:30: 47.85s"),
        ("how high did the threads go?", "mysql_threads_running of mysql was 5 threads at its newest point"),
    ],
)
def test_what_a_measure_was_is_answered_by_its_value(demo: Any, question: str, opening: str) -> None:
    result = demo.pipeline.run(question)
    assert result.status == "completed" and result.answer is not None
    headline = answer_line(result.answer)[1]  # after its label (issue 28)
    assert headline.startswith(opening), headline
    assert "推断" not in headline.split("。")[0] and "inferred" not in headline.split(".")[0]


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("is it cpu?", "Not CPU: none of the 6 services examined changed in CPU beyond its own history during"),
        ("cpu 打满了吗？10点", "不是CPU：检查的 6 个服务在 09:30–10:30 都没有超出自身历史的CPU变化"),
        ("是不是内存泄漏？", "内存有变化，但不是变化最大的：inventory-service，jvm_heap_used_mb"),
    ],
)
def test_a_kind_of_fault_asked_about_is_answered_yes_or_no_first(demo: Any, question: str, opening: str) -> None:
    result = demo.pipeline.run(question)
    assert result.answer is not None
    headline = answer_line(result.answer)[1]  # after its label (issue 28)
    assert headline.startswith(opening), headline


def test_a_kind_the_data_does_not_measure_is_never_cleared(demo: Any) -> None:
    """The demo holds no network metric: "is it the network?" is no "Not network" — a gap says why."""
    result = demo.pipeline.run("is it the network?")
    assert result.answer is not None
    assert "Not network" not in result.answer and "not network" not in result.answer.lower().split("\n")[2]
    assert "the data holds no network metric" in result.answer


@pytest.mark.parametrize(
    ("question", "unseen", "never"),
    [
        ("is it the network at 10:30 on 2026-03-02?", "No network series changed", "Not network"),
        ("2026-03-02 10:30 是不是网络问题？", "未见网络指标变化", "不是网络"),
    ],
)
def test_traffic_series_that_did_not_change_never_clear_the_network(
    tmp_path: Any, question: str, unseen: str, never: str
) -> None:
    """Network series count bytes: a delay or loss leaves them as they were. Unchanged, they do
    not make the answer "not the network"; what they cannot show is a gap, never part of a fact."""
    from veridiag.config import Settings
    from veridiag.pipeline.factory import assemble
    from veridiag.tools.backends.embedded import EmbeddedEnvironment

    settings = Settings(home=tmp_path / "home", embedded={"load_demo": False})
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    start = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
    rows = []
    for minute in range(180):
        at = start + timedelta(minutes=minute)
        rows.append(("shop", "network_receive_bytes", "bytes", at, 5000.0 + (minute % 7) * 10))
        rows.append(
            ("shop", "pod_latency_p99", "ms", at, 40.0 + (minute % 5) + (400.0 if 150 <= minute < 160 else 0.0))
        )
    env.add_metric_points(rows)
    env.close()
    assembly = assemble(settings)
    try:
        result = assembly.pipeline.run(question)
    finally:
        assembly.close()
    assert result.answer is not None
    first = answer_line(result.answer)[1]
    assert first.startswith(unseen) and never not in result.answer, result.answer
    # the home holds no log line at all: "no line contains 'network'" would be no finding
    assert "logged no line containing" not in result.answer and "的日志" not in result.answer, result.answer
    assert ("latency" in result.answer.split(first, 1)[1]) or ("延迟" in result.answer.split(first, 1)[1])
