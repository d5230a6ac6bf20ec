"""Red team 47: a duration a claim computes is computed from its clocks, not from a coincidence of
how its lines are laid out (issue 27 D1: a stated derivation is checked by computing it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from veridiag.text.entities import Corpus, Entity, derived_duration, extract_entities


def _duration(claim: str) -> Entity:
    (duration,) = [e for e in extract_entities(claim) if e.dimension == "time"]
    return duration


@given(
    st.integers(0, 80000),
    st.integers(5, 300),
    st.integers(2, 4),
    st.sampled_from(["两次报错相隔 {n} 秒。", "The two errors were {n} seconds apart.", "{n} 秒后又报了一次。"]),
)
def test_a_pair_of_clocks_quoted_twice_is_no_series(start: int, gap: int, copies: int, form: str) -> None:
    """Two lines quoted again (under a burst heading and a template) repeat their clocks: their
    gap is the only one they give — no series step that lets any gap up to twice it pass."""
    first = datetime(2005, 11, 9, tzinfo=UTC) + timedelta(seconds=start)
    second = first + timedelta(seconds=gap)
    line = f"bursts: {first:%Y-%m-%dT%H:%M:%S}Z – {second:%Y-%m-%dT%H:%M:%S}Z (2 lines)"
    evidence = Corpus(["\n".join([line] * copies)])
    right = form.format(n=gap)
    assert derived_duration(_duration(right), right, evidence)
    for wrong_gap in (gap + 2 + gap // 3, 2 * gap - 1):
        wrong = form.format(n=wrong_gap)
        assert not derived_duration(_duration(wrong), wrong, evidence), wrong


@given(st.integers(0, 1400), st.integers(1, 5), st.integers(3, 8))
def test_a_series_step_still_widens_its_points(start: int, step: int, points: int) -> None:
    """Points of a series one step apart each stand for their step (04:37–04:39 of a minutely
    series is three minutes above a line), written once or quoted again."""
    t0 = datetime(2022, 8, 22, tzinfo=UTC) + timedelta(minutes=start)
    lines = [f"{t0 + timedelta(minutes=i * step):%Y-%m-%dT%H:%M:%S}Z 88.{i}%" for i in range(points)]
    evidence = Corpus(["\n".join(lines + lines[:2])])
    span = (points - 1) * step
    claim = f"CPU stayed high for {span + step} minutes."
    assert derived_duration(_duration(claim), claim, evidence)


@given(st.integers(0, 80000), st.integers(20, 90), st.integers(1, 3), st.integers(1, 3))
def test_a_range_of_gaps_is_stated_by_a_gap_within_it(start: int, gap: int, below: int, above: int) -> None:
    """ "every 40–42 s": each end is stated by a gap between two quoted clocks inside the range,
    not by one outside it."""
    first = datetime(2017, 5, 16, tzinfo=UTC) + timedelta(seconds=start)
    second = first + timedelta(seconds=gap)
    evidence = Corpus([f"{first:%Y-%m-%d %H:%M:%S} INFO GET /user_data", f"{second:%Y-%m-%d %H:%M:%S} INFO GET"])
    right = f"The errors come about every {gap - below}–{gap + above} s."
    wrong = f"The errors come about every {gap + 2 * above + 2}–{gap + 3 * above + 3} s."
    assert all(derived_duration(e, right, evidence) for e in extract_entities(right) if e.dimension == "time")
    assert not any(derived_duration(e, wrong, evidence) for e in extract_entities(wrong) if e.dimension == "time")


@given(st.integers(0, 600), st.integers(3, 25), st.integers(2, 30))
def test_a_step_widens_only_points_of_the_series(start: int, offset: int, extra: int) -> None:
    """An hourly retry series after one failure off its grid: the failure-to-first-retry gap is
    its own, not widened by the hour the retries are apart."""
    failure = datetime(2017, 12, 23, 20, tzinfo=UTC) + timedelta(minutes=start)
    first = failure + timedelta(minutes=offset, seconds=30)
    lines = [f"{failure:%Y-%m-%dT%H:%M:%S}Z sync failed"] + [
        f"{first + timedelta(hours=i):%Y-%m-%dT%H:%M:%S}Z retry" for i in range(3)
    ]
    evidence = Corpus(["\n".join(lines)])
    wrong = f"The first retry came {offset + extra} minutes after the failure."
    assert not derived_duration(_duration(wrong), wrong, evidence)
