"""A zone named by a place ("Berlin time", "柏林时间", "India Time", "中欧时间"), from CLDR's places
(``text/zone_places.json``, written by ``scripts/zone_places.py``), not from a list of the zones
someone thought of: the held-out set blind3 wrote Berlin and India clocks no word list had."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import unicodedata
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import example, given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper
from veridiag.text.when import place_zones, places_beside_clocks, question_zone

_PLACES: dict[str, str] = json.loads(resources.files("veridiag.text").joinpath("zone_places.json").read_text("utf-8"))
_LATIN = sorted(p for p in _PLACES if p.isascii() and p.replace(" ", "").isalpha() and len(p.split()) <= 4)
_CHINESE = sorted(p for p in _PLACES if all("\u4e00" <= c <= "\u9fff" for c in p) and len(p) >= 2)
_MOMENT = datetime(2026, 2, 19, 9, 41, tzinfo=UTC)


def _grounding(text: str, output: str) -> str:
    """The Gatekeeper's entity grounding of ``text`` quoting the whole of ``output``."""
    store = InMemoryInvocations([invocation(394, output=output)])
    report = Gatekeeper().validate(
        v2([claim(text=text, bindings=[binding([394], output)])]), session_id=SESSION, invocations=store
    )
    (check,) = [
        c
        for t in report.claim_traces
        for c in t.checks
        if c.rule_id == "claim.entity_grounding" and c.target.endswith("claim_text")
    ]
    return check.outcome


def _offset(key: str, moment: datetime = _MOMENT) -> timedelta | None:
    return moment.astimezone(ZoneInfo(key)).utcoffset()


@given(place=st.sampled_from(_LATIN), lead=st.sampled_from(["", "at ", "why was it slow at 10:00 ", "从 "]))
def test_an_english_place_and_time_names_its_zone(place: str, lead: str) -> None:
    written = " ".join(word[:1].upper() + word[1:] for word in place.split())
    for time_word in ("time", "Time", "TIME"):
        found = question_zone(f"{lead}{written} {time_word}")
        assert found is not None, (place, time_word)
        assert _MOMENT.astimezone(found[0]).utcoffset() == _offset(_PLACES[place])


_ACCENTED = sorted(
    p
    for p in _PLACES
    if not p.isascii() and all(w[:1].isalpha() and w[:1].isascii() for w in p.split()) and len(p.split()) <= 4
)


@given(
    place=st.sampled_from(_LATIN + _ACCENTED),
    lead=st.sampled_from(["", "出现在 ", "第一条出现在"]),
    join=st.sampled_from([" ", ""]),
    word=st.sampled_from(["时间", "時間"]),
    plain=st.booleans(),
)
def test_an_english_place_before_the_chinese_word_for_time_names_its_zone(
    place: str, lead: str, join: str, word: str, plain: bool
) -> None:
    """ "出现在 Anchorage 时间 12:01:41": a Latin place before 时间 is a zone as before "time", written
    with CLDR's accents and apostrophes or without them ("Sao Paulo", "St. John's")."""
    written = " ".join(w[:1].upper() + w[1:] for w in place.split())
    if plain:
        decomposed = unicodedata.normalize("NFKD", written.replace("’", "'"))
        written = "".join(c for c in decomposed if not unicodedata.combining(c))
    found = question_zone(f"{lead}{written}{join}{word} 12:01:41")
    assert found is not None, (written, word)
    assert _MOMENT.astimezone(found[0]).utcoffset() == _offset(_PLACES[place])


@given(
    place=st.sampled_from(_CHINESE),
    lead=st.sampled_from(["", "在", "昨晚 ", "支付失败，"]),
    word=st.sampled_from(["时间", "時間"]),
)
def test_a_chinese_place_and_time_names_its_zone(place: str, lead: str, word: str) -> None:
    found = question_zone(f"{lead}{place}{word} 10:00 左右")
    assert found is not None, place
    assert _MOMENT.astimezone(found[0]).utcoffset() == _offset(_PLACES[place])


@given(
    word=st.sampled_from(
        ["Response", "Build", "Wall", "Run", "Up", "Load", "Real", "Any", "Lead", "Local", "Same", "Christmas", "Wake"]
    )
    | st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True).filter(lambda w: w.lower() not in _PLACES),
    zh=st.sampled_from(["响应", "当地", "同一", "构建", "等待", "运行"]),
)
def test_a_word_before_time_that_is_no_place_names_no_zone(word: str, zh: str) -> None:
    assert list(place_zones(f"The {word} time went up at 10:00")) == []
    assert list(place_zones(f"{zh}时间在 10:00 变长")) == []


@given(
    place=st.sampled_from(["Berlin", "Kolkata", "India", "Los Angeles", "Sydney"]) | st.sampled_from(["柏林", "印度"]),
    minutes=st.integers(0, 23 * 60),
)
def test_a_clock_with_a_place_zone_is_the_instant_it_names(place: str, minutes: int) -> None:
    """The Gatekeeper grounds "14:01 Berlin time" in an output's "12:01:00Z" (winter), and not in
    an output holding the clock as written in UTC."""
    moment = datetime(2026, 2, 19, tzinfo=UTC) + timedelta(minutes=minutes)
    key = _PLACES[place.lower()]
    local = moment.astimezone(ZoneInfo(key)).strftime("%H:%M")
    text = f"{place}时间 {local} 开始报错。" if not place.isascii() else f"Errors began at {local} {place} time."

    def outcome(stamp: datetime) -> str:
        return _grounding(text, f"2026-02-19T{stamp:%H:%M}:00Z ERROR payment-service request timeout")

    assert outcome(moment) == "pass"
    if local != f"{moment:%H:%M}":
        assert outcome(moment.replace(hour=int(local[:2]), minute=int(local[3:]))) != "pass"


def test_the_places_are_cldrs_as_babel_gives_them() -> None:
    """``zone_places.json`` is what ``scripts/zone_places.py`` writes from Babel's CLDR data today
    (Babel is a dev dependency: the product reads the file)."""
    assert importlib.util.find_spec("babel") is not None, "babel (a dev dependency) is not installed"
    script = Path(__file__).resolve().parent.parent / "scripts" / "zone_places.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@given(
    zone_word=st.sampled_from(
        [
            ("Pacific", "America/Los_Angeles"),
            ("Eastern time", "America/New_York"),
            ("Berlin time", "Europe/Berlin"),
            ("伦敦时间", "Europe/London"),
            ("悉尼时间", "Australia/Sydney"),
        ]
    ),
    day=st.dates(min_value=datetime(2022, 1, 1).date(), max_value=datetime(2027, 12, 31).date()),
    minutes=st.integers(60, 22 * 60),
)
@example(zone_word=("Pacific", "America/Los_Angeles"), day=date(2022, 3, 13), minutes=60)  # DST starts that day
def test_a_zoned_clock_without_a_day_takes_the_offset_of_the_evidences_day(
    zone_word: tuple[str, str], day: date, minutes: int
) -> None:
    """ "11:27 PM Pacific" written without a day is read in the offset the zone keeps on the day of
    the output line it is found on: in August that is PDT, so the PST reading (07:27Z) is no
    match for "2022-08-22T07:27:26Z"."""
    word, key = zone_word
    moment = datetime.combine(day, datetime.min.time(), UTC) + timedelta(minutes=minutes)
    zone = ZoneInfo(key)
    other = next(
        (
            off
            for off in {_MOMENT.replace(month=m).astimezone(zone).utcoffset() for m in (1, 7)}
            if off != moment.astimezone(zone).utcoffset()
        ),
        None,
    )
    output = f"{moment:%Y-%m-%dT%H:%M:%SZ} ERROR payment-service request timeout"

    def claim_at(offset: timedelta | None) -> str:
        local = (moment + offset) if offset is not None else moment.astimezone(zone)
        return f"{word} {local:%H:%M} 开始报错。" if not word.isascii() else f"Errors began at {local:%H:%M} {word}."

    def outcome(text: str) -> str:
        return _grounding(text, output)

    assert outcome(claim_at(None)) == "pass"
    if other is not None:
        assert outcome(claim_at(other)) != "pass"


@given(
    place=st.sampled_from(["Tehran", "Moscow", "Istanbul", "São Paulo", "Cairo", "德黑兰", "莫斯科"]),
    day=st.dates(min_value=date(2005, 1, 1), max_value=date(2021, 12, 31)),
    minutes=st.integers(5 * 60, 18 * 60),  # the same day there (offsets within ±5 h)
    form=st.sampled_from(["{d:%-d %B %Y}", "{d:%Y-%m-%d}", "{d:%B %-d, %Y}", "{d.year} 年 {d.month} 月 {d.day} 日"]),
    date_first=st.booleans(),
)
@example(place="Tehran", day=date(2017, 5, 16), minutes=5 * 60, form="{d:%-d %B %Y}", date_first=False)
@example(
    place="Moscow", day=date(2014, 11, 1), minutes=5 * 60, form="{d:%-d %B %Y}", date_first=False
)  # +4 → +3 in October
def test_a_zoned_clock_is_read_in_the_offset_its_zone_had_in_the_year_the_claim_names(
    place: str, day: date, minutes: int, form: str, date_first: bool
) -> None:
    """ "04:30 Tehran time on 16 May 2017" is 00:00Z: Tehran kept summer time until 2022, so the
    clock is read in the seasons of the year the claim names (blind11's OpenStack session), not in
    this year's; and a face in an offset the zone did not keep that day is still no match."""
    key = _PLACES[place.lower()]
    zone = ZoneInfo(key)
    moment = datetime.combine(day, datetime.min.time(), UTC) + timedelta(minutes=minutes)
    output = f"{moment:%Y-%m-%dT%H:%M:%SZ} WARN nova-compute Unknown base file"

    def claim_at(offset: timedelta | None) -> str:
        local = moment + offset if offset is not None else moment.astimezone(zone)
        written = form.format(d=day)
        if place.isascii():
            clock = f"at {local:%H:%M} {place} time"
            return f"On {written}, warnings began {clock}." if date_first else f"Warnings began {clock} on {written}."
        clock = f"{place}时间 {local:%H:%M}"
        return f"{written}，{clock} 开始告警。" if date_first else f"{clock}（{written}）开始告警。"

    assert _grounding(claim_at(None), output) == "pass"
    kept = moment.astimezone(zone).utcoffset()
    others = {
        offset
        for season in (date(day.year, 1, 15), date(day.year, 7, 15), date(2026, 1, 15), date(2026, 7, 15))
        if (offset := datetime.combine(season, datetime.min.time(), zone).utcoffset()) != kept
    }
    for offset in others:
        assert _grounding(claim_at(offset), output) != "pass", offset


@given(
    place=st.sampled_from(["Caracas", "Tehran", "Moscow", "Istanbul", "加拉加斯"]),
    day=st.dates(min_value=date(2005, 1, 1), max_value=date(2015, 12, 31)),
    minutes=st.integers(5 * 60, 18 * 60),
)
@example(place="Caracas", day=date(2014, 2, 17), minutes=19 * 60 + 2 - 60)
def test_a_zoned_clock_without_a_year_is_read_in_the_offset_its_zone_kept_on_the_lines_day(
    place: str, day: date, minutes: int
) -> None:
    """ "the next one, at 14:32 Caracas time" of "2014-02-17T19:02:00Z": Venezuela kept UTC−4:30 until
    2016, so a clock written without a year is read in each offset its zone kept since 2000, each
    only against a line of a day it kept it; today's offset on such a line is no match."""
    key = _PLACES[place.lower()]
    zone = ZoneInfo(key)
    moment = datetime.combine(day, datetime.min.time(), UTC) + timedelta(minutes=minutes)
    output = f"{moment:%Y-%m-%dT%H:%M:%SZ} 45.12%"
    kept = moment.astimezone(zone).utcoffset()

    def claim_at(offset: timedelta | None) -> str:
        local = moment + offset if offset is not None else moment.astimezone(zone)
        return (
            f"{place}时间 {local:%H:%M} 回落到 45.12%。"
            if not place.isascii()
            else f"At {local:%H:%M} {place} time it was back at 45.12%."
        )

    assert _grounding(claim_at(None), output) == "pass"
    for season in (date(2026, 1, 15), date(2026, 7, 15)):
        today = datetime.combine(season, datetime.min.time(), zone).utcoffset()
        if today != kept:
            assert _grounding(claim_at(today), output) != "pass", today


_TWO_WORDS = sorted(p for p in _LATIN if len(p.split()) <= 2)


@given(
    place=st.sampled_from(_TWO_WORDS),
    form=st.sampled_from(["(at {p} {c})", "（{p} {c}）", "{c} in {p}", "{c} pm in {p}"]),
)
def test_a_place_right_beside_a_clock_names_its_zone(place: str, form: str) -> None:
    """ "(Berlin 15:24)", "6:30 pm in Auckland": a place beside a clock names its zone without the
    word for time; a word that is no place, or a place away from any clock, names none."""
    written = " ".join(word[:1].upper() + word[1:] for word in place.split())
    found = list(places_beside_clocks("CPU jumped at 14:24:11 UTC " + form.format(p=written, c="6:30")))
    assert [key for _span, key in found] == [_PLACES[place]], (place, found)
    assert list(places_beside_clocks(f"The {written} team looked at it later.")) == []
    assert list(places_beside_clocks("Error 10:05 in Mainloop, Retry 10:06")) == []


@given(
    minutes=st.integers(60, 22 * 60),
    day=st.dates(min_value=datetime(2022, 1, 1).date(), max_value=datetime(2027, 12, 31).date()),
)
def test_a_clock_in_the_readers_zone_takes_the_offset_of_the_evidences_day(minutes: int, day: date) -> None:
    """A clock written bare in an answer whose other claim names Auckland ("6:30 pm in Auckland"):
    read in Auckland, it holds only in the offset Auckland keeps on the output line's day (7:38 pm
    for 06:38Z in August is daylight time, which Auckland keeps from late September)."""
    zone = ZoneInfo("Pacific/Auckland")
    moment = datetime.combine(day, datetime.min.time(), UTC) + timedelta(minutes=minutes)
    output = f"peak 19.22 m at {moment:%Y-%m-%dT%H:%M:%SZ}"
    local = moment.astimezone(zone)
    other = next(
        (
            off
            for off in {_MOMENT.replace(month=m).astimezone(zone).utcoffset() for m in (1, 7)}
            if off != local.utcoffset()
        ),
        None,
    )

    def outcome(clock: datetime) -> str:
        claims = [
            claim(
                "claim-1",
                f"The window opened at {moment:%H:%M} UTC ({local:%H:%M} in Auckland).",
                [binding([394], output)],
            ),
            claim("claim-2", f"The spike hit at {clock:%H:%M}.", [binding([394], output)]),
        ]
        store = InMemoryInvocations([invocation(394, output=output)])
        report = Gatekeeper().validate(v2(claims), session_id=SESSION, invocations=store)
        (check,) = [
            c
            for t in report.claim_traces
            for c in t.checks
            if c.rule_id == "claim.entity_grounding" and c.target == "claims[1].claim_text"
        ]
        return check.outcome

    assert outcome(local) != "fail"
    if other is not None:
        assert outcome(moment + other) == "fail"
