"""Which facts of a cited call are a claim's own (``claim.entity_grounding``, issue 27): the
records of a call's retrieval details restate output lines, so a count found only there is
found elsewhere; a fact found elsewhere in the output is the claim's when the record holding it
is tied to what the claim quotes (one of its facts, or an instance of the log pattern it quotes),
and not when the clause it quotes already gives a fact of that kind."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper

_GATEKEEPER = Gatekeeper()
_RULE = "claim.entity_grounding"

_names = st.sampled_from(
    ["getTodayTotalDetailSteps", "onStandStepChanged", "flushSensorData", "calculateCalories", "saveOneDetailData"]
)


def _verdict(output: str, text: str, excerpt: str, **extra: Any) -> str:
    store = InMemoryInvocations([invocation(101, output=output, **extra)])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([101], excerpt)])]), session_id=SESSION, invocations=store
    )
    outcomes = [
        c.outcome for t in report.claim_traces for c in t.checks if c.rule_id == _RULE and "claim_text" in c.target
    ]
    return "fail" if "fail" in outcomes else "warn" if "warn" in outcomes else "pass"


def _log_output(patterns: list[tuple[int, str]]) -> tuple[str, dict[str, Any]]:
    lines = ["query_logs service=healthapp", f"matched {sum(n for n, _ in patterns)} lines", "templates:"]
    details_patterns = []
    for count, name in patterns:
        template = f"{name} = <*>##<*>"
        lines.append(f"  {count}× INFO 2017-12-23T22:15:29Z – 2017-12-24T00:28:25Z {template}")
        lines.append(f"     e.g. 20171223-22:15:29:635|Step_SPUtils|30002312| {name} = 1514038440000##6993")
        details_patterns.append({"count": count, "template": template, "level": "INFO"})
    details = {"backend": "embedded", "matched": sum(n for n, _ in patterns), "patterns": details_patterns}
    return "\n".join(lines), details


@settings(max_examples=30, deadline=None)
@given(
    names=st.lists(_names, min_size=2, max_size=4, unique=True),
    counts=st.lists(st.integers(min_value=11, max_value=999), min_size=4, max_size=4, unique=True),
    zh=st.booleans(),
)
def test_a_count_is_the_quoted_patterns_own_not_its_neighbours(names: list[str], counts: list[int], zh: bool) -> None:
    """The record lists of a call's retrieval details (a log query's patterns) are no fact of the
    call itself: a claim quoting one pattern with its neighbour's count is found only elsewhere."""
    patterns = list(zip(counts, names, strict=False))
    output, details = _log_output(patterns)
    own_count, name = patterns[0]
    other_count = patterns[1][0]
    excerpt = f"{name} = <*>##<*>"

    def said(count: int) -> str:
        return f"{name} 在这段时间出现了 {count} 次。" if zh else f"{name} appeared {count} times in the window."

    assert _verdict(output, said(other_count), excerpt, retrieval_details=details) == "warn"
    assert _verdict(output, said(own_count), f"{own_count}× INFO", retrieval_details=details) == "pass"


_POINTS = [
    ("2026-07-07T14:26:00Z", "16.26%"),
    ("2026-07-07T14:27:00Z", "16.45%"),
    ("2026-07-07T14:28:00Z", "11.59%"),
    ("2026-07-07T14:29:00Z", "5.85%"),
]


def _metric_output(peak_at: str) -> str:
    points = "\n".join(f"{at} {value}" for at, value in _POINTS)
    return (
        "query_metrics service=order-service metric=http_error_percent unit=%\n"
        f"window: min 5.85%, max 17.92%, avg 14.47%, last 5.85% (30 points); peak 17.92% at {peak_at}\n"
        f"points:\n{points}\n2026-07-07T14:30:00Z 17.92%"
    )


@settings(max_examples=20, deadline=None)
@given(
    point=st.sampled_from(_POINTS),
    wording=st.sampled_from(["By {t} the rate was down to {v}.", "{t} 时错误率是 {v}。"]),
)
def test_a_time_found_elsewhere_is_the_claims_when_its_line_holds_the_quoted_value(
    point: tuple[str, str], wording: str
) -> None:
    """A point's time ties to a value the claim quotes ("last 5.85%" and the point "14:29 5.85%");
    a time on a line holding no quoted fact stays only elsewhere."""
    at, value = point
    clock = at[11:16]
    output = _metric_output("2026-07-07T14:30:00Z")
    quoted = f"last {value}" if value == "5.85%" else f"{at} {value}"
    assert _verdict(output, wording.format(t=clock, v=value), quoted) == "pass"
    # the time of another point, whose line holds no fact the claim quotes
    other = next(p for p in _POINTS if p[1] != value)[0][11:16]
    assert _verdict(output, wording.format(t=other, v=value), quoted) == "warn"


@settings(max_examples=20, deadline=None)
@given(point=st.sampled_from(_POINTS), zh=st.booleans())
def test_a_quoted_clause_that_places_its_value_ties_no_other_time(point: tuple[str, str], zh: bool) -> None:
    """A claim "峰值 17.92% 在 14:30" quoting "peak 17.92% at 14:30": a point elsewhere holding the same
    value at another time gives the peak no other time."""
    at, _value = point
    output = _metric_output("2026-07-07T14:30:00Z").replace(f"{at} {_value}", f"{at} 17.92%")
    text = f"峰值 17.92% 出现在 {at[11:16]}。" if zh else f"The 17.92% peak came at {at[11:16]}."
    assert _verdict(output, text, "peak 17.92% at 2026-07-07T14:30:00Z") == "warn"
    right = "峰值 17.92% 出现在 14:30。" if zh else "The 17.92% peak came at 14:30."
    assert _verdict(output, right, "peak 17.92% at 2026-07-07T14:30:00Z") == "pass"


_DISCOVER = "DHCPDISCOVER from 00:11:43:e3:ba:c3 via eth1: network A_net: no free leases"
_OFFER = "DHCPOFFER on 10.100.4.251 to 00:11:43:e3:ba:c3 via eth1"
_QUOTED = (
    "3× INFO 2005-11-09T20:01:41Z – 2005-11-09T20:02:07Z DHCPDISCOVER from <*> via eth1: network A_net: no free leases"
)


def _dhcp(a: str, b: str, c: str, d: str) -> str:
    """A dhcpd search: two patterns, each with its example, then the lines (hosts a, b discover; d, c offer)."""

    def raw(host: str, at: str, message: str) -> str:
        return f"- 11315665{at[-2:]} 2005.11.09 {host} Nov 9 {at} src@{host} dhcpd: {message}"

    return "\n".join(
        [
            "query_logs service=thunderbird query=dhcpd",
            "matched 6 lines (INFO 6)",
            "templates:",
            f"  {_QUOTED}",
            f"     e.g. {raw(a, '12:01:41', _DISCOVER)}",
            "  3× INFO 2005-11-09T20:01:43Z – 2005-11-09T20:02:07Z DHCPOFFER on <*> to <*> via eth1",
            f"     e.g. {raw(d, '12:01:43', _OFFER)}",
            "lines:",
            raw(a, "12:01:41", _DISCOVER),
            raw(b, "12:01:41", _DISCOVER),
            raw(d, "12:01:43", _OFFER),
            raw(c, "12:01:43", _OFFER),
        ]
    )


@settings(max_examples=25, deadline=None)
@given(hosts=st.lists(st.from_regex(r"[a-z]{4,7}[1-9]", fullmatch=True), min_size=4, max_size=4, unique=True))
def test_a_host_on_an_instance_of_the_quoted_pattern_is_the_claims(hosts: list[str]) -> None:
    """A quoted log pattern stands for its lines: a host found on one of them is a fact of what the
    claim quotes; a host found only on another pattern's lines is not."""
    a, b, c, d = hosts
    output = _dhcp(a, b, c, d)
    assert _verdict(output, f"{a} and {b} answered that A_net had no free leases.", _QUOTED) == "pass"
    assert _verdict(output, f"{a} and {c} answered that A_net had no free leases.", _QUOTED) == "warn"


@settings(max_examples=40, deadline=None)
@given(
    full=st.from_regex(r"[0-9a-f]{32}", fullmatch=True).filter(
        lambda h: len(set(h[:7])) > 2 and any(c.isdigit() for c in h[:7])
    ),
    cut=st.integers(min_value=7, max_value=14),
    mark=st.sampled_from(["…", "..."]),
    form=st.sampled_from(
        ["Trace {id} took 466.61 ms.", "最慢的一条 trace {id} 共 466.61ms。", "trace id {id}: 466.61ms"]
    ),
)
def test_an_id_cut_short_is_found_where_an_id_begins_with_it(full: str, cut: int, mark: str, form: str) -> None:
    """ "trace 3a29437d…" names the trace whose id begins so: stated by an output holding that id
    whole, not by one whose id differs in what the claim wrote."""
    stub = full[:cut] + mark
    line = f"trace 1 {full} at 2023-01-29T11:20:15Z: ts-price-service span 11.42ms, trace 466.61ms"
    text = form.format(id=stub)
    assert _verdict(line, text, line) == "pass"
    other = ("1" if full[0] != "1" else "2") + full[1:]
    assert _verdict(line.replace(full, other), text, line.replace(full, other)) != "pass"


@settings(max_examples=30, deadline=None)
@given(limit=st.integers(2, 50), count=st.integers(2, 400), zh=st.booleans())
def test_a_number_the_call_asked_for_is_no_finding(limit: int, count: int, zh: bool) -> None:
    """``limit: 6`` is a knob of the request: "报了 6 条" quoting an 8× pattern is not grounded by
    it, while the pattern's own count is."""
    template = f"{count}× ERROR service=ts-execute-service TraceID: <*> execute error: Order Status Wrong"
    output = f"query_logs service=ts-execute-service level=ERROR\nmatched {count} lines\ntemplates:\n  {template}"

    def said(n: int) -> str:
        return (
            f"ts-execute-service 报了 {n} 条 Order Status Wrong。"
            if zh
            else f"ts-execute-service logged {n} errors (Order Status Wrong)."
        )

    arguments = {"service": "ts-execute-service", "level": "ERROR", "limit": limit}
    assert _verdict(output, said(count), template, arguments=arguments) == "pass"
    if limit != count:
        assert _verdict(output, said(limit), template, arguments=arguments) != "pass"


@settings(max_examples=30, deadline=None)
@given(total=st.integers(200, 9000), share=st.integers(5, 95))
def test_a_share_is_computed_from_the_values_the_claim_names(total: int, share: int) -> None:
    """ "约 21%" of "3977 entries" and "entries_done=850" is the claim's computation: stated when the
    values it names give it, whatever else its lines hold."""
    done = total * share // 100
    percent = round(done / total * 100)
    line = f"settlement batch 7732 started, {total} entries"
    excerpt2 = f"entries_done={done}"
    output = f"{line}\n{excerpt2}"
    store = InMemoryInvocations([invocation(101, output=output)])

    def outcome(p: int) -> str:
        text = f"这批共 {total} 条，中止前只完成了 {done} 条，约 {p}%。"
        report = _GATEKEEPER.validate(
            v2([claim(text=text, bindings=[binding([101], line), binding([101], excerpt2)])]),
            session_id=SESSION,
            invocations=store,
        )
        outcomes = [
            c.outcome for t in report.claim_traces for c in t.checks if c.rule_id == _RULE and "claim_text" in c.target
        ]
        return "fail" if "fail" in outcomes else "warn" if "warn" in outcomes else "pass"

    assert outcome(percent) == "pass"
    wrong = percent + 20 if percent < 75 else percent - 30
    assume(abs(wrong - done) > 5)  # a count that happens to be the percentage written is that number
    assume(abs(wrong - (100 - percent)) > 2)  # the change from the total to the part ("a 60% drop") is theirs too
    assert outcome(wrong) != "pass"


@settings(max_examples=40, deadline=None)
@given(
    percent=st.integers(10, 90), off=st.integers(1, 3), approx=st.sampled_from(["约 {p}%", "about {p}%", "大约 {p}%"])
)
def test_an_approximate_percentage_is_no_nearby_bare_number(percent: int, off: int, approx: str) -> None:
    """ "约 37%" widens a stated 37%: a line's "37%", or "cpu_usage 36.6", states it; a bare count
    near it ("entries_done=34", "34 entries") does not."""
    text = f"完成率{approx.format(p=percent)}。"
    assert _verdict(f"progress {percent}% at 10:00", text, f"progress {percent}% at 10:00") == "pass"
    for line in (f"entries_done={percent - off}", f"checked {percent + off} entries"):
        assert _verdict(line, text, line) != "pass", line


@settings(max_examples=30, deadline=None)
@given(base=st.integers(20, 900), rise=st.integers(5, 80), zh=st.booleans())
def test_a_change_in_percent_is_computed_from_the_values_it_compares(base: int, rise: int, zh: bool) -> None:
    """ "窗口均值 52.96，比历史 median 46 高大约 15%": the change from the line's median to the value
    the claim names, computed; another percentage is not stated."""
    value = round(base * (100 + rise) / 100 + 0.004, 2)
    percent = round((value - base) / base * 100)
    line = f"window: avg {value}\nhistory: median {base}"

    def said(p: int) -> str:
        return (
            f"窗口均值 {value}，比历史中位数 {base} 高大约 {p}%。"
            if zh
            else f"The average {value} is about {p}% above the median of {base}."
        )

    assert _verdict(line, said(percent), line) == "pass"
    wrong = percent + 25
    # no number of the lines is the percentage written, nor the share one value is of the other
    assume(abs(wrong - value) > 1 and abs(wrong - base) > 1 and abs(wrong - base / value * 100) > 1)
    assert _verdict(line, said(wrong), line) != "pass"


@settings(max_examples=40, deadline=None)
@given(
    hosts=st.lists(st.from_regex(r"gige[0-9]{1,2}", fullmatch=True), min_size=2, max_size=6, unique=True),
    extra=st.integers(min_value=0, max_value=8),
    form=st.sampled_from(
        ["最后一条（{t}）来自 {h}。", "The last one, at {t}, came from {h}.", "{h} logged the last line at {t}"]
    ),
)
def test_a_patterns_example_is_its_first_line_not_its_last(hosts: list[str], extra: int, form: str) -> None:
    """ "最后一条（04:02:27）来自 gige4" quoting a pattern of several lines whose example, its first line,
    is gige4's: the example's host is no fact of the pattern's last time. Of its first time it is."""
    first, last = "2004-01-06T07:49:10Z", f"2005-07-15T04:02:{27 + extra:02d}Z"
    lines = [f"{2561239 + i} {host} gige temperature {1073375350 + i} 1 critical" for i, host in enumerate(hosts)]
    output = "\n".join(
        [
            "query_logs service=hpc query='gige temperature critical'",
            f"matched {len(hosts)} lines (INFO {len(hosts)})",
            "templates:",
            f"  {len(hosts)}× INFO {first} – {last} critical",
            f"     e.g. {lines[0]}",
        ]
    )
    example_host = hosts[0]
    assert _verdict(output, form.format(t=last[11:19], h=example_host), last) == "warn"
    span = f"从 {first[11:19]} 到 {last[11:19]}，这类告警都来自 {example_host} 等节点"
    assert _verdict(output, span, f"{first} – {last}") == "pass"
    assert (
        _verdict(
            output, form.replace("最后", "第一").replace("last", "first").format(t=first[11:19], h=example_host), first
        )
        == "pass"
    )
