"""Red team 47: a value of another series or another unit reached CONFIRMED. A percentile swap
("The p50 nearly doubled, from 6.69 ms to 12.35 ms" quoting a p99 line) is another series' value:
at most an inference. MySQL's slow log writes Query_time and Lock_time in seconds: "Query_time:
41.2" is no "41.2 毫秒" (units.yaml field_units, whole field names)."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.builders import SESSION, _gatekeeper, binding, claim, invocation, rule_outcome, v2
from veridiag.contracts import InMemoryInvocations

_PERCENTILES = ["p50", "p90", "p95", "p99"]


@given(
    st.sampled_from(_PERCENTILES),
    st.sampled_from(_PERCENTILES),
    st.integers(101, 999),
    st.integers(1001, 4999),
    st.sampled_from(
        [
            "The {p} nearly doubled, from {a} ms to {b} ms.",
            "{svc} 的 {p} 从 {a} 毫秒升到 {b} 毫秒。",
            "Across the window, {svc}'s {p} rose from {a} ms to {b} ms.",
        ]
    ),
)
def test_a_percentile_swap_is_another_series_value(line_p: str, claim_p: str, low: int, high: int, form: str) -> None:
    a, b = f"{low / 100:.2f}", f"{high / 100:.2f}"
    line = f"ts-price-service duration {line_p}: {b}ms in the window, {a}ms in the baseline (×{high / low:.2f})"
    output = "query_traces service=ts-price-service\n" + line
    claim = form.format(p=claim_p, a=a, b=b, svc="ts-price-service")
    outcome, reason = rule_outcome("claim.stated_content", claim, output, line)
    if claim_p == line_p:
        assert "on a line of the" not in reason, reason
    else:
        assert outcome == "warn" and "on a line of the" in reason, (claim, reason)


@given(
    st.sampled_from(["Query_time", "Lock_time"]),
    st.integers(11, 999),
    st.sampled_from([("秒", True), ("s", True), ("seconds", True), ("毫秒", False), ("ms", False)]),
)
def test_a_slow_log_time_is_in_seconds(field: str, tenths: int, unit: tuple[str, bool]) -> None:
    value = f"{tenths / 10:g}"
    assume("." in value)
    line = f"2026-07-07T15:00:07.052Z WARN mysql [Slow query] {field}: {value} Rows_examined: 184302 UPDATE t_stock"
    output = "query_logs service=mysql\n" + line
    spelled, right = unit
    text = f"那条语句的 {field} 是 {value} {spelled}。"
    store = InMemoryInvocations([invocation(394, output=output)])
    report = _gatekeeper().validate(
        v2([claim(text=text, bindings=[binding([394], line)])]), session_id=SESSION, invocations=store
    )
    outcomes = [c.outcome for t in report.claim_traces for c in t.checks if c.rule_id == "claim.entity_grounding"]
    assert all(o == "pass" for o in outcomes) is right, (text, outcomes)


@given(
    st.sampled_from(["pod_server_latency_{p}", "http_request_{p}_ms", "mysql_lock_wait_{p}_seconds"]),
    st.sampled_from(_PERCENTILES),
    st.sampled_from(_PERCENTILES),
    st.integers(11, 999),
    st.sampled_from(
        [
            "Server-side {p} latency jumped to {v} s at 11:16, about 31 times its usual 0.07 s median.",
            "服务端 {p} 延迟在 11:16 冲到 {v} 秒。",
        ]
    ),
)
def test_a_percentile_other_than_its_series_is_another_series_value(
    metric: str, series_p: str, claim_p: str, tenths: int, form: str
) -> None:
    """A claim naming p50 of a value read from a p99 series (the series named by its metric)."""
    value = f"{tenths / 10:g}"
    name = metric.format(p=series_p)
    output = f"query_metrics service=ts-seat-service metric={name}\n2026-07-07T11:16:10Z {value}s"
    line = output.splitlines()[1]
    text = form.format(p=claim_p, v=value)
    store = InMemoryInvocations(
        [
            invocation(
                394, tool_name="query_metrics", output=output, arguments={"metric": name, "service": "ts-seat-service"}
            )
        ]
    )
    report = _gatekeeper().validate(
        v2([claim(text=text, bindings=[binding([394], line, tool_name="query_metrics")])]),
        session_id=SESSION,
        invocations=store,
    )
    reasons = [c.reason for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    swapped = any("the series it cites are" in r for r in reasons)
    assert swapped is (claim_p != series_p), (text, name, reasons)
