"""The prometheus backend against a real Prometheus holding the backfilled demo metrics
(``.ci/prometheus.sh``): the same question gives the same facts as the embedded backend."""

from __future__ import annotations

import pytest

from tests.builders import readable
from tests.conftest import require_server
from veridiag.tools import QueryMetricsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.backends.prometheus import PrometheusBackend
from veridiag.tools.records import MetricEvidence

INCIDENT = {"start": "2026-07-07T10:00:00Z", "end": "2026-07-07T10:30:00Z"}


@pytest.fixture(scope="module")
def prometheus() -> PrometheusBackend:
    return PrometheusBackend(require_server("VERIDIAG_TEST_PROMETHEUS_URL", "Prometheus"), timeout=10)


def test_same_facts_as_the_embedded_backend(prometheus: PrometheusBackend, demo_env: EmbeddedEnvironment) -> None:
    args = QueryMetricsArgs(service="payment-service", metric="http_request_p99_ms", **INCIDENT)
    real, embedded = prometheus.query_metrics(args), demo_env.query_metrics(args)
    assert real.status == embedded.status == "ok", real.text
    series = readable(real.retrieval_details)["series"][0]
    assert series["labels"] == '{__name__="http_request_p99_ms",service="payment-service"}'
    assert series["max"] == readable(embedded.retrieval_details)["max"]
    assert series["min"] == readable(embedded.retrieval_details)["min"]
    # Both judge the window against the same history (08:00 – 10:00) and find the same episode.
    assert "history 2026-07-07T08:00:00Z" in real.text and "history 2026-07-07T08:00:00Z" in embedded.text
    (live,), (local,) = real.evidence, embedded.evidence
    assert isinstance(live, MetricEvidence) and isinstance(local, MetricEvidence)
    assert live.service == local.service == "payment-service"
    assert [(a.onset, a.peak_at, a.peak, a.end) for a in live.anomalies] == [
        (a.onset, a.peak_at, a.peak, a.end) for a in local.anomalies
    ]
    assert live.anomalies, "the incident is an anomaly on both backends"


def test_promql_passthrough_on_a_real_server(prometheus: PrometheusBackend) -> None:
    out = prometheus.query_metrics(
        QueryMetricsArgs(
            promql='max_over_time(hikaricp_connections_pending{service="payment-service"}[30m])', **INCIDENT
        )
    )
    assert out.status == "ok" and readable(out.retrieval_details)["series"][0]["max"] >= 30


def test_real_server_errors_and_empty_results(prometheus: PrometheusBackend) -> None:
    bad = prometheus.query_metrics(QueryMetricsArgs(promql="sum(rate(up[5m]) by", **INCIDENT))
    assert bad.status == "error" and "parse error" in bad.text
    none = prometheus.query_metrics(QueryMetricsArgs(service="payment-service", metric="no_such_metric", **INCIDENT))
    assert none.status == "no_data"
