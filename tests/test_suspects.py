"""The culprit search: which service changed at the time asked, ranked by what the change
measures and when it began — generated incidents, not listed ones."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from veridiag.analysis.signatures import family_of, name_words
from veridiag.analysis.suspects import (
    ChangeInput,
    LogInput,
    Question,
    SeriesInput,
    levels_period,
    rank_levels,
    rank_suspects,
)
from veridiag.tools.args import RankSuspectsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.records import SuspectEvidence
from veridiag.tools.suspects import SuspectSearch

T0 = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
STEP = timedelta(minutes=1)
#: The window asked about: 07:30 ± 30 min, with 90 minutes of history before it.
AT = T0 + timedelta(minutes=120)
WINDOW = (AT - timedelta(minutes=30), AT + timedelta(minutes=30))
POINTS = 150


def noisy(rng: random.Random, level: float, spread: float) -> list[float]:
    return [max(0.0, rng.gauss(level, spread)) for _ in range(POINTS)]


def as_series(service: str, metric: str, unit: str, values: list[float]) -> SeriesInput:
    return SeriesInput(service, metric, unit, [(T0 + i * STEP, v) for i, v in enumerate(values)])


def planted(values: list[float], at: int, length: int, level: float) -> list[float]:
    return values[:at] + [level] * length + values[at + length :]


def shop(rng: random.Random, services: list[str]) -> list[SeriesInput]:
    """Every service's CPU (%), memory (%) and p99 latency (ms), noisy around its own level."""
    found = []
    for service in services:
        found.append(as_series(service, "cpu_usage_rate", "%", noisy(rng, rng.uniform(3, 30), 1.5)))
        found.append(as_series(service, "memory_usage_rate", "%", noisy(rng, rng.uniform(10, 40), 0.3)))
        found.append(as_series(service, "http_request_p99_ms", "ms", noisy(rng, rng.uniform(20, 200), 5)))
    return found


def replace(series: list[SeriesInput], service: str, metric: str, values: list[float]) -> list[SeriesInput]:
    return [
        as_series(s.service, s.metric, s.unit, values) if (s.service, s.metric) == (service, metric) else s
        for s in series
    ]


def values_of(series: list[SeriesInput], service: str, metric: str) -> list[float]:
    found = next(s for s in series if (s.service, s.metric) == (service, metric))
    return [v for _t, v in found.points]


SERVICE_NAMES = st.lists(
    st.from_regex(r"[a-z]{3,9}(-[a-z]{3,7})?-service", fullmatch=True), min_size=3, max_size=8, unique=True
)


# -- what a metric measures ------------------------------------------------------------------


@given(
    prefix=st.lists(st.sampled_from(["pod", "container", "jvm", "app", "svc", "k8s"]), max_size=2),
    family=st.sampled_from(
        [("cpu", "cpu"), ("memory", "memory"), ("heap", "memory"), ("latency", "latency"), ("restarts", "restarts")]
    ),
    suffix=st.lists(st.sampled_from(["usage", "rate", "total", "p99", "avg"]), max_size=2),
    style=st.sampled_from(["snake", "camel", "kebab"]),
)
def test_a_metric_name_is_read_by_its_words_in_any_spelling(
    prefix: list[str], family: tuple[str, str], suffix: list[str], style: str
) -> None:
    words = [*prefix, family[0], *suffix]
    if style == "snake":
        name = "_".join(words)
    elif style == "kebab":
        name = "-".join(words)
    else:
        name = "".join(w.capitalize() for w in words)
    assert family[0] in name_words(name)
    expected = family[1]
    if family[1] == "latency" and "rate" in suffix:  # "latency rate" is still a latency
        expected = "latency"
    assert family_of(name).id == expected


@given(rest=st.lists(st.sampled_from(["cpu", "usage", "rate", "memory", "bytes", "network", "receive"]), min_size=1))
def test_the_node_a_pod_runs_on_is_context_never_the_service(rest: list[str]) -> None:
    assert family_of("_".join(["node", *rest])).role == "context"
    assert family_of("Node" + "".join(w.capitalize() for w in rest)).role == "context"


# -- the culprit ------------------------------------------------------------------------------


@given(
    services=SERVICE_NAMES,
    seed=st.integers(0, 10_000),
    culprit=st.integers(0, 7),
    offset=st.integers(-2, 4),
    length=st.integers(3, 15),
)
def test_the_service_whose_cpu_saturated_at_the_moment_asked_ranks_first_and_stands_out(
    services: list[str], seed: int, culprit: int, offset: int, length: int
) -> None:
    rng = random.Random(seed)
    series = shop(rng, services)
    guilty = services[culprit % len(services)]
    onset = 120 + offset
    series = replace(
        series, guilty, "cpu_usage_rate", planted(values_of(series, guilty, "cpu_usage_rate"), onset, length, 97.0)
    )
    report = rank_suspects(Question(*WINDOW, at=AT), series, services=services)
    assert report.suspects[0].service == guilty
    assert report.standout
    lead = report.suspects[0].signals[0]
    assert (lead.name, lead.onset, lead.saturated) == ("cpu_usage_rate", T0 + onset * STEP, True)
    assert set(report.quiet) | {s.service for s in report.suspects} == set(services)


@given(services=SERVICE_NAMES, seed=st.integers(0, 10_000), late=st.integers(18, 28))
def test_of_two_equal_changes_the_one_at_the_moment_asked_ranks_first(
    services: list[str], seed: int, late: int
) -> None:
    rng = random.Random(seed)
    series = shop(rng, services)
    now, later = services[0], services[1]
    for service, onset in ((now, 121), (later, 120 + late)):
        values = planted(values_of(series, service, "cpu_usage_rate"), onset, 5, 95.0)
        series = replace(series, service, "cpu_usage_rate", values)
    report = rank_suspects(Question(*WINDOW, at=AT), series, services=services)
    ranked = [s.service for s in report.suspects]
    assert ranked.index(now) < ranked.index(later)


@given(seed=st.integers(0, 10_000), before=st.integers(5, 40))
@example(seed=985, before=5)
def test_a_change_that_began_before_the_window_never_counts(seed: int, before: int) -> None:
    rng = random.Random(seed)
    services = ["alpha-service", "beta-service", "gamma-service"]
    series = shop(rng, services)
    onset = 90 - before  # the window starts at index 90
    values = planted(values_of(series, "alpha-service", "memory_usage_rate"), onset, POINTS - onset, 90.0)
    series = replace(series, "alpha-service", "memory_usage_rate", values)
    report = rank_suspects(Question(*WINDOW, at=AT), series, services=services)
    # (the shop's noise may still rank a tiny CPU wobble of alpha's: seed 985 does, at 0.003)
    alpha = [g for s in report.suspects if s.service == "alpha-service" for g in s.signals]
    assert not any(g.name == "memory_usage_rate" for g in alpha), alpha
    assert any(e.service == "alpha-service" and e.reason == "before_window" for e in report.excluded)
    assert not report.standout


@given(seed=st.integers(0, 10_000), at=st.integers(91, 140))
@example(seed=7322, at=91)
@example(seed=8457, at=91)
def test_a_single_point_is_a_blip_never_a_culprit(seed: int, at: int) -> None:
    rng = random.Random(seed)
    services = ["alpha-service", "beta-service", "gamma-service"]
    series = shop(rng, services)
    values = planted(values_of(series, "beta-service", "cpu_usage_rate"), at, 1, 99.0)
    series = replace(series, "beta-service", "cpu_usage_rate", values)
    report = rank_suspects(Question(*WINDOW, at=AT), series, services=services)
    # (the shop's noise may still rank a faint wobble of beta's elsewhere: seeds 7322 and 8457,
    # scores under 0.03 — never the blip)
    beta = [g for s in report.suspects if s.service == "beta-service" for g in s.signals]
    assert not any(g.peak == 99.0 for g in beta), beta
    assert any(e.service == "beta-service" and e.reason == "single_point" for e in report.excluded)


def test_a_change_in_the_first_rows_of_a_file_never_counts() -> None:
    rng = random.Random(3)
    window = (T0, T0 + timedelta(minutes=60))
    base = noisy(rng, 5, 0.5)
    series = [as_series("alpha-service", "cpu_usage_rate", "%", planted(base, 4, 10, 95.0))]
    report = rank_suspects(Question(*window, at=T0 + timedelta(minutes=5)), series)
    assert not report.suspects
    assert [e.reason for e in report.excluded] == ["first_rows"]


@given(seed=st.integers(0, 10_000))
@example(seed=526)  # cart-service's noise once qualified, earlier and a tenth as large
def test_a_caller_that_only_waits_is_explained_by_the_callee_that_saturated(seed: int) -> None:
    rng = random.Random(seed)
    services = ["frontend", "recommendation-service", "cart-service"]
    series = shop(rng, services)
    latency = planted(values_of(series, "frontend", "http_request_p99_ms"), 121, 6, 4000.0)
    cpu = planted(values_of(series, "recommendation-service", "cpu_usage_rate"), 121, 6, 99.0)
    series = replace(series, "frontend", "http_request_p99_ms", latency)
    series = replace(series, "recommendation-service", "cpu_usage_rate", cpu)
    edges = (("frontend", "recommendation-service"), ("frontend", "cart-service"))
    report = rank_suspects(Question(*WINDOW, at=AT, edges=edges), series, services=services)
    assert report.suspects[0].service == "recommendation-service"
    frontend = next(s for s in report.suspects if s.service == "frontend")
    assert frontend.explained_by == ("recommendation-service",)


@given(seed=st.integers(0, 10_000), factor=st.floats(5, 50))
def test_latency_alone_never_stands_out_as_the_origin(seed: int, factor: float) -> None:
    rng = random.Random(seed)
    services = ["alpha-service", "beta-service", "gamma-service"]
    series = shop(rng, services)
    values = values_of(series, "gamma-service", "http_request_p99_ms")
    series = replace(series, "gamma-service", "http_request_p99_ms", planted(values, 121, 8, values[0] * factor))
    report = rank_suspects(Question(*WINDOW, at=AT), series, services=services)
    assert report.suspects[0].service == "gamma-service"
    assert not report.standout  # where a fault shows is not where it started


def test_a_tiny_change_far_out_of_a_flat_line_is_no_culprit() -> None:
    """A CPU at 0.01 % jumping to 8 % every hour is out of its noise, but 8 points of 100 are
    small beside a CPU that saturates at the same time."""
    rng = random.Random(5)
    series = shop(rng, ["big-service", "cron-service"])
    flat = [0.01] * POINTS
    series = replace(series, "cron-service", "cpu_usage_rate", planted(flat, 118, 3, 8.0))
    cpu = values_of(series, "big-service", "cpu_usage_rate")
    series = replace(series, "big-service", "cpu_usage_rate", planted(cpu, 122, 4, 99.0))
    report = rank_suspects(Question(*WINDOW, at=AT), series)
    assert [s.service for s in report.suspects][:2] == ["big-service", "cron-service"]
    assert report.standout


def test_a_new_error_template_counts_and_a_chronic_one_does_not() -> None:
    since = WINDOW[0] - timedelta(hours=1)
    logs = [
        LogInput("food-service", "ERROR", "foodStoresListResult is null", since, WINDOW[1], 300, since),
        LogInput("price-service", "ERROR", "NullPointerException at <*>", AT + STEP, AT + 6 * STEP, 40, since),
        LogInput("travel-service", "ERROR", "call to price-service failed", AT + 2 * STEP, AT + 6 * STEP, 12, since),
    ]
    report = rank_suspects(Question(*WINDOW, at=AT), [], logs)
    assert [s.service for s in report.suspects][:2] == ["price-service", "travel-service"]
    assert report.suspects[1].explained_by == ("price-service",)  # its lines name the other service
    assert [(e.service, e.reason) for e in report.excluded] == [("food-service", "before_window")]


def test_a_change_recorded_shortly_before_the_moment_counts_as_near() -> None:
    report = rank_suspects(
        Question(*WINDOW, at=AT), [], changes=[ChangeInput("pay-service", AT - timedelta(minutes=12), "config", "x")]
    )
    [suspect] = report.suspects
    assert suspect.signals[0].nearness == 1.0
    assert report.standout


# -- the tool ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedEnvironment:
    return EmbeddedEnvironment(tmp_path_factory.mktemp("demo") / "demo.db")


def search(env: EmbeddedEnvironment, **args: object) -> tuple[str, SuspectEvidence]:
    output = SuspectSearch(env, env, env, now=env.now()).run(RankSuspectsArgs.model_validate(args))
    [evidence] = output.evidence
    assert isinstance(evidence, SuspectEvidence)
    return output.text, evidence


def test_the_tool_states_every_figure_of_the_ranking_on_a_line_of_its_output(demo: EmbeddedEnvironment) -> None:
    text, evidence = search(demo, start="2026-07-07T09:30:00Z", end="2026-07-07T10:30:00Z", at="2026-07-07T10:00:00Z")
    assert evidence.standout and evidence.suspects[0].service == "payment-service"
    lines = text.splitlines()
    for suspect in evidence.suspects:
        for signal in suspect.signals:
            assert signal.line in lines
            assert suspect.service in signal.line
    assert evidence.verdict_line in lines and "payment-service stands out" in evidence.verdict_line
    assert evidence.line == lines[0] and f"examined {len(evidence.examined)} services" in evidence.line
    # every service of the demo with data in the window is either a suspect or said to be quiet
    assert {s.service for s in evidence.suspects} | set(evidence.quiet) == set(evidence.examined)
    assert evidence.quiet_line is not None and all(s in evidence.quiet_line for s in evidence.quiet)


def test_a_quiet_hour_has_no_suspect_and_says_so(demo: EmbeddedEnvironment) -> None:
    text, evidence = search(demo, start="2026-07-07T09:05:00Z", end="2026-07-07T09:45:00Z")
    assert not evidence.suspects and not evidence.standout
    assert "verdict: no service changed" in text


def test_services_asked_about_without_data_are_named(demo: EmbeddedEnvironment) -> None:
    text, evidence = search(
        demo, start="2026-07-07T09:30:00Z", end="2026-07-07T10:30:00Z", services=["payment-service", "billing-service"]
    )
    assert evidence.without_data == ["billing-service"]
    assert evidence.without_data_line is not None and evidence.without_data_line in text.splitlines()
    assert evidence.examined == ["payment-service"]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"start": "2026-07-07T10:30:00Z", "end": "2026-07-07T10:00:00Z"}, "must be before"),
        ({"start": "2026-07-07T10:00:00Z", "end": "2026-07-07T10:30:00Z", "at": "2026-07-07T11:00:00Z"}, "outside"),
    ],
)
def test_a_window_that_is_no_window_is_an_error(demo: EmbeddedEnvironment, args: dict[str, str], problem: str) -> None:
    output = SuspectSearch(demo, demo, demo, now=demo.now()).run(RankSuspectsArgs.model_validate(args))
    assert output.status == "error" and output.error is not None and problem in output.error


def test_numbers_in_the_output_are_written_as_format_value_writes_them(
    demo: EmbeddedEnvironment, tmp_path: Path
) -> None:
    text, _evidence = search(demo, start="2026-07-07T09:30:00Z", end="2026-07-07T10:30:00Z", at="2026-07-07T10:00:00Z")
    assert not re.search(r"\d\.\d{3,}", text)  # rounded as every other output rounds them


class _Unlisted:
    """A metrics backend that cannot list its series (no series API)."""

    name = "graphite"


def test_a_metrics_backend_that_cannot_list_its_series_is_said_not_surveyed(demo: EmbeddedEnvironment) -> None:
    search = SuspectSearch(_Unlisted(), demo, demo, now=demo.now())  # type: ignore[arg-type]
    args = RankSuspectsArgs(start="2026-07-07T09:30:00Z", end="2026-07-07T10:30:00Z", at="2026-07-07T10:00:00Z")
    output = search.run(args)
    [evidence] = output.evidence
    assert isinstance(evidence, SuspectEvidence) and evidence.series == 0
    assert "metrics not surveyed: the graphite backend cannot list its series" in evidence.line
    # the logs and the change feed still rank payment-service first
    assert evidence.suspects[0].service == "payment-service"


# -- red-team regressions (rank26) ------------------------------------------------------------


@given(seed=st.integers(0, 10_000), level=st.floats(81, 88), peak=st.floats(92, 99))
@example(seed=0, level=88.0, peak=92.0)
def test_a_resource_that_always_sits_at_its_limit_is_not_saturated_by_rising_further(
    seed: int, level: float, peak: float
) -> None:
    """Memory that always sits at 81 % rising to 96 % did not reach its limit in the episode: it
    was there before (its own history), so the rise counts by its size, not as a resource that
    gave out — and does not stand out."""
    rng = random.Random(seed)
    services = ["ad-service", "cart-service", "shipping-service"]
    series = shop(rng, services)
    memory = planted([rng.gauss(level, 0.3) for _ in range(POINTS)], 121, 6, peak)
    series = replace(series, "ad-service", "memory_usage_rate", memory)
    report = rank_suspects(Question(*WINDOW, at=AT), series, services=services)
    signals = [s for suspect in report.suspects for s in suspect.signals if s.service == "ad-service"]
    if peak - level >= 10:  # (88 → 92 is too small a rise to count at all)
        assert signals
    assert not any(s.saturated for s in signals)
    assert not report.standout


@given(seed=st.integers(0, 10_000), level=st.floats(5, 50))
def test_a_resource_that_reaches_its_limit_from_below_is_saturated(seed: int, level: float) -> None:
    rng = random.Random(seed)
    services = ["ad-service", "cart-service"]
    series = shop(rng, services)
    memory = planted([max(0.0, rng.gauss(level, 0.5)) for _ in range(POINTS)], 121, 6, 97.0)
    series = replace(series, "ad-service", "memory_usage_rate", memory)
    report = rank_suspects(Question(*WINDOW, at=AT), series, services=services)
    assert report.suspects[0].service == "ad-service" and report.suspects[0].signals[0].saturated


@given(
    seed=st.integers(0, 10_000),
    wording=st.sampled_from(["{y} is the root cause", "call to {y} failed", "No instances available for {y}"]),
)
def test_words_in_logs_alone_never_move_blame_to_a_service_that_did_not_change(seed: int, wording: str) -> None:
    """svc-x's new ERROR lines name svc-y, but svc-y changed in nothing: svc-x is not explained by it."""
    rng = random.Random(seed)
    services = ["svc-x", "svc-y", "svc-z"]
    series = shop(rng, services)
    since = WINDOW[0] - timedelta(hours=1)
    logs = [LogInput("svc-x", "ERROR", wording.format(y="svc-y"), AT + STEP, AT + 9 * STEP, 200, since)]
    report = rank_suspects(Question(*WINDOW, at=AT), series, logs, services=services)
    assert report.suspects[0].service == "svc-x"
    assert report.suspects[0].explained_by == ()
    # ... and when svc-y itself changed as a cause at the same time, the lines do point at it
    cpu = planted(values_of(series, "svc-y", "cpu_usage_rate"), 120, 8, 98.0)
    changed = rank_suspects(Question(*WINDOW, at=AT), replace(series, "svc-y", "cpu_usage_rate", cpu), logs)
    x = next(s for s in changed.suspects if s.service == "svc-x")
    assert x.explained_by == ("svc-y",)


@given(seed=st.integers(0, 10_000), late=st.integers(8, 25))
def test_a_change_that_began_after_the_moment_asked_never_stands_out(seed: int, late: int) -> None:
    """Asked about 07:30, shipping's CPU that saturated from 07:40 is the next fault, not this one:
    it may rank first, but it does not stand out as where what was asked about started."""
    rng = random.Random(seed)
    services = ["shipping-service", "checkout-service", "frontend"]
    series = shop(rng, services)
    cpu = planted(values_of(series, "shipping-service", "cpu_usage_rate"), 120 + late, 6, 97.0)
    series = replace(series, "shipping-service", "cpu_usage_rate", cpu)
    report = rank_suspects(Question(*WINDOW, at=AT), series, services=services)
    assert report.suspects[0].service == "shipping-service"
    assert not report.standout


@given(seed=st.integers(0, 10_000), spike=st.floats(10, 60), level=st.floats(1.5, 3.0))
def test_a_sustained_rise_crowned_by_one_spike_is_an_episode_from_its_first_raised_point(
    seed: int, spike: float, level: float
) -> None:
    """Latency at 20 ms that sits at ~2 s for three minutes (×100) and then spikes to 28 s once
    is an episode from its first raised point: half its size is judged on the scale its size is
    (orders of magnitude for a factor), not as half of the spike's value."""
    rng = random.Random(seed)
    services = ["recommendation-service", "frontend"]
    series = shop(rng, services)
    values = [max(0.001, rng.gauss(0.02, 0.003)) for _ in range(POINTS)]
    values[122:126] = [level, level * 1.1, level * 1.2, spike]
    series = replace(series, "recommendation-service", "http_request_p99_ms", values)
    report = rank_suspects(Question(*WINDOW, at=AT), series, services=services)
    found = [
        s
        for suspect in report.suspects
        for s in suspect.signals
        if (s.service, s.name) == ("recommendation-service", "http_request_p99_ms")
    ]
    assert [s.onset for s in found] == [T0 + 122 * STEP]


@given(seed=st.integers(0, 10_000), first=st.integers(12, 25), high=st.floats(70, 99))
def test_data_that_begins_during_an_incident_has_no_change_in_its_return_to_normal(
    seed: int, first: int, high: float
) -> None:
    """A file whose first rows are an incident (CPU at 95 % from its first row to 08:15, then
    7.8 %) has no history to judge that incident against, and its fall back to normal is no
    change of the window: it is not counted, and said to be where the data begins."""
    rng = random.Random(seed)
    window = (T0, T0 + timedelta(minutes=120))
    values = [high if i < first else max(0.0, rng.gauss(7.8, 0.6)) for i in range(120)]
    series = [as_series("api-service", "cpu_usage_rate", "%", values)]
    series += [as_series("web-service", "cpu_usage_rate", "%", noisy(rng, 20, 1.0)[:120])]
    report = rank_suspects(Question(*window, at=T0 + first * STEP), series)
    assert all(s.service != "api-service" for s in report.suspects)
    assert any(e.service == "api-service" and e.reason == "begins_during" for e in report.excluded)


# -- who competes with the first (issue 29: the right culprit, a first line that answers) -----


@given(seed=st.integers(0, 10_000), factor=st.floats(3, 40))
def test_where_a_fault_is_only_felt_does_not_hide_the_service_whose_own_errors_began(seed: int, factor: float) -> None:
    """svc-x starts logging a new kind of ERROR at the moment asked; svc-y's latency rises beside
    it. Latency says where a fault is felt, not where it started: it never keeps svc-x from
    standing out unless it outweighs twice over what svc-x's own change scores ..."""
    rng = random.Random(seed)
    services = ["svc-x", "svc-y", "svc-z"]
    series = shop(rng, services)
    since = WINDOW[0] - timedelta(hours=1)
    logs = [LogInput("svc-x", "ERROR", "IllegalStateException: No instances available", AT, AT + 2 * STEP, 12, since)]
    latency = values_of(series, "svc-y", "http_request_p99_ms")
    series = replace(series, "svc-y", "http_request_p99_ms", planted(latency, 122, 5, latency[0] * factor))
    report = rank_suspects(Question(*WINDOW, at=AT), series, logs, services=services)
    x = next(s for s in report.suspects if s.service == "svc-x")
    y = next(s for s in report.suspects if s.service == "svc-y")
    assert all(signal.role != "cause" for signal in y.signals)
    assert report.standout == (x is report.suspects[0] and x.score >= 1.5 * 0.5 * y.score), (x.score, y.score)
    if x.score >= y.score / 1.5:  # close enough that, were y's change its own, x would not stand out
        assert report.standout
    # ... while a change of svc-y's own as large as its latency's was does keep svc-x from it
    cpu = planted(values_of(series, "svc-y", "cpu_usage_rate"), 121, 5, 97.0)
    both = rank_suspects(Question(*WINDOW, at=AT), replace(series, "svc-y", "cpu_usage_rate", cpu), logs)
    first, close = both.suspects[0], both.close
    assert not both.standout or first.service == "svc-y"
    assert close is None or close != first.service


def test_the_verdict_says_why_the_runner_up_did_not_compete() -> None:
    since = WINDOW[0] - timedelta(hours=1)
    rng = random.Random(4)
    series = shop(rng, ["svc-x", "svc-y"])
    latency = values_of(series, "svc-y", "http_request_p99_ms")
    series = replace(series, "svc-y", "http_request_p99_ms", planted(latency, 122, 5, latency[0] * 100))
    logs = [LogInput("svc-x", "ERROR", "IllegalStateException: No instances available", AT, AT + 2 * STEP, 40, since)]
    report = rank_suspects(Question(*WINDOW, at=AT), series, logs, services=["svc-x", "svc-y"])
    x, y = report.suspects[:2]
    assert (x.service, y.service) == ("svc-x", "svc-y")
    assert x.score < 1.5 * y.score  # as close as two services' own changes may not be ...
    assert report.standout and report.close is None  # ... but svc-y's latency is only where it is felt


@given(seed=st.integers(0, 10_000), spike=st.floats(60, 99), level=st.floats(30, 40))
def test_a_ranking_at_a_moment_reads_the_levels_then_not_the_windows_average(
    seed: int, spike: float, level: float
) -> None:
    """ "The highest CPU at 07:30": beta spikes around the moment, alpha sits higher all window
    long. Asked at the moment, beta ranks first; asked over the window, alpha's average does."""
    rng = random.Random(seed)
    series = [
        as_series("alpha-service", "cpu_usage_rate", "%", noisy(rng, level, 0.5)),
        as_series("beta-service", "cpu_usage_rate", "%", planted(noisy(rng, 5, 0.5), 116, 10, spike)),
    ]
    at_moment = rank_levels(Question(*WINDOW, at=AT), series, "cpu")
    over_window = rank_levels(Question(*WINDOW), series, "cpu")
    assert at_moment[0].service == "beta-service"
    assert over_window[0].service == "alpha-service"
    start, end = levels_period(Question(*WINDOW, at=AT))
    assert WINDOW[0] <= start < AT < end <= WINDOW[1] and levels_period(Question(*WINDOW)) == WINDOW
