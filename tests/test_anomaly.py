"""detect_anomalies: episodes against the series' own history, on shapes on-call sees."""

from __future__ import annotations

import csv
import math
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from veridiag.analysis.anomaly import SCORE_CAP, Anomaly, detect_anomalies

T0 = datetime(2014, 3, 10, tzinfo=UTC)
FIXTURES = Path(__file__).parent / "fixtures" / "metrics"
NAB_WINDOW = (datetime(2014, 2, 24, 10, 17, tzinfo=UTC), datetime(2014, 2, 25, 2, 57, tzinfo=UTC))


def series(values: list[float], *, step: timedelta = timedelta(minutes=5)) -> list[tuple[datetime, float]]:
    return [(T0 + i * step, v) for i, v in enumerate(values)]


def overlaps(anomaly: Anomaly, start: datetime, end: datetime) -> bool:
    return anomaly.onset < end and anomaly.end >= start


def nab_points() -> list[tuple[datetime, float]]:
    with (FIXTURES / "nab_ec2_cpu_utilization_5f5533.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    return [(datetime.fromisoformat(ts).replace(tzinfo=UTC), float(value)) for ts, value in rows]


# -- shapes ---------------------------------------------------------------------------------


def test_flat_series_with_a_step_up_is_one_episode_from_the_step() -> None:
    points = series([10.0] * 150 + [14.0] * 50)
    report = detect_anomalies(points)
    assert report.baseline is not None
    assert (report.baseline.method, report.baseline.median, report.baseline.mad) == ("median_mad", 10.0, 0.0)
    [step] = report.anomalies
    assert (step.onset, step.end, step.direction, step.points) == (points[150][0], points[199][0], "up", 50)
    assert (step.peak, step.expected, step.factor) == (14.0, 10.0, 1.4)
    assert step.score > 100  # a flat history: the scale is 0.1 % of the level


def test_step_that_started_before_the_window_keeps_its_onset() -> None:
    rng = random.Random(7)
    values = [rng.gauss(50, 2) for _ in range(300)] + [rng.gauss(62, 2) for _ in range(100)]
    points = series(values)
    window = (points[320][0], points[-1][0] + timedelta(minutes=5))
    [shift] = detect_anomalies(points, window=window).anomalies
    assert shift.direction == "up"
    assert points[298][0] <= shift.onset <= points[302][0]  # the step is at index 300
    assert shift.end >= points[395][0]
    assert shift.points >= 95


def test_small_sustained_shift_is_found_through_the_running_median() -> None:
    """A 2.5-sigma step: no single point reaches the cut, the level does."""
    rng = random.Random(3)
    values = [rng.gauss(100, 4) for _ in range(400)] + [rng.gauss(110, 4) for _ in range(60)]
    points = series(values)
    window = (points[400][0], points[-1][0] + timedelta(minutes=5))
    report = detect_anomalies(points, window=window)
    assert report.anomalies, "the shift was missed"
    shift = report.anomalies[0]
    assert shift.direction == "up"
    assert points[396][0] <= shift.onset <= points[406][0]
    assert shift.points >= 40


def test_pending_connections_jump_off_a_constant_zero() -> None:
    points = series([0.0] * 59 + [37.0], step=timedelta(minutes=1))
    report = detect_anomalies(points, window=(points[50][0], points[-1][0] + timedelta(minutes=1)))
    [jump] = report.anomalies
    assert (jump.peak, jump.expected, jump.peak_at, jump.points) == (37.0, 0.0, points[-1][0], 1)
    assert jump.score == SCORE_CAP
    assert jump.factor is None  # no ratio against 0


def test_bursty_eight_hours_with_a_thirty_minute_incident() -> None:
    rng = random.Random(11)
    values = [120 * rng.lognormvariate(0, 0.25) for _ in range(480)]  # p99 latency, ms, 1-minute points
    for i in (37, 151, 152, 290, 402):  # ordinary one-minute bursts
        values[i] *= 1.8
    for i in range(300, 330):  # the incident: 30 minutes at ~4x
        values[i] = 480 * rng.lognormvariate(0, 0.1)
    points = series(values, step=timedelta(minutes=1))
    [incident] = detect_anomalies(points).anomalies
    assert points[299][0] <= incident.onset <= points[301][0]
    assert points[328][0] <= incident.end <= points[330][0]
    assert incident.points >= 28
    assert incident.direction == "up"
    assert incident.peak == max(values[300:330])
    assert incident.factor is not None
    assert incident.factor == incident.peak / incident.expected
    assert 3.0 < incident.factor < 7.0


def test_sixty_points_with_a_ten_point_spike() -> None:
    rng = random.Random(5)
    values = [rng.uniform(8, 12) for _ in range(60)]
    values[30:40] = [rng.uniform(40, 45) for _ in range(10)]
    points = series(values, step=timedelta(minutes=1))
    [spike] = detect_anomalies(points).anomalies
    assert (spike.onset, spike.end, spike.points) == (points[30][0], points[39][0], 10)
    assert spike.peak == max(values[30:40])


def test_daily_seasonal_week_flags_the_night_spike_not_the_daily_peak() -> None:
    rng = random.Random(2)
    values = []
    for i in range(7 * 288):
        hour = (i % 288) / 12
        daily = 200 * math.exp(-(((hour - 14) / 2.5) ** 2))  # a busy afternoon every day
        values.append(100 + daily + rng.gauss(0, 6))
    night = 6 * 288 + 3 * 12  # 03:00 on the last day
    for i in range(night, night + 4):
        values[i] = 260 + rng.gauss(0, 6)  # ordinary at 14:00, unheard of at 03:00
    points = series(values)
    last_day = (points[6 * 288][0], points[-1][0] + timedelta(minutes=5))
    report = detect_anomalies(points, window=last_day)
    assert report.baseline is not None
    assert report.baseline.method == "seasonal_median_mad"
    assert report.baseline.period == timedelta(days=1)
    [spike] = report.anomalies
    assert (spike.onset, spike.end) == (points[night][0], points[night + 3][0])
    assert spike.expected < 120  # the night's own level, not the day's median


def test_a_drop_in_request_count_points_down() -> None:
    rng = random.Random(9)
    values = [rng.gauss(1000, 30) for _ in range(200)]
    values[150:165] = [rng.gauss(400, 20) for _ in range(15)]
    points = series(values)
    [drop] = detect_anomalies(points).anomalies
    assert drop.direction == "down"
    assert (drop.onset, drop.end, drop.points) == (points[150][0], points[164][0], 15)
    assert drop.peak == min(values[150:165])
    assert drop.factor is not None
    assert drop.factor < 0.5


def test_routine_spikes_are_not_incidents_but_a_bigger_one_is() -> None:
    """A flat metric that spikes a little every two hours (grok_asg_anomaly's shape)."""
    values = [33.4] * (4 * 288)
    for start in range(0, len(values) - 3, 24):
        values[start : start + 3] = [38.0, 39.0, 38.5]
    values[3 * 288 + 110 : 3 * 288 + 114] = [55.0, 56.0, 57.0, 55.5]
    points = series(values)
    [big] = detect_anomalies(points).anomalies
    assert big.peak == 57.0
    assert big.onset == points[3 * 288 + 110][0]


def test_quiet_noise_flags_nothing() -> None:
    rng = random.Random(4)
    points = series([rng.gauss(40, 3) for _ in range(2016)])
    for day in range(1, 7):
        window = (T0 + timedelta(days=day), T0 + timedelta(days=day + 1))
        assert detect_anomalies(points, window=window).anomalies == []


# -- real data --------------------------------------------------------------------------------


def test_nab_ec2_cpu_labelled_window_is_hit() -> None:
    points = nab_points()
    assert len(points) == 1440
    report = detect_anomalies(points)
    assert report.anomalies
    assert overlaps(report.anomalies[0], *NAB_WINDOW)
    assert report.anomalies[0].peak == 68.092  # the spike, exactly as written in the file


def test_nab_question_about_the_labelled_day_tops_with_the_incident() -> None:
    points = nab_points()
    day = (datetime(2014, 2, 24, tzinfo=UTC), datetime(2014, 2, 25, tzinfo=UTC))
    report = detect_anomalies([p for p in points if p[0] < day[1]], window=day)
    assert report.anomalies
    assert all(overlaps(a, *NAB_WINDOW) for a in report.anomalies)
    assert report.anomalies[0].peak_at == datetime(2014, 2, 24, 21, 57, tzinfo=UTC)
    drop = [a for a in report.anomalies if a.direction == "down"]
    assert drop, "the level drop after the spike was missed"


def test_nab_quiet_day_before_the_incident_flags_nothing() -> None:
    points = nab_points()
    day = (datetime(2014, 2, 23, tzinfo=UTC), datetime(2014, 2, 24, tzinfo=UTC))
    assert detect_anomalies([p for p in points if p[0] < day[1]], window=day).anomalies == []


# -- odd input ----------------------------------------------------------------------------------


def test_too_little_data_has_no_baseline() -> None:
    assert detect_anomalies([]).baseline is None
    assert detect_anomalies([(T0, 1.0)]).anomalies == []
    nan_only = [(T0 + timedelta(minutes=i), math.nan) for i in range(50)]
    assert detect_anomalies(nan_only).baseline is None


def test_non_finite_values_are_skipped_and_order_does_not_matter() -> None:
    values = [10.0] * 100
    values[60:66] = [50.0] * 6
    points = series(values)
    noisy = [*points, (T0 + timedelta(minutes=3), math.nan), (T0 + timedelta(minutes=7), math.inf)]
    shuffled = noisy[:]
    random.Random(1).shuffle(shuffled)
    expected = detect_anomalies(points)
    assert detect_anomalies(shuffled) == expected
    assert expected.baseline is not None
    assert expected.baseline.history_points == 100
    [anomaly] = expected.anomalies
    assert (anomaly.onset, anomaly.end) == (points[60][0], points[65][0])


def test_constant_series_and_duplicate_timestamps() -> None:
    flat = [(T0, 5.0)] * 40
    report = detect_anomalies(flat)
    assert report.anomalies == []
    assert report.baseline is not None
    assert report.baseline.mad == 0.0
    dup = [(T0 + timedelta(minutes=i // 2), 5.0) for i in range(80)] + [(T0 + timedelta(minutes=40), 90.0)]
    [jump] = detect_anomalies(dup).anomalies
    assert jump.peak == 90.0


def test_extreme_magnitudes_stay_finite() -> None:
    for values in (
        [1e308, -1e308] * 10,  # beyond any measurement: skipped
        [1e150] * 9 + [-1e150],
        [5e-324] * 20 + [1e150],
        [-1e150] * 20 + [1e150] * 5,
    ):
        report = detect_anomalies(series(values))
        if report.baseline is not None:
            assert math.isfinite(report.baseline.mad)
            assert math.isfinite(report.baseline.median)
        for anomaly in report.anomalies:
            assert math.isfinite(anomaly.score)
            assert anomaly.factor is None or math.isfinite(anomaly.factor)
    assert detect_anomalies(series([1e308, -1e308] * 10)).baseline is None


def test_naive_times_are_utc_and_mix_with_aware_ones() -> None:
    values = [1.0, 1.2, 0.9, 1.1] * 20 + [9.0] * 5
    naive = [(datetime(2014, 3, 10) + timedelta(minutes=i), v) for i, v in enumerate(values)]
    aware_window = (datetime(2014, 3, 10, 1, tzinfo=UTC), datetime(2014, 3, 10, 2, tzinfo=UTC))
    [anomaly] = detect_anomalies(naive, window=aware_window).anomalies
    assert anomaly.onset == naive[80][0]
    assert anomaly.onset.tzinfo is None  # the input's own timestamp


def test_four_thousand_points_stay_fast() -> None:
    """A regression guard against quadratic work (many episodes, long histories)."""
    rng = random.Random(8)
    values = [33.4 if rng.random() < 0.8 else rng.uniform(30, 45) for _ in range(4000)]
    points = series(values)
    started = time.process_time()  # this process's CPU: other test workers do not count
    detect_anomalies(points, window=(points[3700][0], points[-1][0]))
    assert time.process_time() - started < 1.0


# -- properties ---------------------------------------------------------------------------------

values_strategy = st.lists(
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**6), 10**6)), max_size=120
)


@given(values=values_strategy, offsets=st.lists(st.integers(0, 500), max_size=120), window=st.booleans())
def test_any_floats_give_well_formed_episodes(values: list[float], offsets: list[int], window: bool) -> None:
    times = [T0 + timedelta(minutes=offsets[i % len(offsets)] if offsets else i) for i in range(len(values))]
    points = list(zip(times, values, strict=True))
    bounds = (T0 + timedelta(minutes=100), T0 + timedelta(minutes=300)) if window else None
    report = detect_anomalies(points, window=bounds)
    given_times = set(times)
    for anomaly in report.anomalies:
        assert anomaly.onset <= anomaly.peak_at <= anomaly.end
        assert {anomaly.onset, anomaly.peak_at, anomaly.end} <= given_times
        assert any(t == anomaly.peak_at and v == anomaly.peak for t, v in points)
        assert math.isfinite(anomaly.score)
        assert 0 <= anomaly.score <= SCORE_CAP
        assert anomaly.factor is None or math.isfinite(anomaly.factor)
        assert anomaly.points >= 1
        if bounds:
            assert anomaly.onset < bounds[1]
            assert anomaly.end >= bounds[0]
    assert detect_anomalies(points, window=bounds) == report  # deterministic
