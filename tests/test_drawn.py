"""Typed evidence kept with each invocation (issue 28, ``tools/drawn.py``): the records read
what the text reads (every line of the demo's outputs, and generated series, episodes, log
lines and changes), the store keeps them beside the output (an invocation stored before has
none and still draws), the session page draws the same from them as from the text and reads
them first, bad input never costs a call, and the Gatekeeper never sees them."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text, update

from tests.test_readback import WINDOWS
from veridiag.analysis.anomaly import Anomaly, AnomalyReport, Baseline
from veridiag.api import create_app
from veridiag.config import Settings
from veridiag.contracts.audit import AuditChain
from veridiag.contracts.invocation import InMemoryInvocations, InvocationRecord
from veridiag.contracts.json import JsonObject
from veridiag.gatekeeper import Gatekeeper
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.store import SessionStore
from veridiag.store.database import _alembic_config, head_revision, make_engine, upgrade
from veridiag.store.models import INVOCATIONS
from veridiag.text.render import iso
from veridiag.tools import QueryLogsArgs, QueryMetricsArgs, Toolbox, ToolRunner
from veridiag.tools.args import QueryChangesArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.demo.loader import load_environment
from veridiag.tools.drawn import (
    MAX_POINTS,
    Drawn,
    LineReader,
    drawn_records,
    read_drawn,
    series_points,
    stored_form,
)
from veridiag.tools.readback import LogLine, read_line
from veridiag.tools.records import Burst, ChangeRecord, Evidence, LogSample, MetricEvidence, Span
from veridiag.tools.render import TemplateRow, change_line, changes_output, logs_output, metrics_output, stored_points
from veridiag.tools.results import ToolOutput

START = datetime(2026, 7, 7, 10, 0, tzinfo=UTC)


def _stored(tool: str, output: ToolOutput | tuple[str, Sequence[Evidence]]) -> JsonObject | None:
    """The records as the store keeps them: built, dumped to JSON text and read back."""
    body, evidence = (output.text, output.evidence) if isinstance(output, ToolOutput) else output
    form = stored_form(drawn_records(tool, body, evidence))
    stored: JsonObject | None = None if form is None else json.loads(json.dumps(form, allow_nan=False))
    return stored


def _agree(tool: str, body: str, stored: JsonObject | None, unit: str = "") -> None:
    """Every line reads the same from the records as from the text; the charted points too."""
    assert read_drawn(stored) is not None, stored
    typed = LineReader(tool, stored)
    assert typed.typed
    for index, line in enumerate(body.split("\n")):
        assert typed(index, line) == read_line(tool, line), (index, line)
    if tool == "query_metrics":
        assert series_points(body, unit, stored) == stored_points(body, unit)


# -- the records read what the text reads ---------------------------------------------------


@pytest.mark.parametrize(("service", "start", "end"), WINDOWS)
def test_every_line_of_the_demo_outputs_reads_the_same_from_its_records(
    demo_env: EmbeddedEnvironment, service: str, start: str, end: str
) -> None:
    for _svc, metric, unit in demo_env.metrics(service):
        out = demo_env.query_metrics(QueryMetricsArgs(service=service, metric=metric, start=start, end=end))
        if out.status == "ok":
            _agree("query_metrics", out.text, _stored("query_metrics", out), unit)
    for level in (None, "ERROR"):
        logs = demo_env.query_logs(QueryLogsArgs(service=service, level=level, start=start, end=end))
        if logs.status == "ok":
            _agree("query_logs", logs.text, _stored("query_logs", logs))
    for who in (service, None):
        changes = demo_env.query_changes(QueryChangesArgs(service=who, start="2026-07-07T00:00:00Z", end=end))
        _agree("query_changes", changes.text, _stored("query_changes", changes))


UNITS = st.sampled_from(["ms", "%", "connections", "", "/s", "restarts"])
VALUES = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)


@st.composite
def series(draw: st.DrawFn) -> tuple[list[tuple[datetime, float]], AnomalyReport, str, int | None]:
    """A window of points a minute (or a few) apart, with episodes anywhere in it, or before it."""
    count = draw(st.integers(min_value=1, max_value=300))
    step = draw(st.sampled_from([15, 60, 300]))
    values = draw(st.lists(VALUES, min_size=count, max_size=count))
    window = [(START + timedelta(seconds=step * i), v) for i, v in enumerate(values)]
    anomalies = []
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        first = draw(st.integers(min_value=-20, max_value=count - 1))
        last = draw(st.integers(min_value=max(first, 0), max_value=count - 1))
        peak_index = draw(st.integers(min_value=first, max_value=last))
        at = START + timedelta(seconds=step * peak_index)
        peak = values[peak_index] if peak_index >= 0 else draw(VALUES)
        expected = draw(VALUES)
        anomalies.append(
            Anomaly(
                onset=START + timedelta(seconds=step * first),
                end=START + timedelta(seconds=step * last),
                peak_at=at,
                peak=peak,
                expected=expected,
                direction=draw(st.sampled_from(["up", "down"])),
                score=draw(st.floats(min_value=0, max_value=50)),
                points=last - first + 1,
                factor=draw(st.none() | st.floats(min_value=0.01, max_value=1e4)),
            )
        )
    baseline = Baseline(method="median_mad", median=1.0, mad=0.5, period=None, history_points=100)
    judged = bool(anomalies) or draw(st.booleans())
    report = AnomalyReport(baseline=baseline if judged else None, anomalies=anomalies)
    per_step = step if draw(st.booleans()) else None
    return window, report, draw(UNITS), per_step


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated=series())
def test_generated_series_and_episodes_read_the_same_from_their_records(
    generated: tuple[list[tuple[datetime, float]], AnomalyReport, str, int | None],
) -> None:
    window, report, unit, per_step = generated
    request = {"service": "api", "metric": "m", "start": iso(START), "end": iso(START + timedelta(days=1))}
    rendered, evidence = metrics_output(
        request,
        service="api",
        metric="m",
        unit=unit,
        window=window,
        history=None if report.baseline is None else Span(first=START - timedelta(days=7), last=START),
        report=report,
        per_step=per_step,
    )
    _agree("query_metrics", rendered.text, _stored("query_metrics", (rendered.text, [evidence])), unit)


MOMENTS = st.integers(min_value=0, max_value=86_400_000).map(lambda ms: START + timedelta(milliseconds=ms))
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=30)


ZONES = st.sampled_from([None, UTC, timezone(timedelta(hours=8)), timezone(timedelta(hours=-5, minutes=-30))])


@st.composite
def log_stamp(draw: st.DrawFn, at: datetime) -> str:
    """A line's own time as log formats write it: zoned (``Z``, ``+08:00``) or not, to the
    second or the millisecond."""
    zone = draw(ZONES)
    local = at.astimezone(zone or UTC)
    fraction = draw(st.sampled_from(["", f".{at.microsecond // 1000:03d}"]))
    written = "" if zone is None else "Z" if zone is UTC else local.strftime("%z")[:3] + ":" + local.strftime("%z")[3:]
    return local.strftime("%Y-%m-%dT%H:%M:%S") + fraction + written


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_log_outputs_read_the_same_from_their_records(data: st.DataObject) -> None:
    times = sorted(data.draw(st.lists(MOMENTS, min_size=1, max_size=40)))
    samples = []
    for at in times:
        stamp = data.draw(log_stamp(at))
        trace = data.draw(st.lists(st.sampled_from(["\tat a.B.c(B.java:12)", "Caused by: x.Y: z"]), max_size=2))
        entry = "\n".join([f"{stamp} {data.draw(WORDS)}", *trace])  # an entry with its stack trace
        samples.append(LogSample(ts=at, service="api", level="ERROR", line=entry))
    rows = [
        TemplateRow(
            template=f"tpl {n} " + data.draw(WORDS),
            level="ERROR",
            count=data.draw(st.integers(min_value=1, max_value=10**6)),
            first=times[0],
            last=times[-1],
            example=samples[n % len(samples)].line,
        )
        for n in range(data.draw(st.integers(min_value=0, max_value=5)))
    ]
    bursts = [Burst(first=times[0], last=times[-1], count=len(times))] if data.draw(st.booleans()) else []
    request = {"service": data.draw(st.sampled_from(["api", None])), "start": iso(START), "end": iso(START)}
    rendered, evidence = logs_output(
        request, matched=len(times), by_level={"ERROR": len(times)}, templates=rows, bursts=bursts, samples=samples
    )
    lines = rendered.text.split("\n")
    first_sample = lines.index("lines:") + 1
    #: Each output line after ``lines:``: its entry, and whether it is the entry's first line.
    owner = [(sample, n == 0) for sample in samples for n, _line in enumerate(sample.line.split("\n"))]
    typed = LineReader("query_logs", _stored("query_logs", (rendered.text, [evidence])))
    for index, line in enumerate(lines):
        read, written = typed(index, line), read_line("query_logs", line)
        if written is not None or index < first_sample or not owner[index - first_sample][1]:
            assert read == written, (index, line)
        else:  # an entry writing no zoned time: placed at the time the tool stored it at, never guessed
            assert isinstance(read, LogLine) and read.at == owner[index - first_sample][0].ts, (index, line)
            assert read.stamp == iso(read.at)


@settings(max_examples=40, deadline=None)
@given(
    changes=st.lists(st.tuples(MOMENTS, WORDS, st.none() | st.from_regex(r"v[0-9]{1,3}", fullmatch=True)), max_size=10)
)
def test_generated_changes_read_the_same_from_their_records(
    changes: list[tuple[datetime, str, str | None]],
) -> None:
    records = [
        ChangeRecord(
            ts=at.replace(microsecond=0),
            service="payment-service",
            kind="deploy",
            description=f"rolled {words}".strip(),
            version=version,
            line=change_line(at, "payment-service", "deploy", f"rolled {words}".strip(), version),
        )
        for at, words, version in changes
    ]
    rendered, evidence = changes_output({"start": iso(START), "end": iso(START)}, records)
    _agree("query_changes", rendered.text, _stored("query_changes", (rendered.text, [evidence])))


# -- bad input ------------------------------------------------------------------------------


def _metric(count: int) -> tuple[str, MetricEvidence]:
    window = [(START + timedelta(minutes=i), float(i % 7)) for i in range(count)]
    rendered, evidence = metrics_output(
        {"service": "api", "metric": "m", "start": iso(START), "end": iso(START + timedelta(days=9))},
        service="api",
        metric="m",
        unit="ms",
        window=window,
        history=None,
        report=AnomalyReport(baseline=None, anomalies=[]),
    )
    return rendered.text, evidence


def test_values_that_are_no_finite_number_are_kept_as_none_and_never_drawn() -> None:
    body, evidence = _metric(5)
    listed = [(at, math.nan if i == 1 else math.inf if i == 3 else v) for i, (at, v) in enumerate(evidence.listed)]
    drawn = drawn_records("query_metrics", body, [evidence.model_copy(update={"listed": listed})])
    stored = json.loads(json.dumps(stored_form(drawn), allow_nan=False))  # strict JSON: PostgreSQL takes it
    assert stored["series"][0]["values"][1] is None and stored["series"][0]["values"][3] is None
    points = series_points(body, "ms", stored)
    assert [at for at, _v in points] == [evidence.listed[i][0] for i in (0, 2, 4)]
    assert all(math.isfinite(v) for _at, v in points)


def test_a_series_over_the_cap_is_cut_said_so_and_drawn_from_its_text() -> None:
    body, evidence = _metric(5)
    many = [(START + timedelta(seconds=i), 1.0) for i in range(MAX_POINTS + 7)]
    lines = body.split("\n")
    heading = lines.index("points:")
    long_body = "\n".join([*lines[: heading + 1], *(f"{iso(at)} 1ms" for at, _v in many)])
    drawn = drawn_records("query_metrics", long_body, [evidence.model_copy(update={"listed": many})])
    assert drawn is not None and drawn.omitted == 7 and len(drawn.series[0].values) == MAX_POINTS
    stored = stored_form(drawn)
    assert read_drawn(stored) is None, "incomplete records are not read"
    assert len(series_points(long_body, "ms", stored)) == len(stored_points(long_body, "ms"))
    assert not LineReader("query_metrics", stored).typed


def test_a_record_whose_line_the_output_lacks_is_left_out_and_counted() -> None:
    body, evidence = _metric(5)
    drawn = drawn_records("query_metrics", body.replace("points:", "no points"), [evidence])
    assert drawn is not None and drawn.omitted and not drawn.series


@pytest.mark.parametrize(
    "stored",
    [
        None,
        {},
        {"version": 2, "series": []},
        {"version": 1, "series": "not a list"},
        {"version": 1, "unknown": 1},
        {"version": 1, "series": [{"unit": "ms", "line": 0, "times": [1], "values": ["x"]}]},
    ],
)
def test_records_of_another_version_or_shape_fall_back_to_the_text(stored: JsonObject | None) -> None:
    body, _evidence = _metric(5)
    assert read_drawn(stored) is None
    assert series_points(body, "ms", stored) == stored_points(body, "ms")
    assert not LineReader("query_metrics", stored).typed


class _Odd:
    """A backend whose output holds a NUL, a lone surrogate and a bidi control in its lines."""

    def __getattr__(self, name: str) -> object:
        def call(args: object) -> ToolOutput:
            line = f"{iso(START)} api deploy: bad \x00 bytes \udcff here \u202e"
            record = ChangeRecord(
                ts=START, service="api", kind="deploy", description="bad \x00 bytes \udcff here \u202e", line=line
            )
            rendered, evidence = changes_output({"service": "api", "start": iso(START), "end": iso(START)}, [record])
            return ToolOutput(status="ok", text=rendered.text, evidence=[evidence])

        return call


def test_text_that_is_no_valid_utf8_is_stored_clean_and_read(store_url: str) -> None:
    store = SessionStore(store_url)
    session = store.create_session("odd")
    odd = _Odd()
    result = ToolRunner(store, Toolbox(odd, odd, odd, odd), session.id).run(  # type: ignore[arg-type]
        "query_changes", {"service": "api", "start": iso(START), "end": iso(START + timedelta(hours=1))}
    )
    (stored,) = store.list_invocations(session.id)
    assert result.status == "ok" and stored.drawn is not None
    line = stored.output.split("\n")[2]
    facts = LineReader("query_changes", stored.drawn)(2, line)
    assert facts is not None and facts.kind == "change" and facts.at == START
    assert "\x00" not in json.dumps(stored.drawn) and "\\udcff" not in json.dumps(stored.drawn)


# -- the store ------------------------------------------------------------------------------


def test_the_store_keeps_the_records_beside_the_output(store_url: str, demo_env: EmbeddedEnvironment) -> None:
    store = SessionStore(store_url)
    session = store.create_session("q")
    runner = ToolRunner(store, Toolbox(demo_env, demo_env, demo_env, demo_env), session.id)
    made = runner.run(
        "query_metrics",
        {
            "service": "payment-service",
            "metric": "hikaricp_connections_active",
            "start": "2026-07-07T09:30:00Z",
            "end": "2026-07-07T10:40:00Z",
        },
    )
    found = SessionStore(store_url).get_invocations([made.invocation_id])[made.invocation_id]
    drawn = read_drawn(found.drawn)
    assert drawn is not None and drawn.series and drawn.series[0].episodes
    unit = str((found.retrieval_details or {})["unit"])
    assert series_points(found.output, unit, found.drawn) == stored_points(found.output, unit) != []
    with store.engine.connect() as connection:  # no records: SQL NULL, as before migration 0009
        knowledge = runner.run("lookup_knowledge", {"query": "timeout"})
        raw = connection.execute(
            text("SELECT drawn IS NULL FROM tool_invocation WHERE id = :i"), {"i": knowledge.invocation_id}
        )
        assert raw.scalar() in (1, True)


def test_an_output_stored_cut_keeps_no_records(store_url: str) -> None:
    from veridiag.store import MAX_STORED_OUTPUT

    store = SessionStore(store_url)
    session = store.create_session("q")
    made = store.record_invocation(
        session_id=session.id,
        tool_name="query_logs",
        arguments={},
        status="ok",
        output="x" * (MAX_STORED_OUTPUT + 1),
        drawn={"version": 1},
    )
    assert made.output_truncated and made.drawn is None


def test_an_invocation_stored_before_migration_0009_reads_and_draws_from_its_text(empty_url: str) -> None:
    engine = make_engine(empty_url)
    config = _alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        from alembic import command

        command.upgrade(config, "0008")
    body, _evidence = _metric(30)
    now = datetime.now(UTC)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO diagnosis_session (id, created_at, updated_at, query, status, rounds)"
                " VALUES ('s-old', :now, :now, 'q', 'completed', 1)"
            ),
            {"now": now},
        )
        connection.execute(
            text(
                "INSERT INTO tool_invocation (session_id, round, tool_name, arguments, status, output,"
                " output_truncated, output_preview, retrieval_details, started_at, latency_ms)"
                " VALUES ('s-old', 1, 'query_metrics', '{}', 'ok', :out, false, '', '{\"unit\": \"ms\"}', :now, 1.0)"
            ),
            {"out": body, "now": now},
        )
    assert upgrade(engine) == ("0008", head_revision())
    (old,) = SessionStore(empty_url).list_invocations("s-old")
    assert old.drawn is None
    assert len(series_points(old.output, "ms", old.drawn)) == 30
    assert LineReader("query_metrics", old.drawn)(len(body.split("\n")) - 1, body.split("\n")[-1]) is not None
    engine.dispose()


# -- the session page -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("drawn")))


@pytest.fixture(scope="module")
def client(assembly: Assembly) -> TestClient:
    return TestClient(create_app(Settings(home=Path("/nonexistent")), assembly=assembly), base_url="http://localhost")


_TIMELINE = re.compile(r'<section id="incident-timeline".*?</section>', re.DOTALL)
_CHARTS = re.compile(r'<svg xmlns="http://www.w3.org/2000/svg" class="chart.*?</svg>', re.DOTALL)


def _drawn_parts(client: TestClient, session_id: str) -> tuple[str, list[str]]:
    page = client.get(f"/sessions/{session_id}?lang=en").text
    timeline = _TIMELINE.search(page)
    assert timeline is not None
    return timeline.group(), _CHARTS.findall(page)


def test_the_session_page_draws_the_same_from_the_records_as_from_the_text_and_reads_them_first(
    assembly: Assembly, client: TestClient
) -> None:
    question = load_environment().incidents[0].questions[-1]  # the English one
    session_id = client.post("/api/v1/chat", json={"query": question}).json()["session_id"]
    invocations = assembly.store.list_invocations(session_id)
    assert any(i.drawn for i in invocations if i.tool_name == "query_metrics")
    typed_timeline, typed_charts = _drawn_parts(client, session_id)
    assert 'class="tl-row' in typed_timeline and typed_charts, "the page draws something to compare"
    with assembly.store.engine.begin() as connection:  # the session as stored before migration 0009
        connection.execute(update(INVOCATIONS).where(INVOCATIONS.c.session_id == session_id).values(drawn=None))
    text_timeline, text_charts = _drawn_parts(client, session_id)
    assert (text_timeline, text_charts) == (typed_timeline, typed_charts)
    # Records that say otherwise are what the page draws: the records are read first.
    with assembly.store.engine.begin() as connection:
        for invocation in invocations:
            drawn = read_drawn(invocation.drawn)
            if drawn is None:
                continue
            moved = Drawn.model_validate(
                {
                    **drawn.model_dump(),
                    "series": [
                        {**s.model_dump(), "times": [s.times[0] + 7, *s.times[1:]] if s.times else []}
                        for s in drawn.series
                    ],
                    "changes": [{**c.model_dump(), "at": c.at + timedelta(seconds=7)} for c in drawn.changes],
                    "templates": [{**t.model_dump(), "first": t.first + timedelta(seconds=7)} for t in drawn.templates],
                }
            )
            connection.execute(
                update(INVOCATIONS).where(INVOCATIONS.c.id == invocation.id).values(drawn=stored_form(moved))
            )
    assert _drawn_parts(client, session_id) != (typed_timeline, typed_charts)


# -- never grounded -------------------------------------------------------------------------


def test_the_gatekeepers_verdict_does_not_change_when_the_records_are_absent_or_altered(
    client: TestClient,
) -> None:
    session_id = client.post("/api/v1/chat", json={"query": "订单123支付失败，帮我看看是什么原因"}).json()["session_id"]
    chain = AuditChain.model_validate(client.get(f"/api/v1/sessions/{session_id}/audit").json())
    output = chain.executor.structured_output
    assert isinstance(output, dict) and any(i.drawn for i in chain.invocations)

    def verdict(records: Sequence[InvocationRecord]) -> str:
        report = Gatekeeper().validate(output, session_id=session_id, invocations=InMemoryInvocations(records))
        return report.result.model_dump_json()

    as_stored = verdict(list(chain.invocations))
    absent = [i.model_copy(update={"drawn": None}) for i in chain.invocations]
    garbage: JsonObject = {"version": 1, "series": [{"unit": "ms", "line": 0, "times": [0], "values": [1e300]}]}
    altered = [i.model_copy(update={"drawn": garbage if i.drawn else {"version": 99}}) for i in chain.invocations]
    assert verdict(absent) == as_stored == verdict(altered)
    assert json.loads(as_stored)["status"] in ("pass", "warn", "fail")
