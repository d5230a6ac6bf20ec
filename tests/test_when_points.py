"""A point in time as people ask about it: "around 21:00", 晚上9点前后, "at 9pm", 大约九点 …

Generated: the approximate words (zh / en) × the clock spellings × the zone (the setting's, or
one the question names) × where the data ends (any time of day: 23:59:59.x, just after
midnight) — the window is [X − 30 min, X + 30 min) cut at the anchor, holds X, and "today" is
the newest data's day. Ranges, "since" and "before" keep their own windows, whatever
approximate words stand beside them.

The anchor of imported data is what ``data_end`` gives the planner: the minute just after the
newest point (23:59:53 → 00:00 of the next day); of a live backend, the wall clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from veridiag.agents.offline.planner import ALERT_AFTER, OfflinePlanner
from veridiag.contracts.plan import GivenTime
from veridiag.ingest.importers import import_logs
from veridiag.text import interpret_time
from veridiag.text.when import AROUND, around
from veridiag.tools.backends.embedded import EmbeddedEnvironment

SETTINGS = ["UTC", "Asia/Shanghai", "America/New_York"]
CN = "零一二三四五六七八九"


def cn(n: int) -> str:
    """0..59 in Chinese numerals (九, 十五, 二十一)."""
    tens, ones = divmod(n, 10)
    if tens == 0:
        return CN[ones]
    return ("十" if tens == 1 else CN[tens] + "十") + (CN[ones] if ones else "")


Clock = Callable[[int, int], str | None]  # (hour, minute) -> how it is written, None if it cannot be


def zh_minutes(m: int, *, numerals: bool = False) -> str:
    return {0: "", 15: "一刻", 30: "半", 45: "三刻"}.get(m, f"{cn(m) if numerals else m}分")


def zh_part(h: int) -> tuple[str, int] | None:
    """The part of the day 晚上9点 is written with, and the hour on its 12-hour clock."""
    if 1 <= h <= 4:
        return "凌晨", h
    if 6 <= h <= 11:
        return "上午", h
    if h == 12:
        return "中午", 12
    if 13 <= h <= 17:
        return "下午", h - 12
    if 18 <= h <= 23:
        return "晚上", h - 12
    return None


def twelve(h: int) -> tuple[int, str]:
    return (h % 12 or 12), ("pm" if h >= 12 else "am")


def _part_clock(h: int, m: int, *, short: bool = False) -> str | None:
    found = zh_part(h)
    if found is None or (short and found[0] != "晚上"):
        return None
    part, hour = found
    return f"{'晚' if short else part}{hour}点{zh_minutes(m)}"


CLOCKS: list[Clock] = [
    lambda h, m: f"{h}点{zh_minutes(m)}",  # 9点, 21点, 15点半, 3点一刻
    lambda h, m: f"{h}点{m:02d}" if m >= 10 else None,  # 12点45
    lambda h, m: f"{cn(h)}点{zh_minutes(m, numerals=True)}" if h != 1 else None,  # 九点, 三点一刻
    lambda h, m: f"{h}时" if m == 0 else None,
    lambda h, m: f"{h}:{m:02d}",
    lambda h, m: f"{h:02d}:{m:02d}:00",
    lambda h, m: f"{twelve(h)[0]}{twelve(h)[1]}" if m == 0 else None,  # 9pm
    lambda h, m: f"{twelve(h)[0]} {twelve(h)[1][0]}.m." if m == 0 else None,  # 9 p.m.
    lambda h, m: f"{twelve(h)[0]}:{m:02d} {twelve(h)[1].upper()}",
    _part_clock,  # 晚上9点, 下午3点半, 凌晨2点
    lambda h, m: _part_clock(h, m, short=True),  # 晚9点
]
BEFORE = ["", "around ", "about ", "approximately ", "roughly ", "near ", "circa ", "~", "at ", "大约", "大概", "约"]
AFTER = ["", "左右", "前后", " or so", "附近", "上下"]
LEADS = ["", "checkout ", "为什么支付服务在", "what happened to payments "]
TAILS = ["", " 报错", "支付失败了", " checkout errors?", "，怎么回事"]
#: A zone named in the question: (where, words, zone key); the setting's when none.
NAMED = [None, ("before", "北京时间", "Asia/Shanghai"), ("after", " (UTC+8)", "UTC+8"), ("after", " UTC", "UTC")]

minutes_of_day = st.tuples(st.integers(0, 23), st.integers(0, 59))
days = st.dates(min_value=date(2001, 1, 1), max_value=date(2098, 12, 31))
#: Times of day the newest data point may have: anywhere, and the edges of a day.
newest_times = st.one_of(
    st.times(),
    st.sampled_from([time(23, 59, 59, 999_999), time(23, 59, 53), time(23, 59), time(0, 0), time(0, 0, 1)]),
    st.integers(0, 999_999).map(lambda us: time(23, 59, 59, us)),
)


def zone_of(key: str) -> tzinfo:
    if key == "UTC+8":
        from datetime import timezone

        return timezone(timedelta(hours=8))
    return ZoneInfo(key)


def data_end(newest: datetime) -> datetime:
    """The anchor the planner takes for imported data (``EmbeddedEnvironment.data_end``, on UTC)."""
    return newest.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)


def latest_wall(hour: int, minute: int, zone: tzinfo, anchor: datetime) -> datetime:
    """The most recent time the wall clock in ``zone`` read hour:minute, at or before ``anchor``."""
    now = anchor.astimezone(zone).replace(tzinfo=None)
    day = now.date()
    while datetime.combine(day, time(hour, minute)) > now:
        day -= timedelta(days=1)
    return datetime.combine(day, time(hour, minute), tzinfo=zone).astimezone(UTC)


def expected_window(point: datetime, anchor: datetime, margin: timedelta = AROUND) -> tuple[datetime, datetime]:
    """[X − margin, X + margin), its end cut at the anchor ("now": nothing after it), keeping a minute after X."""
    end = point + margin
    if point < anchor:
        end = min(end, max(anchor, point + timedelta(minutes=1)))
    return point - margin, end


def ask(
    clock: str, *, before: str, after: str, named: tuple[str, str, str] | None, day_word: str, lead: str, tail: str
) -> str:
    written = f"{day_word}{before}{clock}{after}"
    if named is not None:
        written = f"{named[1]} {written}" if named[0] == "before" else f"{written}{named[1]}"
    return f"{lead}{written}{tail}"


@given(
    clock=minutes_of_day,
    spelling=st.sampled_from(CLOCKS),
    before=st.sampled_from(BEFORE),
    after=st.sampled_from(AFTER),
    named=st.sampled_from(NAMED),
    setting=st.sampled_from(SETTINGS),
    day=days,
    newest=newest_times,
    live=st.booleans(),
    lead=st.sampled_from(LEADS),
    tail=st.sampled_from(TAILS),
)
def test_a_point_is_thirty_minutes_either_side(
    *,
    clock: tuple[int, int],
    spelling: Clock,
    before: str,
    after: str,
    named: tuple[str, str, str] | None,
    setting: str,
    day: date,
    newest: time,
    live: bool,
    lead: str,
    tail: str,
) -> None:
    """Without a day the point is the clock's most recent reading at or before the anchor."""
    written = spelling(*clock)
    assume(written is not None)
    assert written is not None
    zone = zone_of(named[2]) if named else ZoneInfo(setting)
    last = datetime.combine(day, newest, tzinfo=zone)  # the newest data (live: now)
    anchor = last.astimezone(UTC) if live else data_end(last)
    question = ask(written, before=before, after=after, named=named, day_word="", lead=lead, tail=tail)
    window = interpret_time(question, anchor=anchor, tz=setting)
    assert window is not None and window.kind == "around", question
    point = latest_wall(*clock, zone, anchor)
    assert window.at == point, question
    assert (window.start, window.end) == expected_window(point, anchor), question
    assert window.start <= point < window.end
    approximate = before.strip() if before != "at " else ""  # "at 21:00" is the phrase "21:00"
    assert written in window.phrase and approximate in window.phrase and after.strip() in window.phrase


TODAY = ["今天", "today ", "今日", "today at "]
YESTERDAY = ["昨天", "yesterday ", "昨日"]


@given(
    clock=minutes_of_day,
    spelling=st.sampled_from(CLOCKS),
    before=st.sampled_from(BEFORE),
    after=st.sampled_from(AFTER),
    named=st.sampled_from(NAMED),
    setting=st.sampled_from(SETTINGS),
    day=days,
    newest=newest_times,
    live=st.booleans(),
    back=st.sampled_from([0, 1]),
    word=st.integers(0, 3),
)
def test_today_is_the_newest_datas_day(
    *,
    clock: tuple[int, int],
    spelling: Clock,
    before: str,
    after: str,
    named: tuple[str, str, str] | None,
    setting: str,
    day: date,
    newest: time,
    live: bool,
    back: int,
    word: int,
) -> None:
    """今天中午12点45 on data ending 23:59:53 is that day's 12:45, not the next day's (the anchor,
    the minute after the newest point, is past midnight); 昨天 is the day before it. On a live
    backend (the anchor is now) today is today."""
    written = spelling(*clock)
    assume(written is not None)
    assert written is not None
    zone = zone_of(named[2]) if named else ZoneInfo(setting)
    last = datetime.combine(day, newest, tzinfo=zone)
    assume(not (live and newest == time(0, 0)))  # now exactly at midnight: the day that ended there
    anchor = last.astimezone(UTC) if live else data_end(last)
    day_word = (TODAY if back == 0 else YESTERDAY)[word % (4 if back == 0 else 3)]
    assume(before != "~")  # 今天~9点 is a range from today to 9点, as 8点~9点 is
    question = ask(written, before=before, after=after, named=named, day_word=day_word, lead="", tail=" 报错")
    window = interpret_time(question, anchor=anchor, tz=setting)
    assert window is not None and window.kind == "around", question
    point = datetime.combine(day - timedelta(days=back), time(*clock), tzinfo=zone).astimezone(UTC)
    assert window.at == point, question
    assert (window.start, window.end) == expected_window(point, anchor), question
    # never wholly after the newest data's day
    assert window.start < datetime.combine(day + timedelta(days=1), time(), tzinfo=zone).astimezone(UTC)


@given(
    clock=minutes_of_day,
    setting=st.sampled_from(SETTINGS),
    day=days,
    newest=newest_times,
    form=st.sampled_from(["{md} {t}{a}", "{iso} {t}{a}", "{zh}{t}{a}", "{t}{a} on {iso}"]),
    after=st.sampled_from(["", " 左右", "前后", " or so"]),
    back=st.integers(0, 40),
)
def test_a_written_day_holds_its_point(
    *, clock: tuple[int, int], setting: str, day: date, newest: time, form: str, after: str, back: int
) -> None:
    """ "7/5 21:00 左右", 7月5日21点左右, "2024-07-05 21:00 or so": that day's X, 30 minutes either side."""
    zone = ZoneInfo(setting)
    anchor = data_end(datetime.combine(day, newest, tzinfo=zone))
    asked = day - timedelta(days=back)
    h, m = clock
    question = form.format(
        md=f"{asked.month}/{asked.day}",
        iso=asked.isoformat(),
        zh=f"{asked.month}月{asked.day}日",
        t=f"{h}:{m:02d}",
        a=after,
    )
    window = interpret_time(question, anchor=anchor, tz=setting)
    assert window is not None and window.kind == "around", question
    point = datetime.combine(asked, time(h, m), tzinfo=zone).astimezone(UTC)
    assert (window.at, (window.start, window.end)) == (point, expected_window(point, anchor)), question


@given(
    hour=st.integers(1, 12),
    form=st.sampled_from(["at roughly {h}", "at about {h}?", "around {h} o'clock", "{h} o'clock", "at {h}."]),
    setting=st.sampled_from(SETTINGS),
    day=days,
    newest=newest_times,
)
def test_an_english_hour_without_am_pm_is_the_latest_half(
    *, hour: int, form: str, setting: str, day: date, newest: time
) -> None:
    """ "at roughly 9" said without am or pm: 9:00 or 21:00, whichever came last before the anchor."""
    zone = ZoneInfo(setting)
    anchor = data_end(datetime.combine(day, newest, tzinfo=zone))
    question = form.format(h=hour)
    window = interpret_time(question, anchor=anchor, tz=setting)
    assert window is not None and window.kind == "around", question
    point = max(latest_wall(hour % 12, 0, zone, anchor), latest_wall(hour % 12 + 12, 0, zone, anchor))
    assert (window.at, (window.start, window.end)) == (point, expected_window(point, anchor)), question


@given(
    clock=minutes_of_day,
    count=st.integers(1, 180),
    form=st.sampled_from(
        [
            "{t} ± {n} min",
            "{t} +/- {n} minutes",
            "around {t}, give or take {n} minutes",
            "within {n} minutes of {t}",
            "{t}前后{n}分钟",
            "{t}左右{n}分钟",
            "{t}前后各{n}分钟",
        ]
    ),
    setting=st.sampled_from(SETTINGS),
    day=days,
    newest=newest_times,
)
def test_a_margin_the_question_writes_replaces_the_thirty_minutes(
    *, clock: tuple[int, int], count: int, form: str, setting: str, day: date, newest: time
) -> None:
    zone = ZoneInfo(setting)
    anchor = data_end(datetime.combine(day, newest, tzinfo=zone))
    question = form.format(t=f"{clock[0]}:{clock[1]:02d}", n=count)
    window = interpret_time(question, anchor=anchor, tz=setting)
    assert window is not None and window.kind == "around", question
    point = latest_wall(*clock, zone, anchor)
    margin = timedelta(minutes=count)
    assert (window.at, (window.start, window.end)) == (point, expected_window(point, anchor, margin)), question
    assert window.phrase == question, "the margin is part of the phrase"


RANGE_FORMS = [
    "{a}点到{b}点",
    "{a}:00-{b}:00",
    "from {a}:00 to {b}:00",
    "between {a}:00 and {b}:00",
    "{a}:00 ~ {b}:00",
    "从{a}点到{b}点之间",
    "{a}到{b}点",
]


@given(
    first=st.integers(0, 22),
    length=st.integers(1, 6),
    form=st.sampled_from(RANGE_FORMS),
    before=st.sampled_from(["", "大约", "around ", "about "]),
    after=st.sampled_from(["", "左右", " or so", "前后"]),
    setting=st.sampled_from(SETTINGS),
    day=days,
    newest=newest_times,
)
def test_a_range_stays_its_range(
    *, first: int, length: int, form: str, before: str, after: str, setting: str, day: date, newest: time
) -> None:
    """9点到10点 is 09:00–10:00, never 30 minutes around either end, approximate words or not."""
    second = first + length
    assume(second <= 23)
    zone = ZoneInfo(setting)
    anchor = data_end(datetime.combine(day, newest, tzinfo=zone))
    question = before + form.format(a=first, b=second) + after
    window = interpret_time(question, anchor=anchor, tz=setting)
    assert window is not None and window.kind == "range", question
    on = window.start.astimezone(zone).date()  # (wall times: a day that changes the clocks has them too)
    hours = [datetime.combine(on, time(h), tzinfo=zone).astimezone(UTC) for h in (first, second)]
    assert [window.start, window.end] == hours, question
    assert window.at is None


@given(
    clock=minutes_of_day,
    form=st.sampled_from(["since {t}", "after {t}", "{t}以后", "{t}之后", "从{t}开始", "before {t}", "{t}之前"]),
    setting=st.sampled_from(SETTINGS),
    day=days,
    newest=newest_times,
)
def test_since_and_before_keep_their_meaning(
    *, clock: tuple[int, int], form: str, setting: str, day: date, newest: time
) -> None:
    """ "after 21:00" is from 21:00 to now; "before 21:00" the two hours up to it."""
    zone = ZoneInfo(setting)
    anchor = data_end(datetime.combine(day, newest, tzinfo=zone))
    question = form.format(t=f"{clock[0]}:{clock[1]:02d}")
    window = interpret_time(question, anchor=anchor, tz=setting)
    assert window is not None, question
    point = latest_wall(*clock, zone, anchor)
    if "before" in form or "之前" in form:
        assert (window.kind, window.start, window.end) == ("until", point - timedelta(hours=2), point), question
    else:
        end = anchor if anchor > point else point + timedelta(hours=2)
        assert (window.kind, window.start, window.end) == ("since", point, end), question


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("晚上9点前后", "20:30", "21:30"),  # was 20:30–23:00
        ("about 9pm", "20:30", "21:30"),
        ("at 21:00", "20:30", "21:30"),
        ("21:00 前后", "20:30", "21:30"),
        ("9点附近", "08:30", "09:30"),
        ("大约九点", "08:30", "09:30"),
        ("晚9点", "20:30", "21:30"),  # was 09:00: 晚 is the evening
        ("一点左右", "00:30", "01:30"),  # 一点 alone is "a little"; beside 左右 it is one o'clock
        ("around 9 tonight", "20:30", "21:30"),  # was the whole night
        ("about 9 in the evening", "20:30", "21:30"),  # was the whole evening
        ("around 9 last night", "03 20:30", "03 21:30"),  # the night before the data's day
        ("昨天晚上9点左右", "03 20:30", "03 21:30"),  # was the data's own day (its "today" was the 5th)
        ("21:00 ± 15 min", "20:45", "21:15"),
        ("9点前后一小时", "08:00", "10:00"),
    ],
)
def test_neighbours_on_a_day_of_data(question: str, start: str, end: str) -> None:
    """A day of data ending 23:59:53 (the anchor 00:00 of the next day), on the 4th unless said."""
    anchor = data_end(datetime(2024, 7, 4, 23, 59, 53, tzinfo=UTC))
    window = interpret_time(question, anchor=anchor)
    assert window is not None, question
    start, end = (t if " " in t else f"04 {t}" for t in (start, end))
    assert (window.start.strftime("%d %H:%M"), window.end.strftime("%d %H:%M")) == (start, end)


@pytest.mark.parametrize(
    "question",
    [
        "about 9 pods restarted",
        "replicas went up to around 9.",
        "error rate at 9%",
        "retries at 9 per second",
        "retries at 9 in the last 2 hours",  # the last 2 hours, not 9 o'clock
        "慢了一点",
        "最晚9点前要修好",  # 最晚: at the latest, not the evening
    ],
)
def test_numbers_that_are_no_hour(question: str) -> None:
    """A count or a rate is no point in time (最晚9点前 is "before 9", not the evening's 9)."""
    window = interpret_time(question, anchor=datetime(2024, 7, 5, 16, tzinfo=UTC))
    assert window is None or window.kind != "around", window
    evening = datetime(2024, 7, 4, 21, tzinfo=UTC)
    assert window is None or not window.start <= evening <= window.end, window


def test_yesterday_at_an_hour_without_am_pm_is_the_whole_day() -> None:
    """ "yesterday at 9": 09:00 or 21:00 — the day holds both; a guess could be 12 hours off."""
    window = interpret_time("yesterday at 9", anchor=datetime(2024, 7, 5, 16, tzinfo=UTC))
    assert window is not None
    assert (window.kind, window.start, window.end) == (
        "day",
        datetime(2024, 7, 4, tzinfo=UTC),
        datetime(2024, 7, 5, tzinfo=UTC),
    )


# --- the planner: imported data, and an alert's start ------------------------------------


def _day_of_logs(home: Path, tmp_path: Path, last: str) -> EmbeddedEnvironment:
    """checkout logs every minute of 2024-07-04 (as written, in the importer's zone) up to ``last``."""
    env = EmbeddedEnvironment(home / "embedded.db", load_demo=False)
    log = tmp_path / "checkout.log"
    lines = [f"2024-07-04 {h:02d}:{m:02d}:00,000 INFO [main] c.x.Checkout - ok" for h in range(24) for m in range(60)]
    lines.append(f"2024-07-04 {last},000 INFO [main] c.x.Checkout - ok")
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return env


@pytest.mark.parametrize("setting", ["UTC", "Asia/Shanghai"])
@pytest.mark.parametrize(
    ("question", "start", "end", "at"),
    [
        ("checkout 今天中午12点45 报错", "12:15", "13:15", "12:45"),  # was the next day's 12:15–14:45
        ("checkout 晚上9点前后", "20:30", "21:30", "21:00"),
        ("checkout today at 9pm", "20:30", "21:30", "21:00"),
        ("checkout 今天上午", "06:00", "12:00", None),  # was the next day's morning
        ("checkout tonight", "18:00", "00:00", None),
    ],
)
def test_the_planner_reads_today_on_the_newest_datas_day(
    tmp_path: Path, setting: str, question: str, *, start: str, end: str, at: str | None
) -> None:
    """Logs imported in the setting's zone, ending 23:59:53: the plan's window is on that day."""
    env = _day_of_logs(tmp_path / "home", tmp_path, "23:59:53")
    import_logs(env, tmp_path / "checkout.log", service="checkout", tz=setting)
    plan = OfflinePlanner(env, timezone=setting).make_plan(question)
    zone = ZoneInfo(setting)
    shown = [datetime.fromisoformat(t).astimezone(zone) for t in (plan.start, plan.end)]  # type: ignore[arg-type]
    assert shown[0].date() == date(2024, 7, 4), plan
    assert (shown[0].strftime("%H:%M"), shown[1].strftime("%H:%M")) == (start, end)
    moment = datetime.fromisoformat(plan.time.at).astimezone(zone).strftime("%H:%M") if plan.time.at else None
    assert moment == at


def test_an_alerts_start_keeps_the_longer_window(demo_env: EmbeddedEnvironment) -> None:
    """An alert fires after its condition held (``for:``) and goes on: two hours after its
    start are looked at; a question's "at 10:05" is 30 minutes either side."""
    planner = OfflinePlanner(demo_env)
    at = datetime(2026, 7, 7, 10, 5, tzinfo=UTC)
    alert = planner.make_plan("payment-service errors", GivenTime(at=at, source="alert's startsAt"))
    assert (alert.start, alert.end) == ("2026-07-07T09:35:00Z", (at + ALERT_AFTER).strftime("%Y-%m-%dT%H:%M:%SZ"))
    asked = planner.make_plan("payment-service errors around 10:05")
    assert (asked.start, asked.end, asked.time.at) == (
        "2026-07-07T09:35:00Z",
        "2026-07-07T10:35:00Z",
        "2026-07-07T10:05:00Z",
    )


@given(
    point=st.datetimes(timezones=st.just(UTC)),
    anchor=st.datetimes(timezones=st.just(UTC)),
    before=st.timedeltas(timedelta(0), timedelta(days=8)),
    after=st.timedeltas(timedelta(minutes=1), timedelta(days=8)),
)
@example(datetime(9999, 12, 31, 23, 50, tzinfo=UTC), datetime(2026, 7, 7, tzinfo=UTC), AROUND, ALERT_AFTER)
@example(datetime(1, 1, 1, 0, 10, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC), AROUND, AROUND)
def test_a_window_around_any_moment_stops_at_the_calendars_edge(
    point: datetime, anchor: datetime, before: timedelta, after: timedelta
) -> None:
    """A window is cut at years 1 and 9999 rather than raising: its point is a time UTC holds."""
    start, end = around(point, anchor, before=before, after=after)
    assert start <= point < end or point == end == datetime.max.replace(tzinfo=UTC)
    earliest = datetime.min.replace(tzinfo=UTC)
    assert start == (point - before if point - earliest >= before else earliest)
