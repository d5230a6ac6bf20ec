"""A fact a claim derives from its quoted lines is checked by computing it (issue 27, deliverable 1:
the blind set's honest claims withheld for it): a rate ("about 8 a minute", "每分钟约 12 次"), a
duration from the previous claim's event ("1 秒后", "28 minutes after the rollout") or between clocks
written to the millisecond in any log's spelling, a sum ("两段加起来两个多小时"), a multiple ("one and
a half times") and a percentage of a stated multiple ("约 2%" of ×0.02). Each property generates the
wordings and asserts both directions through the Gatekeeper and the offline verifier alike: the
true value is kept, a wrong one is caught."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.agents.offline.verifier import OfflineVerifier
from veridiag.contracts import InMemoryInvocations
from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.material import ExecutorMaterial
from veridiag.gatekeeper import Gatekeeper
from veridiag.text.derived import percent_of_multiple
from veridiag.text.entities import Corpus, computed, extract_entities

_GATEKEEPER = Gatekeeper()
_UNREAD = ("external_unknown", "contradicted")


def _kept(claims: list[dict[str, Any]], invocations: list[InvocationRecord]) -> bool:
    """Is the last of ``claims`` kept — its facts grounded — by the Gatekeeper's entity grounding
    and by the offline verifier? They must agree."""
    store = InMemoryInvocations(invocations)
    report = _GATEKEEPER.validate(v2(claims), session_id=SESSION, invocations=store)
    target = f"claims[{len(claims) - 1}]"
    failed = [
        check.reason
        for trace in report.claim_traces
        for check in trace.checks
        if check.rule_id == "claim.entity_grounding" and check.outcome == "fail" and check.target.startswith(target)
    ]
    material = ExecutorMaterial.read({"claims": claims}).claims
    ids = {inv.id for inv in invocations}
    previous = material[-2] if len(material) > 1 else None
    label, why, _refs = OfflineVerifier(store).judge(material[-1], ids, (), previous)
    assert (not failed) == (label not in _UNREAD), (failed, label, why)
    return not failed


def _hhmmss(second: Decimal) -> str:
    whole = int(second)
    return f"{whole // 3600 % 24:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"


_PER_UNIT = {"second": 1, "minute": 60, "hour": 3600}
_ZH_UNIT = {"second": "秒", "minute": "分钟", "hour": "小时"}
_ABOUT = st.sampled_from(["about ", "roughly ", "~", "around "])
_ZH_ABOUT = st.sampled_from(["约 ", "大约", "差不多"])


def _rate_claim(rate: int, unit: str, lang: str, noun: str, about: str) -> str:
    """A rate as a model writes it, in English (article, "per", a slash) or Chinese (每)."""
    if lang == "zh":
        return f"平均每{_ZH_UNIT[unit]}{about}{rate} 次支付失败。"
    if lang == "slash":
        return f"That is {about}{rate}{noun}/{unit[:3] if unit != 'hour' else 'h'} on average."
    article = "an" if unit == "hour" else ("per" if unit == "second" else "a")
    return f"That is {about}{rate}{noun} {article} {unit} on average."


@given(
    st.integers(3, 400),
    st.sampled_from(list(_PER_UNIT)),
    st.sampled_from(["en", "zh", "slash"]),
    st.sampled_from(["", " errors", " failed payments"]),
    st.integers(2, 9),
)
def test_a_rate_of_a_series_counted_per_unit_is_its_points(
    value: int, unit: str, lang: str, noun: str, off: int
) -> None:
    """ "42 a minute", "每分钟 42 次": the count of a series its call names per that unit."""
    assume(lang != "zh" or not noun)
    output = (
        f"query_metrics service=gateway metric=payment_failures_per_{unit} unit=times\n"
        f"anomaly 1: 2026-07-07T08:11:00Z – 2026-07-07T08:39:00Z up; peak {value} times at 2026-07-07T08:34:00Z"
    )
    calls = [invocation(102, tool_name="query_metrics", output=output)]

    def says(rate: int) -> list[dict[str, Any]]:
        # at one time, no average: "on average" and 平均 name another statistic than the peak
        text = _rate_claim(rate, unit, lang, noun, "").replace("on average", "at 08:34").replace("平均", "08:34 ")
        return [claim(text=text, bindings=[binding([102], output.splitlines()[1], tool_name="query_metrics")])]

    assert _kept(says(value), calls)
    assert not _kept(says(value + off), calls)


def _series(metric: str, step: int, peak: int) -> str:
    """A metric output whose points are ``step`` seconds apart, peaking at ``peak``."""
    start = datetime(2014, 4, 16, 18, 4, tzinfo=UTC)
    levels = [peak // 3 + i % 4 for i in range(8)] + [peak] + [peak // 4 + i % 3 for i in range(4)]
    points = "\n".join(f"{start + timedelta(seconds=step * i):%Y-%m-%dT%H:%M:%SZ} {v}" for i, v in enumerate(levels))
    at = start + timedelta(seconds=step * 8)
    return (
        f"query_metrics service=elb-8c0756 metric={metric}\n"
        f"window: min 3, max {peak} ({len(levels)} points); peak {peak} at {at:%Y-%m-%dT%H:%M:%SZ}\npoints:\n{points}"
    )


@given(
    peak=st.integers(30, 900),
    counted=st.sampled_from([("request_count", 300), ("request_count", 60), ("requests_per_minute", 60)]),
    claimed=st.sampled_from([(1, "req/s", "次/秒"), (60, "req/min", "次/分钟"), (3600, "req/h", "次/小时")]),
    zh=st.booleans(),
    slip=st.sampled_from([Decimal(60), Decimal("1.5"), Decimal("0.5")]),
)
@example(peak=42, counted=("requests_per_minute", 60), claimed=(1, "req/s", "次/秒"), zh=True, slip=Decimal(60))
def test_a_series_level_is_a_rate_in_another_unit_once_converted(
    peak: int, counted: tuple[str, int], claimed: tuple[int, str, str], zh: bool, slip: Decimal
) -> None:
    """ "42 次（每分钟）, 约 0.7 次/秒", "369 requests per 5 minutes is about 1.23 req/s": a series'
    level counted per its step (named in the metric or by its points' spacing) converted to the
    claim's unit is computed, to the claim's digits; the conversion slipped (by 60, or half again)
    is not."""
    metric, step = counted
    per, en_unit, zh_unit = claimed
    assume(per != step)
    output = _series(metric, step, peak)
    peak_line = output.splitlines()[1]

    def written(rate: Decimal) -> str:
        digits = Decimal("0.01") if rate < 10 else Decimal("0.1") if rate < 100 else Decimal(1)
        number = rate.quantize(digits, rounding=ROUND_HALF_UP)
        return f"峰值 {peak}，约 {number:f} {zh_unit}。" if zh else f"It peaked at {peak}, about {number:f} {en_unit}."

    def says(rate: Decimal) -> list[dict[str, Any]]:
        return [claim(text=written(rate), bindings=[binding([102], peak_line, tool_name="query_metrics")])]

    calls = [invocation(102, tool_name="query_metrics", output=output)]
    rate = Decimal(peak) / step * per
    assume(Decimal("0.1") <= rate)
    assert _kept(says(rate), calls)
    assert not _kept(says(rate * slip), calls)


@given(
    size=st.integers(20_000, 90_000_000),
    seconds=st.integers(5, 3000),
    written=st.sampled_from(["lifetime {mm:02d}:{ss:02d}", "took {s} s", "in {s} seconds", "耗时 {s} 秒"]),
    unit=st.sampled_from([("KB/s", 1000), ("KiB/s", 1024), ("MB/s", 1_000_000), ("kbps", 125), ("B/s", 1)]),
    slip=st.sampled_from([Decimal(10), Decimal("0.1"), Decimal(8), Decimal("1.3")]),
)
@example(size=1846301, seconds=93, written="lifetime {mm:02d}:{ss:02d}", unit=("KB/s", 1000), slip=Decimal(10))
def test_a_throughput_is_a_size_over_a_duration_of_its_line(
    size: int, seconds: int, written: str, unit: tuple[str, int], slip: Decimal
) -> None:
    """ "That is about 19.9 KB/s" of "1846301 bytes received, lifetime 01:33": a throughput is the
    size over the duration its quoted line writes (blind12's Proxifier session let "about 198 KB/s"
    through, for no unit of a size a second was read); off by ten, eight (bits) or a third, not."""
    spelled, factor = unit
    assume(seconds < 3600 or "lifetime" not in written)
    took = written.format(mm=seconds // 60, ss=seconds % 60, s=seconds)
    line = f"[10.30 20:39:47] YodaoDict.exe - 220.181.31.147:80 close, {size} bytes received, {took}"
    calls = [invocation(101, output=f"matched 1 lines\n{line}")]

    def says(rate: Decimal) -> list[dict[str, Any]]:
        number = rate.quantize(Decimal("0.01") if rate < 100 else Decimal(1), rounding=ROUND_HALF_UP)
        return [claim(text=f"That is about {number} {spelled}.", bindings=[binding([101], line)])]

    rate = Decimal(size) / seconds / factor
    assume(Decimal("0.5") <= rate)
    assert _kept(says(rate), calls)
    assert not _kept(says(rate * slip), calls)


def _grounding_fails(claims: list[dict[str, Any]], invocations: list[InvocationRecord]) -> bool:
    """Does the Gatekeeper's entity grounding fail the last of ``claims``?"""
    report = _GATEKEEPER.validate(v2(claims), session_id=SESSION, invocations=InMemoryInvocations(invocations))
    target = f"claims[{len(claims) - 1}]"
    return any(
        check.rule_id == "claim.entity_grounding" and check.outcome == "fail" and check.target.startswith(target)
        for trace in report.claim_traces
        for check in trace.checks
    )


_EPOCH_ZONES = {"UTC": 0, "UTC+8": 8 * 60, "UTC−9:30": -(9 * 60 + 30), "UTC+5:45": 5 * 60 + 45}


@given(
    moment=st.datetimes(min_value=datetime(2004, 1, 1), max_value=datetime(2020, 12, 31)),
    millis=st.booleans(),
    zone=st.sampled_from(list(_EPOCH_ZONES)),
    form=st.sampled_from(
        [
            "那条记录的 epoch 是 {epoch}，即 {zone} {month} 月 {day} 日 {clock}。",
            "{epoch} 是 {zone} {iso} {clock}。",
            "The last one was at {clock} {zone} on {iso} ({epoch}).",
            "time = {epoch} is {iso} {clock} {zone}.",
        ]
    ),
    slip=st.sampled_from([60, -60, 8 * 60, 30]),
)
@example(
    moment=datetime(2017, 12, 22, 16, 0), millis=True, zone="UTC", form="{epoch} 是 {zone} {iso} {clock}。", slip=8 * 60
)
def test_a_date_or_clock_read_from_an_epoch_is_its_instant(
    moment: datetime, millis: bool, zone: str, form: str, slip: int
) -> None:
    """ "1125915213，即马克萨斯时间 (UTC−9:30) 9 月 5 日 00:43:33": a date and clock the claim reads from
    an epoch its line writes (seconds, or HealthApp's milliseconds) are the epoch converted, in UTC
    or the zone the claim names, and kept though no line writes them; read wrong ("1513958400000
    ms 是 2017-12-23 00:00 UTC", really 22 Dec 16:00) they fail, though another line holds that face."""
    instant = moment.replace(second=moment.second, microsecond=0, tzinfo=UTC)
    epoch = int(instant.timestamp()) * (1000 if millis else 1)
    line = f"- {epoch} node-171 switch_module Fan speeds ( 3552 3534 3375 4245 3515 3479 )"

    def says(offset_minutes: int) -> tuple[list[dict[str, Any]], list[InvocationRecord]]:
        local = instant + timedelta(minutes=offset_minutes)
        text = form.format(
            epoch=epoch, zone=zone, month=local.month, day=local.day, iso=f"{local:%Y-%m-%d}", clock=f"{local:%H:%M:%S}"
        )
        # another line writes the wrong face: found there, it is still no reading of the epoch
        other = f"{local:%Y-%m-%dT%H:%M:%S}Z node-12 heartbeat" if offset_minutes != _EPOCH_ZONES[zone] else "ok"
        calls = [invocation(101, output=f"matched 2 lines\n{line}\n{other}")]
        return [claim(text=text, bindings=[binding([101], line)])], calls

    assert _kept(*says(_EPOCH_ZONES[zone]))
    assert _grounding_fails(*says(_EPOCH_ZONES[zone] + slip))


@given(values=st.lists(st.integers(100, 999), min_size=49, max_size=80, unique=True), pick=st.integers(0, 48))
def test_lines_of_many_numbers_convert_no_rate(values: list[int], pick: int) -> None:
    """A rate "converted" from lines listing dozens of numbers would match one of them by chance: such
    lines give no level to convert ("about 4.17 req/s" of a quoted line of 60 readings, one of them
    250 a minute, is not computed from it)."""
    line = "queue_per_minute readings: " + " ".join(map(str, values))
    output = f"query_metrics service=gateway metric=queue_per_minute\n{line}"
    calls = [invocation(102, tool_name="query_metrics", output=output)]
    rate = (Decimal(values[pick]) / 60).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    text = f"That is about {rate} req/s."
    assert not _kept([claim(text=text, bindings=[binding([102], line, tool_name="query_metrics")])], calls)


@given(step=st.sampled_from([60, 300, 600, 900]), other=st.sampled_from([60, 300, 600, 900]), zh=st.booleans())
def test_one_point_every_step_is_the_spacing_of_the_series_points(step: int, other: int, zh: bool) -> None:
    """ "每 5 分钟一个点", "one data point every 5 minutes": the spacing of the cited series' points,
    and not another spacing."""
    output = _series("request_count", step, 200)
    calls = [invocation(102, tool_name="query_metrics", output=output)]
    peak_line = output.splitlines()[1]

    def says(seconds: int) -> list[dict[str, Any]]:
        minutes = seconds // 60
        text = (
            f"每 {minutes} 分钟一个点，峰值 200。"
            if zh
            else f"One data point every {minutes} minutes; it peaked at 200."
        )
        return [claim(text=text, bindings=[binding([102], peak_line, tool_name="query_metrics")])]

    assert _kept(says(step), calls)
    if other != step:
        assert not _kept(says(other), calls)


@given(
    st.integers(20, 400),
    st.integers(4, 40),
    st.sampled_from(
        [
            "roughly one sweep every {d} seconds",
            "about one every {d} seconds",
            "约每 {d} 秒一条",
            "差不多每 {d} 秒一次",
            "大约每 {d} 秒完成一台",
        ]
    ),
)
def test_one_every_interval_is_a_rate_its_lines_count(count: int, interval: int, form: str) -> None:
    """ "one sweep every 14 seconds" of "62× 20:01:10Z – 20:15:24Z", "差不多每秒一条" of 60 lines in
    114 s (one every two seconds): one in an interval is a rate, computed from a pattern's count
    over its span — not a duration to find written, and not the wrong interval."""
    span = count * interval
    start = datetime(2005, 11, 9, 20, 1, 10, tzinfo=UTC)
    line = f"{count}× INFO {start:%Y-%m-%dT%H:%M:%SZ} – {start + timedelta(seconds=span):%Y-%m-%dT%H:%M:%SZ} NEW SWEEP"
    calls = [invocation(101, output=f"matched {count} lines (INFO {count})\n{line}")]

    def says(seconds: int) -> list[dict[str, Any]]:
        return [
            claim(
                text=f"The subnet manager ran {count} sweeps, " + form.format(d=seconds) + ".",
                bindings=[binding([101], line)],
            )
        ]

    assert _kept(says(interval), calls)
    assert not _kept(says(interval * 2), calls)


@given(
    st.integers(3, 6),
    st.sampled_from(
        [(30, "大约每半小时重启一次"), (20, "约每 20 分钟重启一次"), (30, "roughly one restart every 30 minutes")]
    ),
)
def test_one_every_interval_over_a_lines_events_counts_their_gaps(events: int, form: tuple[int, str]) -> None:
    """ "大约每半小时重启一次" of three restarts at 12:01, 12:31 and 13:00: over the span from the
    first event to the last, c events are c − 1 intervals; a third of the interval is wrong."""
    minutes, text = form
    for gap, right in ((minutes, True), (minutes // 3, False)):
        at = [12 * 60 + 1 + i * gap for i in range(events)]
        line = f"increases per 1m: {events} restarts in total, {events} steps rose: " + ", ".join(
            f"+1 at 2026-07-07T{m // 60:02d}:{m % 60:02d}:00Z" for m in at
        )
        calls = [invocation(603, tool_name="query_metrics", output=line)]
        assert _kept([claim(text=text, bindings=[binding([603], line, tool_name="query_metrics")])], calls) is right


@given(
    st.integers(30, 400),
    st.sampled_from(["差不多每秒一条", "每秒一次", "about one a second", "roughly one per second"]),
)
def test_one_a_unit_is_checked_to_a_tenth(count: int, form: str) -> None:
    """ "60 条…差不多每秒一条" of 60 lines over 114 s is one every two seconds: wrong."""
    start = datetime(2026, 7, 7, 14, 0, 5, tzinfo=UTC)
    for interval, right in ((1, True), (2, False)):
        end = start + timedelta(seconds=count * interval)
        line = f"{count}× ERROR {start:%Y-%m-%dT%H:%M:%SZ} – {end:%Y-%m-%dT%H:%M:%SZ} ERR_ORDER_VALIDATION"
        calls = [invocation(102, output=line)]
        text = f"这段时间记了 {count} 条 ERR_ORDER_VALIDATION，{form}。"
        assert _kept([claim(text=text, bindings=[binding([102], line)])], calls) is right, (interval, text)


@given(
    st.integers(2, 200),
    st.integers(1, 200),
    st.sampled_from(
        [
            ("averaged {v} slow queries a minute", "avg"),
            ("averaged {v} per minute", "avg"),
            ("平均每分钟 {v} 次", "avg"),
            ("peaked at {v} a minute", "max"),
            ("峰值每分钟 {v} 次", "max"),
        ]
    ),
)
def test_a_rate_is_the_statistic_its_words_name(avg: int, above: int, wording: tuple[str, str]) -> None:
    """ "averaged 40 slow queries a minute" is not stated by a series' "max 40 times"."""
    peak = avg + above
    line = (
        f"window: min 0 times, max {peak} times, avg {avg} times (75 points); peak {peak} times at 2026-07-07T15:11:00Z"
    )
    output = f"query_metrics service=mysql metric=mysql_slow_queries_per_minute unit=times\n{line}"
    calls = [invocation(253, tool_name="query_metrics", output=output)]
    form, statistic = wording
    right, wrong = (avg, peak) if statistic == "avg" else (peak, avg)

    def says(value: int) -> list[dict[str, Any]]:
        text = "Across the window MySQL " + form.format(v=value) + "."
        return [claim(text=text, bindings=[binding([253], line, tool_name="query_metrics")])]

    assert _kept(says(right), calls)
    assert not _kept(says(wrong), calls)


@given(
    st.integers(5, 5000),
    st.integers(300, 7200),
    st.sampled_from(list(_PER_UNIT)),
    st.sampled_from(["en", "zh", "slash"]),
    st.data(),
)
def test_a_rate_is_a_count_over_the_period_of_its_line(
    count: int, seconds: int, unit: str, lang: str, data: st.DataObject
) -> None:
    """ "about 8 a minute" for 320 errors in 39 m 47 s; "每分钟约 30 次" for 361 in 30 minutes is
    caught."""
    rate = Decimal(count * _PER_UNIT[unit]) / seconds
    written = int(rate.quantize(Decimal(1), ROUND_HALF_UP))
    assume(written >= 3 and abs(rate - written) < Decimal("0.45"))  # not on the edge of its rounding
    start = Decimal(36000 + data.draw(st.integers(0, 3600)))
    line = (
        f"{count}× ERROR 2026-07-07T{_hhmmss(start)}Z – 2026-07-07T{_hhmmss(start + seconds)}Z "
        "ERR_PAYMENT_TIMEOUT upstream=payment-service"
    )
    output = f"query_logs service=order-service level=ERROR\ntemplates:\n  {line}"
    calls = [invocation(103, output=output)]
    about = data.draw(_ZH_ABOUT if lang == "zh" else _ABOUT)
    noun = "" if lang == "zh" else data.draw(st.sampled_from(["", " errors", " validation errors"]))

    def says(value: int) -> list[dict[str, Any]]:
        return [claim(text=_rate_claim(value, unit, lang, noun, about), bindings=[binding([103], line)])]

    assert _kept(says(written), calls)
    assert not _kept(says(written * 2 + 3), calls)


_LOG_CLOCKS = st.sampled_from(
    [
        "20171223-{clock}{mark}{ms}|Step_LSC|30002312|onStandStepChanged 3579",
        "2017-12-23 {clock}{mark}{ms} INFO Step_LSC onStandStepChanged 3579",
        "[2017-12-23T{clock}{mark}{ms}] INFO Step_LSC onStandStepChanged 3579",
    ]
)


def _log_line(form: str, second: Decimal, mark: str) -> str:
    millis = int((second - int(second)) * 1000)
    return form.format(clock=_hhmmss(second), mark=mark, ms=f"{millis:03d}")


@given(_LOG_CLOCKS, st.sampled_from([".", ",", ":"]), st.integers(0, 86_399_999), st.integers(1, 999))
def test_a_clock_to_the_millisecond_is_the_line_in_any_spelling(form: str, mark: str, millis: int, off: int) -> None:
    """ "22:15:29.649" is the line the log writes ``22:15:29:649`` or ``22:15:29,649``."""
    second = Decimal(millis) / 1000
    line = _log_line(form, second, mark)
    calls = [invocation(101, output=f"query_logs service=healthapp\nlines:\n{line}")]

    def says(at: Decimal) -> list[dict[str, Any]]:
        written = f"{_hhmmss(at)}.{int((at - int(at)) * 1000):03d}"
        return [claim(text=f"{written} 的计数是 3579。", bindings=[binding([101], line)])]

    assert _kept(says(second), calls)
    assert not _kept(says((second + Decimal(off) / 1000) % 86400), calls)


def _duration(amount: Decimal, unit: str, lang: str, about: str) -> str:
    """A duration as written, to the precision of ``amount``."""
    if lang == "zh":
        return f"{about}{amount} {'毫秒' if unit == 'ms' else '秒'}"
    return f"{about}{amount} {'ms' if unit == 'ms' else 'seconds'}"


@given(
    _LOG_CLOCKS,
    st.sampled_from([".", ",", ":"]),
    st.integers(0, 80_000_000),
    st.integers(5, 9_999),
    st.tuples(st.sampled_from(["zh", "en"]), st.booleans()),
)
def test_a_duration_between_clocks_to_the_millisecond_is_computed(
    form: str, mark: str, millis: int, apart: int, wording: tuple[str, bool]
) -> None:
    """ "30 毫秒后" for .381 → .411, "约 1.2 秒内" for 1.235 s; "3 seconds later" for one is caught."""
    lang, approximate = wording
    first = Decimal(millis) / 1000
    lines = [_log_line(form, first, mark), _log_line(form, first + Decimal(apart) / 1000, mark)]
    calls = [invocation(101, output="query_logs service=healthapp\nlines:\n" + "\n".join(lines))]
    in_seconds = apart >= 1000
    unit = "s" if in_seconds else "ms"
    about = ("约 " if lang == "zh" else "about ") if approximate else ""
    after = "后" if lang == "zh" else " later"

    def says(millis_apart: int) -> list[dict[str, Any]]:
        amount = (Decimal(millis_apart) / 1000).quantize(Decimal("0.1")) if in_seconds else Decimal(millis_apart)
        text = f"计数变了，{_duration(amount, unit, lang, about)}{after}又变了。"
        return [claim(text=text, bindings=[binding([101], line) for line in lines])]

    assert _kept(says(apart), calls)
    assert not _kept(says(apart * 3 + 1000 if in_seconds else apart * 3 + 10), calls)


@given(
    st.integers(36_000, 80_000),
    st.integers(1, 3000),
    st.sampled_from(["zh", "en", "en-after"]),
    st.sampled_from(["s", "min"]),
)
def test_a_duration_after_the_previous_claims_event_is_computed(start: int, apart: int, lang: str, unit: str) -> None:
    """ "1 秒后 order-service 记录了失败" counts from the event the claim before it quotes."""
    assume(unit == "s" or apart >= 120)
    first = f"2026-07-07T{_hhmmss(Decimal(start))}.000Z ERROR payment-service order=123 ERR_TIMEOUT request timeout"
    second = (
        f"2026-07-07T{_hhmmss(Decimal(start + apart))}.000Z ERROR order-service payment failed for order=123: "
        "ERR_PAYMENT_TIMEOUT"
    )
    calls = [invocation(101, output=first), invocation(102, output=second)]
    earlier = claim("claim-1", f"payment-service 在 {_hhmmss(Decimal(start))} 超时。", [binding([101], first)])

    def says(amount: int) -> list[dict[str, Any]]:
        spelled = {"s": ("秒", "seconds"), "min": ("分钟", "minutes")}[unit]
        if lang == "zh":
            text = f"{amount} {spelled[0]}后 order-service 记录订单 123 支付失败。"
        elif lang == "en":
            text = f"{amount} {spelled[1]} later order-service logged the failed payment."
        else:
            text = f"order-service logged the failed payment {amount} {spelled[1]} after the timeout."
        return [earlier, claim("claim-2", text, [binding([102], second)])]

    amount = apart if unit == "s" else round(apart / 60)
    assume(unit == "s" or abs(amount * 60 - apart) <= 25)
    assert _kept(says(amount), calls)
    assert not _kept(says(amount * 2 + 2), calls)


def _anomaly(number: int, minutes: int, factor: str = "0.09") -> str:
    return (
        f"anomaly {number}: 2015-09-16T1{number}:00:00Z – 2015-09-16T1{number}:59:00Z ({minutes // 5} points, "
        f"{minutes} min) down; peak 6 mph at 2015-09-16T1{number}:29:00Z; expected 67 mph; ×{factor}; score 20.6"
    )


@given(st.integers(20, 200), st.integers(20, 200), st.sampled_from(["zh-more", "zh", "en"]))
def test_a_sum_of_two_stated_durations_is_computed(first: int, second: int, form: str) -> None:
    """ "两段加起来两个多小时" for 66 + 70 minutes; "三个多小时" for them is caught."""
    total = first + second
    assume(total >= 60)
    lines = [_anomaly(1, first), _anomaly(2, second)]
    calls = [invocation(101, tool_name="query_metrics", output="points:\n" + "\n".join(lines))]

    def says(minutes: int) -> list[dict[str, Any]]:
        if form == "zh-more":
            text = f"第一段 {first} 分钟，第二段 {second} 分钟，两段加起来{minutes // 60}个多小时。"
        elif form == "zh":
            text = f"第一段 {first} 分钟，第二段 {second} 分钟，合计 {minutes} 分钟。"
        else:
            text = f"The first lasted {first} minutes and the second {second}, {minutes} minutes in total."
            text = text.replace(f"{minutes} minutes in total", f"a total of {minutes} minutes")
        return [claim(text=text, bindings=[binding([101], line, tool_name="query_metrics") for line in lines])]

    assert _kept(says(total), calls)
    assert not _kept(says(total + 60), calls)


@given(
    st.integers(20, 55),
    st.integers(20, 55),
    st.sampled_from(
        [
            "In total the pod spent about {m} minutes below 10 mph.",
            "一共算下来，车速低于 10 mph 的时间约 {m} 分钟。",
            "Altogether the speed stayed low for {m} minutes.",
        ]
    ),
)
def test_a_duration_in_total_is_a_sum_of_its_lines_not_a_span_between_their_clocks(
    first: int, second: int, form: str
) -> None:
    """ "In total the pod spent about 12 minutes above 50 %" of two episodes of 4 and 3 minutes: the
    sum word stood far from the number, so the span from the first's start to the second's end
    (07:01 to 07:13) was taken for it. In total is what the parts add up to."""
    lines = [_anomaly(1, first), _anomaly(2, second)]
    calls = [invocation(101, tool_name="query_metrics", output="points:\n" + "\n".join(lines))]

    def says(minutes: int) -> list[dict[str, Any]]:
        text = form.format(m=minutes)
        return [claim(text=text, bindings=[binding([101], line, tool_name="query_metrics") for line in lines])]

    assert _kept(says(first + second), calls), form
    assert not _kept(says(179), calls), form  # 11:00 to 12:59: a span, no total


@given(
    st.integers(1000, 99_999),
    st.integers(1000, 99_999),
    st.sampled_from(
        ["about {r} times the {other} one", "{r} times as high as the {other} one", "{r}× the {other} one"]
    ),
    st.booleans(),
)
@example(high=3102000, low=1280000, form="{r} times as high as the {other} one", echoed=True)
def test_a_multiple_of_two_stated_values_is_computed(high: int, low: int, form: str, echoed: bool) -> None:
    """ "about one and a half times the 11:35 one" for 76.41 against 50.89 — also where the call's
    retrieval details echo the quoted lines among many other numbers (a log query's pattern
    examples): the claim's lines are where its excerpts align best, the output."""
    assume(high > low * 1.2)
    a, b = Decimal(high) / 100, Decimal(low) / 100
    said = "queue depth" if echoed else "peak"  # no statistic's word: only the bare numbers tell
    lines = [f"{said} {a} at 2014-07-15T15:40:00Z", f"{said} {b} at 2014-07-15T11:35:00Z"]
    details = {"examples": lines, "counts": list(range(100_003, 100_100, 7))} if echoed else None
    calls = [invocation(101, tool_name="query_metrics", output="\n".join(lines), retrieval_details=details)]
    ratio = (a / b).quantize(Decimal("0.1"))

    def says(r: Decimal) -> list[dict[str, Any]]:
        text = "The 15:40 peak is " + form.format(r=r, other="11:35") + "."
        return [claim(text=text, bindings=[binding([101], line, tool_name="query_metrics") for line in lines])]

    assert _kept(says(ratio), calls)
    wrong = ratio * 2 + 1
    # an approximate count is also read as a bare number of its lines (entities: small texts)
    assume(all(abs(wrong - value) > wrong / 4 for value in (a, b)))
    assert not _kept(says(wrong), calls)


@given(st.integers(1, 99), st.sampled_from(["约 {p}%", "只有约 {p}%", "about {p}%", "roughly {p} percent"]))
def test_a_percentage_of_a_stated_multiple_is_computed(hundredths: int, form: str) -> None:
    """ "约 2%" of "×0.02": the multiple a tool wrote, as a percentage."""
    factor = Decimal(hundredths) / 100
    line = f"peak 1 mph at 2015-09-16T12:29:00Z; expected 64 mph; ×{factor}"
    calls = [invocation(101, tool_name="query_metrics", output=line)]

    def says(percent: int) -> list[dict[str, Any]]:
        text = f"12:29 的车速只有正常车速的{form.format(p=percent)}。"
        return [claim(text=text, bindings=[binding([101], line, tool_name="query_metrics")])]

    assert _kept(says(hundredths), calls)
    assert not _kept(says(hundredths * 2 + 3), calls)


@given(
    low=st.integers(2, 60),
    gap=st.integers(1, 40),
    aside=st.sampled_from(["", " (one third)", "（约三成）", " (a third)"]),
    form=st.sampled_from(
        [
            "{a} GB of disk but {b} GB used, i.e. {d} GB{x} more than the disk holds",
            "从 {a} GB 涨到 {b} GB，多用了 {d} GB{x}",
        ]
    ),
)
def test_a_difference_is_found_where_it_stands_not_inside_a_longer_number(
    low: int, gap: int, aside: str, form: str
) -> None:
    """ "reports 15 GB … 20 GB used, i.e. 5 GB (one third) more": the difference word was looked for
    after the "5 GB" of "15 GB", and a bracketed aside stood between; both hid the difference."""
    high = low + gap
    assume(gap != low)  # the same words twice: which one is the difference, no position tells
    evidence = Corpus([f"phys_disk={low}GB used_disk={high}GB"])
    text = form.format(a=low, b=high, d=gap, x=aside)
    (difference,) = [e for e in extract_entities(text) if e.value == gap and e.kind == "quantity"][-1:]
    assert computed(difference, text, evidence), text
    wrong = form.format(a=low, b=high, d=gap + 3, x=aside)
    (other,) = [e for e in extract_entities(wrong) if e.value == gap + 3 and e.kind == "quantity"][-1:]
    assert not computed(other, wrong, evidence), wrong


@given(value=st.integers(1, 64), written=st.sampled_from(["CPU", "CPUs", "cpu", "vCPU", "cores"]))
def test_a_cpu_count_as_the_output_writes_its_unit(value: int, written: str) -> None:
    """ "one vCPU" of "vcpus 1 CPU": CPU is a unit of CPUs as vCPU and core are."""
    (cpus,) = extract_entities(f"each asks for {value} vCPU")
    assert Corpus([f"Attempting claim: memory 2048 MB, vcpus {value} {written}"]).contains(cpus)
    assert not Corpus([f"Attempting claim: memory 2048 MB, vcpus {value + 1} {written}"]).contains(cpus)


@given(
    hundredths=st.integers(2, 400).filter(lambda h: h not in {100, 50}),
    form=st.sampled_from(
        ["最低点只有期望值的 {m} 倍，相当于下降了约 {p}%。", "a drop of about {p}% (×{m})", "up {p}% on expected"]
    ),
)
def test_a_change_in_percent_of_a_stated_multiple(hundredths: int, form: str) -> None:
    """ "只有期望值的 0.12 倍，相当于下降了约 88%" of "×0.12": a change word makes the percentage the
    change (1 − 0.12), not the share; a share's percentage (12%) is no change of 12%."""
    multiple = Decimal(hundredths) / 100
    going_down = multiple < 1
    assume(going_down == ("up" not in form))
    line = Corpus([f"peak 8 mph at 2015-09-15T14:34:00Z; expected 67 mph; ×{multiple}"])
    change = abs(multiple - 1) * 100
    text = form.format(m=multiple, p=f"{change:.0f}")
    (percent,) = [e for e in extract_entities(text) if e.dimension == "percent"]
    assert percent_of_multiple(percent, line, text), text
    share = form.format(m=multiple, p=f"{multiple * 100:.0f}")
    assume(abs(multiple * 100 - change) > change / 4 + 2)  # "约" widens a percentage by a fifth
    (wrong,) = [e for e in extract_entities(share) if e.dimension == "percent"]
    assert not percent_of_multiple(wrong, line, share), share


@given(
    pair=st.sampled_from(
        [
            ("{a} 字节", 1, "{b} MB", 1048576),
            ("{a} bytes", 1, "{b} MiB", 1048576),
            ("{a} ms", 1, "{b} s", 1000),
            ("{a} mph", 1, "{b} km/h", None),
        ]
    ),
    mega=st.integers(1, 900),
    wrong=st.booleans(),
)
def test_a_quantity_restated_in_another_unit(pair: tuple[str, int, str, int | None], mega: int, wrong: bool) -> None:
    """ "used_memory=268435456 字节正好是 256 MB", "23 mph 大约 37 km/h": the second is the first
    in another unit, the first on its line; another number is no restatement."""
    first, _, second, ratio = pair
    if ratio is None:  # mph → km/h
        a, b = mega, round(mega * 1.609344)
    else:
        a, b = mega * ratio, mega
    text = f"used {first.format(a=a)}，也就是 {second.format(b=b * 2 + 3 if wrong else b)}"
    # the first written bare in a field, its unit the claim's: only the restatement gives the second
    output = (
        f"maxmemory reached (used_memory={a})" if "字节" in first or "bytes" in first else f"{first.format(a=a)} used"
    )
    store = InMemoryInvocations([invocation(7, output=output)])
    report = Gatekeeper().validate(
        v2([claim(text=text, bindings=[binding([7], output)])]), session_id=SESSION, invocations=store
    )
    outcomes = {c.outcome for t in report.claim_traces for c in t.checks if c.rule_id == "claim.entity_grounding"}
    assert (outcomes == {"pass"}) is not wrong, (text, outcomes)


@given(
    st.integers(1_000_000_000, 1_999_000_000),
    st.integers(2, 600),
    st.sampled_from(["zh", "en"]),
    st.sampled_from(["node-151", "node-7", "Interconnect-0N00"]),
    st.sampled_from(["", "."]),
)
@example(1_079_615_344, 29, "zh", "node-151", "")
@example(1_131_563_037, 60, "en", "node-7", ".")  # an epoch ending the sentence is one too
def test_a_duration_between_two_epoch_seconds_the_claim_copies_is_computed(
    start: int, minutes: int, lang: str, node: str, stop: str
) -> None:
    """HPC and BGL lines carry their time as epoch seconds: "node-151 在 1079615344 报 not
    responding，约 29 分钟后（1079617105）又恢复" was withheld, the 29 minutes found nowhere. Both
    epochs copied from the lines make it computed; a wrong duration is not."""
    end = start + minutes * 60 + 17
    lines = [f"272589 {node} node status {start} 0 not responding", f"276361 {node} net.niff.up {end} 1 NIFF: up"]
    calls = [invocation(101, output="query_logs service=hpc\nlines:\n" + "\n".join(lines))]

    def says(after: int) -> list[dict[str, Any]]:
        if lang == "zh":
            text = f"{node} 在 {start} 报 not responding，约 {after} 分钟后（{end}）又恢复了网络。"
        else:
            text = f"{node} came back about {after} minutes after it stopped responding: {start} against {end}{stop}"
        return [claim(text=text, bindings=[binding([101], line) for line in lines])]

    assert _kept(says(minutes), calls)
    assert not _kept(says(minutes * 3 + 5), calls)


@given(
    st.integers(62, 95),  # no number of the line's clocks or counts: what a level near it is, alone
    st.integers(5, 20),
    st.sampled_from(
        ["尖峰比基线高出大约 {d} 个单位。", "峰值比期望高出约 {d}。", "The peak was about {d} above the baseline."]
    ),
)
@example(73, 12, "尖峰比基线高出大约 {d} 个单位。")
def test_a_difference_is_computed_never_found_as_a_level_near_it(base: int, rise: int, form: str) -> None:
    """ "尖峰比基线高出大约 36 个单位" of ×1.36 on a series near 33: 36 is no difference of the lines
    (45.62 − 33.44 is 12.18), but "about 36" took in a level of the series, or 45.62 minus the
    anomaly's "11 points". A difference is written or computed from values of one kind."""
    peak = base + rise
    points = peak - base * 2 + 1 if peak > base * 2 else 11  # a count a level minus which is no difference
    output = (
        f"window: min {base - 2}.5, max {peak}.5, avg {base + 1}.2 ({points + 400} points)\n"
        f"anomaly 1: 2014-01-21T10:35:00Z – 2014-01-21T13:35:00Z ({points} points, 180 min) up; "
        f"peak {peak}.5 at 2014-01-21T10:45:00Z; expected {base}.5; ×{(peak + 0.5) / (base + 0.5):.2f}"
    )
    calls = [invocation(101, output=output)]
    line = output.splitlines()[1]

    def says(amount: int) -> list[dict[str, Any]]:
        return [claim(text=form.format(d=amount), bindings=[binding([101], line)])]

    assert _kept(says(rise), calls), form.format(d=rise)
    assert not _kept(says(base + 2), calls), form.format(d=base + 2)


@given(
    high=st.integers(200, 999),
    low=st.integers(1, 150),
    form=st.sampled_from(
        [
            "CPU 从 {a}m 降到 {b}m，降幅超过 {p}%。",
            "CPU fell from {a} m to {b} m, a drop of over {p}%.",
            "CPU 仍有 {a}m，一分钟后降到 {b}m，降幅超过 {p}%。",
        ]
    ),
)
@example(high=463, low=115, form="CPU 从 {a}m 降到 {b}m，降幅超过 {p}%。")  # 115.64 m read as a bare 115.64 %
@example(high=200, low=97, form="CPU 从 {a}m 降到 {b}m，降幅超过 {p}%。")  # the rise from 97.64m, 105 %
def test_a_bound_on_a_computed_change_holds_what_it_bounds(high: int, low: int, form: str) -> None:
    """ "427.52m 降到 3.64m，降幅超过 99%": a bound on the change the two values compute (99.1 %),
    not a number written to its digits; a bound the change does not reach is caught."""
    lines = [f"2023-01-29T14:53:09Z {high}.52 m", f"2023-01-29T14:54:09Z {low}.64 m"]
    output = "\n".join(lines)
    calls = [invocation(1201, tool_name="query_metrics", output=output)]
    change = (Decimal(high) - Decimal(low) + Decimal("-0.12")) / (Decimal(high) + Decimal("0.52")) * 100
    bindings = [binding([1201], line, tool_name="query_metrics") for line in lines]

    def says(percent: int) -> list[dict[str, Any]]:
        return [claim(text=form.format(a=f"{high}.52", b=f"{low}.64", p=percent), bindings=bindings)]

    assert _kept(says(int(change) - 1), calls), change
    assert not _kept(says(int(change) + 2), calls), change
