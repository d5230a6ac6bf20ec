"""Which period a question is about: chosen by the question (its moment, the records it points
at, the services and kinds of change it names, whether something is down now), not by size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from veridiag.agents.offline.focus import AROUND, BEFORE, WHOLE, Candidate, candidates, choose, names_metric
from veridiag.contracts.plan import Intent, Plan, PlanTime
from veridiag.tools.records import Episode

DAY = datetime(2026, 7, 7, tzinfo=UTC)
WEEK = (DAY - timedelta(days=6), DAY + timedelta(days=1))


def episode(service: str, hour: float, score: float, family: str = "cpu") -> Episode:
    onset = DAY + timedelta(hours=hour)
    return Episode(
        service=service,
        source="metric",
        name=f"{family}_metric",
        family=family,
        role="cause",
        onset=onset,
        end=onset + timedelta(minutes=20),
        score=score,
        strength=score,
    )


def plan(**fields: object) -> Plan:
    return Plan.model_validate({"start": WEEK[0].isoformat(), "end": WEEK[1].isoformat(), **fields})


HOURS = st.lists(st.floats(0, 23), min_size=2, max_size=8, unique=True)


@given(hours=HOURS, scores=st.lists(st.floats(0.2, 2), min_size=8, max_size=8))
def test_without_a_time_the_strongest_change_is_chosen(hours: list[float], scores: list[float]) -> None:
    found = candidates(plan(), "what is wrong?", [episode(f"s{i}", h, scores[i]) for i, h in enumerate(hours)], [])
    focus = choose(plan(), WEEK, found)
    best = max(found, key=lambda c: (c.weight, c.start))
    assert focus.chosen == "most_anomalous"
    assert focus.start <= best.start < focus.end
    _judged_from_the_incident_start(focus.at, best, found)


def _judged_from_the_incident_start(at: datetime | None, chosen: Candidate, found: list[Candidate]) -> None:
    """A chosen change is judged from the start of its incident: the earliest change that began
    at most ``BEFORE`` ahead of it and was still going when it began — itself when none did."""
    assert at is not None and at <= chosen.start
    leading = [c for c in found if chosen.start - BEFORE <= c.start <= chosen.start and c.end >= chosen.start]
    assert at == min(c.start for c in leading)


@given(hours=HOURS, scores=st.lists(st.floats(0.2, 2), min_size=8, max_size=8))
def test_something_down_now_chooses_the_latest_strong_incident(hours: list[float], scores: list[float]) -> None:
    asked = plan(intent=Intent(kind="cause", recent=True))
    found = candidates(asked, "the api fell over", [episode(f"s{i}", h, scores[i]) for i, h in enumerate(hours)], [])
    focus = choose(asked, WEEK, found)
    strongest = max(c.weight for c in found)
    strong = [c for c in found if c.weight >= 0.5 * strongest]
    latest = max(strong, key=lambda c: c.start)
    assert focus.chosen == "most_recent"
    # the latest incident, from its first strong change (one still going when the latest began)
    first = min((c for c in strong if c.start <= latest.end and c.end >= latest.start), key=lambda c: c.start)
    assert focus.start <= first.start and latest.start < focus.end
    _judged_from_the_incident_start(focus.at, first, found)


def test_a_change_chosen_is_judged_from_where_its_incident_began() -> None:
    """The errors that followed a database's lock waits 5 minutes later are the strongest change:
    the period is theirs, its moment the lock waits' start, so the origin is not "away" from it."""
    found = candidates(plan(), "what is wrong?", [episode("mysql", 15, 0.5), episode("orders", 15 + 5 / 60, 2.0)], [])
    focus = choose(plan(), WEEK, found)
    assert focus.at == DAY + timedelta(hours=15)
    assert focus.start <= DAY + timedelta(hours=15) < focus.end


def test_is_x_to_blame_without_a_time_or_symptom_is_about_the_latest_incident() -> None:
    asked = plan(services=["payment"], intent=Intent(kind="blame", about="payment"))
    episodes = [episode("payment", 10, 1.0), episode("inventory", 12, 3.0), episode("mysql", 15, 2.0)]
    focus = choose(asked, WEEK, candidates(asked, "is payment to blame?", episodes, []))
    assert (focus.at, focus.chosen) == (DAY + timedelta(hours=15), "most_recent")


@given(other=st.floats(0.5, 5), named=st.floats(0.2, 1))
def test_a_named_service_changes_weigh_before_a_larger_change_elsewhere(other: float, named: float) -> None:
    """Asked about the gateway, the gateway's 504 period — not the week's largest anomaly of
    another service (issue 26: it lost 103.0 to 103.7)."""
    asked = plan(services=["gateway"])
    found = candidates(asked, "why 504?", [episode("payment", 10, other), episode("gateway", 8.2, named)], [])
    focus = choose(asked, WEEK, found)
    assert focus.at == DAY + timedelta(hours=8.2)


def test_the_question_s_own_words_make_a_period_and_the_asked_kind_comes_first() -> None:
    asked = plan(services=["inventory"], intent=Intent(kind="cause", recent=True))
    found = candidates(
        asked,
        "inventory 为什么一直重启？",
        [episode("inventory", 12, 1.0, "restarts"), episode("inventory", 15, 0.7, "change")],
        [],
    )
    assert [c.asked_kind for c in found] == [True, False]
    assert choose(asked, WEEK, found).at == DAY + timedelta(hours=12)
    bursts = candidates(plan(), "why 504?", [], [("gateway", DAY + timedelta(hours=8), DAY + timedelta(hours=8.5))])
    assert bursts == [Candidate("gateway", DAY + timedelta(hours=8), DAY + timedelta(hours=8.5), 1.0, True)]


def test_a_moment_asked_keeps_the_window_and_a_short_window_is_looked_at_whole() -> None:
    moment = DAY + timedelta(hours=7)
    asked = plan(time=PlanTime(kind="around", at=moment.isoformat()), explicit_time=True)
    window = (moment - AROUND, moment + AROUND)
    found = [Candidate("x", DAY + timedelta(hours=3), DAY + timedelta(hours=4), 9.0)]
    assert choose(asked, window, found).at == moment
    short = (moment, moment + WHOLE)
    assert choose(plan(explicit_time=True), short, found).chosen == "question"


def test_which_is_slowest_without_a_time_asks_about_the_last_hour() -> None:
    asked = plan(intent=Intent(kind="rank", rank_by="latency"))
    focus = choose(asked, WEEK, [Candidate("x", DAY, DAY + timedelta(hours=1), 3.0)])
    assert (focus.end - focus.start, focus.end, focus.chosen) == (timedelta(hours=1), WEEK[1], "most_recent")


def test_the_records_asked_about_pick_the_change_around_them() -> None:
    lines = [DAY + timedelta(hours=10, minutes=1)]
    found = [Candidate("pay", DAY + timedelta(hours=10), DAY + timedelta(hours=10.5), 1.0)]
    found.append(Candidate("other", DAY + timedelta(hours=15), DAY + timedelta(hours=16), 5.0))
    focus = choose(plan(), WEEK, found, lines)
    assert (focus.at, focus.chosen) == (DAY + timedelta(hours=10), "asked_lines")


@given(
    accused=st.floats(0.3, 3),
    symptom=st.floats(0.15, 0.5),
    hour=st.floats(11, 20),
    kind=st.sampled_from(["latency", "errors", "cpu"]),
)
def test_a_blame_question_s_period_is_the_symptom_s_not_the_suspect_s_own_incident(
    accused: float, symptom: float, hour: float, kind: str
) -> None:
    """ "是不是mysql的问题？10点以后支付失败": the payment failures from 10:00 (the question's words,
    the lines holding them) choose the period — not mysql's own larger incident later that day."""
    ten = DAY + timedelta(hours=10)
    asked = plan(
        services=["mysql"],
        terms=["支付失败"],
        intent=Intent(kind="blame", about="mysql"),
        time=PlanTime(kind="since"),
        explicit_time=True,
    )
    window = (ten, DAY + timedelta(days=1))
    found = candidates(
        asked,
        "是不是mysql的问题？10点以后支付失败",
        [episode("mysql", hour, accused, kind), episode("payment", 10.02, symptom, "errors")],
        [("payment", ten + timedelta(minutes=1), ten + timedelta(minutes=30))],
    )
    focus = choose(asked, window, found)
    assert focus.at is not None and ten <= focus.at <= ten + timedelta(minutes=5), focus


PARTS = st.sampled_from(["lock", "wait", "thread", "queue", "connection", "query", "disk", "backlog", "pool"])
UNITS = st.sampled_from(["seconds", "p99", "total", "per_minute", "bytes", "ratio", "ms", "count"])


@given(what=st.lists(PARTS, min_size=1, max_size=3, unique=True), unit=UNITS, plural=st.booleans(), prefix=PARTS)
def test_a_question_word_that_is_a_part_of_a_metric_name_names_it(
    what: list[str], unit: str, plural: bool, prefix: str
) -> None:
    """ "when did the lock waits start?" names mysql_lock_wait_p99_seconds: any part of a name,
    singular or plural, whatever unit or statistic follows it."""
    metric = "_".join(["mysql", *what, unit])
    word = what[-1] + ("s" if plural and not what[-1].endswith("y") else "")
    word = what[-1][:-1] + "ies" if plural and what[-1].endswith("y") else word
    assert names_metric(f"when did the {word} go up?", metric)
    assert not names_metric(f"when did the {word} go up?", f"{prefix}zz_other_{unit}") or prefix in what


@given(unit=UNITS, kind=st.sampled_from(["slow", "errors", "latency", "cpu", "memory", "restarts", "traffic"]))
def test_kind_words_and_units_name_no_metric(unit: str, kind: str) -> None:
    """A kind word is a family already (slow: latency); a unit or statistic measures, never names."""
    metric = f"mysql_slow_queries_{unit}"
    assert not names_metric(f"why so {kind} in {unit.replace('_', ' ')}?", metric)


def test_chinese_metric_words_name_the_metric() -> None:
    assert names_metric("锁等待持续了多久？", "mysql_lock_wait_p99_seconds")
    assert names_metric("慢查询是什么时候开始的", "mysql_slow_queries_per_minute")
    assert not names_metric("支付为什么失败", "mysql_lock_wait_p99_seconds")


def test_the_services_asked_about_come_before_a_kind_of_change_elsewhere() -> None:
    """ "payment 为什么超时": payment's errors, not the gateway's latency though latency is a kind
    the words might speak of."""
    asked = plan(services=["payment"])
    episodes = [episode("payment", 10, 0.5, "errors"), episode("gateway", 8, 2.0, "latency")]
    focus = choose(asked, WEEK, candidates(asked, "why is payment slow?", episodes, []))
    assert focus.at == DAY + timedelta(hours=10)


def test_is_x_to_blame_is_not_drawn_to_x_s_neighbours_incident() -> None:
    """The services around X would choose X's vicinity's incident as much as X's own would."""
    asked = plan(services=["payment"], intent=Intent(kind="blame", about="payment"))
    episodes = [episode("caller", 10, 3.0), episode("mysql", 15, 2.0)]
    found = candidates(asked, "is payment to blame?", episodes, [], ["caller"])
    assert choose(asked, WEEK, found).at == DAY + timedelta(hours=15)
