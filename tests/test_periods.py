"""Periods as a person reads them (issue 28): a period whose ends fall on different days carries
both dates, in any zone; one within a day stays compact; a claim written either way is still
grounded by the tool output it quotes, and a wrong date is not."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from veridiag.text.entities import Corpus, extract_entities
from veridiag.text.periods import across_days, moment_text, period_text

_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_CLOCK = re.compile(r"(?<![\d:])\d\d:\d\d(?![\d:])")

instants = st.datetimes(min_value=datetime(2000, 1, 2), max_value=datetime(2099, 12, 30), timezones=st.just(UTC))
zones = st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))


@given(instants, instants, zones, st.sampled_from(["zh", "en"]), st.booleans())
def test_a_reader_recovers_both_dates_and_a_day_s_period_has_none(
    first: datetime, second: datetime, zone: timezone, lang: str, dated: bool
) -> None:
    start, end = sorted((first, second))
    text = period_text(start, end, lang, dated=dated, zone=zone)
    local_start, local_end = start.astimezone(zone), end.astimezone(zone)
    dates, clocks = _DATE.findall(text), _CLOCK.findall(text)
    if start == end:
        assert clocks == [f"{local_start:%H:%M}"]
        assert dates == ([local_start.date().isoformat()] if dated else [])
    elif local_start.date() != local_end.date():
        assert across_days(start, end, zone)
        assert dates == [local_start.date().isoformat(), local_end.date().isoformat()], text
        assert clocks == [f"{local_start:%H:%M}", f"{local_end:%H:%M}"], text
    else:
        assert not across_days(start, end, zone)
        assert clocks == [f"{local_start:%H:%M}", f"{local_end:%H:%M}"], text
        # the one day once where the answer spans days; otherwise the compact form
        assert dates == ([local_start.date().isoformat()] if dated else []), text
        if not dated:
            assert text == f"{local_start:%H:%M}–{local_end:%H:%M}"


def test_the_issue_s_episode_reads_with_its_dates_in_both_languages() -> None:
    onset, end = datetime(2026, 2, 25, 7, 15, tzinfo=UTC), datetime(2026, 2, 27, 2, 45, tzinfo=UTC)
    assert period_text(onset, end, "en") == "2026-02-25 07:15 – 2026-02-27 02:45"
    assert period_text(onset, end, "zh") == "2026-02-25 07:15 至 2026-02-27 02:45"
    assert period_text(onset, onset + timedelta(hours=2, minutes=15)) == "07:15–09:30"
    # in the zone it is shown in: 23:30–00:30 UTC is one morning in Shanghai
    late = datetime(2026, 2, 25, 23, 30, tzinfo=UTC)
    assert period_text(late, late + timedelta(hours=1)) == "2026-02-25 23:30 – 2026-02-26 00:30"
    assert period_text(late, late + timedelta(hours=1), zone=timezone(timedelta(hours=8))) == "07:30–08:30"
    assert moment_text(late, dated=True, seconds=True) == "2026-02-25 23:30:00"


#: The anomaly line and a point line as ``tools/render.py`` writes them.
OUTPUT = (
    "anomaly 1: 2026-02-25T07:15:00Z – 2026-02-27T02:45:00Z (416 points, 43.5 h) up; peak 2000ms at "
    "2026-02-26T00:45:00Z; expected 23ms; ×86.96; score 900.1\n"
    "points:\n2026-02-26T00:45:00Z 2000ms\n2026-02-26T00:50:00Z 938ms"
)


def _grounded(claim: str) -> bool:
    corpus = Corpus([OUTPUT])
    facts = [e for e in extract_entities(claim) if e.kind == "timestamp"]
    assert facts, claim
    return all(corpus.contains(fact) for fact in facts)


def test_a_claim_grounds_its_times_written_either_way_and_not_with_a_wrong_date() -> None:
    onset, end = datetime(2026, 2, 25, 7, 15, tzinfo=UTC), datetime(2026, 2, 27, 2, 45, tzinfo=UTC)
    for lang in ("en", "zh"):
        assert _grounded(f"p99 rose abnormally {period_text(onset, end, lang)}")
    assert _grounded("p99 rose abnormally 07:15–02:45")
    assert _grounded("p99 在 2月25日 07:15 至 2月27日 02:45 异常升高")
    assert _grounded("p99 was 938ms at 2026-02-26 00:50")
    assert not _grounded("p99 rose abnormally 2026-02-24 07:15 – 2026-02-27 02:45"), "a wrong date"
    assert not _grounded("p99 rose abnormally 2026-02-25 07:15 – 2026-02-27 03:45"), "a wrong clock"
