"""Equivalent forms are the same fact (issue 27, deliverable 1): a claim may write what a tool
output states in another unit, clock, zone or convention, and is grounded exactly when the
value is the same. Each property generates the variants and the near misses."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from decimal import ROUND_HALF_EVEN, Decimal

from hypothesis import assume, example, given
from hypothesis import strategies as st

from veridiag.text.entities import Corpus, EntityWords, computed, derived_duration, extract_entities
from veridiag.text.units import UnitWords
from veridiag.text.wordfiles import bundled_words

_CN = "零一二三四五六七八九"


def _grounded(claim: str, output: str) -> bool:
    corpus = Corpus([output])
    entities = extract_entities(claim)
    assert entities, claim
    return all(corpus.contains(e) or computed(e, claim, corpus) for e in entities)


def _cn_number(n: int) -> str:
    if n < 10:
        return _CN[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else _CN[tens]) + "十" + (_CN[ones] if ones else "")


def _zh_clock(hour: int, minute: int, numerals: bool) -> str:
    """A 24-hour clock as a Chinese speaker writes it: with the part of the day."""
    part = "凌晨" if hour < 6 else "上午" if hour < 12 else "中午" if hour == 12 else "下午" if hour < 18 else "晚上"
    twelve = hour if hour <= 12 else hour - 12
    h = _cn_number(twelve) if numerals else str(twelve)
    if minute == 0:
        return f"{part}{h}点"
    if minute == 30:
        return f"{part}{h}点半"
    m = (_cn_number(minute) if minute >= 10 else "零" + _cn_number(minute)) if numerals else f"{minute:02d}"
    return f"{part}{h}点{m}分"


def _en_clock(hour: int, minute: int) -> str:
    twelve = hour % 12 or 12
    return f"{twelve}:{minute:02d} {'pm' if hour >= 12 else 'am'}"


clocks = st.tuples(st.integers(0, 23), st.integers(0, 59))


@given(clocks, st.sampled_from(["zh", "zh-numerals", "en", "24h"]), st.integers(1, 11))
def test_a_clock_written_any_way_is_the_time_of_the_line(clock: tuple[int, int], form: str, shift: int) -> None:
    hour, minute = clock
    output = f"2026-07-07T{hour:02d}:{minute:02d}:41.120Z ERROR payment-service ERR_TIMEOUT"

    def spell(h: int) -> str:
        if form == "en":
            return _en_clock(h, minute)
        if form == "24h":
            return f"{h:02d}:{minute:02d}"
        return _zh_clock(h, minute, numerals=form == "zh-numerals")

    assert _grounded(f"支付在 {spell(hour)} 超时", output)
    assert not _grounded(f"支付在 {spell((hour + shift) % 24)} 超时", output)


@given(clocks, st.sampled_from(["北京时间", "UTC+8", "(UTC+8)", "Beijing time"]), st.booleans())
def test_a_zoned_clock_is_compared_as_an_instant(clock: tuple[int, int], zone: str, before: bool) -> None:
    hour, minute = clock
    output = f"2026-07-07T{hour:02d}:{minute:02d}:00Z ERROR gateway upstream timeout"
    local = datetime(2026, 7, 7, hour, minute, tzinfo=UTC) + timedelta(hours=8)

    def claim(h: int, m: int) -> str:
        written = f"{h:02d}:{m:02d}"
        return f"{zone} {written} 网关超时" if before else f"网关在 {written} {zone} 超时"

    assert _grounded(claim(local.hour, local.minute), output)
    assert not _grounded(claim(hour, minute), output)  # the UTC wall clock, called Beijing time


@given(
    st.integers(200, 16000),
    st.sampled_from(["GB", "GiB", "MB", "MiB"]),
    st.integers(0, 2),
    st.sampled_from(["约 ", "", "about "]),
)
def test_a_size_letter_converts_like_a_unit(mib: int, unit: str, places: int, approx: str) -> None:
    """A GC log's ``1931M`` written as "约 1.9 GB" / "1.89 GiB" / "1931 MB"; a value two steps
    of the written precision away is another size."""
    output = f"[Full GC (Allocation Failure) {mib}M->{mib}M({mib * 2}M), 3.21 secs]"
    size = Decimal(mib) * (1 << 20)
    factor = {"GB": Decimal(10) ** 9, "GiB": Decimal(1 << 30), "MB": Decimal(10) ** 6, "MiB": Decimal(1 << 20)}[unit]
    step = Decimal(1).scaleb(-places)
    # The claim reads M as MiB, converts, rounds to its precision.
    written = (size / factor).quantize(step, rounding=ROUND_HALF_EVEN)
    if written <= 0:
        return
    assert _grounded(f"堆占用 {approx}{written} {unit}", output)
    # Beyond both readings of M, and beyond what "约" / "about" allows (±10 %).
    far = written + 3 * step + (size / factor) * (Decimal("0.2") if approx else Decimal("0.06"))
    # ... and not the heap's capacity (twice the size) that the same line states.
    capacity = [2 * size / factor, 2 * size / factor * Decimal(10**6) / Decimal(1 << 20)]
    assume(all(abs(far - c) > c * Decimal("0.3") for c in capacity))  # GB is read as GiB too
    assert not _grounded(f"堆占用 {approx}{far} {unit}", output)


@given(
    st.sampled_from(["Query_time", "Lock_time", "elapsed", "latency_ms", "duration_s", "rt"]),
    st.decimals(min_value=Decimal("0.1"), max_value=Decimal("900"), places=1),
    st.sampled_from(["s", "秒", "ms", "毫秒"]),
)
def test_a_bare_value_has_the_unit_its_field_names(key: str, value: Decimal, unit: str) -> None:
    output = f"# {key}: {value}  Rows_sent: 0  Rows_examined: 1204"
    base = Decimal("0.001") if key.endswith("_ms") else Decimal(1)  # a field without a unit: seconds
    seconds = value * base
    written = seconds if unit in ("s", "秒") else seconds * 1000
    assert _grounded(f"锁等待 {written.normalize():f} {unit}", output)
    assert not _grounded(f"锁等待 {(written * 3 + 7).normalize():f} {unit}", output)


@given(
    st.sampled_from(["len", "body_bytes", "bytes", "size", "resp_len"]),
    st.integers(100, 99999),
    st.sampled_from(["{v} bytes", "{v} B", "{v} 字节"]),
)
def test_a_bare_length_is_a_size_in_bytes(key: str, value: int, form: str) -> None:
    """nova's "status: 404 len: 176": the response is 176 bytes long."""
    output = f'"GET /latest/meta-data/ HTTP/1.1" status: 404 {key}: {value} time: 0.2'
    assert _grounded("the response was " + form.format(v=value), output)
    assert not _grounded("the response was " + form.format(v=value * 3 + 7), output)
    if key == "len":  # its unit is bytes, whatever a claim writes
        assert not _grounded(f"the response was {value} KB", output)


@given(st.sampled_from([500, 502, 503, 504]), st.sampled_from([500, 502, 503, 504]))
def test_a_status_code_in_the_plural(code: int, other: int) -> None:
    output = f'10.0.0.7 - - [07/Jul/2026:10:05:11 +0000] "GET /checkout HTTP/1.1" {code} 0'
    assert _grounded(f"the gateway returned {code}s", output)
    if other != code:
        assert not _grounded(f"the gateway returned {other}s", output)


@given(
    st.integers(0, 86000),
    st.integers(1, 600),
    st.sampled_from(["{n} 秒后", "{n} s later", "{m} 分钟后", "{m} minutes later", "{m} 分钟内"]),
)
def test_a_derived_duration_is_computed(start: int, apart: int, form: str) -> None:
    first = datetime(2026, 7, 7, tzinfo=UTC) + timedelta(seconds=start)
    second = first + timedelta(seconds=apart * 60 if "{m}" in form else apart)
    evidence = Corpus([f"{first:%Y-%m-%dT%H:%M:%S}Z deploy v42", f"{second:%Y-%m-%dT%H:%M:%S}Z ERROR timeout"])
    claim = "发布" + form.format(n=apart, m=apart) + "开始报错"
    (duration,) = extract_entities(claim)
    assert derived_duration(duration, claim, evidence)
    wrong = "发布" + form.format(n=apart + 7, m=apart + 7) + "开始报错"
    (other,) = extract_entities(wrong)
    assert "内" in form or not derived_duration(other, wrong, evidence)


def test_midnight_and_seconds_of_another_clock() -> None:
    assert _grounded("18:00–24:00", "window 2026-07-07T18:00:00Z – 2026-07-08T00:00:00Z")
    # 14:28 is the minutes and seconds of 14:14:28, not a clock of this output
    assert not _grounded("at 14:28", "2026-07-07T14:14:28Z ERROR x")
    assert _grounded("at 14:14", "2026-07-07T14:14:28Z ERROR x")


@given(
    st.sampled_from([("北京时间", 8), ("东京时间", 9), ("UTC+3", 3), ("Berlin time", 2)]),
    st.dates(date(2026, 6, 1), date(2026, 8, 31)),
    st.sampled_from(["{z} 22:00 到 24:00", "{z} 晚上 10 点到 12 点", "22:00–24:00 {z}"]),
)
def test_midnight_in_a_zone_is_the_next_days_start_read_in_that_zone(
    zone: tuple[str, int], day: date, form: str
) -> None:
    """ "北京时间晚上 10 点到 12 点": 24:00 is the next day's 00:00 in Beijing, 16:00Z — not a clock
    left unread (it was, and no line ever writes 24:00)."""
    words, offset = zone
    end = datetime.combine(day, time(0), UTC) + timedelta(days=1, hours=-offset)
    start = end - timedelta(hours=2)
    output = f"window {start:%Y-%m-%dT%H:%M:%SZ} – {end:%Y-%m-%dT%H:%M:%SZ}"
    text = form.format(z=words)
    assert _grounded(text, output), (text, output)
    assert not _grounded(text, output.replace(f"{end:%H:%M}", f"{(end + timedelta(hours=1)):%H:%M}")), text


_APPROXIMATE = st.sampled_from(["约", "大约", "接近", "roughly ", "about ", "nearly ", "~"])
_AT_MOST = st.sampled_from(["不到", "低于", "under ", "less than ", "below "])
_AT_LEAST = st.sampled_from(["超过", "高于", "over ", "more than ", "at least "])


@given(st.integers(20, 5000), st.integers(-9, 9), _APPROXIMATE, st.sampled_from(["ms", "%", " 条"]))
def test_an_approximate_number_is_found_within_ten_percent(value: int, off_percent: int, word: str, unit: str) -> None:
    """ "约 90%" is any value within ±10 %: an honest rounding of 88.7 %, not of 70 %."""
    stated = Decimal(value) * (100 + off_percent) / 100
    output = f"metric={stated:.1f}{unit.strip()}"
    rounded = round(value, -1) if value >= 100 else value
    assume(abs(Decimal(rounded) - stated) <= Decimal(rounded) / 10)
    assert _grounded(f"{word}{rounded}{unit}", output)
    assert not _grounded(f"{word}{rounded}{unit}", f"metric={stated * 2:.1f}{unit.strip()}")


@given(st.integers(10, 5000), st.floats(0.5, 1.0), st.floats(1.0, 2.0), _AT_MOST, _AT_LEAST)
def test_a_bound_is_checked_as_a_bound(value: int, below: float, above: float, at_most: str, at_least: str) -> None:
    """ "不到 10 分钟" / "under 10%" is a value up to it (from half of it); "超过 200" from it up to
    twice it: a true bound is found, the other side is not."""
    low, high = int(value * below), int(value * above) + 1
    assume(value / 2 + 1 < low < value - 1 and value + 1 < high < value * 2 - 1)
    assert _grounded(f"耗时{at_most}{value}ms", f"cost={low}ms")
    assert not _grounded(f"耗时{at_most}{value}ms", f"cost={high}ms")
    assert _grounded(f"耗时{at_least}{value}ms", f"cost={high}ms")
    assert not _grounded(f"耗时{at_least}{value}ms", f"cost={low}ms")


@given(st.integers(2, 99), st.sampled_from(["小时", "分钟", "秒"]))
def test_a_measure_word_before_a_unit_is_no_count(value: int, unit: str) -> None:
    """ "50 个小时" is 50 hours, not 50 of something."""
    seconds = value * {"小时": 3600, "分钟": 60, "秒": 1}[unit]
    assert _grounded(f"持续了 {value} 个{unit}", f"duration={seconds}s")
    assert not _grounded(f"持续了 {value} 个{unit}", f"duration={seconds * 3}s")


@given(
    clocks,
    st.sampled_from([("+08:00", 8), ("+0530", 5.5), ("-05:00", -5), ("+02:00", 2)]),
    st.sampled_from(["{t} UTC", "UTC {t}", "{t}Z", "{t} (UTC)"]),
)
def test_an_output_clock_with_an_offset_is_an_instant(
    clock: tuple[int, int], offset: tuple[str, float], form: str
) -> None:
    """``22:10+08:00`` in an output is 14:10 UTC: a claim saying "14:10 UTC" is right, one calling
    the local face "22:10 UTC" is not; a claim without a zone reads the face as written."""
    hour, minute = clock
    written, hours = offset
    local = datetime(2026, 7, 7, hour, minute)
    output = f"{local:%Y-%m-%dT%H:%M:%S}{written} ERROR gateway upstream timeout"
    utc = local - timedelta(hours=hours)
    assert _grounded(f"网关在 {form.format(t=f'{utc:%H:%M}')} 超时", output)
    assert not _grounded(f"网关在 {form.format(t=f'{local:%H:%M}')} 超时", output)
    assert _grounded(f"网关在 {local:%H:%M} 超时", output)


def _part(hour: int) -> str:
    return "凌晨" if hour < 6 else "上午" if hour < 12 else "中午" if hour == 12 else "下午" if hour < 18 else "晚上"


@given(clocks, st.integers(1, 3), st.sampled_from(["digital", "words"]), st.sampled_from(["到", "至", " - ", "～"]))
def test_a_range_after_a_part_of_the_day_reads_both_ends_in_it(
    clock: tuple[int, int], later: int, form: str, joiner: str
) -> None:
    """下午 1:50 到 2:55, 晚上 8 点到 9 点: the part of the day before a range holds for both ends."""
    hour, minute = clock
    end_hour = hour + later
    assume(hour >= 13 and end_hour <= 23 and _part(hour) == _part(end_hour))
    output = f"2026-07-07T{hour:02d}:{minute:02d}:00Z start\n2026-07-07T{end_hour:02d}:{minute:02d}:00Z end"
    h, e = hour - 12, end_hour - 12
    written = (
        f"{_part(hour)} {h}:{minute:02d}{joiner}{e}:{minute:02d}"
        if form == "digital"
        else f"{_part(hour)}{h}点{minute}分{joiner}{e}点{minute}分"
    )
    assert _grounded(f"{written} 负载持续偏高", output)
    wrong = f"2026-07-07T{hour:02d}:{minute:02d}:00Z start\n2026-07-07T{e:02d}:{minute:02d}:00Z end"
    assert not _grounded(f"{written} 负载持续偏高", wrong)  # the morning reading of the end is not it


@given(clocks, st.integers(0, 59))
def test_a_clock_rounded_to_the_minute_is_the_clock_to_the_second(clock: tuple[int, int], second: int) -> None:
    """14:27:56 said as 14:28 (rounded) or 14:27 (cut): both the time of the line; 14:27:16 is
    not 14:28."""
    hour, minute = clock
    output = f"2026-07-07T{hour:02d}:{minute:02d}:{second:02d}Z last error"
    later = (hour * 60 + minute + 1) % 1440
    assert _grounded(f"最后一条错误在 {hour:02d}:{minute:02d}", output)
    assert _grounded(f"最后一条错误在 {later // 60:02d}:{later % 60:02d}", output) is (second >= 30)


@given(
    st.integers(2, 9),
    st.sampled_from(["前{n}条告警", "the first {n} lines", "最后 {n} 条日志", "第 {n} 次重启", "top {n} errors"]),
)
def test_a_selection_is_no_count(n: int, form: str) -> None:
    """ "前两条" names which lines, not how many there were: no count to find; "共 N 条" is one."""
    assert not [e for e in extract_entities(form.format(n=n)) if e.kind == "quantity"]
    assert [e for e in extract_entities(f"共 {n} 条") if e.kind == "quantity"]


@given(
    st.integers(1, 5000),
    st.integers(1, 5000),
    st.sampled_from(["挂起连接冲到了 {v}", "pending connections peaked at {v}", "峰值 {v}", "then reached {v}"]),
)
def test_a_bare_value_after_a_value_word_is_a_fact(stated: int, other: int, form: str) -> None:
    """ "冲到了 73" for a peak of 37 is a wrong number, though written without a unit."""
    output = f"window: min 0, max {stated} (30 points); peak {stated} at 2026-07-07T10:17:00Z"
    assume(stated != other and str(other) not in output and str(stated) not in "2026-07-07 10:17 30")
    assert _grounded(form.format(v=stated), output)
    assert not _grounded(form.format(v=other), output)


_VALUE_WORDS = sorted(bundled_words("veridiag.text", "units.yaml", UnitWords).value_words, key=str)


@given(
    st.integers(1, 5000),
    st.integers(1, 5000),
    st.sampled_from(_VALUE_WORDS),
    st.sampled_from(["it {w} {v}", "队列{w} {v}", "after the peak it was still {v}"]),
)
def test_every_value_word_makes_the_bare_number_after_it_a_fact(stated: int, other: int, word: str, form: str) -> None:
    """A copula states a value as much as a verb of motion: "five minutes after the peak it was
    still 338" beside the point that says 256 is a wrong number. Each word of the list, not the
    ones a test names."""
    output = f"window: min 0, max {stated} (30 points); peak {stated} at 2026-07-07T10:17:00Z"
    assume(stated != other and str(other) not in output and str(stated) not in "2026-07-07 10:17 30")
    assert _grounded(form.format(w=word, v=stated), output)
    assert not _grounded(form.format(w=word, v=other), output)


_VALUE_ADVERBS = sorted(bundled_words("veridiag.text", "units.yaml", UnitWords).value_adverbs, key=str)


@given(
    st.integers(1, 5000),
    st.integers(1, 5000),
    st.sampled_from(_VALUE_WORDS),
    st.lists(st.sampled_from(_VALUE_ADVERBS), min_size=1, max_size=2),
    st.sampled_from(["it {w} {v}", "队列{w} {v}", "right then the value {w} {v}."]),
)
@example(2415, 4215, "was", ["already"], "right then the value {w} {v}.")
def test_an_adverb_between_a_value_word_and_its_number_keeps_it_a_fact(
    stated: int, other: int, word: str, adverbs: list[str], form: str
) -> None:
    """ "the value was already 42.15" (the output says 24.15) is a wrong number: "already",
    "still", 仍然 … between the value word and the number change nothing it states."""
    output = f"window: min 0, max {stated} (30 points); peak {stated} at 2026-07-07T10:17:00Z"
    assume(stated != other and str(other) not in output and str(stated) not in "2026-07-07 10:17 30")
    words = " ".join([word, *adverbs])
    assert _grounded(form.format(w=words, v=stated), output)
    assert not _grounded(form.format(w=words, v=other), output)


@given(st.sampled_from(_VALUE_WORDS), st.integers(1, 9999), st.sampled_from("KMGTmk"))
def test_letters_glued_to_a_number_are_no_bare_value(word: str, number: int, letter: str) -> None:
    """ "回收后反而是 1950M" is a size the GC line writes, no count 1950 to find bare."""
    assert not [e for e in extract_entities(f"回收后反而{word} {number}{letter}") if e.dimension == "count"]


@given(
    st.lists(st.integers(0, 255), min_size=4, max_size=4),
    st.sampled_from([".", "。", ")", "", ", then", "!"]),
)
def test_an_address_ending_a_sentence_is_an_address(parts: list[int], after: str) -> None:
    """ "… was 10.100.0.250." — the full stop is the sentence's, not a fifth part of the address."""
    address = ".".join(map(str, parts))
    found = extract_entities(f"The client was requesting {address}{after}")
    assert [e.text for e in found if e.kind == "identifier"] == [address]


@given(
    st.sampled_from("bmrtxq"),
    st.integers(100, 999999),
    st.sampled_from(["merchant {id}", "batch {id} failed", "{id} 超时"]),
)
def test_one_letter_before_a_dash_and_digits_names_an_id(letter: str, number: int, form: str) -> None:
    """ "merchant m-40281" is an id (a swapped one is a wrong fact; in capitals, "E-100", a code);
    "p99" is a percentile."""
    name = f"{letter}-{number}"
    assert [e.text for e in extract_entities(form.format(id=name)) if e.kind == "identifier"] == [name]
    assert not [e for e in extract_entities(f"p{number % 100} latency rose") if e.kind == "identifier"]


@given(
    st.integers(60, 22 * 60),
    st.integers(5, 120),
    st.integers(1, 14),
    st.sampled_from(["{a} 到 {b} 共有 30 条告警", "between {a} and {b} there were 30 warnings", "{a}–{b} 有 30 条"]),
)
def test_a_range_rounded_outward_around_its_lines_is_their_range(
    first: int, span: int, rounding: int, form: str
) -> None:
    """Lines from 00:00:20 to 00:14:15 said as "0 点到 0 点 15 分": a range's end may be rounded
    outward to the next five-minute mark within five minutes; further, or to a clock no one
    rounds to, it is another time; a range that holds none of the lines is not theirs."""
    last = first + span
    since, until = f"{first // 60:02d}:{first % 60:02d}:20", f"{last // 60:02d}:{last % 60:02d}:15"
    output = f"bursts: 2026-07-07T{since}Z – 2026-07-07T{until}Z (30 lines)"
    end = last + rounding

    def clock(minute: int) -> str:
        return f"{minute // 60:02d}:{minute % 60:02d}"

    rounded = end % 5 == 0 and rounding <= 5
    assert _grounded(form.format(a=clock(first), b=clock(end)), output) is rounded
    assert not _grounded(form.format(a=clock(first), b=clock(last + 20)), output)
    assert not _grounded(form.format(a=clock(last + 20), b=clock(last + 30)), output)


@given(
    st.integers(0, 86399),
    st.integers(1, 96),
    st.sampled_from(["lasted about {h} hours", "持续了约 {h} 小时", "{h} hours later it ended"]),
)
def test_a_duration_between_dated_times_is_the_instants_difference(start: int, hours: int, form: str) -> None:
    """20:00 on the 21st to 13:00 on the 23rd is 41 h — not 17 h, nor the 4 h two times of day of
    other days happen to be apart."""
    first = datetime(2013, 12, 21, tzinfo=UTC) + timedelta(seconds=start)
    second = first + timedelta(hours=hours)
    line = f"anomaly 1: {first:%Y-%m-%dT%H:%M:%S}Z – {second:%Y-%m-%dT%H:%M:%S}Z up"
    evidence = Corpus([line])
    (right,) = extract_entities(form.format(h=hours))
    assert derived_duration(right, form.format(h=hours), evidence)
    day_apart = (hours % 24) or 24
    if day_apart != hours:
        (clock_only,) = extract_entities(form.format(h=day_apart))
        assert not derived_duration(clock_only, form.format(h=day_apart), evidence)


@given(st.integers(0, 1439), st.integers(1, 30))
def test_times_of_day_without_dates_are_apart_the_short_way_round_midnight(minute: int, apart: int) -> None:
    first = datetime(2026, 7, 7, tzinfo=UTC) + timedelta(minutes=minute)
    second = first + timedelta(minutes=apart)
    evidence = Corpus([f"{first:%H:%M} deploy", f"{second:%H:%M} ERROR"])
    claim = f"{apart} 分钟后开始报错"
    (duration,) = extract_entities(claim)
    assert derived_duration(duration, claim, evidence)


@given(
    st.integers(1000, 9_999_999),
    st.sampled_from(["failed {n} times", "共 {n} 次", "matched {n} lines", "reached {n}, then fell"]),
)
def test_digits_grouped_in_thousands_are_one_number(n: int, form: str) -> None:
    """Also before a sentence's comma ("grew from 12,800 to 31,020, roughly 2.4×")."""
    grouped = f"{n:,}"
    assert _grounded(form.format(n=grouped), f"query matched {n} lines, {n} times")
    assert _grounded(form.format(n=n), f"query matched {grouped} lines, {grouped} times")
    tail = int(grouped.rsplit(",", 1)[1]) or 1  # the last group alone: another number
    assert not _grounded(form.format(n=tail), f"query matched {n} lines")


@given(st.integers(64, 8191), st.sampled_from(["Ki", "Mi", "Gi"]))
def test_a_binary_size_written_apart_is_its_unit(value: int, letter: str) -> None:
    output = f"2026-07-07T10:00:00Z {value} {letter}"
    assert _grounded(f"used {value} {letter}B", output)
    assert not _grounded(f"used {value + 7} {letter}B", output)


@given(
    st.integers(0, 1300),
    st.integers(3, 12),
    st.sampled_from([1, 5]),
    st.sampled_from(["stayed above 88% for {d} minutes ({a}–{b})", "{a}–{b} 期间持续了 {d} 分钟"]),
)
def test_a_series_points_each_stand_for_their_step(start: int, points: int, step: int, form: str) -> None:
    """Points of a series ``step`` minutes apart: a run of ``points`` of them from a to b lasted
    between (points - 1) and (points + 1) steps — "three minutes (04:37–04:39)" of a minutely
    series is honest; a duration beyond that span is no derivation of them."""
    first = datetime(2026, 7, 7, tzinfo=UTC) + timedelta(minutes=start)
    rows = [f"{first + timedelta(minutes=step * i):%Y-%m-%dT%H:%M}:00Z 91.2%" for i in range(points)]
    evidence = Corpus(["points:", *rows])
    a, b = first, first + timedelta(minutes=step * (points - 1))

    def derived(minutes: int) -> bool:
        claim = form.format(d=minutes, a=f"{a:%H:%M}", b=f"{b:%H:%M}")
        duration = next(e for e in extract_entities(claim) if e.dimension == "time")
        return derived_duration(duration, claim, evidence)

    assert derived(step * (points - 1)) and derived(step * points)
    assert not derived(step * (points + 1))


@given(
    st.sampled_from(["line", "restart", "error", "request", "retry", "pod", "instance", "point"]),
    st.integers(2, 9),
)
def test_a_count_of_one_in_the_singular_is_a_count(noun: str, other: int) -> None:
    """The tools write "(1 line)", "1 restart in total": one of a thing is a count as "3 restarts" is."""
    output = f"increases per 1m: 1 {noun} in total, 1 step rose"
    assert _grounded(f"the window held 1 {noun}", output)
    assert not _grounded(f"the window held 1 {noun}", output.replace("1 ", f"{other} "))


@given(
    st.integers(100, 90_000),
    st.integers(1, 900),
    st.integers(1, 50),
    st.sampled_from(
        ["the step count rose by {d} steps", "计数器增加了 {d}", "it went up {d}", "bumped the counter by {d}"]
    ),
    st.booleans(),
)
def test_a_bare_change_is_the_difference_of_two_bare_readings(
    first: int, change: int, off: int, form: str, example: bool
) -> None:
    """ "rose by 47 steps" of "onStandStepChanged 3579" then "3626" (the first, perhaps, as a log
    pattern's example); "bumped the counter by 2" of readings one apart is a wrong number, though
    neither is written with a unit — nor is "by 2" any two numbers of one line ("3 in total … +1")."""
    lines = [
        ("     e.g. " if example else "") + f"20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged {first}",
        f"20171223-22:15:59:849|Step_LSC|30002312|onStandStepChanged {first + change}",
    ]
    output = "\n".join(lines)
    wrong = change + off
    assume(all(str(v) not in output for v in (wrong,)))
    assert _grounded(form.format(d=change), output)
    assert not _grounded(form.format(d=wrong), output)
    assert not _grounded(form.format(d=2), "increases per 1m: 3 restarts in total, 3 steps rose: +1 at 12:01")


@given(
    st.integers(20, 3999),
    st.sampled_from(["about {c} core", "约 {c} 核", "roughly {c} cores", "大约 {c} vCPU"]),
    st.sampled_from(["{v} m", "{v}m"]),
)
def test_millicores_are_a_thousandth_of_a_core(milli: int, form: str, written: str) -> None:
    """ "448.24 m, about 0.45 core": Kubernetes' millicores read as cores, so a conversion holds
    and "from 5.64 to about 500 cores" (a thousand times too many) does not."""
    value = Decimal(milli) + Decimal("0.24")
    output = f"2023-01-29T14:24:11Z {written.format(v=value)}"
    cores = (value / 1000).quantize(Decimal("0.01") if milli >= 100 else Decimal("0.001"))
    assert _grounded(form.format(c=cores), output), (form.format(c=cores), output)
    assert not _grounded(form.format(c=milli), output)


@given(
    st.integers(1, 5000),
    st.integers(1, 5000),
    st.sampled_from(["峰值 {v} 出现在 10:17", "冲到了 {v} 左右", "仍为 {v}，没有回落"]),
)
def test_a_value_followed_by_chinese_is_still_a_value(stated: int, other: int, form: str) -> None:
    """ "峰值 12.5 出现在 10:17": the Chinese after the number is no unit of it; "504 的根因", "4.8 到
    5.3 秒" and "5 倍" are no bare values (an attribute, a range's first end, a ratio)."""
    output = f"window: min 0, max {stated} (30 points); peak {stated} at 2026-07-07T10:17:00Z"
    assume(abs(stated - other) > stated / 4 and abs(other - 30) > other / 4)  # "(30 points)" is a count too
    assume(str(other) not in output and str(stated) not in "2026-07-07 10:17 30")
    assert _grounded(form.format(v=stated), output)
    assert not _grounded(form.format(v=other), output)
    for attribute in ("这是 {v} 的根因", "都在 {v} 到 {w} 秒之间", "达到 {v} 倍"):
        assert not [e for e in extract_entities(attribute.format(v=other, w=other + 1)) if e.dimension == "count"]


_STATUS_VERBS = sorted(bundled_words("veridiag.text", "entities.yaml", EntityWords).status_verbs, key=str)


@given(
    st.sampled_from(_STATUS_VERBS),
    st.data(),
    st.sampled_from([(403, 404), (502, 504), (500, 503), (429, 401)]),
    st.sampled_from(["。", ".", " from the proxy", " 错误", " error"]),
)
def test_a_status_a_verb_returns_is_a_status_of_the_line_it_quotes(
    verb: str, data: st.DataObject, codes: tuple[int, int], after: str
) -> None:
    """ "代理返回 403" quoting a line with no 403 (the only 403 on another program's line) names a
    status its line does not hold: the object of "returned", "got", 返回 … is an HTTP status."""
    article = data.draw(st.sampled_from(["", "a ", "an ", "HTTP ", "status "] if verb.isascii() else ["", "HTTP "]))
    written, other = codes
    claim = f"Dropbox 连接失败，代理{verb} {article}{written}{after}"
    found = [e for e in extract_entities(claim) if e.kind == "error_code"]
    assert [e.text for e in found] == [str(written)], claim
    assert Corpus([f"GET /sync status={written} bytes=0"]).contains(found[0])
    assert not Corpus([f"GET /sync status={other} bytes=0"]).contains(found[0])


@given(
    st.sampled_from(_STATUS_VERBS),
    st.integers(100, 599),
    st.sampled_from(["rows", "lines", "ms", "MB", "条", "个", "次", "秒", "%"]),
)
def test_a_number_a_verb_returns_with_a_unit_or_plural_is_no_status(verb: str, number: int, unit: str) -> None:
    """ "returned 120 rows", "返回了 500 条", "returned 200 ms later": a count or a measure."""
    claim = f"the query {verb} {number} {unit} later"
    assert not [e for e in extract_entities(claim) if e.kind == "error_code"], claim


@given(st.dates(date(2001, 1, 1), date(2030, 12, 31)), st.integers(1, 27), st.sampled_from(["zh", "en"]))
def test_a_day_run_together_before_its_clock_is_that_day(day: date, shift: int, lang: str) -> None:
    """HealthApp writes ``20171223-22:19:58:380|…``: "12 月 23 日 22:19:58" is that line's day, the
    next or any other day is not."""
    line = f"{day:%Y%m%d}-22:19:58:380|HiH_HiHealthDataInsertStore|30002312|saveOneDetailData fail"
    other = day + timedelta(days=shift)

    def written(on: date) -> str:
        return f"{on.month} 月 {on.day} 日写入失败" if lang == "zh" else f"the write failed on {on:%b} {on.day}"

    (stated,) = [e for e in extract_entities(written(day)) if e.kind == "date"]
    (shifted,) = [e for e in extract_entities(written(other)) if e.kind == "date"]
    assert Corpus([line]).contains(stated), (line, stated)
    assert not Corpus([line]).contains(shifted), (line, shifted)


@given(
    st.integers(10, 400),
    st.integers(1, 50),
    st.sampled_from([("ms", Decimal("0.001")), ("%", None), ("秒", Decimal(1)), ("MB", None)]),
    st.sampled_from(["–", "-", "~", " – "]),
    st.sampled_from(["p90 始终在 {r}。", "it was {r} throughout", "值为 {r}"]),
)
def test_a_ranges_first_end_has_its_ends_unit(
    low: int, width: int, unit: tuple[str, Decimal | None], dash: str, form: str
) -> None:
    """ "p90 始终在 4.6–4.7 ms" quoting 0.0046s and 0.0047s: the range's first end is 4.6 ms, not a
    bare 4.6 looked for as written; a first end its lines do not hold is still caught."""
    spelling, seconds = unit
    high = low + width

    def written(value: int) -> str:  # milliseconds as the tool writes them, in seconds
        return f"{value * seconds:f}s" if seconds is not None and spelling != "秒" else f"{value}{spelling}"

    output = "\n".join(f"2022-08-22T07:{i:02d}:20Z {written(v)}" for i, v in enumerate([low, high]))
    assert _grounded(form.format(r=f"{low}{dash}{high} {spelling}"), output), output
    assume(low * 3 + 1 != high)  # else the "wrong" first end is the output's other value (67–67 ms)
    # nor the end read the other way ("61 MB" is 64 MB in MiB: a size is read both ways)
    assume(spelling != "MB" or abs((low * 3 + 1) * Decimal("1.048576") - high) > 1)
    assert not _grounded(form.format(r=f"{low * 3 + 1}{dash}{high} {spelling}"), output), output


@given(
    st.integers(1, 4999),
    st.integers(0, 99),
    st.sampled_from(["CPU 仍有 {v}", "cpu was {v} at 14:53", "CPU 降到 {v}，随后回升"]),
    st.sampled_from(["{n}m", "{n} m"]),
    st.integers(1, 9),
)
def test_a_letter_glued_to_a_claims_number_is_checked(
    whole: int, hundredths: int, form: str, written: str, off: int
) -> None:
    """ "CPU 仍有 427.52m": a claim's millicores (glued or apart, as our outputs write them) were no
    fact at all, so a wrong "472.52m" went unchecked. Each reading the letter allows is tried: the
    value is found as the output writes it, in cores, and not one that is off."""
    value = Decimal(whole) + Decimal(hundredths) / 100
    wrong = value + off * (10 ** len(str(whole)) // 10)  # a leading digit off
    output = f"query_metrics unit=m\n    2023-01-29T14:53:09Z {value} m\n"
    assume(str(wrong) not in output)
    for stated in (written.format(n=value), f"{(value / 1000).normalize()} cores"):
        assert _grounded(form.format(v=stated), output), (stated, output)
    assert not _grounded(form.format(v=written.format(n=wrong)), output)


@given(
    st.integers(1024, 4095),
    st.sampled_from(["heap went up to {v}", "heap rose up to {v}", "堆用到了 {v}", "Full GC 后仍占 {v}"]),
    st.integers(1, 9),
)
@example(3897, "heap went up to {v}", 9)  # 3906M read in MiB is 4096M read in MB: one letter, one unit
def test_a_size_letter_glued_to_a_claims_number_is_checked(mib: int, form: str, off: int) -> None:
    """ "堆用到了 1950M" of a GC line "1931M->1950M(2048M)": a size written as the JVM writes it is
    found as written and in GB, and a digit off ("2950M", "1959M") is not — nor is "went up to
    2024M" of 1024M a bound ("up to") its half meets: the value it went to."""
    output = f"Full GC (Allocation Failure) 1024M->{mib}M(4096M), 2.31 secs"
    for wrong in (mib + 1000 * off, mib + off):
        assume(f"{wrong}M" not in output and wrong != 4096)
        assert not _grounded(form.format(v=f"{wrong}M"), output)
    assert _grounded(form.format(v=f"{mib}M"), output)
    gib = (Decimal(mib) / 1024).quantize(Decimal("0.01"))
    assert _grounded(form.format(v=f"约 {gib} GiB"), output)


@given(
    st.integers(100, 999),
    st.integers(1, 60),
    st.sampled_from(["{l} m", "{l} ms"]),
    st.booleans(),
)
def test_within_a_bound_of_a_cited_value_is_a_difference(level: int, apart: int, unit: str, honest: bool) -> None:
    """ "back to 1.52 m, within 0.1 m of the 1.43 m median": a bound on a difference, computed from
    the two values (no tool writes 0.1); a bound the two values break is not stated."""
    median, now = Decimal(level) / 100, (Decimal(level) + apart) / 100
    output = f"history: median {unit.format(l=median)}\n2023-01-29T07:07:20Z {unit.format(l=now)}"
    gap = Decimal(apart) / 100
    bound = (gap + Decimal("0.01")) if honest else (gap / 2).quantize(Decimal("0.001"))
    assume(honest or bound * 2 < gap)
    at, within, of = unit.format(l=now), unit.format(l=bound), unit.format(l=median)
    claim = f"By 07:07:20 it was back to {at}, within {within} of the {of} median."
    assert _grounded(claim, output) is honest, claim


@given(st.integers(10, 99), st.sampled_from(["{v} m", "{v}m", "{v}M", "{v}K"]), st.booleans())
def test_a_number_with_a_letter_is_no_bare_percentage(value: int, written: str, cpu_word: bool) -> None:
    """ "115.64 m" is millicores and "64M" a size: neither is the bare number a percentage may be
    found as in a small output, while a bare "64" still is."""
    claim = f"{'CPU' if cpu_word else 'disk'} usage was {value}%"
    assert not _grounded(claim, f"2023-01-29T14:54:09Z {written.format(v=value)}")
    assert _grounded(claim, f"2023-01-29T14:54:09Z usage {value}")


@given(
    st.integers(2, 40), st.integers(1, 30), st.sampled_from(["{a}–{b}m", "{a}~{b} m", "{a}-{b}M"]), st.integers(3, 9)
)
def test_a_ranges_first_end_takes_its_ends_letter(low: int, spread: int, form: str, off: int) -> None:
    """ "升到 15–18m": the first end is 15 millicores as the end is (it was read as a bare count 15,
    found nowhere); a first end off by a digit is not found."""
    high = low + spread
    letter = form[-1]
    output = (
        f"2023-08-22T07:31:09Z {low}.2{' ' if letter == 'm' else ''}{letter}\n2023-08-22T07:32:09Z {high}.16 {letter}"
    )
    output = output.replace(f" {letter}", letter) if letter != "m" else output
    claim = f"同一时段 CPU 升到 {form.format(a=low, b=high)}"
    assert _grounded(claim, output), (claim, output)
    wrong = low * off + 100
    assert not _grounded(f"同一时段 CPU 升到 {form.format(a=wrong, b=high)}", output)


@given(
    st.integers(2, 5000),
    st.sampled_from(["{v} requests per second", "{v} req/s", "每秒 {v} 个请求", "{v} per minute"]),
)
def test_a_bare_number_states_no_rate(value: int, form: str) -> None:
    """ "At the peak the ELB was serving 369 requests per second" of a series whose points are bare
    (requests per 5-minute step): a bare number says per what nowhere, so no rate; a number written
    with its rate's unit does."""
    claim = f"At the peak the ELB was serving {form.format(v=value)}."
    assert not _grounded(claim, f"window: min 16, max {value}\n2014-04-16T20:54:00Z {value}")
    if "minute" not in form:
        assert _grounded(claim, f"2014-04-16T20:54:00Z {value} req/s")


@given(st.sampled_from(["三天", "3 天", "3 days"]))
def test_a_day_is_a_duration_not_a_bare_count(days: str) -> None:
    """ "三天里最高与最低相差约 6.3 °F" read 三天 as a bare 3, "contradicted" by the output's other
    numbers: it is a duration, three days."""
    (fact,) = [e for e in extract_entities(f"{days}里最高与最低相差很小") if e.kind == "quantity"]
    assert fact.dimension == "time" and fact.value is not None and fact.value * (fact.factor or 0) == 3 * 86400


@given(
    st.integers(0, 59), st.integers(1, 59), st.sampled_from(["只存活了 {d}", "it lived for {d}", "lifetime was {d}"])
)
def test_a_clock_face_after_lifetime_is_a_duration(minutes: int, seconds: int, form: str) -> None:
    """Proxifier's "lifetime 00:07" is 7 seconds ("lifetime 14:59": minutes and seconds): "只存活了 7
    秒" states it (it was a clock no claim's duration met), a duration off by a second does not."""
    line = "[07.26 17:23:53] chrome.exe *64 - mtalk.google.com:443 close, 696 bytes sent"
    output = f"{line}, lifetime {minutes:02d}:{seconds:02d}"
    total = minutes * 60 + seconds
    assert _grounded(form.format(d=f"{total} 秒" if "存活" in form else f"{total} seconds"), output)
    assert not _grounded(form.format(d=f"{total + 1} 秒" if "存活" in form else f"{total + 1} seconds"), output)


@given(st.integers(0, 9), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999), st.integers(1, 9))
def test_a_clock_with_an_unpadded_hour_and_colon_milliseconds_is_that_clock(
    hour: int, minute: int, second: int, millis: int, off: int
) -> None:
    """HealthApp's "20171224-0:32:28:806" is 00:32:28.806 (its hour unpadded, a colon before its
    milliseconds): the claim's clock states it, one a few milliseconds off does not."""
    output = f"20171224-{hour}:{minute:02d}:{second:02d}:{millis:03d}|HiH_HiSyncControl|30002312|startSync"
    assert _grounded(f"the retry at {hour:02d}:{minute:02d}:{second:02d}.{millis:03d}", output)
    wrong = (millis + off) % 1000
    assume(wrong != millis)
    assert not _grounded(f"the retry at {hour:02d}:{minute:02d}:{second:02d}.{wrong:03d}", output)
