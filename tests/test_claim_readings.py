"""A claim is judged in its own reading (issue 27, deliverables 2 and 3): a value is checked at the
clock it is given at, a direction at the time it is given, an ordinal by date then clock, and an
absolute over what the claim's own numbers compute — each wrong variant still caught."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from tests.test_stated_content import _outcome
from veridiag.agents.offline.verifier import OfflineVerifier, verifier_wording
from veridiag.contracts import InMemoryInvocations
from veridiag.contracts.material import ExecutorMaterial
from veridiag.gatekeeper import Gatekeeper
from veridiag.text.concepts import concepts


def _quoting(text: str, *quoted: tuple[str, str]) -> tuple[str, str]:
    """The ``claim.stated_content`` outcome of a claim quoting each ``(output, excerpt)`` in a binding
    of its own, each distinct output one invocation."""
    ids = {output: 394 + i for i, output in enumerate(dict.fromkeys(output for output, _ in quoted))}
    report = Gatekeeper().validate(
        v2([claim(text=text, bindings=[binding([ids[output]], excerpt) for output, excerpt in quoted])]),
        session_id=SESSION,
        invocations=InMemoryInvocations([invocation(i, output=output) for output, i in ids.items()]),
    )
    checks = [c for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    return (checks[0].outcome, checks[0].reason) if checks else ("pass", "nothing to judge")


# --- a value is the level at its clock, not a ratio, a reference or a span between two times ------


def _series(values: list[int], unit: str) -> str:
    points = "\n".join(f"2026-07-07T10:{i:02d}:00Z {v}{unit}" for i, v in enumerate(values))
    return f"query_metrics service=mysql metric=m\npoints:\n{points}"


#: What a claim may write beside the value at its clock, by the series' unit: a span between two
#: times ("about 90 seconds before the anomaly"), a ratio ("twelve times the usual 8"), a reference
#: ("against a usual 8 threads") — none of them a value at the clock.
_BESIDE = st.one_of(
    st.tuples(
        st.just("s"),
        st.sampled_from(
            [
                "about {d} seconds before the lock-wait anomaly began",
                "{d} seconds after the deploy",
                "lasting {d} seconds",
                "{d} 秒后告警触发",
                "持续了约 {d} 秒",
            ]
        ),
    ),
    st.tuples(
        st.just(" threads"),
        st.sampled_from(
            [
                "{n} times the usual {b}",
                "{n} times higher than the usual {b} threads",
                "against a usual {b} threads",
                "平时 {b} 个",
                "expected {b} threads",
            ]
        ),
    ),
)


@given(st.lists(st.integers(20, 60), min_size=3, max_size=8), st.data(), _BESIDE)
def test_a_value_is_the_level_at_its_clock(values: list[int], data: st.DataObject, beside: tuple[str, str]) -> None:
    """ "At 14:58:30 a job started …, about 90 seconds before the anomaly" was contradicted by the
    lock-wait series' 0.08 s at 14:58, "threads peaked at 96 at 15:18, twelve times the usual 8" by
    the point 96: the span or the ratio was read as the value at the clock. The level beside them
    is the one checked: a wrong one still contradicts."""
    unit, template = beside
    at = data.draw(st.integers(0, len(values) - 1))
    points = "\n".join(f"2026-07-07T10:{i:02d}:00Z {v}{unit}" for i, v in enumerate(values))
    output, line = (
        f"query_metrics service=mysql metric=m\npoints:\n{points}",
        f"2026-07-07T10:{at:02d}:00Z {values[at]}{unit}",
    )
    other = data.draw(st.integers(2, 19).filter(lambda n: n != values[at]))
    tail = template.format(d=other * 7, n=other, b=other)
    for level in ("", f"was {values[at]}", f"was {values[at]}{unit}"):
        _, reason = _outcome(f"At 10:{at:02d}:30 the job ran, it {level}, {tail}", output, line)
        assert not reason.startswith("contradicts"), reason
    outcome, reason = _outcome(f"At 10:{at:02d} it was {values[at] + 100}{unit}, {tail}", output, line)
    assert outcome == "fail" and "the cited series is" in reason, reason


# --- a first or last is placed by date, then clock ------------------------------------------------


@given(
    st.integers(20 * 60, 23 * 60 + 50),
    st.integers(0, 3 * 60),
    st.integers(3, 40),
    st.sampled_from(["The latest {c} came at {t}", "{c} 最后一次在 {t}", "最后一条 {c} 在 {t}"]),
    st.sampled_from(["SCREEN_OFF", "ERR_TIMEOUT"]),
)
def test_a_last_across_midnight_is_the_next_days(start: int, end: int, count: int, form: str, code: str) -> None:
    """ "SCREEN_OFF 最后一次在 00:28:48" of a template line 22:15:34Z – next day 00:28:48Z was
    contradicted by its 22:15 (the first clock of the line, compared by the clock of the day); a
    last at a clock before the line's last one still is."""

    def clock(minute: int) -> str:
        return f"{minute // 60:02d}:{minute % 60:02d}"

    template = f"  {count}× INFO 2017-12-23T{clock(start)}:34Z – 2017-12-24T{clock(end)}:48Z onReceive action: {code}"
    example = f"     e.g. 20171223-{clock(start)}:34:723|Step_StandReportReceiver|30002312|onReceive action: {code}"
    last = f"20171224-{clock(end)}:48:001|Step_StandReportReceiver|30002312|onReceive action: {code}"
    head = f"query_logs service=healthapp\nmatched {count} lines (INFO {count})"
    output = f"{head}\ntemplates:\n{template}\n{example}\nlines:\n{last}"
    _, reason = _outcome(form.format(c=code, t=f"{clock(end)}:48"), output, template.strip())
    assert not reason.startswith("contradicts"), reason
    outcome, reason = _outcome(form.format(c=code, t=f"{clock(start)}:34"), output, template.strip())
    assert outcome == "fail" and "its cited output shows" in reason, reason


# --- a direction is of the time the claim gives it -------------------------------------------------

_FALLS = st.sampled_from(
    ["{t} 回落到 {v}%", "CPU dropped to {v}% at {t}", "{t} CPU 降至 {v}%", "at {t} it fell to {v}%"]
)


@given(st.integers(3, 12), st.integers(1, 6), st.data(), _FALLS, st.sampled_from([("", 0), ("北京时间 ", 8 * 60)]))
def test_a_fall_after_an_up_episode_is_of_its_own_time(
    length: int, after: int, data: st.DataObject, form: str, zone: tuple[str, int]
) -> None:
    """ "CPU 异常持续了约 5 分钟（12:45 到 12:50），12:51 回落到 8.37%" was contradicted by the quoted
    anomaly line's "up" (04:45–04:50Z): the fall is of 12:51, after the episode. A fall given a time
    inside it still contradicts."""
    named, offset = zone
    start, end = 4 * 60 + 45, 4 * 60 + 45 + length
    levels = {m: 6 for m in range(start - 5, end + after + 3)}
    levels |= {m: 60 + 3 * (m - start) for m in range(start, end + 1)}
    levels[end + 1] = 20

    def utc(minute: int) -> str:
        return f"2022-08-22T{minute // 60:02d}:{minute % 60:02d}:19Z"

    def written(minute: int) -> str:
        local = minute + offset
        return f"{named}{local // 60:02d}:{local % 60:02d}"

    episode = f"anomaly 1: {utc(start)} – {utc(end)} ({length + 1} points, {length} min) up"
    points = "\n".join(f"{utc(m)} {v}%" for m, v in sorted(levels.items()))
    output = f"query_metrics service=checkout metric=cpu\n{episode}\npoints:\n{points}"
    at = end + after
    outcome, reason = _quoting(
        form.format(t=written(at), v=levels[at]), (output, episode), (output, f"{utc(at)} {levels[at]}%")
    )
    assert not reason.startswith("contradicts"), reason
    if after == 1:
        assert outcome == "pass", reason  # the quoted point fell from the one before: stated
    inside = data.draw(st.integers(start + 1, end))
    point = f"{utc(inside)} {levels[inside]}%"
    outcome, reason = _quoting(form.format(t=written(inside), v=levels[inside]), (output, episode), (output, point))
    assert outcome == "fail" and "its quoted lines say up" in reason, reason


# --- "no errors" is contradicted by error lines, not by any line ---------------------------------

_DENIALS = st.sampled_from(
    [
        ("and no errors", "error"),
        ("with no ERROR lines", "error"),
        ("，没有错误日志", "error"),
        ("，没有任何报错", "error"),
        ("and no warnings", "warn"),
        ("，没有告警", "warn"),
        ("and no log lines", "any"),
    ]
)
_LEVELS = st.dictionaries(st.sampled_from(["INFO", "DEBUG", "WARN", "ERROR", "FATAL"]), st.integers(1, 50), min_size=1)


@given(_LEVELS, _DENIALS, st.sampled_from(["price query handled", "price query failed status=500"]), st.booleans())
def test_a_denied_kind_of_line_is_judged_by_the_lines_of_that_kind(
    levels: dict[str, int], denial: tuple[str, str], message: str, unleveled: bool
) -> None:
    """ "wrote 100 log lines …, all INFO price queries, and no errors" was contradicted by "matched 100
    lines (INFO 100)": any matched line contradicted a denial of errors. Error lines — by level, or a
    failure at any level — still do, and where the lines wrote no level any line does."""
    matched = sum(levels.values())
    counts = ", ".join(f"{level} {n}" for level, n in levels.items())
    rows = [f"2023-01-29T11:19:{i % 60:02d}Z {level} ts-price-service {message}" for level in levels for i in range(2)]
    note = "\nlevels: 10 of the 10 imported lines of ts-price-service write no level (read as INFO)" * unleveled
    output = f"query_logs service=ts-price-service\nmatched {matched} lines ({counts}){note}\nlines:\n" + "\n".join(
        rows
    )
    details = {"matched": matched, "by_level": levels}
    store = InMemoryInvocations([invocation(394, output=output, retrieval_details=details)])
    text, kind = denial
    said = f"ts-price-service wrote {matched} log lines {text}"
    claims = ExecutorMaterial.read(
        {"claims": [claim(text=said, bindings=[binding([394], f"matched {matched} lines")])]}
    )
    label = OfflineVerifier(store).judge(claims.claims[0], {394})[0]
    shown = {
        "any": True,
        "error": bool({"ERROR", "FATAL"} & set(levels)) or "failed" in message,
        "warn": "WARN" in levels,
    }[kind]
    assert (label == "contradicted") is (shown or unleveled), (said, levels, message, label)
    assert all(concepts().kinds.get(k.concept or "failure") for k in verifier_wording().denied_levels)


# --- an absolute over what the claim's own numbers compute ------------------------------------------

_GC = (
    "2026-07-07T11:45:08.957Z WARN  inventory-service [GC] Full GC (Allocation Failure) 1931M->1950M(2048M), 2.31 secs"
)


@given(
    st.sampled_from(["一点空间", "一个字节", "一点内存", "一次", "半点"]),
    st.sampled_from(["回收出来", "释放", "腾出来", "降下来"]),
    st.sampled_from(["都", "也都"]),
)
def test_an_idiom_of_absence_is_a_zero(what: str, verb: str, all_: str) -> None:
    """ "一点空间都没回收出来" (1931M → 1950M) is a zero, not an overgeneralisation: it was "'都' (all)
    is not what its quoted lines say"; the same words without the absence still are."""
    _, reason = _outcome(f"11:45:08 的 Full GC 前后堆从 1931M 变成 1950M，{what}{all_}没{verb}。", _GC, _GC)
    assert "(all)" not in reason, reason
    outcome, reason = _outcome(f"11:45:08 的 Full GC 前后堆从 1931M 变成 1950M，{what}{all_}{verb}了。", _GC, _GC)
    assert outcome == "warn" and "(all)" in reason, reason


def _anomaly(index: int, first: int, last: int) -> str:
    def at(minute: int) -> str:
        return f"2026-07-07T{minute // 60:02d}:{minute % 60:02d}:00Z"

    return f"anomaly {index}: {at(first)} – {at(last)} ({last - first + 1} points, {last - first} min) up"


def _clock(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


_INTERVALS = st.sampled_from(
    [
        "三轮上涨的起点分别是 {c}，间隔都是 {g} 分钟",
        "The rises started at {c}, all {g} minutes apart",
        "起点 {c}，每隔 {g} 分钟都来一轮",
    ]
)


@given(st.integers(9 * 60, 12 * 60), st.integers(10, 90), st.integers(3, 5), st.data(), _INTERVALS)
def test_equal_intervals_are_computed_from_the_claims_own_clocks(
    first: int, gap: int, count: int, data: st.DataObject, form: str
) -> None:
    """ "三轮上涨的起点分别是 11:34、12:04 和 12:34，间隔都是 30 分钟" states its 都 by its own clocks
    (it was "'都' (all) is not what its quoted lines say"); unequal intervals called 都是 30 分钟 do not."""
    shift = data.draw(st.integers(2, 9))
    for moved in (0, data.draw(st.integers(1, count - 1))):
        starts = [first + i * gap + (shift if moved and i == moved else 0) for i in range(count)]
        episodes = [_anomaly(i + 1, s, s + gap // 2) for i, s in enumerate(starts)]
        output = "query_metrics service=inventory-service metric=heap\n" + "\n".join(episodes)
        text = form.format(c="、".join(_clock(s) for s in starts), g=gap)
        _, reason = _quoting(text, *((output, episode) for episode in episodes))
        assert ("(all)" in reason) is bool(moved), (text, reason)


_SAME_PERIODS = st.sampled_from(
    [
        "延迟和错误率的异常都从 {s} 开始、到 {e} 结束，时间完全重合",
        "Latency and errors were anomalous from {s} to {e}: the two periods coincide completely",
        "两个异常 {s}–{e}，时段完全相同",
    ]
)


@given(st.integers(8 * 60, 20 * 60), st.integers(5, 60), st.integers(-4, 4), st.booleans(), _SAME_PERIODS)
def test_a_coincidence_is_computed_from_the_quoted_periods(
    start: int, length: int, shift: int, at_end: bool, form: str
) -> None:
    """ "延迟和错误率的异常都从 10:01 开始、到 10:29 结束，时间完全重合" quoting both anomalies over one
    period states its 完全 (it was unstated); two different periods called 完全重合 do not."""
    first = _anomaly(1, start, start + length)
    second = _anomaly(1, start + shift * (not at_end), start + length + shift * at_end)
    latency = f"query_metrics service=payment-service metric=p99\n{first}"
    errors = f"query_metrics service=payment-service metric=error_rate\n{second}"
    text = form.format(s=_clock(start), e=_clock(start + length))
    _, reason = _quoting(text, (latency, first), (errors, second))
    assert ("(all)" in reason or "(same)" in reason) is (shift != 0), (text, reason)
