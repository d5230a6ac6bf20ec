"""The survey at scale reads and scores whole series column-wise with the same results as point
by point: stored points carry their epoch seconds, instants are made once, the collector is
paused around the read, and a generated estate's planted culprit comes first."""

from __future__ import annotations

import gc
import math
import statistics
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from veridiag._collector import collector_paused
from veridiag.analysis import anomaly
from veridiag.analysis.anomaly import TimedPoints, detect_anomalies
from veridiag.bench.survey import fault_service, write_wide_home
from veridiag.ingest.batch import import_dependency_files, import_metric_files
from veridiag.text.render import iso
from veridiag.tools.args import RankSuspectsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment, _metrics
from veridiag.tools.records import SuspectEvidence
from veridiag.tools.suspects import SuspectSearch

START = datetime(2025, 3, 3, tzinfo=UTC)
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(st.lists(finite, min_size=1, max_size=60))
def test_the_column_median_is_the_statistics_median(values: list[float]) -> None:
    assert anomaly._median(np.array(values)) == statistics.median(values)


@given(st.lists(finite, min_size=1, max_size=40))
def test_the_running_median_is_each_points_window_median(values: list[float]) -> None:
    """A centred window of five (shorter at the ends, the whole series when it is shorter)."""
    width, half, n = 5, 2, len(values)
    if n < width:
        expected = [statistics.median(values)] * n
    else:
        expected = [statistics.median(values[max(0, i - half) : i + half + 1]) for i in range(n)]
        expected[half : n - half] = [sorted(values[i - half : i + half + 1])[half] for i in range(half, n - half)]
    assert anomaly._running_median(np.array(values), width).tolist() == expected


@given(
    st.lists(st.tuples(st.floats(min_value=0, max_value=40 * 86_400), finite), min_size=2, max_size=300),
    st.sampled_from([86_400.0, 7 * 86_400.0]),
    st.sampled_from([60.0, 300.0, 3600.0, 86_400.0]),
    st.floats(min_value=0, max_value=1),
)
def test_the_phase_profile_is_each_phases_pool_median(
    raw: list[tuple[float, float]], period: float, step: float, share: float
) -> None:
    """Every point's expected value: the median of the history's values in its phase bin and the
    two beside it (the first bin's left one is the last), or the history's median under 3."""
    raw.sort()
    at, values = [t + 1.7e9 for t, _v in raw], [v for _t, v in raw]
    history = max(1, round(share * len(at)))
    bins = max(3, min(round(period / step), round(96 * period / 86_400)))
    width = period / bins
    by_bin: list[list[float]] = [[] for _ in range(bins)]
    for t, v in zip(at[:history], values[:history], strict=True):
        by_bin[int((t % period) // width) % bins].append(v)
    pools = [by_bin[b - 1] + by_bin[b] + by_bin[(b + 1) % bins] for b in range(bins)]
    profile = [statistics.median(p) if len(p) >= 3 else statistics.median(values[:history]) for p in pools]
    expected = [profile[int((t % period) // width) % bins] for t in at]
    found = anomaly._seasonal_expected(np.array(at), np.array(values), history, period, step)
    assert found.tolist() == expected


@given(st.lists(st.tuples(st.floats(min_value=0, max_value=30 * 86_400), finite), min_size=1, max_size=200))
def test_the_grid_is_each_cells_mean_added_up_in_time_order(raw: list[tuple[float, float]]) -> None:
    raw.sort()
    at, values = [t for t, _v in raw], [v for _t, v in raw]
    index = [round((t - at[0]) / 3600.0) for t in at]
    sums, counts = [0.0] * (index[-1] + 1), [0] * (index[-1] + 1)
    for i, v in zip(index, values, strict=True):
        sums[i] += v
        counts[i] += 1
    cells = [i for i in range(len(sums)) if counts[i]]
    assert anomaly._grid(np.array(at), np.array(values), 3600.0) == (cells, [sums[i] / counts[i] for i in cells])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(finite, min_size=8, max_size=400),
    st.sampled_from([60, 300, 3600]),
    st.integers(min_value=0, max_value=399),
)
def test_checked_points_score_as_any_points(values: list[float], step: int, window_at: int) -> None:
    times = [START + timedelta(seconds=i * step) for i in range(len(values))]
    at = np.array([t.timestamp() for t in times])
    timed = TimedPoints.checked(times, values, at)
    assert isinstance(timed, TimedPoints) and timed == list(zip(times, values, strict=True))
    window = (times[min(window_at, len(times) - 1)], times[-1] + timedelta(seconds=step))
    assert repr(detect_anomalies(timed, window=window)) == repr(detect_anomalies(list(timed), window=window))


def test_points_that_are_not_finite_floats_in_order_stay_a_plain_list() -> None:
    times = [START + timedelta(minutes=i) for i in range(3)]
    at = np.array([t.timestamp() for t in times])
    assert type(TimedPoints.checked(times, [1.0, math.inf, 2.0], at)) is list
    assert type(TimedPoints.checked(times, [1.0, 2.0, 3.0], at[::-1].copy())) is list


def test_stored_points_carry_their_epoch_seconds_and_share_their_instants(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    moments = [START + timedelta(minutes=i, milliseconds=i * 7) for i in range(50)]
    env.add_metric_points((s, "cpu_percent", "%", m, 10.0 + i % 3) for s in ("a", "b") for i, m in enumerate(moments))
    _metrics._moment.cache_clear()
    read = [env.series_points(s, "cpu_percent", "%", START, START + timedelta(hours=2)) for s in ("a", "b")]
    for shown in read:
        assert shown is not None and isinstance(shown.points, TimedPoints)
        assert shown.points.at.tolist() == [m.timestamp() for m in moments]
        assert [m for m, _v in shown.points] == moments
    assert _metrics._moment.cache_info().misses == len(moments), "an instant is made once, not once a series"


def test_the_clock_is_the_newest_point_of_any_series(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    conn = env._connection()
    assert _metrics.latest(conn) is None
    env.add_metric_points([("a", "x", "", START, 1.0), ("b", "y", "", START + timedelta(hours=3), 2.0)])
    env.add_metric_points([("a", "z", "", START + timedelta(hours=1), 3.0)])
    assert _metrics.latest(conn) == conn.execute("SELECT MAX(ts) FROM metric_point").fetchone()[0]
    assert env.now() == START + timedelta(hours=3)


def test_the_collector_is_paused_while_any_pause_is_open_and_resumes_as_it_was() -> None:
    assert gc.isenabled()
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled(), "a collector paused before stays paused"
    finally:
        gc.enable()


def test_the_survey_of_a_generated_estate_names_its_planted_culprit(tmp_path: Path) -> None:
    services = 24
    metrics, edges = write_wide_home(tmp_path / "files", services=services, days=3, step_minutes=10)
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    assert import_metric_files(env, [metrics]).imported == services * 3 * 3 * 24 * 6
    assert import_dependency_files(env, [edges]).imported == services - 1
    assert len(env.services()) == services
    end = env.data_end()
    assert end is not None
    output = SuspectSearch(env, env, env, now=env.now()).run(
        RankSuspectsArgs(start=iso(end - timedelta(days=7)), end=iso(end))
    )
    (evidence,) = [e for e in output.evidence if isinstance(e, SuspectEvidence)]
    assert evidence.suspects[0].service == fault_service(services)
    assert gc.isenabled()
