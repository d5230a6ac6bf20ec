"""Logs that write no level (loghub's Thunderbird, HealthApp, syslog without PRI, JSON without a
level field) are stored as INFO: a search for ERROR lines finds none whatever happened. The
importer counts those lines per service, query_logs says so, and the offline engine never turns
"no ERROR line" into a confirmed "no errors" for such logs."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import thunderbird_lines
from veridiag.config import Settings
from veridiag.ingest.importers import import_logs
from veridiag.ingest.logformats import read_log_file
from veridiag.pipeline.factory import assemble
from veridiag.tools.args import QueryLogsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.records import LogEvidence

START = datetime(2005, 11, 9, 20, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("line", "leveled"),
    [
        ("- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond[2915]: session closed for user root", False),
        ("KERNDTLB 1131566461 2005.11.09 tn230 Nov 9 12:01:01 tn230/tn230 kernel: data TLB error", True),
        ("20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579", False),
        ("Dec  4 04:47:44 host sshd[1]: Connection closed by 10.0.0.1", False),
        ("Dec  4 04:47:44 host sshd[1]: error: maximum authentication attempts exceeded", True),
        ("<34>Dec  4 04:47:44 host su[1]: 'su root' failed for lonvick", True),
        ('{"ts": "2024-01-02T03:04:05Z", "msg": "no level field"}', False),
        ('{"ts": "2024-01-02T03:04:05Z", "level": "warn", "msg": "a level field"}', True),
        ("2024-01-02 03:04:05,123 INFO  [main] c.s.Order - started", True),
        ("2024-01-02 03:04:05 something happened", False),
    ],
)
def test_each_format_says_whether_a_line_wrote_a_level(tmp_path: Path, line: str, leveled: bool) -> None:
    path = tmp_path / "one.log"
    path.write_text(line + "\n", encoding="utf-8")
    (entry,) = read_log_file(path, year=2024)
    assert entry.leveled is leveled
    if not leveled:
        assert entry.level in ("INFO", "ERROR")  # read as INFO, raised only by the shared severity rule


def _query(env: EmbeddedEnvironment, service: str, level: str | None) -> tuple[str, LogEvidence]:
    args = QueryLogsArgs(
        service=service, level=level, start=START.isoformat(), end=(START + timedelta(hours=1)).isoformat()
    )
    output = env.query_logs(args)
    (evidence,) = [e for e in output.evidence if isinstance(e, LogEvidence)]
    return output.text, evidence


def test_imports_count_the_lines_without_a_level_once_and_query_logs_says_so(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    log = tmp_path / "thunderbird.log"
    log.write_text("\n".join(thunderbird_lines()) + "\n", encoding="utf-8")
    assert import_logs(env, log, service="tbird").imported == 60
    assert import_logs(env, log, service="tbird").imported == 0  # a second import counts nothing again
    text, evidence = _query(env, "tbird", "ERROR")
    assert evidence.matched == 0
    assert evidence.unleveled is not None and evidence.unleveled.mostly
    assert (evidence.unleveled.unleveled, evidence.unleveled.lines) == (60, 60)
    assert "levels: 60 of the 60 imported lines of tbird write no level (read as INFO)" in text.splitlines()
    text, evidence = _query(env, "tbird", None)
    assert evidence.matched == 60 and evidence.unleveled is not None
    assert evidence.unleveled.line in text


def test_logs_with_levels_say_nothing_of_levels(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    log = tmp_path / "app.jsonl"
    rows = [{"ts": (START + timedelta(minutes=m)).isoformat(), "level": "info", "msg": f"ok {m}"} for m in range(20)]
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    import_logs(env, log, service="app")
    text, evidence = _query(env, "app", "ERROR")
    assert evidence.unleveled is None and "write no level" not in text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.booleans(), min_size=1, max_size=40))
def test_the_stored_count_is_the_number_of_lines_without_a_level(
    tmp_path_factory: pytest.TempPathFactory, marks: list[bool]
) -> None:
    folder = tmp_path_factory.mktemp("levels")
    env = EmbeddedEnvironment(folder / "e.db", load_demo=False)
    log = folder / "mixed.jsonl"
    rows = []
    for index, leveled in enumerate(marks):
        row: dict[str, object] = {"ts": (START + timedelta(seconds=index)).isoformat(), "msg": f"line {index}"}
        if leveled:
            row["level"] = "info"
        rows.append(json.dumps(row))
    log.write_text("\n".join(rows) + "\n", encoding="utf-8")
    import_logs(env, log, service="mixed")
    _text, evidence = _query(env, "mixed", "ERROR")
    none = marks.count(False)
    if none == 0:
        assert evidence.unleveled is None
    else:
        assert evidence.unleveled is not None
        assert (evidence.unleveled.unleveled, evidence.unleveled.lines) == (none, len(marks))
        assert evidence.unleveled.mostly is (none * 2 >= len(marks))


def _home(tmp_path: Path, lines: list[str], name: str) -> Settings:
    settings = Settings(home=tmp_path / "home", embedded={"load_demo": False})
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    log = tmp_path / name
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_logs(env, log, service="tbird")
    return settings


@pytest.mark.parametrize(
    ("question", "no_error", "no_levels"),
    [
        ("tbird 2005-11-09 有什么错误？", "没有 ERROR 日志", "的日志大多不写级别（60 条中 60 条没有级别"),
        (
            "any errors on tbird on 2005-11-09?",
            "logged no ERROR lines",
            "logs mostly write no level (60 of 60 lines",
        ),
    ],
)
def test_no_error_line_in_logs_without_levels_is_not_a_confirmed_no_errors(
    tmp_path: Path, question: str, no_error: str, no_levels: str
) -> None:
    result = assemble(_home(tmp_path, thunderbird_lines(), "tbird.log")).pipeline.run(question)
    assert result.verdict == "PASS", result.answer
    assert no_error not in result.answer
    assert no_levels in result.answer
    assert "Bind to port" in result.answer  # the failure-like kind of line is what the answer is about


def test_logs_that_write_levels_still_say_no_error_lines(tmp_path: Path) -> None:
    stamps = [(START + timedelta(minutes=m)).strftime("%Y-%m-%d %H:%M:%S") for m in range(30)]
    lines = [f"{stamp},000 INFO  [main] c.s.Sync - synchronized stratum 3" for stamp in stamps]
    result = assemble(_home(tmp_path, lines, "app.log")).pipeline.run("tbird 2005-11-09 有什么错误？")
    assert "没有 ERROR 日志" in result.answer
    assert "不写级别" not in result.answer


def test_a_file_imported_before_levels_were_counted_says_nothing_of_them(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    env = EmbeddedEnvironment(path, load_demo=False)
    log = tmp_path / "tbird.log"
    log.write_text("\n".join(thunderbird_lines()) + "\n", encoding="utf-8")
    import_logs(env, log, service="tbird")
    env.close()
    conn = sqlite3.connect(path)  # as a version 2 file was: no counts
    conn.execute("DROP TABLE log_levels")
    conn.execute("PRAGMA user_version=2")
    conn.commit()
    conn.close()
    again = EmbeddedEnvironment(path, load_demo=False)
    text, evidence = _query(again, "tbird", "ERROR")
    assert evidence.unleveled is None and "write no level" not in text
