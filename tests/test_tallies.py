"""A count the claim made by counting the lines it was shown (issue 27: equivalent forms): a
per-host or per-day tally is stated when the cited output lists that many lines naming the
subject, and only then."""

from __future__ import annotations

from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper
from veridiag.text.entities import claim_reading, extract_entities
from veridiag.text.tallies import enumerated, points_in_range, quoted_records, tallied

_GATEKEEPER = Gatekeeper()
_HOSTS = ["node-153", "node-246", "dn228", "tbird-admin1"]


def _grounding(text: str, output: str, excerpt: str) -> str:
    store = InMemoryInvocations([invocation(901, output=output)])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([901], excerpt)])]), session_id=SESSION, invocations=store
    )
    (check,) = [
        c
        for t in report.claim_traces
        for c in t.checks
        if c.rule_id == "claim.entity_grounding" and c.target.endswith("claim_text")
    ]
    return check.outcome


@given(
    st.lists(st.sampled_from(_HOSTS), min_size=2, max_size=12),
    st.sampled_from(["{h} logged {k} errors", "{h} 上出现了 {k} 次"]),
)
def test_a_tally_of_the_listed_lines_is_stated_exactly(hosts: list[str], form: str) -> None:
    lines = [
        f"2004-05-11T0{i % 10}:00:00Z {h} unix.hw state_change.unavailable Component is unavailable"
        for i, h in enumerate(hosts)
    ]
    head = f"query_logs service=hpc\nmatched {len(lines)} lines\ntemplates:\n  {len(lines)}× INFO <*> unavailable\n"
    output = head + f"     e.g. {lines[0]}\nlines:\n" + "\n".join(lines)
    host = hosts[0]
    count = hosts.count(host)
    assert _grounding(form.format(h=host, k=count), output, lines[0]) == "pass"
    assert _grounding(form.format(h=host, k=count + 1), output, lines[0]) != "pass"


def test_a_tally_needs_a_subject_and_a_whole_count() -> None:
    output = "lines:\na\nb\nc"
    (three,) = extract_entities("3 errors")
    assert not tallied(three, [three], [output])


@given(
    st.lists(st.sampled_from(["saveOneDetailData", "bulk_save_detail", "flushSensorData"]), min_size=2, max_size=10),
    st.sampled_from(["{n} failed {k} times", "其中 {k} 条是 {n} fail"]),
)
def test_a_tally_by_a_name_from_code_counts_the_listed_lines_naming_it(names: list[str], form: str) -> None:
    """A method or field name the claim counts lines by ("两条 saveOneDetailData fail") is a subject
    as a host is: stated only when that many listed lines name it."""
    lines = [
        f"20171223-22:19:58:{380 + i}|HiH_Store|30002312|{n}() fail type = {40000 + i}" for i, n in enumerate(names)
    ]
    output = "query_logs service=healthapp\nmatched many lines\nlines:\n" + "\n".join(lines)
    name = names[0]
    count = names.count(name)
    assert _grounding(form.format(k=count, n=name), output, lines[0]) == "pass"
    assert _grounding(form.format(k=count + 1, n=name), output, lines[0]) != "pass"


@given(
    st.integers(2, 8),
    st.sampled_from(["11:00–14:00 之间一共重启了 {k} 次", "between 11:00 and 14:00 it restarted {k} times"]),
)
def test_a_series_lines_are_no_events_to_tally(lines: int, form: str) -> None:
    """ "11:00–14:00 一共重启了 4 次" is no count of a metric output's lines that show 11:00 (its
    window, its history, its points): a series lists points, not events. A change list does."""
    rows = [f"2026-07-07T11:00:{i:02d}Z 0 restarts" for i in range(lines)]
    series = "query_metrics service=inventory-service metric=pod_restarts_total start=2026-07-07T11:00:00Z\n"
    output = series + "\n".join(rows)
    (count,) = [e for e in extract_entities(form.format(k=lines)) if e.dimension == "count"]
    facts = extract_entities(form.format(k=lines))
    assert not tallied(count, facts, [output])
    changes = "query_changes service=inventory-service\n" + "\n".join(
        f"2026-07-07T11:00:{i:02d}Z inventory-service restart: pod restarted" for i in range(lines)
    )
    assert tallied(count, facts, [changes])


@given(
    st.integers(0, 20 * 60),
    st.integers(6, 30),
    st.integers(1, 20),
    st.sampled_from(
        ["From {a} UTC to the end of the window all {k} points read 0 ms.", "{a} 到 {b} 之间共 {k} 个点，读数全为零"]
    ),
)
def test_a_count_of_points_in_a_range_is_the_listed_points_there(first: int, points: int, skip: int, form: str) -> None:
    """ "From 18:00 UTC to the end of the window all twelve points read 0 ms": the listed points
    from its first clock to its last (or to the last point) — one more or one fewer is wrong."""
    at = [first + 5 * i for i in range(points)]
    rows = "\n".join(f"2014-07-14T{m // 60:02d}:{m % 60:02d}:00Z 0ms" for m in at)
    output = f"query_metrics service=keyboard metric=key_updown_ms\npoints:\n{rows}"
    start = at[min(skip, points - 2)]
    inside = sum(1 for m in at if m >= start)

    def clock(minute: int) -> str:
        return f"{minute // 60:02d}:{minute % 60:02d}"

    for k, right in ((inside, True), (inside + 1, False), (inside - 1, False)):
        text = form.format(a=clock(start), b=clock(at[-1]), k=k)
        facts = extract_entities(text)
        (count,) = [e for e in facts if e.dimension == "count"]
        assert points_in_range(count, facts, [output]) is right, text


_ZH_COUNTS = ["", "一", "两", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二"]


@given(
    minutes=st.lists(st.integers(min_value=0, max_value=23 * 60 + 59), min_size=2, max_size=8, unique=True),
    off=st.sampled_from([0, 0, -1, 1]),
    form=st.sampled_from(
        [
            "只有{zh}个非零值：{listed}。",
            "There were {n} spikes: at {listed}.",
            "{listed} 这{zh}个点都超过了 15。",
            "It peaked {n} times, at {listed}.",
        ]
    ),
    join=st.sampled_from([" 和 ", "、", ", ", " and "]),
)
# two listed clocks a minute apart hold three points between them: no range "三个" counts
@example(minutes=[0, 2], off=1, form="只有{zh}个非零值：{listed}。", join=" 和 ")
# "times, at" beside the count is no list of names it counts
@example(minutes=[0, 1, 2], off=-1, form="It peaked {n} times, at {listed}.", join=" 和 ")
def test_a_count_of_what_the_claim_lists_is_its_own(minutes: list[int], off: int, form: str, join: str) -> None:
    """ "只有两个非零值：UTC 18:55 的 2.56 和 19:05 的 6.4": no output writes 2 — the claim counted
    the points it names, each of them checked on its own. One more or fewer than it lists is
    no count of them."""
    clocks = [f"{m // 60:02d}:{m % 60:02d}" for m in sorted(minutes)]
    n = len(clocks) + off
    assume(n >= 2)  # 一个 is the article "a", no count
    text = form.format(n=n, zh=_ZH_COUNTS[n] if n < len(_ZH_COUNTS) else n, listed=join.join(clocks))
    rows = [f"2014-07-16T{c}:00Z {17 + 3 * i}.25" for i, c in enumerate(clocks)]  # no value near a count
    # the series' other points between them read 0: the count is of what it lists, not of the points between
    between = [
        f"2014-07-16T{m // 60:02d}:{m % 60:02d}:00Z 0" for m in range(min(minutes), max(minutes)) if m not in minutes
    ]
    output = "query_metrics service=keyboard metric=keys\npoints:\n" + "\n".join(sorted([*rows, *between]))
    store = InMemoryInvocations([invocation(901, output=output)])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([901], row) for row in rows])]), session_id=SESSION, invocations=store
    )
    outcomes = {c.outcome for t in report.claim_traces for c in t.checks if c.rule_id == "claim.entity_grounding"}
    assert (outcomes == {"pass"}) is (off == 0), (text, outcomes)


@given(first=st.integers(min_value=0, max_value=23 * 60 - 10), gap=st.integers(min_value=2, max_value=9))
def test_a_range_names_its_ends_not_two_members(first: int, gap: int) -> None:
    """ "18:55–19:05 有两个点": the two clocks of a range are its ends, not what it counts."""
    a, b = first, first + gap
    clock = [f"{m // 60:02d}:{m % 60:02d}" for m in (a, b)]
    rows = [f"2014-07-16T{m // 60:02d}:{m % 60:02d}:00Z {500 + m}.5" for m in range(a, b + 1)]
    output = "query_metrics service=keyboard metric=keys\nsummary: anomalies none\n" + "\n".join(rows)
    assert not enumerated(extract_entities(f"{clock[0]}–{clock[1]} 有两个点")[-1], f"{clock[0]}–{clock[1]} 有2个点")
    assert _grounding(f"{clock[0]}–{clock[1]} 之间有两个点超过阈值", output, rows[0]) != "pass"


@given(
    quoted=st.lists(st.integers(1, 9), min_size=2, max_size=6, unique=True),
    off=st.sampled_from([0, 0, 1, -1]),
    label=st.sampled_from(["anomaly", "trace", "#"]),
)
def test_a_count_of_the_numbered_records_the_claim_quotes(quoted: list[int], off: int, label: str) -> None:
    """ "三次都涨到 1.9 GB 左右" quoting anomalies 1, 2 and 3 of a series: the claim counted what it
    quotes. A count of another number of them is none."""
    n = len(quoted) + off
    assume(n >= 2)
    lines = "\n".join(
        f"{label}{'' if label == '#' else ' '}{k}: 2026-07-07T12:0{k}:00Z up; peak 19{k}2 MB" for k in quoted
    )
    (count,) = [e for e in extract_entities(f"{_ZH_COUNTS[n]}次都涨到了峰值") if e.kind == "quantity"]
    assert quoted_records(count, lines) is (off == 0), (n, lines)


@given(
    st.lists(st.integers(100, 9999), min_size=2, max_size=9, unique=True),
    st.sampled_from(["%", " ms", "", " MiB"]),
    st.sampled_from(["、", ", ", "，"]),
    st.sampled_from(["高 CPU 连续 {n} 个采样点（23:24–23:27 KST）：{v}。", "There were {n} readings: {v}."]),
)
def test_a_count_of_the_values_the_claim_lists_is_theirs(values: list[int], unit: str, mark: str, form: str) -> None:
    """ "高 CPU 连续 4 个采样点：89.65%、82.21%、84.95%、76.32%": the claim counted the values it
    lists (each checked on its own); the 4 was looked for in the output and found only elsewhere."""
    listed = mark.join(f"{v / 100:.2f}{unit}" for v in values)
    read = claim_reading(form.format(n=len(values), v=listed))
    (count,) = [e for e in extract_entities(read) if e.kind == "quantity" and e.text.startswith(str(len(values)))][:1]
    assert enumerated(count, read), read
    wrong = claim_reading(form.format(n=len(values) + 1, v=listed))
    (other,) = [e for e in extract_entities(wrong) if e.kind == "quantity" and e.text.startswith(str(len(values) + 1))][
        :1
    ]
    assert not enumerated(other, wrong), wrong


@given(
    st.lists(st.from_regex(r"\A[A-Z][a-z]{2,8}(?:\.exe|-[0-9]{1,3})?\Z"), min_size=2, max_size=8, unique=True),
    st.sampled_from(["zh", "en"]),
    st.sampled_from(["before", "after"]),
)
def test_a_count_of_the_names_the_claim_lists_is_theirs(names: list[str], lang: str, where: str) -> None:
    """ "涉及 WeChat、chrome、Dropbox 和 SogouCloud 四个程序", "3 pods: dn228, dn229 and dn231":
    the claim counted the names it lists right beside the count; one more or fewer is no count of them."""

    def text(n: int) -> str:
        if lang == "zh":
            listed = "、".join(names[:-1]) + " 和 " + names[-1]
            return f"涉及 {listed} {n} 个程序。" if where == "before" else f"一共 {n} 个程序：{listed}。"
        listed = ", ".join(names[:-1]) + " and " + names[-1]
        return f"It involved {listed}, {n} instances." if where == "before" else f"It hit {n} pods: {listed}."

    for n in (len(names), len(names) + 1):
        read = claim_reading(text(n))
        found = [e for e in extract_entities(read) if e.kind == "quantity" and e.text.startswith(str(n))]
        assert found, read
        assert enumerated(found[0], read) is (n == len(names)), read
