"""Prometheus and Loki adapters against real API response shapes (httpx2.MockTransport)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import promql_parser
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import readable
from veridiag._retry import Backoff
from veridiag.tools import QueryLogsArgs, QueryMetricsArgs
from veridiag.tools.backends.loki import LokiBackend
from veridiag.tools.backends.prometheus import PrometheusBackend
from veridiag.tools.records import MetricEvidence

T0 = 1783418400  # 2026-07-07T10:00:00Z
WINDOW = {"start": "2026-07-07T10:00:00Z", "end": "2026-07-07T10:05:00Z"}


def transport(handler: Callable[[httpx2.Request], httpx2.Response], seen: list[httpx2.Request]) -> httpx2.MockTransport:
    def record(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return handler(request)

    return httpx2.MockTransport(record)


def matrix(values: list[list[Any]], labels: dict[str, str] | None = None) -> dict[str, Any]:
    metric = {"__name__": "hikaricp_connections_active", "service": "payment-service", **(labels or {})}
    return {"status": "success", "data": {"resultType": "matrix", "result": [{"metric": metric, "values": values}]}}


def no_sleep(seconds: float) -> None:
    """Backoff waits, skipped: the tests count attempts, not seconds."""


def prometheus(
    handler: Callable[[httpx2.Request], httpx2.Response],
    seen: list[httpx2.Request],
    metadata: dict[str, Any] | None = None,
    backoff: Backoff | None = None,
) -> PrometheusBackend:
    """A backend whose server answers ``/api/v1/metadata`` with ``metadata`` (none by default,
    like a server holding backfilled data) and every other request with ``handler``."""

    def route(request: httpx2.Request) -> httpx2.Response:
        if request.url.path == "/api/v1/metadata":
            name = request.url.params["metric"]
            found = {name: metadata[name]} if metadata and name in metadata else {}
            return httpx2.Response(200, json={"status": "success", "data": found})
        seen.append(request)
        return handler(request)

    return PrometheusBackend(
        "http://prometheus:9090", transport=httpx2.MockTransport(route), backoff=backoff or Backoff(sleep=no_sleep)
    )


def test_prometheus_window_is_judged_against_the_series_history() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        start = float(request.url.params["start"])
        if start < T0:  # the history before the window
            return httpx2.Response(200, json=matrix([[T0 - 1800 + 60 * i, str(11 + i % 3)] for i in range(30)]))
        return httpx2.Response(200, json=matrix([[T0 + 60 * i, str(v)] for i, v in enumerate([20, 35, 50, 50, "NaN"])]))

    out = prometheus(handler, seen).query_metrics(
        QueryMetricsArgs(service="payment-service", metric="hikaricp_connections_active", **WINDOW)
    )
    assert out.status == "ok", out.text
    assert seen[0].url.path == "/api/v1/query_range"
    assert seen[0].url.params["query"] == 'hikaricp_connections_active{service="payment-service"}'
    assert float(seen[0].url.params["start"]) == T0 and seen[0].url.params["step"] == "60"
    assert float(seen[1].url.params["start"]) == T0 - 86_400, "a day of history at least"
    assert "max 50 connections" in out.text and "peak 50 connections at 2026-07-07T10:02:00Z" in out.text
    assert "history 2026-07-07T09:30:00Z – 2026-07-07T10:03:00Z (30 points): median 12 connections" in out.text
    (series,) = out.evidence
    assert isinstance(series, MetricEvidence) and series.service == "payment-service"
    (anomaly,) = series.anomalies
    assert (anomaly.direction, anomaly.peak, anomaly.expected) == ("up", 50.0, 12.0)
    assert anomaly.line in out.text and anomaly.peak_line == "2026-07-07T10:02:00Z 50 connections"
    assert readable(out.retrieval_details)["series"][0]["points"] == 4, "NaN is not a point"


def test_prometheus_states_the_value_nearest_the_moment_asked() -> None:
    """Issue 28: ``at`` inside the window gives the point nearest it a line of its own, as the
    embedded backend writes it; outside the window, none."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        if float(request.url.params["start"]) < T0:
            return httpx2.Response(200, json=matrix([[T0 - 1800 + 60 * i, str(11 + i % 3)] for i in range(30)]))
        return httpx2.Response(200, json=matrix([[T0 + 60 * i, str(v)] for i, v in enumerate([20, 35, 50, 50, 40])]))

    backend = prometheus(handler, [])
    metric = {"service": "payment-service", "metric": "hikaricp_connections_active"}
    out = backend.query_metrics(QueryMetricsArgs(**metric, **WINDOW, at="2026-07-07T10:01:20Z"))
    (series,) = out.evidence
    assert isinstance(series, MetricEvidence) and series.asked is not None
    expected = "at the moment asked 2026-07-07T10:01:20Z: nearest point 2026-07-07T10:01:00Z 35 connections"
    assert series.asked.line == expected and expected in out.text.split("\n")
    outside = backend.query_metrics(QueryMetricsArgs(**metric, **WINDOW, at="2026-07-07T11:00:00Z"))
    assert isinstance(outside.evidence[0], MetricEvidence) and outside.evidence[0].asked is None
    assert "at the moment asked" not in outside.text


def test_prometheus_passes_promql_through() -> None:
    seen: list[httpx2.Request] = []
    backend = prometheus(lambda r: httpx2.Response(200, json=matrix([[T0, "1"]])), seen)
    promql = 'sum(rate(http_requests_total{job="api"}[5m])) by (service)'
    backend.query_metrics(QueryMetricsArgs(promql=promql, **WINDOW))
    assert seen[0].url.params["query"] == promql


def test_prometheus_bad_query_reports_the_server_message() -> None:
    body = {
        "status": "error",
        "errorType": "bad_data",
        "error": '1:28: parse error: unexpected "}" in label matching, expected string',
    }
    out = prometheus(lambda r: httpx2.Response(400, json=body), []).query_metrics(
        QueryMetricsArgs(promql="up{job=}", **WINDOW)
    )
    assert out.status == "error" and "parse error: unexpected" in out.text


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (lambda r: httpx2.Response(503, text="service unavailable"), "prometheus unavailable: HTTP 503"),
        (lambda r: (_ for _ in ()).throw(httpx2.ConnectError("connection refused")), "connection refused"),
        (lambda r: (_ for _ in ()).throw(httpx2.ReadTimeout("read timed out")), "timed out"),
        (lambda r: httpx2.Response(200, text="<html>proxy login</html>"), "not a JSON object"),
    ],
)
def test_prometheus_down_or_slow_is_an_error(
    handler: Callable[[httpx2.Request], httpx2.Response], message: str
) -> None:
    out = prometheus(handler, []).query_metrics(QueryMetricsArgs(service="x", metric="up", **WINDOW))
    assert out.status == "error" and message in (out.error or "")


def test_prometheus_empty_result_is_no_data() -> None:
    empty = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    out = prometheus(lambda r: httpx2.Response(200, json=empty), []).query_metrics(
        QueryMetricsArgs(service="nope", metric="up", **WINDOW)
    )
    assert out.status == "no_data" and 'up{service="nope"}' in out.text


def steady(request: httpx2.Request) -> httpx2.Response:
    """Any range asked for: one point a minute, the same value."""
    start = int(float(request.url.params["start"]))
    return httpx2.Response(200, json=matrix([[start + 60 * i, "2.5"] for i in range(5)]))


def asked(metric: str, metadata: dict[str, Any] | None = None, **options: Any) -> tuple[str, Any, list[httpx2.Request]]:
    seen: list[httpx2.Request] = []
    args = QueryMetricsArgs(service="payment-service", metric=metric, **options, **WINDOW)
    out = prometheus(steady, seen, metadata).query_metrics(args)
    return seen[0].url.params["query"], out, seen


def counting(per_minute: float, restarts_at: tuple[int, ...] = ()) -> Callable[[httpx2.Request], httpx2.Response]:
    """A server holding one counter that grows ``per_minute`` (plus one at each minute of
    ``restarts_at`` from 10:00): its raw values when asked raw, its rate when asked ``rate(``."""
    origin = 1_783_418_400  # 2026-07-07T10:00:00Z

    def value(at: int) -> float:
        return 5000 + per_minute * (at - origin) / 60 + sum(at >= origin + 60 * m for m in restarts_at)

    def handler(request: httpx2.Request) -> httpx2.Response:
        start, end = float(request.url.params["start"]), float(request.url.params["end"])
        step = int(request.url.params["step"])
        stamps = range(int(start), int(end) + 1, step)
        if request.url.params["query"].startswith("rate("):
            return httpx2.Response(200, json=matrix([[t, str(per_minute / 60)] for t in stamps]))
        return httpx2.Response(200, json=matrix([[t, str(value(t))] for t in stamps]))

    return handler


def test_a_busy_counter_is_shown_as_its_rate_and_the_output_says_why() -> None:
    seen: list[httpx2.Request] = []
    args = QueryMetricsArgs(service="payment-service", metric="http_requests_total", **WINDOW)
    out = prometheus(counting(150), seen).query_metrics(args)
    queries = [r.url.params["query"] for r in seen]
    raw, rate = (
        'http_requests_total{service="payment-service"}',
        'rate(http_requests_total{service="payment-service"}[5m])',
    )
    assert queries == [raw, rate, rate], "the raw steps decide, then the window and its history as rates"
    first = out.text.split("\n")[0]
    assert "kind=counter" in first and "kind_from='name ends in _total'" in first and "shown=rate[5m]" in first
    assert "shown_from='a step adds 150: more than a few whole events'" in first
    assert "max 2.5/s" in out.text, "a rate is per second"
    details = readable(out.retrieval_details)
    assert (details["kind"], details["unit"], details["promql"]) == ("counter", "/s", rate)
    (series,) = out.evidence
    assert isinstance(series, MetricEvidence) and series.metric_kind == "counter" and series.increases is None


def test_a_sparse_counter_is_shown_as_its_increase_per_step() -> None:
    """Restarts at 10:01 and 10:03: +1 in each of those steps, read from the raw values (no
    rate query at all), the same as the embedded backend shows them."""
    seen: list[httpx2.Request] = []
    args = QueryMetricsArgs(service="payment-service", metric="pod_restarts_total", **WINDOW)
    out = prometheus(counting(0, restarts_at=(1, 3)), seen).query_metrics(args)
    raw = 'pod_restarts_total{service="payment-service"}'
    assert [r.url.params["query"] for r in seen] == [raw, raw], "the window, then its history"
    assert float(seen[0].url.params["start"]) == 1_783_418_400 - 60, "a step before the window: its first increase"
    first = out.text.split("\n")[0]
    assert "shown=increase[1m] shown_from='each step adds a few whole events (at most 1)'" in first
    assert (
        "increases per 1m: 2 in total, 2 steps rose: +1 at 2026-07-07T10:01:00Z, +1 at 2026-07-07T10:03:00Z" in out.text
    )
    (series,) = out.evidence
    assert isinstance(series, MetricEvidence) and series.increases is not None
    assert [(step.at.minute, step.by) for step in series.increases.steps] == [(1, 1.0), (3, 1.0)]
    assert (series.points, series.unit) == (5, ""), "one point per step of the window, a count"
    asked_for = QueryMetricsArgs(service="payment-service", metric="pod_restarts_total", function="rate", **WINDOW)
    seen.clear()
    out = prometheus(counting(0, restarts_at=(1, 3)), seen).query_metrics(asked_for)
    assert seen[0].url.params["query"].startswith("rate(") and "shown_from='asked for'" in out.text


def test_prometheus_metadata_decides_before_the_name() -> None:
    meta = {
        "http_requests": [{"type": "counter", "help": "", "unit": ""}],
        "queue_total": [{"type": "gauge", "help": "", "unit": ""}],
        "checkout_duration_seconds": [{"type": "histogram", "help": "", "unit": ""}],
    }
    query, out, _seen = asked("http_requests_total", meta, function="rate")
    assert query.startswith("rate(") and "kind_from='Prometheus metadata: http_requests is a counter'" in out.text
    query, out, _seen = asked("queue_total", meta)
    assert query == 'queue_total{service="payment-service"}', "declared a gauge: never rated"
    query, out, _seen = asked("checkout_duration_seconds", meta, quantile=0.95)
    assert query == (
        'histogram_quantile(0.95, sum by (le) (rate(checkout_duration_seconds_bucket{service="payment-service"}[5m])))'
    )
    assert "kind=histogram" in out.text and "shown='p95 of the buckets over 5m'" in out.text
    assert readable(out.retrieval_details)["unit"] == "s"


def test_without_metadata_the_name_decides() -> None:
    seen: list[httpx2.Request] = []

    def no_metadata_api(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(404, text="404 page not found") if "metadata" in request.url.path else steady(request)

    backend = PrometheusBackend("http://prometheus:9090", transport=transport(no_metadata_api, seen))
    out = backend.query_metrics(QueryMetricsArgs(metric="latency_seconds_bucket", **WINDOW))
    assert out.status == "ok", out.text
    assert [r.url.path for r in seen][:2] == ["/api/v1/metadata", "/api/v1/query_range"]
    assert seen[1].url.params["query"] == "histogram_quantile(0.99, sum by (le) (rate(latency_seconds_bucket{}[5m])))"
    assert "kind_from='name ends in _bucket'" in out.text


def test_a_service_name_cannot_break_out_of_its_label_value() -> None:
    hostile = 'pay"} or vector(1) or up{a="\\'
    seen: list[httpx2.Request] = []
    prometheus(steady, seen).query_metrics(QueryMetricsArgs(service=hostile, metric="cpu_percent", **WINDOW))
    parsed = promql_parser.parse(seen[0].url.params["query"])
    assert isinstance(parsed, promql_parser.VectorSelector) and parsed.name == "cpu_percent"
    assert [(m.name, m.value) for m in parsed.matchers.matchers if m.name != "__name__"] == [("service", hostile)]


def test_a_metric_name_that_is_not_one_is_refused_before_any_query() -> None:
    seen: list[httpx2.Request] = []
    out = prometheus(steady, seen).query_metrics(QueryMetricsArgs(metric="up} or vector(1", **WINDOW))
    assert out.status == "error" and "not a Prometheus metric name" in out.text
    assert seen == [], "nothing was sent"


def flaky(*statuses: int) -> Callable[[httpx2.Request], httpx2.Response]:
    """Answers the given statuses in turn (an error body each), then the steady series."""
    left = list(statuses)

    def handler(request: httpx2.Request) -> httpx2.Response:
        if left:
            return httpx2.Response(left.pop(0), json={"status": "error", "error": "busy"})
        return steady(request)

    return handler


def test_a_503_then_200_succeeds_after_a_jittered_wait() -> None:
    seen: list[httpx2.Request] = []
    waits: list[float] = []
    backend = prometheus(flaky(503), seen, backoff=Backoff(attempts=3, first_wait=0.2, sleep=waits.append))
    out = backend.query_metrics(QueryMetricsArgs(service="x", metric="up", **WINDOW))
    assert out.status == "ok", out.text
    assert seen[0].url.params == seen[1].url.params, "the window asked again"
    assert float(seen[2].url.params["start"]) < T0, "then its history, without a retry"
    (wait,) = waits
    assert 0.2 <= wait <= 0.4, "first_wait plus up to first_wait of jitter"


def test_retries_stop_at_the_limit_with_growing_waits() -> None:
    seen: list[httpx2.Request] = []
    waits: list[float] = []
    backend = prometheus(flaky(*[503] * 10), seen, backoff=Backoff(attempts=4, first_wait=0.2, sleep=waits.append))
    out = backend.query_metrics(QueryMetricsArgs(service="x", metric="up", **WINDOW))
    assert out.status == "error" and "prometheus unavailable: HTTP 503" in (out.error or "")
    assert len(seen) == 4 and len(waits) == 3
    assert all(low <= w <= low + 0.2 for w, low in zip(waits, [0.2, 0.4, 0.8], strict=True)), waits


@pytest.mark.parametrize("status", [400, 422])
def test_a_refused_query_is_not_retried(status: int) -> None:
    seen: list[httpx2.Request] = []
    waits: list[float] = []
    out = prometheus(flaky(status), seen, backoff=Backoff(sleep=waits.append)).query_metrics(
        QueryMetricsArgs(promql="up{", **WINDOW)
    )
    assert out.status == "error" and "busy" in out.text
    assert (len(seen), waits) == (1, [])


def test_a_refused_connection_is_retried_a_timeout_is_not() -> None:
    for error, tries in ((httpx2.ConnectError("connection refused"), 3), (httpx2.ReadTimeout("slow"), 1)):
        seen: list[httpx2.Request] = []

        def fail(request: httpx2.Request, error: Exception = error) -> httpx2.Response:
            raise error

        out = prometheus(fail, seen).query_metrics(QueryMetricsArgs(service="x", metric="up", **WINDOW))
        assert out.status == "error" and len(seen) == tries, type(error).__name__


LOKI_STREAMS = {
    "status": "success",
    "data": {
        "resultType": "streams",
        "result": [
            {
                "stream": {"service": "payment-service"},
                "values": [
                    [
                        str((T0 + 62) * 10**9),
                        "2026-07-07T10:01:02Z ERROR payment-service order=123 ERR_TIMEOUT cost=5300ms",
                    ],
                    [
                        str((T0 + 70) * 10**9),
                        "2026-07-07T10:01:10Z ERROR payment-service order=124 ERR_TIMEOUT cost=5100ms",
                    ],
                    [str((T0 + 65) * 10**9), "2026-07-07T10:01:05Z WARN payment-service HikariPool-1 waiting=37"],
                ],
            }
        ],
        "stats": {"summary": {"totalLinesProcessed": 3}},
    },
}


def loki(handler: Callable[[httpx2.Request], httpx2.Response], seen: list[httpx2.Request]) -> LokiBackend:
    return LokiBackend("http://loki:3100", transport=transport(handler, seen))


def test_loki_builds_logql_and_summarises_lines() -> None:
    seen: list[httpx2.Request] = []
    out = loki(lambda r: httpx2.Response(200, json=LOKI_STREAMS), seen).query_logs(
        QueryLogsArgs(service="payment-service", query="ERR_TIMEOUT", **WINDOW)
    )
    assert seen[0].url.path == "/loki/api/v1/query_range"
    assert seen[0].url.params["query"] == '{service="payment-service"} |= "ERR_TIMEOUT"'
    assert seen[0].url.params["start"] == str(T0 * 10**9)
    assert out.status == "ok"
    assert readable(out.retrieval_details)["by_level"] == {"ERROR": 2, "WARN": 1}
    lines = out.text.split("lines:\n", 1)[1].split("\n")
    assert lines[0].startswith("2026-07-07T10:01:02Z") and lines[1].startswith("2026-07-07T10:01:05Z"), "time order"
    assert readable(out.retrieval_details)["patterns"][0]["count"] == 2


def test_loki_parse_error_is_reported() -> None:
    out = loki(lambda r: httpx2.Response(400, text="parse error at line 1, col 9: syntax error"), []).query_logs(
        QueryLogsArgs(logql="{service=payment}", **WINDOW)
    )
    assert out.status == "error" and "parse error at line 1" in out.text


def test_loki_metric_query_is_refused_with_a_reason() -> None:
    body = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    out = loki(lambda r: httpx2.Response(200, json=body), []).query_logs(
        QueryLogsArgs(logql='rate({service="x"}[5m])', **WINDOW)
    )
    assert out.status == "error" and "query_metrics" in out.text


def test_loki_quotes_user_text() -> None:
    backend = loki(lambda r: httpx2.Response(200, json=LOKI_STREAMS), [])
    assert backend.logql(QueryLogsArgs(service='a"b', query='x"y')) == '{service="a\\"b"} |= "x\\"y"'


def test_loki_empty_is_no_data() -> None:
    empty = {"status": "success", "data": {"resultType": "streams", "result": []}}
    out = loki(lambda r: httpx2.Response(200, json=empty), []).query_logs(QueryLogsArgs(service="x", **WINDOW))
    assert out.status == "no_data"
    json.dumps(out.retrieval_details)


# -- the survey over a Prometheus server (rank_suspects' SeriesCatalogue) ---------------------


def _survey_server(request: httpx2.Request) -> httpx2.Response:
    """Two services of two pods each; svc-b's CPU jumps at 10:00 on both pods."""
    pods = [("svc-a", "a-1"), ("svc-a", "a-2"), ("svc-b", "b-1"), ("svc-b", "b-2")]
    path = request.url.path
    if path == "/api/v1/label/service/values":
        return httpx2.Response(200, json={"status": "success", "data": ["svc-a", "svc-b"]})
    if path == "/api/v1/series":
        found = [{"__name__": "cpu_usage_percent", "service": s, "pod": p} for s, p in pods]
        found += [{"__name__": "latency_seconds_bucket", "service": "svc-a", "le": "0.1"}]
        return httpx2.Response(200, json={"status": "success", "data": found})
    query = request.url.params["query"]
    start, end, step = (float(request.url.params[k]) for k in ("start", "end", "step"))
    result = []
    for service, pod in pods:
        if f'service="{service}"' not in query:
            continue
        values = []
        moment = start
        while moment <= end:
            jumped = service == "svc-b" and moment >= T0
            values.append([moment, str(90 if jumped else 20 + (int(moment) // 60) % 3)])
            moment += step
        result.append({"metric": {"__name__": "cpu_usage_percent", "service": service, "pod": pod}, "values": values})
    return httpx2.Response(200, json={"status": "success", "data": {"resultType": "matrix", "result": result}})


def _survey(backend: PrometheusBackend, tmp_path: Any) -> Any:
    from veridiag.tools.args import RankSuspectsArgs
    from veridiag.tools.backends.embedded import EmbeddedEnvironment
    from veridiag.tools.suspects import SuspectSearch

    empty = EmbeddedEnvironment(tmp_path / "empty.db", load_demo=False)
    try:
        args = RankSuspectsArgs(start="2026-07-07T09:30:00Z", end="2026-07-07T10:30:00Z", at="2026-07-07T10:00:00Z")
        return SuspectSearch(backend, empty, empty, now=empty.now()).run(args)
    finally:
        empty.close()


def test_the_survey_reads_every_service_a_prometheus_server_holds(tmp_path: Any) -> None:
    """The survey lists the server's services and series itself, reads a service's pods as one
    line, and leaves a histogram's buckets to its quantile: the jump of svc-b leads."""
    seen: list[httpx2.Request] = []
    backend = prometheus(_survey_server, seen)
    assert backend.metrics() == [
        ("svc-a", "cpu_usage_percent", "%"),
        ("svc-a", "latency_seconds", "s"),
        ("svc-b", "cpu_usage_percent", "%"),
    ]
    output = _survey(backend, tmp_path)
    assert output.status == "ok", output.text
    [evidence] = output.evidence
    assert evidence.suspects[0].service == "svc-b", output.text
    assert "90" in evidence.suspects[0].line and "not surveyed" not in evidence.line
    ranged = [r for r in seen if r.url.path == "/api/v1/query_range"]
    assert all(float(r.url.params["start"]) % float(r.url.params["step"]) == 0 for r in ranged), "on the step grid"


@pytest.mark.parametrize("status", [500, 503])
def test_a_prometheus_that_cannot_be_read_is_said_not_surveyed_never_quiet(status: int, tmp_path: Any) -> None:
    backend = prometheus(
        lambda _r: httpx2.Response(status, text="down"), [], backoff=Backoff(attempts=2, sleep=no_sleep)
    )
    output = _survey(backend, tmp_path)
    [evidence] = output.evidence
    assert "metrics not surveyed: the prometheus backend could not be read" in evidence.line, output.text
    assert not evidence.suspects and output.status == "no_data"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=_json, series=_json, matrix_body=_json)
def test_odd_json_from_prometheus_never_breaks_the_survey(
    labels: Any, series: Any, matrix_body: Any, tmp_path: Any
) -> None:
    """Whatever the server answers, the survey returns an output: series it could read, or the
    metrics said unread — never an exception."""
    bodies = {"/api/v1/label/service/values": labels, "/api/v1/series": series}

    def odd(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=bodies.get(request.url.path, matrix_body))

    output = _survey(prometheus(odd, []), tmp_path)
    assert output.status in {"ok", "no_data", "error"} and output.text
