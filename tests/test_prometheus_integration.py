"""The prometheus backend against a real Prometheus holding the backfilled demo metrics and a
latency histogram (``.ci/prometheus.sh``): the same question gives the same facts as the
embedded backend, counters are rated alike, and PromQL is rendered as the real parser reads it."""

from __future__ import annotations

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import prometheus_histogram as histogram
from tests.builders import readable
from tests.conftest import require_server
from veridiag.tools import QueryMetricsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.backends.prometheus import PrometheusBackend
from veridiag.tools.promql import label_literal
from veridiag.tools.records import MetricEvidence

INCIDENT = {"start": "2026-07-07T10:00:00Z", "end": "2026-07-07T10:30:00Z"}
LEAK = {"start": "2026-07-07T11:30:00Z", "end": "2026-07-07T13:00:00Z"}


def prometheus_url() -> str:
    return require_server("VERIDIAG_TEST_PROMETHEUS_URL", "Prometheus")


@pytest.fixture(scope="module")
def prometheus() -> PrometheusBackend:
    return PrometheusBackend(prometheus_url(), timeout=10)


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


def test_a_counter_is_read_alike_by_prometheus_and_the_embedded_backend(
    prometheus: PrometheusBackend, demo_env: EmbeddedEnvironment
) -> None:
    """The demo's restart counter (no metadata in a backfilled server: the name decides): both
    backends find its steps add a few whole restarts and show +1 at 12:01, 12:31 and 13:00 —
    the window's end, counted now that the counter holds its total — and when a rate is asked
    for, Prometheus' rate() and the embedded backend's own give the same points and episodes."""
    whole = {"start": LEAK["start"], "end": "2026-07-07T14:00:00Z"}
    args = QueryMetricsArgs(service="inventory-service", metric="pod_restarts_total", **whole)
    real, embedded = prometheus.query_metrics(args), demo_env.query_metrics(args)
    assert real.status == embedded.status == "ok", real.text
    assert readable(real.retrieval_details)["promql"] == 'pod_restarts_total{service="inventory-service"}'
    assert "kind_from='name ends in _total' shown=increase[1m]" in real.text
    (live,), (local,) = real.evidence, embedded.evidence
    assert isinstance(live, MetricEvidence) and isinstance(local, MetricEvidence)
    assert live.increases is not None and local.increases is not None
    # the same steps (Prometheus keeps no unit: "3 in total" where the demo's file says "3 restarts")
    steps = [(s.at.strftime("%H:%M"), s.by) for s in live.increases.steps]
    assert steps == [(s.at.strftime("%H:%M"), s.by) for s in local.increases.steps]
    assert steps == [("12:01", 1), ("12:31", 1), ("13:00", 1)] and live.increases.total == local.increases.total == 3
    assert (live.minimum, live.maximum, live.points) == (local.minimum, local.maximum, local.points)
    assert [(a.onset, a.end, a.peak_at) for a in live.anomalies] == [
        (a.onset, a.end, a.peak_at) for a in local.anomalies
    ]

    rate = args.model_copy(update={"function": "rate", **LEAK})
    real, embedded = prometheus.query_metrics(rate), demo_env.query_metrics(rate)
    assert readable(real.retrieval_details)["promql"] == 'rate(pod_restarts_total{service="inventory-service"}[5m])'
    (live,), (local,) = real.evidence, embedded.evidence
    assert isinstance(live, MetricEvidence) and isinstance(local, MetricEvidence)
    assert live.metric_kind == local.metric_kind == "counter"
    assert (live.minimum, live.maximum, live.points) == pytest.approx((local.minimum, local.maximum, local.points))
    assert live.maximum == pytest.approx(1 / 300)
    assert [(a.onset, a.end, a.peak_at) for a in live.anomalies] == [
        (a.onset, a.end, a.peak_at) for a in local.anomalies
    ]
    assert len(live.anomalies) == 2, "one episode per restart inside [11:30, 13:00)"


def test_histogram_quantile_on_a_real_server(prometheus: PrometheusBackend) -> None:
    """tests/prometheus_histogram.py's buckets: the p99 read as Prometheus users read it."""
    args = QueryMetricsArgs(service="payment-service", metric=f"{histogram.FAMILY}_bucket", **INCIDENT)
    out = prometheus.query_metrics(args)
    assert out.status == "ok", out.text
    details = readable(out.retrieval_details)
    assert details["promql"] == (
        "histogram_quantile(0.99, sum by (le) "
        '(rate(checkout_request_duration_seconds_bucket{service="payment-service"}[5m])))'
    )
    assert (details["kind"], details["unit"]) == ("histogram", "s")
    (series,) = details["series"]
    assert series["min"] == pytest.approx(histogram.P99_NORMAL) and series["max"] == pytest.approx(histogram.P99_SLOW)
    (found,) = out.evidence
    assert isinstance(found, MetricEvidence) and found.baseline_median == pytest.approx(histogram.P99_NORMAL)
    (anomaly,) = found.anomalies
    assert anomaly.direction == "up" and anomaly.peak == pytest.approx(histogram.P99_SLOW)
    assert anomaly.onset.isoformat() == "2026-07-07T10:01:00+00:00"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.text(min_size=1, max_size=40))
def test_label_values_read_back_exactly_from_the_real_parser(prometheus: PrometheusBackend, value: str) -> None:
    """absent(x{v="…"}) answers with the label as Prometheus parsed it: every value comes back
    exactly, quotes, backslashes, newlines and all."""
    response = httpx2.get(
        f"{prometheus_url()}/api/v1/query",
        params={"query": f"absent(veridiag_no_such_metric{{v={label_literal(value)}}})", "time": "1783418400"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    (result,) = response.json()["data"]["result"]
    assert result["metric"] == {"v": value}


@pytest.mark.parametrize("window", [INCIDENT, LEAK])
def test_the_survey_over_a_real_prometheus_ranks_as_over_the_embedded_store(
    prometheus: PrometheusBackend, demo_env: EmbeddedEnvironment, window: dict[str, str]
) -> None:
    """rank_suspects lists the server's services and series itself: the same demo metrics give
    the same suspects in the same order, with the same changes, sizes and scores. (A restart
    read on Prometheus' minute grid is stamped at its minute, and a unit only the import
    recorded is not the server's, so the lines' words may differ there.)"""
    from veridiag.tools.args import RankSuspectsArgs
    from veridiag.tools.records import SuspectEvidence
    from veridiag.tools.suspects import SuspectSearch

    args = RankSuspectsArgs(**window)
    found = []
    for metrics in (prometheus, demo_env):
        output = SuspectSearch(metrics, demo_env, demo_env, now=demo_env.now()).run(args)
        [evidence] = output.evidence
        assert isinstance(evidence, SuspectEvidence) and "not surveyed" not in evidence.line, output.text
        found.append(
            [
                (s.service, s.score, [(g.source, g.name, g.family, g.peak, g.factor, g.events) for g in s.signals])
                for s in evidence.suspects
            ]
            + [evidence.standout]
        )
    live, local = found
    assert live and live == local
