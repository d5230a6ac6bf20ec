"""``query_metrics`` on the embedded file: a step asked for is honoured and said (the points are
the series' newest value at or before each step's time, as a Prometheus range query reads it),
and the history line's count is of the stretch it names — also when no data precedes the window
and the series around it was the baseline."""

from __future__ import annotations

import bisect
import random
import re
from datetime import UTC, datetime, timedelta
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veridiag.tools import QueryMetricsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.records import MetricEvidence
from veridiag.tools.render import STEP_LINE

T0 = datetime(2026, 3, 1, tzinfo=UTC)
HOURS = 6
#: A gauge sampled every minute for six hours, with two gaps longer than the 5 min look-back.
GAPS = ((90, 100), (200, 203))
LOOKBACK = timedelta(minutes=5)
HISTORY = re.compile(r"^history (\S+) – (\S+) \((\d+) points?\)", re.MULTILINE)


@cache
def _series() -> list[tuple[datetime, float]]:
    rng = random.Random(7)
    return [
        (T0 + timedelta(minutes=m), round(rng.uniform(10, 90), 1))
        for m in range(HOURS * 60)
        if not any(a <= m < b for a, b in GAPS)
    ]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedEnvironment:
    environment = EmbeddedEnvironment(tmp_path_factory.mktemp("steps") / "e.db", load_demo=False)
    environment.add_metric_points(("api", "cpu_percent", "%", ts, value) for ts, value in _series())
    return environment


def _at_steps(start: datetime, end: datetime, step: int) -> list[tuple[datetime, float]]:
    """What a Prometheus range query reads at each step: the newest point at or before it, not
    older than the look-back."""
    points = _series()
    times = [t for t, _v in points]
    found, moment = [], start
    while moment < end:
        newest = bisect.bisect_right(times, moment) - 1
        if newest >= 0 and moment - times[newest] <= LOOKBACK:
            found.append((moment, points[newest][1]))
        moment += timedelta(seconds=step)
    return found


def _metrics(env: EmbeddedEnvironment, **args: object) -> tuple[str, MetricEvidence]:
    out = env.query_metrics(QueryMetricsArgs(service="api", metric="cpu_percent", **args))
    assert out.status == "ok", out.text
    (evidence,) = out.evidence
    assert isinstance(evidence, MetricEvidence)
    return out.text, evidence


@given(
    start=st.integers(0, HOURS * 60 - 1),
    length=st.integers(1, HOURS * 60),
    step=st.integers(15, 7200) | st.sampled_from([60, 300, 900, 3600]),
)
def test_a_step_asked_for_reads_the_points_at_it_and_says_so(
    env: EmbeddedEnvironment, start: int, length: int, step: int
) -> None:
    since = T0 + timedelta(minutes=start)
    until = since + timedelta(minutes=length)
    expected = _at_steps(since, until, step)
    out = env.query_metrics(
        QueryMetricsArgs(
            service="api", metric="cpu_percent", start=since.isoformat(), end=until.isoformat(), step_seconds=step
        )
    )
    if not expected:
        assert out.status == "no_data", out.text
        return
    (evidence,) = out.evidence
    assert isinstance(evidence, MetricEvidence)
    assert evidence.points == len(expected)
    assert {(p[0], p[1]) for p in evidence.listed} <= set(expected), "every point listed is a step's reading"
    said = STEP_LINE.format(step=f"{step // 60}m" if step % 60 == 0 else f"{step}s")
    assert out.text.split("\n")[1] == said


def test_without_a_step_the_series_is_shown_as_stored(env: EmbeddedEnvironment) -> None:
    text, evidence = _metrics(env, start=T0.isoformat(), end=(T0 + timedelta(hours=1)).isoformat())
    assert evidence.points == 60 and "step " not in text.split("\n")[1]


@given(length=st.integers(5, 180), step=st.sampled_from([None, 60, 120, 300]))
def test_the_history_lines_count_is_of_the_stretch_it_names(
    env: EmbeddedEnvironment, length: int, step: int | None
) -> None:
    """The window starts with the series: nothing precedes it, so the baseline is the series
    around it — the window and what follows — and the line names that stretch, not the window's."""
    asked = {"step_seconds": step} if step else {}
    text, evidence = _metrics(env, start=T0.isoformat(), end=(T0 + timedelta(minutes=length)).isoformat(), **asked)
    found = HISTORY.search(text)
    if found is None:  # too few points to judge at all
        assert "history: too few points" in text
        return
    first, last, count = datetime.fromisoformat(found[1]), datetime.fromisoformat(found[2]), int(found[3])
    end = last + timedelta(seconds=1)
    stretch = _at_steps(first, end, step) if step else [p for p in _series() if first <= p[0] < end]
    assert count == len(stretch), text
    assert evidence.points <= count
