"""Container log records (issue 26): nezha's log CSV, Docker json-file, CRI and a shipper's JSON —
placed at the record's time, owned by the record's pod, the application line inside read for
its level, logger and template, trace and span kept."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veridiag.cli.app import app
from veridiag.ingest.batch import import_log_files
from veridiag.ingest.importers import ImportFailedError, import_logs
from veridiag.ingest.logformats import LogEntry, LogFileReport, read_log_file
from veridiag.ingest.logformats.reader import _continuation_like
from veridiag.tools import QueryLogsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.words import quantity

FIXTURES = Path(__file__).parent / "fixtures"
NEZHA_LOGS = FIXTURES / "nezha" / "trainticket" / "log"
CONTAINERS = FIXTURES / "containers"
runner = CliRunner()


def read(path: Path) -> tuple[list[LogEntry], LogFileReport]:
    report = LogFileReport()
    return list(read_log_file(path, report=report)), report


def nezha_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def inner_line(row: dict[str, str]) -> str:
    record, _end = json.JSONDecoder().raw_decode(row["Log"])
    return str(record["log"]).rstrip("\n")


def test_the_nezha_log_csv_is_read_row_by_row() -> None:
    rows = nezha_rows(NEZHA_LOGS / "09_30_log.csv")
    entries, report = read(NEZHA_LOGS / "09_30_log.csv")
    assert (report.format, report.inner_format) == ("container_csv", "logback_time")
    assert len(entries) == len(rows) and report.unparsed == 0
    by_line = {entry.line_number: entry for entry in entries}
    for number, row in enumerate(rows, start=2):  # one row a line: the header is line 1
        entry, line = by_line[number], inner_line(row)
        # the record's time (UTC, a date), not the application's 17:30 in its own zone
        assert entry.ts == datetime.fromisoformat(row["Timestamp"]).astimezone(UTC)
        assert entry.workload == row["PodName"].rsplit("-", 2)[0]
        assert (entry.trace_id, entry.span_id) == (row["TraceID"], row["SpanID"])
        assert entry.level == line.split()[1]
        assert entry.component == line.split()[2].split("#")[0]
        assert entry.text == line
        assert line.endswith(entry.message)
    # the one 16 KiB line Docker split and whose rest the dataset lost: kept as far as it goes
    assert report.partial_unfinished == 1
    assert max(len(e.text) for e in entries) == 16384


def test_a_damaged_record_is_read_as_far_as_its_json_goes() -> None:
    """10_06 has a record with text after its JSON: its line is kept, the text after is counted."""
    entries, report = read(NEZHA_LOGS / "10_06_log.csv")
    assert report.trailing_text == 1 and report.unparsed == 0
    damaged = next(e for e in entries if e.workload == "ts-user-service")
    assert damaged.text.startswith("18:06:03.361 INFO  u.c.UserController#48")
    assert damaged.ts == datetime(2023, 1, 29, 10, 6, 3, 361647, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("ts-food-service-json.log", "docker_json"),
        ("ts-food-service-cri.log", "cri"),
        ("fluent-bit.json", "kubernetes_json"),
    ],
)
def test_docker_cri_and_shipper_records_read_alike(name: str, fmt: str) -> None:
    docker = [json.loads(line) for line in (CONTAINERS / "ts-food-service-json.log").read_text().splitlines()]
    entries, report = read(CONTAINERS / name)
    assert (report.format, report.inner_format) == (fmt, "logback_time")
    assert [e.ts for e in entries] == [datetime.fromisoformat(d["time"]).astimezone(UTC) for d in docker]
    assert [e.text for e in entries] == [d["log"].rstrip("\n") for d in docker]
    assert [e.level for e in entries] == [d["log"].split()[1] for d in docker]
    assert {e.component for e in entries} >= {"f.c.FoodController", "f.s.FoodServiceImpl"}
    assert {e.workload for e in entries} == ({"ts-food-service"} if fmt == "kubernetes_json" else {None})


def test_split_lines_are_joined_and_a_new_line_is_never_glued_on(tmp_path: Path) -> None:
    """CRI ``P`` records and Docker lines without their newline go on in the next record — unless
    that record starts a line of its own."""
    long = "17:31:11.470 ERROR f.s.FoodServiceImpl#302 TraceID: 1 SpanID: 2 [getAllFood][" + "x" * 50 + "]"
    cri = tmp_path / "cri.log"
    cri.write_text(
        f"2023-01-29T09:31:11.1Z stdout P {long[:40]}\n"
        f"2023-01-29T09:31:11.1Z stdout P {long[40:70]}\n"
        f"2023-01-29T09:31:11.1Z stdout F {long[70:]}\n"
        "2023-01-29T09:31:12Z stdout P 17:31:12.000 INFO  f.c.FoodController#93 cut short\n"
        "2023-01-29T09:31:13Z stdout F 17:31:13.000 INFO  f.c.FoodController#93 next line\n",
        encoding="utf-8",
    )
    entries, report = read(cri)
    assert [e.text for e in entries] == [
        long,
        "17:31:12.000 INFO  f.c.FoodController#93 cut short",
        "17:31:13.000 INFO  f.c.FoodController#93 next line",
    ]
    assert entries[0].level == "ERROR"
    assert (report.partials_joined, report.partial_unfinished) == (2, 1)

    docker = tmp_path / "docker.log"
    records = [
        {"log": long[:50], "stream": "stdout", "time": "2023-01-29T09:31:11.1Z"},
        {"log": long[50:] + "\n", "stream": "stdout", "time": "2023-01-29T09:31:11.2Z"},
    ]
    docker.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (entry,), _report = read(docker)
    assert entry.text == long


def test_importing_the_folder_counts_what_the_csv_says(tmp_path: Path) -> None:
    """Every file of the folder in one call; ERROR lines per service as the CSV has them, with
    templates mined from the application lines and trace ids stored."""
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    report = import_log_files(env, [NEZHA_LOGS])
    assert [f.outcome for f in report.files] == ["imported", "imported"]
    rows = nezha_rows(NEZHA_LOGS / "09_30_log.csv") + nezha_rows(NEZHA_LOGS / "10_06_log.csv")
    errors: dict[str, int] = {}
    for row in rows:
        if inner_line(row).split()[1] == "ERROR":
            service = row["PodName"].rsplit("-", 2)[0]
            errors[service] = errors.get(service, 0) + 1
    assert report.imported == len(rows) and report.services == sorted({r["PodName"].rsplit("-", 2)[0] for r in rows})
    for service, count in errors.items():
        out = env.query_logs(
            QueryLogsArgs(service=service, level="ERROR", start="2023-01-29T09:00:00Z", end="2023-01-29T11:00:00Z")
        )
        assert f"matched {quantity(count, 'line')} (ERROR {count})" in out.text, out.text
        assert "TraceID: <*> SpanID: <*>" in out.text  # the template, ids masked
    stored = sqlite3.connect(env.path).execute("SELECT COUNT(*) FROM log_line WHERE trace_id IS NOT NULL").fetchone()
    assert stored == (len(rows),)
    again = import_log_files(env, [NEZHA_LOGS])
    assert (again.imported, again.duplicates) == (0, len(rows))


def test_service_overrides_the_pod_and_a_file_naming_none_needs_it(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    report = import_logs(env, CONTAINERS / "fluent-bit.json", service="food")
    assert report.services == ["food"] and report.traced == 0
    with pytest.raises(ImportFailedError, match="pass --service"):
        import_logs(env, CONTAINERS / "ts-food-service-cri.log", service=None)
    done = import_logs(env, CONTAINERS / "ts-food-service-cri.log", service="ts-food-service")
    assert done.inner_format == "logback_time" and done.services == ["ts-food-service"]


def test_the_cli_imports_a_folder_of_container_logs(tmp_path: Path) -> None:
    env = {"VERIDIAG_HOME": str(tmp_path / "home"), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}
    done = runner.invoke(app, ["data", "import-logs", str(NEZHA_LOGS)], env=env)
    assert done.exit_code == 0, done.stderr
    assert "09_30_log.csv: 19 new log lines — " in done.stdout
    assert "lines inside the records: format logback_time" in done.stdout
    assert "19 lines kept with their trace and span ids" in done.stdout
    assert "1 long line whose end is not in the file" in done.stdout
    formats = runner.invoke(app, ["data", "formats", "--json"], env=env)
    ids = {f["id"] for f in json.loads(formats.stdout)}
    assert {"docker_json", "cri", "kubernetes_json", "container_csv", "logback_time", "logcat", "bgl"} <= ids


line_texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=80
).filter(lambda t: t.strip() and not t[0].isspace() and not _continuation_like(t))
instants = st.datetimes(min_value=datetime(2001, 1, 1), max_value=datetime(2099, 1, 1), timezones=st.just(UTC))


def _record(shape: str, moment: datetime, text: str) -> str:
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + "123Z"  # nanoseconds, as runtimes write them
    if shape == "cri":
        return f"{stamp} stdout F {text}"
    record: dict[str, object] = {"log": text + "\n", "stream": "stdout", "time": stamp}
    if shape == "shipper":
        record["kubernetes"] = {"pod_name": "checkout-5b67c48447-mv5hb", "container_name": "server"}
    return json.dumps(record, ensure_ascii=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["docker", "cri", "shipper"]), st.lists(st.tuples(instants, line_texts), min_size=1, max_size=6))
def test_any_line_in_any_record_reads_back_at_the_records_time(shape: str, lines: list[tuple[datetime, str]]) -> None:
    folder = Path(tempfile.mkdtemp())
    try:
        path = folder / "c.log"
        path.write_text("".join(_record(shape, m, t) + "\n" for m, t in lines), encoding="utf-8")
        entries, report = read(path)
    finally:
        shutil.rmtree(folder)
    assert report.format == {"docker": "docker_json", "cri": "cri", "shipper": "kubernetes_json"}[shape]
    assert [(e.ts, e.text) for e in entries] == lines
    assert {e.workload for e in entries} == ({"checkout"} if shape == "shipper" else {None})


def test_a_file_from_before_trace_ids_gains_them_and_keeps_its_lines(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    env = EmbeddedEnvironment(path, load_demo=False)
    import_logs(env, CONTAINERS / "ts-food-service-cri.log", service="food")
    env.close()
    conn = sqlite3.connect(path)  # as a version 3 file was
    conn.execute("ALTER TABLE log_line DROP COLUMN trace_id")
    conn.execute("ALTER TABLE log_line DROP COLUMN span_id")
    conn.execute("PRAGMA user_version=3")
    conn.commit()
    conn.close()
    again = EmbeddedEnvironment(path, load_demo=False)
    report = import_log_files(again, [NEZHA_LOGS])
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*), COUNT(trace_id) FROM log_line").fetchone() == (9 + report.imported, 24)
