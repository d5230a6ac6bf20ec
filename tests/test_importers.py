"""Real-data import: timestamp formats, bad bytes and bad rows, and the CLI around it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veridiag.cli.app import app
from veridiag.ingest.importers import (
    ChangeFields,
    ImportFailedError,
    export_openmetrics,
    import_logs,
    import_metrics_csv,
)
from veridiag.store.database import head_revision
from veridiag.tools import QueryLogsArgs, QueryMetricsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment

SAMPLES = {
    "iso8601": ("2026-07-07T10:01:02Z ERROR a\n2026-07-07T10:01:03.5+08:00 INFO b\n", datetime(2026, 7, 7, 10, 1, 2)),
    "log4j": (
        "2026-07-07 10:01:02,123 ERROR [main] a\n2026-07-07 10:01:03,456 INFO b\n",
        datetime(2026, 7, 7, 10, 1, 2, 123000),
    ),
    "syslog": (
        "Dec  4 04:47:44 host sshd[1]: error: bad\nDec  4 04:48:01 host cron[2]: job\n",
        datetime(2005, 12, 4, 4, 47, 44),
    ),
    "apache": (
        "[Sun Dec 04 04:47:44 2005] [error] mod_jk child\n[Sun Dec 04 04:47:45 2005] [notice] ok\n",
        datetime(2005, 12, 4, 4, 47, 44),
    ),
    "yymmdd": (
        "081109 203615 148 ERROR dfs.DataNode: a\n081109 203807 222 WARN dfs.DataNode: b\n",
        datetime(2008, 11, 9, 20, 36, 15),
    ),
}


@pytest.fixture
def env(tmp_path: Path) -> EmbeddedEnvironment:
    return EmbeddedEnvironment(tmp_path / "env.db", load_demo=False)


def rows(env: EmbeddedEnvironment, service: str) -> list[tuple[int, str, str]]:
    return (
        env._connection()
        .execute("SELECT ts, level, line FROM log_line WHERE service=? ORDER BY id", (service,))
        .fetchall()
    )


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_timestamp_formats_are_detected(env: EmbeddedEnvironment, tmp_path: Path, name: str) -> None:
    text, first = SAMPLES[name]
    path = tmp_path / f"{name}.log"
    path.write_text(text, encoding="utf-8")
    report = import_logs(env, path, service=name, year=2005)
    assert report.imported == 2 and report.skipped == 0
    stored = rows(env, name)
    assert stored[0][0] == int(first.replace(tzinfo=UTC).timestamp() * 1000)
    assert stored[0][1] == "ERROR"


def test_explicit_format_continuations_and_bad_bytes(env: EmbeddedEnvironment, tmp_path: Path) -> None:
    path = tmp_path / "app.log"
    path.write_bytes(
        b"noise before any timestamp\n"
        b"07/07/2026 10:01:02 ERROR payment timeout \xff\xfe\n"
        b"\tat com.shop.Pay.run(Pay.java:42)\n"
        b"07/07/2026 10:01:05 INFO recovered\n"
    )
    report = import_logs(env, path, service="pay", time_format="%d/%m/%Y %H:%M:%S")
    assert (report.imported, report.skipped, report.first_skipped, report.replaced_bytes_lines) == (2, 1, [1], 1)
    assert report.continuation_lines == 1
    stored = rows(env, "pay")
    assert stored[0][1] == "ERROR" and "\tat com.shop.Pay.run(Pay.java:42)" in stored[0][2], (
        "a trace stays with its entry"
    )
    assert stored[0][0] == int(datetime(2026, 7, 7, 10, 1, 2, tzinfo=UTC).timestamp() * 1000), "day first, as told"
    assert "\ufffd" in stored[0][2]
    out = env.query_logs(
        QueryLogsArgs(service="pay", query="timeout", start="2026-07-07T10:00:00Z", end="2026-07-07T11:00:00Z")
    )
    assert out.status == "ok" and out.retrieval_details["matched"] == 1


def test_unrecognised_timestamps_refuse_the_file(env: EmbeddedEnvironment, tmp_path: Path) -> None:
    path = tmp_path / "prose.txt"
    path.write_text("hello\nworld\n", encoding="utf-8")
    with pytest.raises(ImportFailedError, match=r"no line could be placed in time .* line\(s\) 1, 2"):
        import_logs(env, path, service="x")
    with pytest.raises(ImportFailedError, match="no such file"):
        import_logs(env, tmp_path / "missing.log", service="x")


def test_metric_csv_with_header_epochs_and_bad_rows(env: EmbeddedEnvironment, tmp_path: Path) -> None:
    path = tmp_path / "p99.csv"
    path.write_text(
        "timestamp,value\n2026-07-07T10:00:00Z,120\n1783418460,130.5\n1783418520000,5300\n"
        "oops,1\n2026-07-07T10:03:00Z,NaN\n2026-07-07T10:04:00Z\n",
        encoding="utf-8",
    )
    report = import_metrics_csv(env, path, service="api", metric="p99_ms", unit="ms")
    assert (report.imported, report.skipped) == (3, 3)
    out = env.query_metrics(
        QueryMetricsArgs(service="api", metric="p99_ms", start="2026-07-07T10:00:00Z", end="2026-07-07T10:05:00Z")
    )
    assert out.status == "ok" and "max 5300ms" in out.text
    with pytest.raises(ImportFailedError, match="Prometheus name"):
        import_metrics_csv(env, path, service="api", metric="p99 ms")


def test_openmetrics_export(demo_env: EmbeddedEnvironment, tmp_path: Path) -> None:
    path = tmp_path / "demo.om"
    with path.open("w", encoding="utf-8") as handle:
        count = export_openmetrics(demo_env, handle)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[-1] == "# EOF" and count == 15_360
    assert 'hikaricp_connections_active{service="payment-service"} 50 1783418400.000' in lines


runner = CliRunner()


def test_cli_import_kb_and_tool_call(tmp_path: Path) -> None:
    env = {"VERIDIAG_HOME": str(tmp_path), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}
    log = tmp_path / "svc.log"
    log.write_text("".join(f"2026-07-07T10:{m:02d}:00Z ERROR pay timeout m={m}\n" for m in range(30)), encoding="utf-8")
    result = runner.invoke(app, ["data", "import-logs", str(log), "--service", "pay", "--json"], env=env)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["imported"] == 30
    result = runner.invoke(app, ["data", "import-logs", str(tmp_path / "nope.log"), "--service", "pay"], env=env)
    assert result.exit_code == 2 and "no such file" in result.stderr
    call = runner.invoke(
        app,
        [
            "tools",
            "call",
            "query_logs",
            '{"service": "pay", "query": "timeout", "start": "2026-07-07T10:00:00Z", "end": "2026-07-07T11:00:00Z"}',
        ],
        env=env,
    )
    assert call.exit_code == 0, call.stderr
    record = json.loads(call.stdout)
    assert record["status"] == "ok" and record["retrieval_details"]["matched"] == 30 and record["id"] >= 1
    bad = runner.invoke(app, ["tools", "call", "query_logs", "{broken"], env=env)
    assert bad.exit_code == 2 and json.loads(bad.stdout)["status"] == "error"
    assert bad.stderr.startswith("error: query_logs failed (invocation #") and bad.stderr.count("\n") == 1
    kb = runner.invoke(app, ["kb", "search", "连接池 超时", "--json"], env=env)
    assert kb.exit_code == 0 and json.loads(kb.stdout)[0]["id"] == "rb-db-pool-exhaustion"
    upgraded = runner.invoke(app, ["db", "upgrade"], env=env)
    assert upgraded.exit_code == 0 and f"→ {head_revision()}" in upgraded.stdout


def test_a_change_record_is_read_by_its_first_filled_spelling_in_any_case() -> None:
    said = ChangeFields.read(
        {"TIME": "", "Timestamp": 1395410520, "Service.Name": " pay ", "app": "other", "Event": "Deploy", "msg": "v2"}
    )
    assert said == ChangeFields(time="1395410520", service="pay", kind="Deploy", description="v2", version=None)
    assert ChangeFields.read({}) == ChangeFields(time=None, service=None, kind=None, description=None, version=None)
