"""Go's ``time.Time.String()`` read as the instant it states wherever a time is read: metric CSVs,
log lines, JSON fields, change feeds (issue 26: ``m=+0.305`` made dateparser read *now*)."""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veridiag.ingest.importers import import_changes
from veridiag.ingest.logformats import LogFileReport, read_log_file
from veridiag.ingest.metric_files import MetricFileReport, read_metric_file
from veridiag.ingest.times import go_time
from veridiag.tools.backends.embedded import EmbeddedEnvironment

NEZHA = Path(__file__).parent / "fixtures" / "nezha"
RECOMMENDATION = NEZHA / "onlineboutique" / "metric" / "recommendationservice-6cfdd55578-gfj6q_metric.csv"

#: Zone abbreviations Go prints (letters; a zone without one prints its offset instead).
ABBREVIATIONS = ("UTC", "CST", "PDT", "CEST", "IST", "ChST", "AEDT", "WIB", "GMT")


def go_string(local: datetime, nanos: int, abbreviation: str | None, monotonic: str | None) -> str:
    """``local`` (aware) written as Go's ``time.Time.String()`` does: the fraction's trailing
    zeros dropped (no dot when it is zero), ``-0700``, the abbreviation or, without one, the
    offset again (``+08``, ``+0530``), then the monotonic reading."""
    offset = local.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    hh, mm = divmod(minutes, 60)
    fraction = f".{local.microsecond * 1000 + nanos:09d}".rstrip("0").rstrip(".")
    zone = abbreviation or (f"{sign}{hh:02d}" if mm == 0 else f"{sign}{hh:02d}{mm:02d}")
    text = f"{local:%Y-%m-%d %H:%M:%S}{fraction} {sign}{hh:02d}{mm:02d} {zone}"
    return f"{text} m={monotonic}" if monotonic else text


instants = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2099, 12, 31), timezones=st.just(UTC))
offsets = st.integers(min_value=-12 * 4, max_value=14 * 4).map(lambda q: timezone(timedelta(minutes=15 * q)))
monotonics = st.none() | st.builds(
    lambda sign, seconds: f"{sign}{seconds:.9f}", st.sampled_from("+-"), st.floats(min_value=0, max_value=1e7)
)
go_times = st.builds(
    lambda instant, zone, nanos, abbreviation, monotonic: (
        instant,
        go_string(instant.astimezone(zone), nanos, abbreviation, monotonic),
    ),
    instants,
    offsets,
    st.integers(min_value=0, max_value=999),
    st.none() | st.sampled_from(ABBREVIATIONS),
    monotonics,
)


@given(go_times)
def test_any_go_time_reads_back_to_the_microsecond(case: tuple[datetime, str]) -> None:
    instant, text = case
    assert go_time(text) == instant


@given(go_times)
def test_a_go_time_opening_a_log_line_places_the_line(case: tuple[datetime, str]) -> None:
    instant, text = case
    folder = Path(tempfile.mkdtemp())
    try:
        path = folder / "app.log"
        path.write_text(f"{text} cache warmed in 12ms\n", encoding="utf-8")
        report = LogFileReport()
        (entry,) = read_log_file(path, report=report)
        assert entry.ts == instant
        assert entry.message.endswith("cache warmed in 12ms")
    finally:
        shutil.rmtree(folder)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(go_times, min_size=3, max_size=8))
def test_a_column_of_go_times_is_the_metric_files_time(cases: list[tuple[datetime, str]]) -> None:
    folder = Path(tempfile.mkdtemp())
    try:
        path = folder / "cpu.csv"
        rows = "".join(f"{text},{n}.5\n" for n, (_instant, text) in enumerate(cases))
        path.write_text(f"Time,cpu_percent\n{rows}", encoding="utf-8")
        report = MetricFileReport()
        samples = list(read_metric_file(path, report=report))
        assert report.time_format == "go-time"
        assert [(s.ts, s.value) for s in samples] == [(instant, n + 0.5) for n, (instant, _t) in enumerate(cases)]
    finally:
        shutil.rmtree(folder)


def test_the_nezha_metric_file_is_placed_at_its_own_times() -> None:
    """The file of issue 26: every row at the instant its Time column states, none near today."""
    report = MetricFileReport()
    samples = list(read_metric_file(RECOMMENDATION, report=report))
    assert report.time_format == "go-time"
    stamps = sorted({s.ts for s in samples})
    assert stamps[0] == datetime(2022, 8, 22, 3, 51, 19, 891296, tzinfo=UTC)  # ".89129634" truncated to µs
    assert stamps[-1] < datetime(2022, 8, 22, 4, 0, tzinfo=UTC)
    assert len(stamps) == 5


def test_go_times_in_json_fields_and_change_feeds(tmp_path: Path) -> None:
    stated = "2023-01-29 17:30:02.618340807 +0800 CST m=+3.5"
    logs = tmp_path / "app.json"
    logs.write_text(json.dumps({"time": stated, "level": "error", "msg": "payment failed"}) + "\n", encoding="utf-8")
    (entry,) = read_log_file(logs)
    assert (entry.ts, entry.level) == (datetime(2023, 1, 29, 9, 30, 2, 618340, tzinfo=UTC), "ERROR")

    feed = tmp_path / "changes.csv"
    feed.write_text(f"time,service,kind,description\n{stated},payment,deploy,v2 rolled out\n", encoding="utf-8")
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    report = import_changes(env, feed)
    assert report.imported == 1
    (ts,) = env._connection().execute("SELECT ts FROM change_event").fetchone()
    assert ts == int(datetime(2023, 1, 29, 9, 30, 2, 618000, tzinfo=UTC).timestamp() * 1000)


def test_what_is_not_a_go_time_is_refused() -> None:
    for text in (
        "2022-08-22 03:51:19.79 +0000",  # no zone abbreviation: not Go's String()
        "2022-13-22 03:51:19 +0000 UTC",  # month 13
        "2022-08-22 03:51:19 +2500 XYZ",  # no such offset
        "2022-08-22T03:51:19Z",
        "m=+0.305041286",
    ):
        assert go_time(text) is None, text


def test_a_monotonic_suffix_never_reaches_dateparser(tmp_path: Path) -> None:
    """A cell with Go's monotonic reading that is not a whole Go time is skipped, not read as now."""
    path = tmp_path / "m.csv"
    path.write_text(
        "Time,cpu\n"
        + "".join(f"2022-08-22 03:5{n}:19.5 +0000 UTC m=+{n}.1,{n}\n" for n in range(5))
        + "2022-08-22 03:59:19.79 +0000 m=+9.1,9\n",  # no zone abbreviation: dateparser reads it as now
        encoding="utf-8",
    )
    report = MetricFileReport()
    samples = list(read_metric_file(path, report=report))
    now = datetime.now(UTC)
    assert all(abs(s.ts - now) > timedelta(days=30) for s in samples)
    assert (len(samples), report.skipped) == (5, 1)
