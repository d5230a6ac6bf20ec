"""Prometheus and Loki adapters against real API response shapes (httpx2.MockTransport)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from tests.builders import readable
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


def prometheus(handler: Callable[[httpx2.Request], httpx2.Response], seen: list[httpx2.Request]) -> PrometheusBackend:
    return PrometheusBackend("http://prometheus:9090", transport=transport(handler, seen))


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
