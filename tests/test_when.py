"""interpret_time: every written form gives its exact window; non-times give None; any text is
safe; a moment written in any supported format falls inside the window it gives."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veridiag.text import TimeWindow, interpret_time

ANCHOR = datetime(2014, 3, 21, 3, 25, tzinfo=UTC)  # a Friday
SUMMER = datetime(2026, 7, 7, 16, 0, tzinfo=UTC)  # a Tuesday


def utc(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)


def check(
    question: str, kind: str, start: str, end: str, phrase: str, *, anchor: datetime = ANCHOR, tz: str = "UTC"
) -> None:
    window = interpret_time(question, anchor=anchor, tz=tz)
    assert window is not None, question
    assert (window.kind, window.start, window.end) == (kind, utc(start), utc(end)), window
    assert window.phrase == phrase
    assert window.phrase == question[window.spans[0][0] : window.spans[-1][1]]
    assert all(a < b <= c < d for (a, b), (c, d) in zip(window.spans, window.spans[1:], strict=False))


# (question, kind, start UTC, end UTC, phrase) at ANCHOR, tz UTC
CASES = [
    # a day
    ("2014-03-14 checkout 报错", "day", "2014-03-14 00:00", "2014-03-15 00:00", "2014-03-14"),
    ("2014/03/14", "day", "2014-03-14 00:00", "2014-03-15 00:00", "2014/03/14"),
    ("2014年3月14日支付失败", "day", "2014-03-14 00:00", "2014-03-15 00:00", "2014年3月14日"),
    ("errors on Dec 4 2005", "day", "2005-12-04 00:00", "2005-12-05 00:00", "Dec 4 2005"),
    ("4 Dec 2005", "day", "2005-12-04 00:00", "2005-12-05 00:00", "4 Dec 2005"),
    ("what broke on March 14?", "day", "2014-03-14 00:00", "2014-03-15 00:00", "March 14"),
    ("Dec 4", "day", "2013-12-04 00:00", "2013-12-05 00:00", "Dec 4"),  # after the anchor's date: last year
    ("3月14日", "day", "2014-03-14 00:00", "2014-03-15 00:00", "3月14日"),
    ("3月14号订单失败", "day", "2014-03-14 00:00", "2014-03-15 00:00", "3月14号"),
    ("12月4日", "day", "2013-12-04 00:00", "2013-12-05 00:00", "12月4日"),
    ("昨天库存服务重启", "day", "2014-03-20 00:00", "2014-03-21 00:00", "昨天"),
    ("what happened yesterday", "day", "2014-03-20 00:00", "2014-03-21 00:00", "yesterday"),
    ("前天", "day", "2014-03-19 00:00", "2014-03-20 00:00", "前天"),
    ("今天", "day", "2014-03-21 00:00", "2014-03-22 00:00", "今天"),
    ("errors today", "day", "2014-03-21 00:00", "2014-03-22 00:00", "today"),
    ("上周五", "day", "2014-03-14 00:00", "2014-03-15 00:00", "上周五"),
    ("last Friday", "day", "2014-03-14 00:00", "2014-03-15 00:00", "last Friday"),
    ("周五", "day", "2014-03-14 00:00", "2014-03-15 00:00", "周五"),
    ("周三的错误", "day", "2014-03-19 00:00", "2014-03-20 00:00", "周三"),
    ("on Friday", "day", "2014-03-14 00:00", "2014-03-15 00:00", "Friday"),
    ("本周一", "day", "2014-03-17 00:00", "2014-03-18 00:00", "本周一"),
    ("星期五", "day", "2014-03-14 00:00", "2014-03-15 00:00", "星期五"),
    ("上个星期天", "day", "2014-03-16 00:00", "2014-03-17 00:00", "上个星期天"),
    ("3天前", "day", "2014-03-18 00:00", "2014-03-19 00:00", "3天前"),
    # a day and a part of it
    ("3月14日凌晨", "period", "2014-03-14 00:00", "2014-03-14 06:00", "3月14日凌晨"),
    ("昨天下午支付失败", "period", "2014-03-20 12:00", "2014-03-20 18:00", "昨天下午"),
    ("yesterday afternoon", "period", "2014-03-20 12:00", "2014-03-20 18:00", "yesterday afternoon"),
    ("this morning", "period", "2014-03-21 06:00", "2014-03-21 12:00", "this morning"),
    ("今天上午", "period", "2014-03-21 06:00", "2014-03-21 12:00", "今天上午"),
    ("晚上", "period", "2014-03-20 18:00", "2014-03-21 00:00", "晚上"),  # not begun at 03:25: last night
    ("凌晨一直报错", "period", "2014-03-21 00:00", "2014-03-21 06:00", "凌晨"),
    ("昨晚", "period", "2014-03-20 18:00", "2014-03-21 00:00", "昨晚"),
    ("last night", "period", "2014-03-20 18:00", "2014-03-21 00:00", "last night"),
    ("3月14日那天的傍晚", "period", "2014-03-14 17:00", "2014-03-14 20:00", "3月14日那天的傍晚"),
    # a point in time
    ("2014-03-14 03:30", "around", "2014-03-14 03:00", "2014-03-14 04:00", "2014-03-14 03:30"),
    ("3月14日凌晨3点", "around", "2014-03-14 02:30", "2014-03-14 03:30", "3月14日凌晨3点"),
    ("昨天下午两点支付失败", "around", "2014-03-20 13:30", "2014-03-20 14:30", "昨天下午两点"),
    ("yesterday 14:00", "around", "2014-03-20 13:30", "2014-03-20 14:30", "yesterday 14:00"),
    ("Dec 4 2005 04:47", "around", "2005-12-04 04:17", "2005-12-04 05:17", "Dec 4 2005 04:47"),
    ("10点半", "around", "2014-03-20 10:00", "2014-03-20 11:00", "10点半"),
    ("14:00", "around", "2014-03-20 13:30", "2014-03-20 14:30", "14:00"),
    ("at 2pm", "around", "2014-03-20 13:30", "2014-03-20 14:30", "2pm"),
    ("下午2点15分", "around", "2014-03-20 13:45", "2014-03-20 14:45", "下午2点15分"),
    ("三点半", "around", "2014-03-20 03:00", "2014-03-20 04:00", "三点半"),  # 03:30 today is after 03:25
    ("十点十五分", "around", "2014-03-20 09:45", "2014-03-20 10:45", "十点十五分"),
    ("两点", "around", "2014-03-21 01:30", "2014-03-21 02:30", "两点"),
    ("三点", "around", "2014-03-21 02:30", "2014-03-21 03:25", "三点"),  # clipped to the anchor
    ("2 hours ago", "around", "2014-03-21 00:55", "2014-03-21 01:55", "2 hours ago"),
    ("2小时前", "around", "2014-03-21 00:55", "2014-03-21 01:55", "2小时前"),
    ("两小时前", "around", "2014-03-21 00:55", "2014-03-21 01:55", "两小时前"),
    ("2014-03-14T03:30:00+08:00", "around", "2014-03-13 19:00", "2014-03-13 20:00", "2014-03-14T03:30:00+08:00"),
    ("ts 1394767800", "around", "2014-03-14 03:00", "2014-03-14 04:00", "1394767800"),
    ("1394767800000", "around", "2014-03-14 03:00", "2014-03-14 04:00", "1394767800000"),  # milliseconds
    ("晚上10点", "around", "2014-03-20 21:30", "2014-03-20 22:30", "晚上10点"),
    ("凌晨12点", "around", "2014-03-20 23:30", "2014-03-21 00:30", "凌晨12点"),
    ("深夜2点", "around", "2014-03-21 01:30", "2014-03-21 02:30", "深夜2点"),  # the small hours after midnight
    ("3月14日的订单在凌晨3点失败", "around", "2014-03-14 02:30", "2014-03-14 03:30", "3月14日的订单在凌晨3点"),
    ("１０：００", "around", "2014-03-20 09:30", "2014-03-20 10:30", "１０：００"),  # full-width
    # since / after
    ("since 10:00", "since", "2014-03-20 10:00", "2014-03-21 03:25", "since 10:00"),
    ("errors after 2pm", "since", "2014-03-20 14:00", "2014-03-21 03:25", "after 2pm"),
    ("from 10:00", "since", "2014-03-20 10:00", "2014-03-21 03:25", "from 10:00"),
    ("10点以后", "since", "2014-03-20 10:00", "2014-03-21 03:25", "10点以后"),
    ("10点之后", "since", "2014-03-20 10:00", "2014-03-21 03:25", "10点之后"),
    ("从10点开始一直报错", "since", "2014-03-20 10:00", "2014-03-21 03:25", "从10点开始"),
    ("10点起", "since", "2014-03-20 10:00", "2014-03-21 03:25", "10点起"),
    ("3月14日以来", "since", "2014-03-14 00:00", "2014-03-21 03:25", "3月14日以来"),
    ("昨晚10点以后", "since", "2014-03-20 22:00", "2014-03-21 03:25", "昨晚10点以后"),
    ("since yesterday 14:00", "since", "2014-03-20 14:00", "2014-03-21 03:25", "since yesterday 14:00"),
    ("10点到现在", "since", "2014-03-20 10:00", "2014-03-21 03:25", "10点到现在"),
    ("一点以后", "since", "2014-03-21 01:00", "2014-03-21 03:25", "一点以后"),
    ("since tomorrow", "since", "2014-03-22 00:00", "2014-03-22 02:00", "since tomorrow"),  # nothing after P yet
    # before / until
    ("before 10:00", "until", "2014-03-20 08:00", "2014-03-20 10:00", "before 10:00"),
    ("10点之前", "until", "2014-03-20 08:00", "2014-03-20 10:00", "10点之前"),
    ("10点以前", "until", "2014-03-20 08:00", "2014-03-20 10:00", "10点以前"),
    # ranges
    ("10:00-11:00", "range", "2014-03-20 10:00", "2014-03-20 11:00", "10:00-11:00"),
    ("10:00 to 11:30", "range", "2014-03-20 10:00", "2014-03-20 11:30", "10:00 to 11:30"),
    ("between 10 and 11am", "range", "2014-03-20 10:00", "2014-03-20 11:00", "between 10 and 11am"),
    ("2-4pm", "range", "2014-03-20 14:00", "2014-03-20 16:00", "2-4pm"),
    ("10点到11点", "range", "2014-03-20 10:00", "2014-03-20 11:00", "10点到11点"),
    ("10到11点", "range", "2014-03-20 10:00", "2014-03-20 11:00", "10到11点"),
    # a bare hour is on the hour: not the other end's minutes (was 10:30 → the next day's 10:30)
    ("10到10点半", "range", "2014-03-20 10:00", "2014-03-20 10:30", "10到10点半"),
    ("from 10 to 10:30 am", "range", "2014-03-20 10:00", "2014-03-20 10:30", "from 10 to 10:30 am"),
    ("between 9 and 9:45pm", "range", "2014-03-20 21:00", "2014-03-20 21:45", "between 9 and 9:45pm"),
    # a part of the day, or a day, before the bare hour is the range's (was 02:00–03:30)
    ("下午2到3点半", "range", "2014-03-20 14:00", "2014-03-20 15:30", "下午2到3点半"),
    ("昨天下午2到3点", "range", "2014-03-20 14:00", "2014-03-20 15:00", "昨天下午2到3点"),
    # the second end a bare hour (was "since 9:30")
    ("from 9:30 to 10", "range", "2014-03-20 09:30", "2014-03-20 10:00", "from 9:30 to 10"),
    ("9点半到10, 支付失败", "range", "2014-03-20 09:30", "2014-03-20 10:00", "9点半到10"),
    ("从9点半到10之间", "range", "2014-03-20 09:30", "2014-03-20 10:00", "从9点半到10之间"),
    ("2:30pm to 4", "range", "2014-03-20 14:30", "2014-03-20 16:00", "2:30pm to 4"),
    ("下午2点到4", "range", "2014-03-20 14:00", "2014-03-20 16:00", "下午2点到4"),
    ("11:30 to 1", "range", "2014-03-20 11:30", "2014-03-20 13:00", "11:30 to 1"),
    ("from 22:00 to 2", "range", "2014-03-20 22:00", "2014-03-21 02:00", "from 22:00 to 2"),
    # numeric days without a year, beside a clock or after "on" (were ignored: today's 10:00)
    ("3/14 10:00", "around", "2014-03-14 09:30", "2014-03-14 10:30", "3/14 10:00"),
    ("03-14 10:00 ERROR", "around", "2014-03-14 09:30", "2014-03-14 10:30", "03-14 10:00"),
    ("(UTC+8:00) 3/14 10:00", "around", "2014-03-14 01:30", "2014-03-14 02:30", "(UTC+8:00) 3/14 10:00"),
    ("20140314 10:00", "around", "2014-03-14 09:30", "2014-03-14 10:30", "20140314 10:00"),
    ("14/3 10:00", "around", "2014-03-14 09:30", "2014-03-14 10:30", "14/3 10:00"),
    ("3/14 10:00-10:30", "range", "2014-03-14 10:00", "2014-03-14 10:30", "3/14 10:00-10:30"),
    ("what failed on 3/14?", "day", "2014-03-14 00:00", "2014-03-15 00:00", "3/14"),
    # a zone written once holds for the whole range and the question (was 10:00 UTC – 02:30 next day)
    ("10:00-10:30 UTC+8", "range", "2014-03-21 02:00", "2014-03-21 02:30", "10:00-10:30 UTC+8"),
    ("10:00-10:30 (UTC+8)", "range", "2014-03-21 02:00", "2014-03-21 02:30", "10:00-10:30 (UTC+8)"),
    ("北京时间10点到10点半", "range", "2014-03-21 02:00", "2014-03-21 02:30", "北京时间10点到10点半"),
    ("errors at 9am PST", "around", "2014-03-20 16:30", "2014-03-20 17:30", "9am PST"),  # UTC−8, as written
    ("15:00 CST 报错", "around", "2014-03-20 06:30", "2014-03-20 07:30", "15:00 CST"),
    # in English CST is as often US Central: not read
    ("15:00 CST errors", "around", "2014-03-20 14:30", "2014-03-20 15:30", "15:00"),
    # calendar weeks and months (were no time: the default window); 上周五 stays a Friday
    ("本周 支付失败", "period", "2014-03-17 00:00", "2014-03-21 03:25", "本周"),
    ("this week", "period", "2014-03-17 00:00", "2014-03-21 03:25", "this week"),
    ("上周的错误", "period", "2014-03-10 00:00", "2014-03-17 00:00", "上周"),
    ("上个星期", "period", "2014-03-10 00:00", "2014-03-17 00:00", "上个星期"),
    ("上周以来", "since", "2014-03-10 00:00", "2014-03-21 03:25", "上周以来"),
    ("本月", "period", "2014-03-01 00:00", "2014-03-21 03:25", "本月"),
    ("this month", "period", "2014-03-01 00:00", "2014-03-21 03:25", "this month"),
    ("上个月", "period", "2014-02-01 00:00", "2014-03-01 00:00", "上个月"),
    ("这两天", "relative", "2014-03-19 03:25", "2014-03-21 03:25", "这两天"),
    # a day of the month alone (3号下午 read today's afternoon; "the 3rd at 10:00" today's 10:00)
    ("3号下午", "period", "2014-03-03 12:00", "2014-03-03 18:00", "3号下午"),
    ("12号的订单", "day", "2014-03-12 00:00", "2014-03-13 00:00", "12号"),
    ("3日下午3点", "around", "2014-03-03 14:30", "2014-03-03 15:30", "3日下午3点"),
    ("the 3rd at 10:00", "around", "2014-03-03 09:30", "2014-03-03 10:30", "the 3rd at 10:00"),
    ("3.14 10:00", "around", "2014-03-14 09:30", "2014-03-14 10:30", "3.14 10:00"),
    ("3.14号", "day", "2014-03-14 00:00", "2014-03-15 00:00", "3.14号"),
    # a version before a clock is no day
    ("released 2.3 at 10:00", "around", "2014-03-20 09:30", "2014-03-20 10:30", "10:00"),
    ("升级到1.2 10:00", "around", "2014-03-20 09:30", "2014-03-20 10:30", "10:00"),
    ("近3日", "relative", "2014-03-18 03:25", "2014-03-21 03:25", "近3日"),
    # weekends: the last one begun, or last week's
    ("周末", "period", "2014-03-15 00:00", "2014-03-17 00:00", "周末"),
    ("上周末的订单", "period", "2014-03-15 00:00", "2014-03-17 00:00", "上周末"),
    ("errors over the weekend", "period", "2014-03-15 00:00", "2014-03-17 00:00", "over the weekend"),
    # a number after a clock that is no hour: the clock alone
    ("9:30 to 10 minutes later", "around", "2014-03-20 09:00", "2014-03-20 10:00", "9:30"),
    ("3月14日3点至5点", "range", "2014-03-14 03:00", "2014-03-14 05:00", "3月14日3点至5点"),
    ("下午2点到4点之间", "range", "2014-03-20 14:00", "2014-03-20 16:00", "下午2点到4点之间"),
    ("22:00-02:00", "range", "2014-03-20 22:00", "2014-03-21 02:00", "22:00-02:00"),
    ("23点到3月15日2点", "range", "2014-03-14 23:00", "2014-03-15 02:00", "23点到3月15日2点"),
    ("from Dec 4 to Dec 6", "range", "2013-12-04 00:00", "2013-12-07 00:00", "from Dec 4 to Dec 6"),
    ("2014-03-14 到 2014-03-16", "range", "2014-03-14 00:00", "2014-03-17 00:00", "2014-03-14 到 2014-03-16"),
    ("Mar 14, 10:00-11:00", "range", "2014-03-14 10:00", "2014-03-14 11:00", "Mar 14, 10:00-11:00"),
    ("从3月14日10点到3月15日2点", "range", "2014-03-14 10:00", "2014-03-15 02:00", "从3月14日10点到3月15日2点"),
    # relative durations
    ("last 2h", "relative", "2014-03-21 01:25", "2014-03-21 03:25", "last 2h"),
    ("errors in the last 2 hours", "relative", "2014-03-21 01:25", "2014-03-21 03:25", "in the last 2 hours"),
    ("past 30 minutes", "relative", "2014-03-21 02:55", "2014-03-21 03:25", "past 30 minutes"),
    ("last 3 days", "relative", "2014-03-18 03:25", "2014-03-21 03:25", "last 3 days"),
    ("the past hour", "relative", "2014-03-21 02:25", "2014-03-21 03:25", "past hour"),
    ("最近两小时", "relative", "2014-03-21 01:25", "2014-03-21 03:25", "最近两小时"),
    ("过去30分钟", "relative", "2014-03-21 02:55", "2014-03-21 03:25", "过去30分钟"),
    ("近1小时", "relative", "2014-03-21 02:25", "2014-03-21 03:25", "近1小时"),
    ("最近一天", "relative", "2014-03-20 03:25", "2014-03-21 03:25", "最近一天"),
    ("最近 15 分钟", "relative", "2014-03-21 03:10", "2014-03-21 03:25", "最近 15 分钟"),
    ("过去一个半小时", "relative", "2014-03-21 01:55", "2014-03-21 03:25", "过去一个半小时"),
    ("半小时内", "relative", "2014-03-21 02:55", "2014-03-21 03:25", "半小时内"),
    # Chinese numerals
    ("十二月四日", "day", "2013-12-04 00:00", "2013-12-05 00:00", "十二月四日"),
    ("二〇一四年三月十四日", "day", "2014-03-14 00:00", "2014-03-15 00:00", "二〇一四年三月十四日"),
    ("二十三点", "around", "2014-03-20 22:30", "2014-03-20 23:30", "二十三点"),
    # several times: the most specific one
    ("昨天一直正常，今天10点到11点支付失败", "range", "2014-03-21 10:00", "2014-03-21 11:00", "今天10点到11点"),
    ("since 10am, p99 5300ms on port 8080", "since", "2014-03-20 10:00", "2014-03-21 03:25", "since 10am"),
    ("订单1394767800 在 3月14日 10点 之后失败", "since", "2014-03-14 10:00", "2014-03-21 03:25", "3月14日 10点 之后"),
]


@pytest.mark.parametrize(("question", "kind", "start", "end", "phrase"), CASES)
def test_forms(question: str, kind: str, start: str, end: str, phrase: str) -> None:
    check(question, kind, start, end, phrase)


@pytest.mark.parametrize(
    ("question", "kind", "start", "end", "phrase"),
    [
        ("2014-03-14 03:30", "around", "2014-03-13 19:00", "2014-03-13 20:00", "2014-03-14 03:30"),
        ("3月14日凌晨3点", "around", "2014-03-13 18:30", "2014-03-13 19:30", "3月14日凌晨3点"),
        ("昨天", "day", "2014-03-19 16:00", "2014-03-20 16:00", "昨天"),
        ("10点以后", "since", "2014-03-21 02:00", "2014-03-21 03:25", "10点以后"),  # 11:25 local
        ("晚上", "period", "2014-03-20 10:00", "2014-03-20 16:00", "晚上"),
        ("3月14日", "day", "2014-03-13 16:00", "2014-03-14 16:00", "3月14日"),
        ("2014-03-14T03:30:00Z", "around", "2014-03-14 03:00", "2014-03-14 04:00", "2014-03-14T03:30:00Z"),
        ("14:00 UTC", "around", "2014-03-20 13:30", "2014-03-20 14:30", "14:00 UTC"),  # its own zone wins
        ("1394767800", "around", "2014-03-14 03:00", "2014-03-14 04:00", "1394767800"),
        ("last 2h", "relative", "2014-03-21 01:25", "2014-03-21 03:25", "last 2h"),
    ],
)
def test_asia_shanghai(question: str, kind: str, start: str, end: str, phrase: str) -> None:
    check(question, kind, start, end, phrase, tz="Asia/Shanghai")


@pytest.mark.parametrize(
    ("question", "kind", "start", "end", "phrase"),
    [
        ("since 10:00", "since", "2026-07-07 10:00", "2026-07-07 16:00", "since 10:00"),
        ("10点以后", "since", "2026-07-07 10:00", "2026-07-07 16:00", "10点以后"),
        ("checkout 从 10:00 开始一直报错", "since", "2026-07-07 10:00", "2026-07-07 16:00", "从 10:00 开始"),
        ("上周五", "day", "2026-07-03 00:00", "2026-07-04 00:00", "上周五"),
        ("周二", "day", "2026-06-30 00:00", "2026-07-01 00:00", "周二"),  # today is Tuesday: the one before
        ("本周日", "day", "2026-07-12 00:00", "2026-07-13 00:00", "本周日"),
        ("下午", "period", "2026-07-07 12:00", "2026-07-07 18:00", "下午"),
        ("14:30", "around", "2026-07-07 14:00", "2026-07-07 15:00", "14:30"),
        ("15:59", "around", "2026-07-07 15:29", "2026-07-07 16:00", "15:59"),  # clipped to the anchor
    ],
)
def test_summer_anchor(question: str, kind: str, start: str, end: str, phrase: str) -> None:
    check(question, kind, start, end, phrase, anchor=SUMMER)


THUNDERBIRD = datetime(2005, 11, 9, 20, 16, tzinfo=UTC)  # loghub Thunderbird_2k's last line


@pytest.mark.parametrize(
    ("question", "tz", "expected"),
    [
        # the zone the question names, not the setting's
        (
            "北京时间 2005-11-10 04:05 到 04:10 出了什么问题",
            "UTC",
            # the phrase names the zone it was read in
            ("range", "2005-11-09 20:05", "2005-11-09 20:10", "北京时间 2005-11-10 04:05 到 04:10"),
        ),
        (
            "between 12:05 and 12:10 PST on Nov 9 2005",
            "UTC",
            ("range", "2005-11-09 20:05", "2005-11-09 20:10", "between 12:05 and 12:10 PST on Nov 9 2005"),
        ),
        (
            "2005-11-09 20:05 UTC 到 20:10",
            "Asia/Shanghai",
            ("range", "2005-11-09 20:05", "2005-11-09 20:10", "2005-11-09 20:05 UTC 到 20:10"),
        ),
        ("昨天 北京时间 下午3点", "UTC", ("around", "2005-11-09 06:30", "2005-11-09 07:30", "昨天 北京时间 下午3点")),
        # two zones named: neither is guessed; a word that only looks like one is no zone
        ("北京时间 10:00 (12:05 PST)", "UTC", ("around", "2005-11-09 09:30", "2005-11-09 10:30", "10:00")),
        ("the best run was at est 10:00", "UTC", ("around", "2005-11-09 09:30", "2005-11-09 10:30", "10:00")),
    ],
)
def test_a_zone_the_question_names(question: str, tz: str, expected: tuple[str, str, str, str]) -> None:
    check(question, *expected, anchor=THUNDERBIRD, tz=tz)


NOT_TIMES = [
    "订单123支付失败",
    "3号机宕机",
    "1号线故障",
    "订单3号失败了",
    "version 7.3 released",
    "3日志",
    "本周期内的重试",
    "月度报表出错",
    "3/4 replicas failed",
    "2-4 pods restarted",
    "order 20140314 failed",
    "504 errors on the gateway",
    "error rate 5%",
    "v2.3.1 release",
    "HikariPool-1",
    "ERR_1002",
    "port 8080",
    "10.11.10.1",
    "p99 5300ms",
    "inventory keeps restarting",
    "why is checkout slow?",
    "库存服务一直重启",
    "订单1394767800支付失败",
    "order 1394767800 failed",
    "订单号：1394767800",
    "trace_id=1394767800 slow",
    "1394767800号机器",
    "这周一直在报错",
    "本周日志里有什么",
    "结账慢了一点",
    "有两点原因",
    "最近一直重启",
    "good morning, checkout is slow",
    "it may fail",
    "",
]


@pytest.mark.parametrize("question", NOT_TIMES)
def test_not_a_time(question: str) -> None:
    assert interpret_time(question, anchor=ANCHOR) is None


def test_zone_object_and_several_spans() -> None:
    window = interpret_time("3月14日的订单在凌晨3点失败", anchor=ANCHOR, tz=ZoneInfo("Asia/Shanghai"))
    assert window == TimeWindow(
        utc("2014-03-13 18:30"),
        utc("2014-03-13 19:30"),
        "3月14日的订单在凌晨3点",
        "around",
        ((0, 5), (9, 13)),
        at=utc("2014-03-13 19:00"),
    )
    fixed = interpret_time("14:00", anchor=ANCHOR, tz=timezone(timedelta(hours=-5)))
    assert fixed is not None
    assert (fixed.start, fixed.end) == (utc("2014-03-20 18:30"), utc("2014-03-20 19:30"))


def test_caller_mistakes_raise() -> None:
    with pytest.raises(ValueError, match="aware"):
        interpret_time("10:00", anchor=datetime(2014, 3, 21))
    with pytest.raises(ValueError, match="zone"):
        interpret_time("10:00", anchor=ANCHOR, tz="Mars/Olympus")


@pytest.mark.parametrize(
    "question",
    [
        "\x00\x01\x1b[31m",
        "\ud800\udfff",
        "🕙🕙 10:00 🕙",
        "9999年12月31日",
        "0000-00-00",
        "99:99",
        "10点" * 20_000,
        "1" * 10**6,
    ],
)
def test_odd_input_never_raises(question: str) -> None:
    window = interpret_time(question, anchor=ANCHOR)
    assert window is None or window.start < window.end


# --- properties --------------------------------------------------------------------------

TIME_WORDS = re.compile(
    r"[点點时時月日号號天周週期拜晚早午夜晨钟鐘分秒半]|yesterday|today|tomorrow|tonight|morning|afternoon|evening|night"
    r"|noon|hour|minute|second|day|week|ago|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec",
    re.IGNORECASE,
)
ZONES = st.sampled_from(["UTC", "Asia/Shanghai", "America/New_York"])
anchors = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31), timezones=st.just(UTC))


FRAGMENTS = (
    "昨天 今天 上周五 周一 下午 凌晨 晚上 深夜 两点 三点半 十点十五分 3月14日 2014年 12月 号"
    " 以后 之前 到 至 从 开始 最近 过去 小时 分钟 天 前 内 半 一 十 〇 点 时 分 的 订单"
    " yesterday today last past since before after from to between and am pm Dec March Friday"
    " morning night ago hours h 2014-03-14 10:00 23:59:59 +08:00 Z UTC 1394767800 1394767800123"
    " 99 2 12 24 - ~ : / . , # order id"
).split()
questions = (
    st.text(max_size=300)
    | st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=12).map("".join)
    | st.lists(st.sampled_from(FRAGMENTS), max_size=12).map(" ".join)
)


@given(questions, anchors, ZONES)
def test_any_text_is_safe(question: str, anchor: datetime, tz: str) -> None:
    window = interpret_time(question, anchor=anchor, tz=tz)
    if window is not None:
        assert window.start.tzinfo is UTC and window.end.tzinfo is UTC
        assert window.start < window.end
        assert window.phrase == question[window.spans[0][0] : window.spans[-1][1]]


CN = "〇一二三四五六七八九"


def cn_small(n: int) -> str:
    """1..31 in Chinese numerals (十四, 二十, 三十一)."""
    tens, ones = divmod(n, 10)
    head = "" if tens == 0 else ("十" if tens == 1 else CN[tens] + "十")
    return head + (CN[ones] if ones else "")


def zh_clock(moment: datetime) -> str:
    """Hour and minute as 下午3点05分 / 凌晨2点 / 10点."""
    hour, minute = moment.hour, moment.minute
    part = ""
    if 13 <= hour <= 17:
        part, hour = "下午", hour - 12
    elif 0 < hour < 6:
        part = "凌晨"
    return f"{part}{hour}点{minute}分" if minute else f"{part}{hour}点"


Render = Callable[[datetime, ZoneInfo], str]  # (wall time, its zone) -> the words


def absolute(wall: datetime, zone: ZoneInfo) -> datetime:
    return wall.replace(tzinfo=zone).astimezone(UTC)


POINT_FORMATS: list[Render] = [
    lambda m, _: m.strftime("%Y-%m-%d %H:%M"),
    lambda m, _: m.strftime("%Y/%m/%d %H:%M:%S"),
    lambda m, _: f"{m.year}年{m.month}月{m.day}日{zh_clock(m)}",
    lambda m, _: f"{m.year}年{m.month}月{m.day}日 {m:%H:%M}",
    lambda m, _: f"{m:%b} {m.day} {m.year} {m:%H:%M}",
    lambda m, _: f"{m.day} {m:%B} {m.year} at {m:%I:%M %p}",
    lambda m, zone: absolute(m, zone).strftime("%Y-%m-%dT%H:%M:%SZ"),
    lambda m, zone: absolute(m, zone).astimezone(timezone(timedelta(hours=8))).isoformat(),
    lambda m, zone: str(int(absolute(m, zone).timestamp())),
    lambda m, zone: str(int(absolute(m, zone).timestamp()) * 1000),
]
DAY_FORMATS: list[Render] = [
    lambda m, _: m.strftime("%Y-%m-%d"),
    lambda m, _: f"{m.year}年{m.month}月{m.day}日",
    lambda m, _: f"{m.year}年{m.month}月{m.day}号",
    lambda m, _: "".join(CN[int(d)] for d in str(m.year)) + f"年{cn_small(m.month)}月{cn_small(m.day)}日",
    lambda m, _: f"{m:%B} {m.day}, {m.year}",
    lambda m, _: f"{m.day} {m:%b} {m.year}",
]
LEADS = ["", "为什么", "checkout 在", "why did payments fail on ", "请看看 ", "订单服务, "]
TAILS = ["", "支付失败了", " checkout errors?", "库存服务一直重启", " — inventory keeps restarting", "，怎么回事"]
# from 2001-09-09 epoch seconds have 10 digits (ms 13), the only lengths read as epochs
wall_times = st.datetimes(min_value=datetime(2001, 9, 10), max_value=datetime(2099, 12, 30)).map(
    lambda m: m.replace(second=0, microsecond=0)
)


@given(
    wall=wall_times,
    render=st.sampled_from(POINT_FORMATS),
    lead=st.sampled_from(LEADS),
    tail=st.sampled_from(TAILS),
    tz=ZONES,
    anchor=anchors,
)
def test_written_moment_is_inside(
    *, wall: datetime, render: Render, lead: str, tail: str, tz: str, anchor: datetime
) -> None:
    question = f"{lead}{render(wall, ZoneInfo(tz))}{tail}"
    window = interpret_time(question, anchor=anchor, tz=tz)
    assert window is not None, question
    moment = absolute(wall, ZoneInfo(tz))
    assert window.kind == "around"
    assert window.start <= moment < window.end, question


@given(
    wall=wall_times,
    render=st.sampled_from(DAY_FORMATS),
    lead=st.sampled_from(LEADS),
    tail=st.sampled_from(TAILS),
    tz=ZONES,
    anchor=anchors,
)
def test_written_day_is_the_window(
    *, wall: datetime, render: Render, lead: str, tail: str, tz: str, anchor: datetime
) -> None:
    question = f"{lead}{render(wall, ZoneInfo(tz))}{tail}"
    window = interpret_time(question, anchor=anchor, tz=tz)
    assert window is not None, question
    zone = ZoneInfo(tz)
    day: date = wall.date()
    begin = datetime.combine(day, datetime.min.time(), zone).astimezone(UTC)
    end = datetime.combine(day + timedelta(days=1), datetime.min.time(), zone).astimezone(UTC)
    assert (window.kind, window.start, window.end) == ("day", begin, end), question


@given(
    st.lists(
        st.text(st.characters(exclude_categories=["Nd"]), max_size=30)
        | st.sampled_from(
            ["checkout", "库存服务一直重启", "error rate", "why is it slow", "订单支付失败", "HikariPool"]
        ),
        max_size=6,
    ).map(" ".join),
    anchors,
    ZONES,
)
def test_no_digits_no_time_words_is_none(question: str, anchor: datetime, tz: str) -> None:
    if TIME_WORDS.search(question):
        return  # the property is about text without time words; hypothesis rarely writes one
    assert interpret_time(question, anchor=anchor, tz=tz) is None


@given(
    first=st.integers(0, 23),
    second=st.integers(0, 23),
    minute=st.integers(1, 59),
    form=st.sampled_from(["{a}到{b}点{m}分", "from {a} to {b}:{m:02d}", "between {a} and {b}:{m:02d}"]),
)
def test_a_bare_first_hour_is_on_the_hour(first: int, second: int, minute: int, form: str) -> None:
    """ "10到10点半": whatever the other end's minutes, a bare hour starts on the hour."""
    if first > second:
        return
    question = form.format(a=first, b=second, m=minute)
    window = interpret_time(question, anchor=SUMMER)
    assert window is not None and window.kind == "range", question
    assert (window.start.hour, window.start.minute) == (first, 0), question
    assert (window.end.hour, window.end.minute) == (second, minute), question
    assert window.end - window.start == timedelta(hours=second - first, minutes=minute), question


@given(
    hour=st.integers(12, 22),
    minute=st.integers(0, 59),
    later=st.integers(1, 11),
    form=st.sampled_from(["{h}:{m:02d} to {e}", "from {h}:{m:02d} to {e}.", "{h}点{m}分到{e}"]),
)
def test_a_bare_last_hour_ends_the_range_on_the_hour(hour: int, minute: int, later: int, form: str) -> None:
    """ "from 14:30 to 16", 14点30分到16: the range ends at that hour, after its start."""
    end = hour + later
    if end > 23:
        return
    question = form.format(h=hour, m=minute, e=end)
    window = interpret_time(question, anchor=SUMMER)
    assert window is not None and window.kind == "range", question
    assert (window.start.hour, window.start.minute, window.end.hour, window.end.minute) == (hour, minute, end, 0)
    assert window.start < window.end


def test_a_question_names_one_zone_or_none() -> None:
    """Several different zones in one question: none is taken for the others' times."""
    from veridiag.text.when import question_zone

    named = question_zone("北京时间10点")
    assert named is not None and str(named[0]) == "Asia/Shanghai" and named[1] == (0, 4)
    assert question_zone("10:00 UTC+8 and 11:00 PST") is None
    assert question_zone("15:00 CST errors") is None, "CST names US Central as often as China"
    assert question_zone("the est. time is 10:00") is None, "an abbreviation is a whole upper-case word"
    assert question_zone("no zone at all") is None


#: Offsets in use (whole hours, and the half and quarter hours some zones keep).
OFFSETS = ["+0", "+1", "+5:30", "+5:45", "+8", "+9:30", "+14", "-3:30", "-5", "-8", "-12"]


@given(
    written=st.sampled_from(OFFSETS),
    hour=st.integers(0, 23),
    minute=st.integers(0, 59),
    form=st.sampled_from(["{t} (UTC{o})", "{t} GMT{o} errors", "(UTC{o}) {t}", "{t}-{e} UTC{o}", "UTC{o} {t} 报错"]),
)
def test_a_written_offset_reads_the_time_in_it(written: str, hour: int, minute: int, form: str) -> None:
    """However the offset is written beside the time, the time is read in it (not in ``tz``)."""
    hours, _, minutes = written[1:].partition(":")
    offset = timedelta(hours=int(hours), minutes=int(minutes or 0)) * (-1 if written[0] == "-" else 1)
    end_hour = (hour + 1) % 24
    question = form.format(t=f"{hour}:{minute:02d}", e=f"{end_hour}:{minute:02d}", o=written)
    window = interpret_time(question, anchor=SUMMER, tz="Asia/Shanghai")
    assert window is not None, question
    start = window.start.astimezone(timezone(offset))
    if window.kind == "range":
        assert (start.hour, start.minute) == (hour, minute), question
        assert window.end - window.start == timedelta(hours=1), question
    else:
        assert window.kind == "around", question
        point = (window.start + timedelta(minutes=30)).astimezone(timezone(offset))
        assert (point.hour, point.minute) == (hour, minute), question


@given(
    anchor=st.datetimes(min_value=datetime(2001, 1, 2), max_value=datetime(2099, 12, 30), timezones=st.just(UTC)),
    hour=st.integers(0, 23),
    minute=st.integers(0, 59),
    second=st.one_of(st.none(), st.integers(0, 59)),
)
def test_a_lone_clock_time_is_read_as_dateparser_reads_it(
    anchor: datetime, hour: int, minute: int, second: int | None
) -> None:
    """``when._bare_clock`` reads "10:05" without loading dateparser (~0.22 s): the last such
    wall time at or before the anchor's, the moment dateparser gives — except that dateparser,
    stepping back a day from the 1st of a month, lands in the wrong month (2001-02-01 00:00
    anchors "0:01" at 2001-12-31), which this reading does not copy."""
    from veridiag.text import when

    written = f"{hour}:{minute:02d}" + (f":{second:02d}" if second is not None else "")
    ctx = when._Context.at(anchor, UTC)
    token = when._Token("clock", 0, len(written), written)
    value = when._bare_clock([token], ctx)
    assert value is not None
    assert (value.hour, value.minute, value.second) == (hour, minute, second or 0)
    assert ctx.local - timedelta(days=1) < value <= ctx.local
    if ctx.local.day > 1:
        assert value == when._dateparser(written, ctx)
