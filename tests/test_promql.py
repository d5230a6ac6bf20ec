"""tools/promql.py: a metric's kind, the PromQL it deserves, label values that cannot break out
of their string (read back by a real PromQL parser), and a counter's rate as Prometheus has it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import promql_parser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veridiag.tools.promql import (
    KindFound,
    PromQLError,
    at_steps,
    counter_rate,
    kind_from_metadata,
    kind_from_name,
    kind_from_values,
    label_literal,
    selector,
    shown,
    step_increases,
)

T0 = datetime(2026, 7, 7, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("metric", "kind"),
    [
        ("http_requests_total", "counter"),
        ("http_request_duration_seconds_count", "counter"),
        ("http_request_duration_seconds_sum", "counter"),
        ("http_request_duration_seconds_bucket", "histogram"),
        ("hikaricp_connections_active", "gauge"),
        ("total_memory_bytes", "gauge"),  # a suffix, not a word anywhere in the name
    ],
)
def test_kind_from_the_naming_conventions(metric: str, kind: str) -> None:
    assert kind_from_name(metric).kind == kind


def test_a_count_per_interval_named_like_a_counter_is_read_as_a_gauge() -> None:
    """CloudWatch's RequestCount (NAB's elb_request_count): a sum per 5 minutes that rises and
    falls. Rated as a counter, each fall became a restart and the peak of 656 requests "1.6/s"."""
    per_interval = [48.0, 175.0, 656.0, 256.0, 195.0, 338.0, 13.0, 145.0, 60.0, 90.0, 41.0, 77.0, 30.0, 52.0]
    found = kind_from_values(kind_from_name("elb_request_count"), per_interval)
    assert (found.kind, found.source) == ("gauge", "values")
    assert "not cumulative" in found.reason
    # a cumulative counter, restarted once, stays one; so does anything metadata declares
    cumulative = [float(v) for v in range(0, 700, 50)] + [3.0, 60.0, 120.0]
    assert kind_from_values(kind_from_name("http_requests_total"), cumulative).kind == "counter"
    metadata: dict[str, Any] = {"requests_total": meta("counter")}
    declared = kind_from_metadata("requests_total", metadata)
    assert declared is not None and kind_from_values(declared, per_interval) is declared
    assert kind_from_values(kind_from_name("elb_request_count"), per_interval[:5]).kind == "counter"  # too few


def meta(kind: str) -> list[dict[str, Any]]:
    return [{"type": kind, "help": "", "unit": ""}]


@pytest.mark.parametrize(
    ("metric", "metadata", "kind"),
    [
        ("http_requests_total", {"http_requests": meta("counter")}, "counter"),  # OpenMetrics family name
        ("queue_total", {"queue_total": meta("gauge")}, "gauge"),  # metadata beats the name
        ("latency_seconds", {"latency_seconds": meta("histogram")}, "histogram"),
        ("latency_seconds_bucket", {"latency_seconds": meta("histogram")}, "histogram"),
        ("latency_seconds_count", {"latency_seconds": meta("histogram")}, "counter"),
        ("rpc_seconds", {"rpc_seconds": meta("summary")}, "summary"),
        ("rpc_seconds_sum", {"rpc_seconds": meta("summary")}, "counter"),
    ],
)
def test_kind_from_prometheus_metadata(metric: str, metadata: dict[str, Any], kind: str) -> None:
    found = kind_from_metadata(metric, metadata)
    assert found is not None and (found.kind, found.source) == (kind, "metadata")
    assert found.reason.startswith("Prometheus metadata: ")


@pytest.mark.parametrize(
    "metadata",
    [{}, {"x_total": meta("unknown")}, {"x_total": [*meta("counter"), *meta("gauge")]}, {"x_total": "junk"}],
)
def test_metadata_that_says_nothing_usable_leaves_the_name_to_decide(metadata: dict[str, Any]) -> None:
    assert kind_from_metadata("x_total", metadata) is None


def show(metric: str, **options: Any) -> str:
    step = options.pop("step", 60)
    return shown(kind_from_name(metric), step_seconds=step, **options).promql(metric, {"service": "payment-service"})


def test_each_kind_gets_the_promql_prometheus_users_write() -> None:
    assert show("http_requests_total") == 'rate(http_requests_total{service="payment-service"}[5m])'
    # an increase per step is made from the raw values (increase() would extrapolate)
    assert show("http_requests_total", function="increase") == 'http_requests_total{service="payment-service"}'
    assert show("http_requests_total", step=900) == 'rate(http_requests_total{service="payment-service"}[15m])'
    assert show("latency_seconds_bucket") == (
        'histogram_quantile(0.99, sum by (le) (rate(latency_seconds_bucket{service="payment-service"}[5m])))'
    )
    assert show("latency_seconds_bucket", quantile=0.5).startswith("histogram_quantile(0.5, ")
    assert show("cpu_percent") == 'cpu_percent{service="payment-service"}'
    summary = shown(KindFound("summary", "metadata", "m"), step_seconds=60, quantile=0.9)
    assert summary.promql("rpc_seconds", {}) == 'rpc_seconds{quantile="0.9"}'


def test_the_output_says_what_it_shows_and_a_rate_is_per_second() -> None:
    rate = shown(kind_from_name("pod_restarts_total"), step_seconds=60, function="rate")
    assert rate.about() == {
        "kind": "counter",
        "kind_from": "name ends in _total",
        "shown": "rate[5m]",
        "shown_from": "asked for",
    }
    assert (rate.unit("restarts"), rate.unit("")) == ("restarts/s", "/s")
    increase = shown(kind_from_name("pod_restarts_total"), step_seconds=60, function="increase")
    assert (increase.about()["shown"], increase.unit("restarts")) == ("increase[1m]", "restarts")
    gauge = shown(kind_from_name("cpu_percent"), step_seconds=60, function="rate")
    assert (gauge.about()["shown"], gauge.unit("%")) == ("", "%"), "a gauge is never rated"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_label_value_reads_back_exactly_through_a_real_parser(value: str) -> None:
    """A quote, backslash, newline or brace in a service name stays inside its string: the
    parsed selector has the one matcher, with the value as given."""
    parsed = promql_parser.parse(selector("up", {"service": value}))
    assert isinstance(parsed, promql_parser.VectorSelector) and parsed.name == "up"
    ((name, got),) = [(m.name, m.value) for m in parsed.matchers.matchers if m.name != "__name__"]
    assert (name, got) == ("service", value)


@settings(max_examples=100, deadline=None)
@given(st.text(st.sampled_from("\"\\}{`'\n ,=~") | st.characters(exclude_categories=["Cs"])))
def test_hostile_values_stay_inside_every_rendered_query(value: str) -> None:
    """The rendered rate and histogram_quantile parse to the expected tree, the value in its matcher."""
    counter = promql_parser.parse(show_for("x_total", value))
    assert isinstance(counter, promql_parser.Call) and counter.func.name == "rate"
    histogram = promql_parser.parse(show_for("x_bucket", value))
    assert isinstance(histogram, promql_parser.Call) and histogram.func.name == "histogram_quantile"
    summed = histogram.args[1]
    assert isinstance(summed, promql_parser.AggregateExpr) and isinstance(summed.expr, promql_parser.Call)
    for call in (counter, summed.expr):
        (matrix,) = call.args
        assert isinstance(matrix, promql_parser.MatrixSelector)
        assert [(m.name, m.value) for m in matrix.vector_selector.matchers.matchers] == [("service", value)]


def show_for(metric: str, service: str) -> str:
    return shown(kind_from_name(metric), step_seconds=60).promql(metric, {"service": service})


def test_a_lone_surrogate_is_refused_not_mangled() -> None:
    with pytest.raises(PromQLError, match="not valid Unicode"):
        label_literal("pay\ud800ment")


@pytest.mark.parametrize(("metric", "label"), [("up} or vector(1) #", "service"), ("up", 'service"} or x{a="')])
def test_names_are_checked_not_escaped(metric: str, label: str) -> None:
    with pytest.raises(PromQLError, match="not a Prometheus"):
        selector(metric, {label: "x"})


def minutes(values: list[float], start: datetime = T0) -> list[tuple[datetime, float]]:
    return [(start + timedelta(minutes=i), v) for i, v in enumerate(values)]


def test_a_steady_counter_has_a_steady_rate() -> None:
    rate = counter_rate(minutes([1000.0 + 60 * i for i in range(12)]), range_seconds=300)
    assert rate[0][0] == T0 + timedelta(minutes=1), "one sample is no rate"
    assert [v for t, v in rate if t >= T0 + timedelta(minutes=5)] == pytest.approx([1.0] * 7), "a full range"
    assert rate[0][1] == pytest.approx(60 * (60 + 30) / 60 / 300), "the series starts inside the range"


def test_increase_counts_events_and_a_reset_is_added_back() -> None:
    # 0 … 3 restarts, then the process restarts and the counter starts again at 0, then 1
    values = [0, 1, 1, 2, 3, 3, 0, 1, 1, 1, 1, 1, 1]
    increase = dict(counter_rate(minutes([float(v) for v in values]), range_seconds=300, per_second=False))
    assert increase[T0 + timedelta(minutes=5)] == pytest.approx(3.0)
    # 2, 3, 3, (reset: +3) 0, 1, 1 over [t-5m, t]: 1 + 3 - 2 = 2 more restarts
    assert increase[T0 + timedelta(minutes=8)] == pytest.approx(2.0)
    assert increase[T0 + timedelta(minutes=12)] == pytest.approx(0.0)


def test_a_rate_is_extrapolated_to_the_range_like_prometheus() -> None:
    """Two samples 60 s apart at the end of a 5m range: the series started inside the range,
    so the rate is extrapolated by half an interval only, and never from below zero."""
    points = [(T0, 100.0), (T0 + timedelta(minutes=1), 160.0)]
    ((_t, rate),) = counter_rate(points, range_seconds=300)
    assert rate == pytest.approx(60 * (60 + 30) / 60 / 300)
    ((_t, from_zero),) = counter_rate([(T0, 10.0), (T0 + timedelta(minutes=1), 70.0)], range_seconds=300)
    assert from_zero == pytest.approx(60 * (60 + 10) / 60 / 300), "extrapolated back to zero, not past it"


@pytest.mark.parametrize(
    ("increases", "function", "because"),
    [
        ([0, 0, 1, 0, 1, 0, 0, 1], "increase", "each step adds a few whole events (at most 1)"),
        ([0, 3, 0, 9, 2], "increase", "each step adds a few whole events (at most 9)"),
        ([0.0] * 6, "increase", "each step adds a few whole events (at most 0)"),
        ([12, 0, 3], "rate", "a step adds 12: more than a few whole events"),  # requests
        ([0, 1, 0.5, 0], "rate", "a step adds 0.5: more than a few whole events"),  # CPU seconds
    ],
)
def test_a_sparse_counter_is_shown_as_its_increase_a_busy_one_as_its_rate(
    increases: list[float], function: str, because: str
) -> None:
    undecided = shown(kind_from_name("x_total"), step_seconds=60)
    decided = undecided.decide([float(v) for v in increases])
    assert (decided.function, decided.because) == (function, because)
    assert decided.about()["shown"] == ("increase[1m]" if function == "increase" else "rate[5m]")
    assert decided.about()["shown_from"] == because
    asked = shown(kind_from_name("x_total"), step_seconds=60, function="rate").decide([1.0])
    assert (asked.function, asked.because) == ("rate", "asked for"), "what was asked is kept"
    gauge = shown(kind_from_name("cpu_percent"), step_seconds=60).decide([1.0])
    assert gauge.function is None and "shown_from" not in gauge.about()


def test_a_counter_s_increase_per_step_counts_each_event_once() -> None:
    """Read at the step instants as a range query reads a raw series, then differenced: a
    restart is +1 in one step (not five overlapping ranges), a reset counts the new value."""
    values = [0, 0, 1, 1, 1, 2, 2, 0, 1, 1]  # a reset at 7, one more restart right after it
    raw = minutes([float(v) for v in values])
    stepped = at_steps(raw, start=T0, end=T0 + timedelta(minutes=10), step_seconds=60)
    assert stepped == raw
    increases = step_increases(stepped, since=T0 + timedelta(minutes=1))
    assert [(int((t - T0).total_seconds() // 60), v) for t, v in increases if v] == [(2, 1.0), (5, 1.0), (8, 1.0)]
    assert len(increases) == 9, "the first instant has no step before it"
    # 15 s samples read at a 1m step: the newest sample at or before each instant
    fine = [(T0 + timedelta(seconds=15 * i), float(i // 6)) for i in range(24)]
    coarse = at_steps(fine, start=T0, end=T0 + timedelta(minutes=6), step_seconds=60)
    assert coarse == minutes([0.0, 0.0, 1.0, 2.0, 2.0, 3.0]), "samples 0, 4, 8, … of 15 s"
    stale = at_steps([(T0, 1.0)], start=T0, end=T0 + timedelta(minutes=8), step_seconds=60)
    assert len(stale) == 6, "a sample older than the 5m lookback gives no value"
