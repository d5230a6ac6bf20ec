"""Level shifts of series with no history before the window (binary segmentation): generated
steps, ramps and noise."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from veridiag.analysis.changepoints import MIN_POINTS, MIN_SEGMENT, level_shifts

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def points(values: list[float]) -> list[tuple[datetime, float]]:
    return [(T0 + timedelta(minutes=i), v) for i, v in enumerate(values)]


@given(
    seed=st.integers(0, 10_000),
    before=st.integers(MIN_POINTS, 60),
    during=st.integers(MIN_SEGMENT, 60),
    # A tail shorter than a segment is below the resolution: the episode then runs to the end.
    after=st.one_of(st.just(0), st.integers(MIN_SEGMENT, 40)),
    level=st.floats(1, 100),
    jump=st.floats(15, 200),
    up=st.booleans(),
)
def test_a_step_out_of_noise_is_one_episode_from_where_it_begins(
    *, seed: int, before: int, during: int, after: int, level: float, jump: float, up: bool
) -> None:
    rng = random.Random(seed)
    spread = level * 0.02 + 0.01
    shift = jump * spread * (1 if up else -1)
    values = [level + rng.gauss(0, spread) for _ in range(before)]
    values += [level + shift + rng.gauss(0, spread) for _ in range(during)]
    values += [level + rng.gauss(0, spread) for _ in range(after)]
    found = level_shifts(points(values))
    assert len(found) == 1, found
    [episode] = found
    assert abs((episode.onset - T0) / timedelta(minutes=1) - before) <= 1
    assert episode.direction == ("up" if up else "down")
    assert abs((episode.end - T0) / timedelta(minutes=1) - (before + during - 1)) <= 1


@given(seed=st.integers(0, 10_000), n=st.integers(2 * MIN_SEGMENT, 300), level=st.floats(0, 1000))
def test_noise_alone_has_no_episode(seed: int, n: int, level: float) -> None:
    rng = random.Random(seed)
    values = [level + rng.gauss(0, 1 + level * 0.01) for _ in range(n)]
    assert level_shifts(points(values)) == []


def test_a_ramp_is_one_episode_not_a_staircase() -> None:
    """The demo gateway's upstream timeouts: flat, a ten-minute ramp to 40 a minute, flat again."""
    values = [1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0, 7, 14, 21, 26, 33, 38, 40, 40, 39, 38, 41, 38, 38]
    values += [41, 40, 39, 41, 39, 39, 40, 41, 39, 39, 42, 41, 40, 39, 25, 13, 0, 0, 0, 0]
    [episode] = level_shifts(points([float(v) for v in values]))
    assert episode.direction == "up" and episode.peak == 42.0
    assert T0 + timedelta(minutes=10) <= episode.onset <= T0 + timedelta(minutes=15)  # within a sample


def test_too_short_a_series_says_nothing() -> None:
    assert level_shifts(points([1.0, 50.0, 50.0, 1.0])) == []
