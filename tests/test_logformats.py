"""Log formats: detection, every field of every format, years, time zones, severity, changes, multi-line, bad bytes."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from veridiag.ingest.logformats import (
    FORMATS,
    ChangeInfo,
    LogEntry,
    LogFileReport,
    LogFormatError,
    detect_format,
    read_log_file,
)

FIXTURES = Path(__file__).parent / "fixtures" / "logs"


def read(path: Path, **options: object) -> tuple[list[LogEntry], LogFileReport]:
    report = LogFileReport()
    entries = list(read_log_file(path, report=report, **options))  # type: ignore[arg-type]
    return entries, report


def write(tmp_path: Path, text: str | bytes, name: str = "app.log") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def utc(  # noqa: PLR0917 - the positional fields of datetime itself
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, microsecond: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, microsecond, tzinfo=UTC)


# The fixture of each format: its id, then (ts, level, component, message) of its first entry.
FIRST: dict[str, tuple[datetime, str, str, str]] = {
    "syslog": (
        utc(2025, 12, 31, 23, 59, 58),
        "ERROR",
        "sshd",
        "Failed password for root from 203.0.113.9 port 51122 ssh2",
    ),
    "syslog5424": (utc(2024, 3, 10, 22, 14, 15, 3000), "INFO", "pgbouncer", "pool is full, waiting=12"),
    "syslog_iso": (
        utc(2026, 7, 7, 8, 1, 2, 123456),
        "INFO",
        "sshd",
        "Accepted publickey for deploy from 198.51.100.4 port 50022 ssh2",
    ),
    "thunderbird": (utc(2005, 11, 9, 20, 1, 1), "INFO", "crond(pam_unix)", "session closed for user root"),
    "apache_error": (
        utc(2005, 12, 4, 4, 47, 44),
        "INFO",
        "",
        "workerEnv.init() ok /etc/httpd/conf/workers2.properties",
    ),
    "nginx_error": (
        utc(2024, 1, 2, 3, 4, 5),
        "ERROR",
        "",
        "connect() failed (111: Connection refused) while connecting to upstream, client: 192.0.2.1, "
        'server: shop.example, upstream: "http://127.0.0.1:8080/api"',
    ),
    "access": (utc(2000, 10, 10, 20, 55, 36), "INFO", "GET /apache_pb.gif", '"GET /apache_pb.gif HTTP/1.0" 200 2326'),
    "json": (
        utc(2026, 7, 7, 10, 1, 2, 123000),
        "ERROR",
        "com.zaxxer.hikari.pool.HikariPool",
        "HikariPool-1 - Connection is not available, request timed out after 30000ms",
    ),
    "logfmt": (utc(2026, 7, 7, 10, 1, 2), "INFO", "", "order created"),
    "log4j": (utc(2015, 7, 29, 17, 41, 44, 747000), "INFO", "c.s.order.OrderService", "started in 4.2 s"),
    "zookeeper": (utc(2015, 7, 29, 17, 41, 44, 747000), "INFO", "FastLeaderElection", "Notification time out: 3200"),
    "spring": (
        utc(2024, 1, 2, 3, 4, 5, 123000),
        "INFO",
        "o.s.b.w.embedded.tomcat.TomcatWebServer",
        "Tomcat started on port(s): 8080 (http)",
    ),
    "hadoop": (
        utc(2017, 6, 9, 20, 10, 40),
        "INFO",
        "executor.CoarseGrainedExecutorBackend",
        "Registered signal handlers for [TERM, HUP, INT]",
    ),
    "hdfs": (
        utc(2008, 11, 9, 20, 36, 15),
        "INFO",
        "dfs.DataNode$PacketResponder",
        "PacketResponder 1 for block blk_38865049064139660 terminating",
    ),
    "level_component": (
        utc(2026, 7, 7, 10, 1, 2, 123000),
        "ERROR",
        "payment-service",
        "HikariPool-1 - Connection is not available, request timed out after 30000ms",
    ),
    "openstack": (
        utc(2017, 5, 16, 0, 0, 0, 8000),
        "INFO",
        "nova.osapi_compute.wsgi.server",
        '10.11.10.1 "GET /v2/54fadb41/servers/detail HTTP/1.1" status: 200 len: 1893 time: 0.2477829',
    ),
    "hpc": (
        utc(2004, 2, 26, 14, 12, 22),
        "INFO",
        "unix.hw",
        r"Component State Change: Component \042alt0\042 is in the unavailable state (HWID=1973)",
    ),
    "healthapp": (utc(2017, 12, 23, 22, 15, 29, 606000), "INFO", "Step_LSC", "onStandStepChanged 3579"),
    "logcat": (
        utc(2025, 3, 17, 16, 13, 38, 811000),
        "DEBUG",
        "WindowManager",
        "printFreezingDisplayLogsopening app wtoken = AppWindowToken{9f4ef63 token=Token{a64f992 "
        "ActivityRecord{de9231d u0 com.tencent.qt.qtl/.activity.info.NewsDetailXmlActivity t761}}}, allDrawn= false, "
        "startingDisplayed =  false, startingMoved =  false, isRelaunching =  false",
    ),
    "bgl": (utc(2005, 6, 3, 22, 42, 50, 675872), "INFO", "KERNEL", "instruction cache parity error corrected"),
    "proxifier": (
        utc(2025, 12, 31, 23, 59, 58),
        "INFO",
        "chrome.exe",
        "proxy.example.net:5070 open through proxy proxy.example.net:5070 HTTPS",
    ),
}


#: Formats with their fixtures and tests in test_container_logs.py: container records (a CSV of
#: them is known by its header, not its lines) and the time-of-day lines found inside them.
CONTAINER_FORMATS = {"docker_json", "cri", "kubernetes_json", "container_csv", "logback_time"}


def test_every_format_has_a_fixture_and_an_expectation() -> None:
    assert set(FIRST) | {"unknown"} | CONTAINER_FORMATS == set(FORMATS)
    assert {p.stem for p in FIXTURES.glob("*.log")} >= set(FIRST)


@pytest.mark.parametrize("format_id", sorted(FIRST))
def test_format_is_detected_from_a_sample(format_id: str) -> None:
    sample = (FIXTURES / f"{format_id}.log").read_text(encoding="utf-8").splitlines()
    assert detect_format(sample).id == format_id


@pytest.mark.parametrize("format_id", sorted(FIRST))
def test_every_field_of_the_first_entry(format_id: str) -> None:
    entries, report = read(FIXTURES / f"{format_id}.log", year=2025)
    assert report.format == format_id
    assert report.unparsed == 0 and report.no_timestamp == 0 and report.parsed == report.entries == len(entries)
    first = entries[0]
    assert (first.ts, first.level, first.component, first.message) == FIRST[format_id]
    assert first.line_number == 1 and first.parsed
    assert first.text == (FIXTURES / f"{format_id}.log").read_text(encoding="utf-8").splitlines()[0]
    assert all(e.ts.tzinfo is UTC for e in entries)


def test_levels_and_components_of_the_other_lines() -> None:
    levels = {
        "apache_error": ["INFO", "ERROR", "ERROR", "WARN"],
        "nginx_error": ["ERROR", "WARN", "INFO"],
        "zookeeper": ["INFO", "WARN", "ERROR"],
        "hadoop": ["INFO", "WARN", "ERROR"],
        "hdfs": ["INFO", "INFO", "WARN"],
        "openstack": ["INFO", "ERROR", "WARN"],
        "syslog5424": ["INFO", "ERROR", "INFO"],
        "thunderbird": ["INFO", "INFO", "ERROR", "INFO"],  # an alert label other than "-" is an alert
        "syslog_iso": ["INFO", "ERROR", "INFO"],  # no severity written; an OOM kill is an error
    }
    for format_id, expected in levels.items():
        assert [e.level for e in read(FIXTURES / f"{format_id}.log")[0]] == expected, format_id
    apache = read(FIXTURES / "apache_error.log")[0]
    assert [e.component for e in apache] == ["", "", "core", "ssl"]
    assert apache[2].ts == utc(2000, 10, 11, 14, 32, 52, 123456)
    assert apache[2].message == "AH00037: Symbolic link not allowed"
    zookeeper = read(FIXTURES / "zookeeper.log")[0]
    assert [e.component for e in zookeeper] == [
        "FastLeaderElection",
        "QuorumCnxManager$RecvWorker",
        "CommitProcessor:1",
    ]
    syslog = read(FIXTURES / "syslog.log", year=2025)[0]
    assert [e.component for e in syslog] == ["sshd", "systemd", "app", "kernel", "CRON", ""]
    assert syslog[-1].message == "last message repeated 2 times"
    rfc5424 = read(FIXTURES / "syslog5424.log")[0]
    assert rfc5424[2].message == "starting up" and rfc5424[2].component == ""  # BOM dropped, nil app
    spring = read(FIXTURES / "spring.log")[0]
    assert spring[1].ts == utc(2024, 1, 2, 2, 4, 6, 500000)
    assert spring[1].message == "Servlet.service() threw exception"
    hpc = read(FIXTURES / "hpc.log")[0]
    assert [e.component for e in hpc] == ["unix.hw", "partition", "node"]
    healthapp = read(FIXTURES / "healthapp.log")[0]
    assert healthapp[1].ts == utc(2017, 12, 23, 22, 16, 0, 119000)  # the app drops leading zeros
    demo = read(FIXTURES / "level_component.log")[0]
    assert [e.component for e in demo] == ["payment-service", "gateway", "redis"]
    assert [e.service for e in demo] == [None, None, None]  # a word of a text line is never the service
    assert demo[1].message == "POST /api/pay status=200 upstream=payment-service cost=35ms"


def test_access_log_level_from_status_and_route_component() -> None:
    entries = read(FIXTURES / "access.log")[0]
    assert [e.level for e in entries] == ["INFO", "ERROR", "WARN", "WARN"]
    assert [e.component for e in entries] == [
        "GET /apache_pb.gif",
        "POST /api/orders/{id}/pay",
        "GET /api/orders/{id}",
        "access",
    ]
    assert entries[3].ts == utc(2000, 10, 10, 13, 55, 39)  # +0000


def test_fmt_forces_a_format(tmp_path: Path) -> None:
    entries, report = read(FIXTURES / "log4j.log", fmt="level_component")
    assert report.format == "level_component"
    # level_component does not read "[thread]" after the level: the lines are imported, unparsed
    assert report.parsed == 0 and report.unparsed == 3 and [e.parsed for e in entries] == [False] * 3
    entries, report = read(FIXTURES / "logfmt.log", fmt="unknown")
    assert report.format == "unknown" and report.entries == report.unparsed == 4
    assert entries[0].ts == utc(2026, 7, 7, 10, 1, 2) and entries[0].message == entries[0].text


def test_an_unknown_format_id_lists_the_known_ones() -> None:
    with pytest.raises(LogFormatError) as caught:
        read_log_file(FIXTURES / "json.log", fmt="cobol")
    assert "cobol" in str(caught.value) and "logfmt" in str(caught.value) and "syslog5424" in str(caught.value)


def test_unknown_format_imports_every_line_unparsed(tmp_path: Path) -> None:
    entries, report = read(FIXTURES / "unknown.log", year=2026)
    assert report.format == "unknown"
    assert (report.entries, report.parsed, report.unparsed, report.continuation_lines) == (3, 0, 3, 1)
    assert [e.parsed for e in entries] == [False, False, False]
    assert entries[0].level == "WARN"  # the level word right after the timestamp
    assert entries[2].level == "INFO"  # later words do not count
    assert entries[1].ts == entries[0].ts  # no time of its own: the one before
    assert entries[1].text == "some line without a time\n   indented continuation"
    assert entries[0].message == entries[0].text == "2026-07-07 10:01:02 [WARN] free form line one"


def test_a_file_without_timestamps_places_nothing_in_time() -> None:
    entries, report = read(FIXTURES / "no_timestamps.log")
    assert entries == []
    assert report.entries == 0 and report.no_timestamp == 3 and report.first_no_timestamp == [1, 2, 3]


def test_lines_before_the_first_timestamp_are_counted(tmp_path: Path) -> None:
    lines = [f"preamble {i}" for i in range(7)] + ["2026-07-07T10:01:02Z ERROR api boom", "\tat x.y(Z.java:1)"]
    entries, report = read(write(tmp_path, "\n".join(lines) + "\n"))
    assert report.no_timestamp == 7 and report.first_no_timestamp == [1, 2, 3, 4, 5]
    assert len(entries) == 1 and entries[0].line_number == 8 and entries[0].text.endswith("\tat x.y(Z.java:1)")


def test_year_from_the_option(tmp_path: Path) -> None:
    path = write(tmp_path, "Mar  1 10:00:00 host app[1]: hi\n")
    entries, report = read(path, year=2019)
    assert entries[0].ts == utc(2019, 3, 1, 10)
    assert (report.year, report.year_source) == (2019, "--year")


def test_year_from_dates_in_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "Mar  1 10:00:00 host app[1]: backup of 2021-02-28 done\nMar  1 10:00:05 host app[1]: ok\n")
    entries, report = read(path)
    assert (report.year, report.year_source) == (2021, "file dates")
    assert entries[1].ts == utc(2021, 3, 1, 10, 0, 5)


def test_year_from_the_file_mtime_never_today(tmp_path: Path) -> None:
    path = write(tmp_path, "[03.01 10:00:00] curl.exe - a.example:443 close, 0 bytes sent\n")
    os.utime(path, (datetime(2017, 6, 1, tzinfo=UTC).timestamp(),) * 2)
    entries, report = read(path)
    assert (report.year, report.year_source) == (2017, "file mtime")
    assert entries[0].ts == utc(2017, 3, 1, 10)


def test_a_first_entry_later_in_the_year_than_the_mtime_is_from_the_year_before(tmp_path: Path) -> None:
    path = write(tmp_path, "Dec 30 10:00:00 host app[1]: a\nJan  2 10:00:00 host app[1]: b\n")
    os.utime(path, (datetime(2018, 1, 3, tzinfo=UTC).timestamp(),) * 2)
    entries, report = read(path)
    assert report.year == 2017 and report.year_source == "file mtime"
    assert [e.ts for e in entries] == [utc(2017, 12, 30, 10), utc(2018, 1, 2, 10)]


def test_year_rolls_over_from_december_to_january() -> None:
    entries, _ = read(FIXTURES / "syslog.log", year=2025)
    assert [e.ts.year for e in entries] == [2025, 2025, 2026, 2026, 2026, 2026]
    proxifier, _ = read(FIXTURES / "proxifier.log", year=2025)
    assert [e.ts for e in proxifier][-1] == utc(2026, 1, 1, 0, 0, 1)


def test_formats_with_years_report_no_year_source() -> None:
    _, report = read(FIXTURES / "log4j.log", year=1999)
    assert (report.year, report.year_source) == (None, None)


def test_naive_times_are_in_the_given_zone_and_explicit_offsets_win(tmp_path: Path) -> None:
    lines = ["2026-07-07 18:00:00,000 INFO [main] a.B - x", "2026-07-07T18:00:00+02:00 INFO [main] a.B - y"]
    path = write(tmp_path, "\n".join(lines) + "\n")
    entries, _ = read(path, tz="Asia/Shanghai")
    assert [e.ts for e in entries] == [utc(2026, 7, 7, 10), utc(2026, 7, 7, 16)]
    entries, _ = read(path, tz="+08:00")
    assert entries[0].ts == utc(2026, 7, 7, 10)
    access, _ = read(FIXTURES / "access.log", tz="Asia/Shanghai")
    assert access[0].ts == utc(2000, 10, 10, 20, 55, 36)  # the line's -0700 wins
    with pytest.raises(LogFormatError, match="time zone"):
        read_log_file(path, tz="Mars/Olympus")


def test_severity_from_pri_auth_failures_and_oom_kills() -> None:
    entries, _ = read(FIXTURES / "syslog.log", year=2025)
    by_component = {e.component: e.level for e in entries}
    assert by_component["sshd"] == "ERROR"  # <38> is auth.info, but a failed password is an error
    assert by_component["systemd"] == "INFO"  # <30>: daemon.info
    assert by_component["app"] == "ERROR"  # <11>: user.err
    assert by_component["kernel"] == "ERROR"  # no PRI, an OOM kill
    assert by_component["CRON"] == "INFO"  # no PRI, nothing severe


@pytest.mark.parametrize(
    "line",
    [
        "Jan  5 10:00:00 host sshd[9]: pam_unix(sshd:auth): authentication failure; rhost=198.51.100.7",
        "Jan  5 10:00:00 host sshd[9]: Invalid user admin from 198.51.100.7 port 22",
        "Jan  5 10:00:00 host kernel: [123.4] java invoked oom-killer: gfp_mask=0x100cca",
        "Jan  5 10:00:00 host kernel: Out of memory: Kill process 3121 (java) score 911",
    ],
)
def test_auth_failures_and_oom_kills_are_errors_without_a_level_word(tmp_path: Path, line: str) -> None:
    entries, _ = read(write(tmp_path, line + "\n"), year=2026)
    assert entries[0].level == "ERROR"


def test_a_level_word_inside_the_message_does_not_set_the_level(tmp_path: Path) -> None:
    log4j, _ = read(FIXTURES / "log4j.log")
    assert log4j[2].level == "WARN" and "ERROR_TOLERANT" in log4j[2].message
    path = write(tmp_path, "2026-07-07 10:00:00,000 INFO [main] a.B - user ERROR_TOLERANT=1 ERROR FATAL\n")
    assert read(path)[0][0].level == "INFO"
    syslog = write(tmp_path, "Jan  5 10:00:00 host app[1]: ERROR could not open file\n", "s.log")
    assert read(syslog, year=2026)[0][0].level == "INFO"  # syslog has no level position, and no PRI here


def test_service_only_from_a_structured_field() -> None:
    json_entries, _ = read(FIXTURES / "json.log")
    assert [e.service for e in json_entries] == ["payment-service", "order-service", "checkout", None, None]
    logfmt_entries, _ = read(FIXTURES / "logfmt.log")
    assert [e.service for e in logfmt_entries] == ["order-service", "payment-service", None, None]
    for format_id in sorted(set(FIRST) - {"json", "logfmt"}):
        assert all(e.service is None for e in read(FIXTURES / f"{format_id}.log", year=2025)[0]), format_id


def test_change_records_come_from_fields_not_words() -> None:
    json_entries, _ = read(FIXTURES / "json.log")
    assert [e.change for e in json_entries] == [
        None,
        None,
        ChangeInfo(kind="deploy", description="deployed v2.3.1", version="2.3.1"),
        ChangeInfo(kind="config", description="config reloaded", version=None),
        None,  # "enabled release notes" in the message is no change
    ]
    logfmt_entries, _ = read(FIXTURES / "logfmt.log")
    assert logfmt_entries[2].change == ChangeInfo(kind="scale", description="scaling out", version="1.4.0")
    assert logfmt_entries[3].change is None  # "config change mentioned, nothing released"
    for format_id in sorted(set(FIRST) - {"json", "logfmt"}):
        assert all(e.change is None for e in read(FIXTURES / f"{format_id}.log", year=2025)[0]), format_id


def test_json_field_variants(tmp_path: Path) -> None:
    lines = [
        '{"timestamp": 1783418465123, "level": 40, "message": "ms epoch, pino level"}',
        '{"t": "1783418465", "level": "3", "log": "epoch text, syslog severity 3"}',
        '{"@timestamp": "2026-07-07T10:01:05Z", "log": {"level": "debug", "logger": "x.Y"}, "message": "ECS",'
        ' "service": {"name": "svc", "version": "9.9"}, "event": {"action": "rollback"}}',
        '{"msg": "no time at all", "level": "fatal"}',
        "[1, 2, 3]",
    ]
    entries, report = read(write(tmp_path, "\n".join(lines) + "\n"))
    assert [e.level for e in entries] == ["WARN", "ERROR", "DEBUG", "ERROR"]
    assert entries[0].ts == utc(2026, 7, 7, 10, 1, 5, 123000)
    assert entries[1].ts == utc(2026, 7, 7, 10, 1, 5)
    assert entries[2].component == "x.Y" and entries[2].service == "svc"
    assert entries[2].change == ChangeInfo(kind="rollback", description="ECS", version="9.9")
    assert entries[3].ts == entries[2].ts  # a record without a time takes the one before
    assert entries[3].text.endswith("[1, 2, 3]") and report.continuation_lines == 1


def test_a_stack_trace_stays_with_its_first_line() -> None:
    entries, report = read(FIXTURES / "log4j.log")
    assert len(entries) == 3 and report.continuation_lines == 6
    trace = entries[1]
    assert trace.line_number == 2 and trace.level == "ERROR"
    assert trace.message == "payment failed for order=991"
    assert trace.text.splitlines()[1:] == [
        "java.lang.IllegalStateException: card declined",
        "\tat c.s.pay.PaymentClient.charge(PaymentClient.java:88)",
        "\tat c.s.pay.PaymentService.pay(PaymentService.java:41)",
        "Caused by: java.net.SocketTimeoutException: Read timed out",
        "\tat java.net.SocketInputStream.read(SocketInputStream.java:150)",
        "\t... 12 more",
    ]
    assert entries[2].line_number == 9


def test_non_utf8_and_nul_bytes_are_replaced_and_counted(tmp_path: Path) -> None:
    raw = (
        b"2026-07-07T10:01:02Z ERROR api caf\xe9 au lait\n"
        b"2026-07-07T10:01:03Z INFO api nul\x00byte\n"
        b"2026-07-07T10:01:04Z INFO api clean \xe2\x9c\x93\r\n"
    )
    entries, report = read(write(tmp_path, raw))
    assert report.replaced_bytes_lines == 2 and report.entries == 3
    assert entries[0].message == "caf\ufffd au lait" and entries[1].message == "nul\ufffdbyte"
    assert entries[2].message == "clean \u2713"  # valid UTF-8 and CRLF untouched


def test_times_at_the_edges_of_the_calendar_do_not_crash(tmp_path: Path) -> None:
    lines = [
        "0001-01-01 00:00:00,000 INFO [main] a.B - before year 1 in UTC",
        "9999-12-31T23:59:59-01:00 INFO [main] a.B - after year 9999 in UTC",
        "[Mon Jan 01 00:00:00 0001] [error] apache in year 1",
        "2026-02-30 10:00:00,000 INFO [main] a.B - no such day",
        "2026-07-07 10:00:00,000 INFO [main] a.B - fine",
    ]
    entries, report = read(write(tmp_path, "\n".join(lines) + "\n"), tz="+08:00")
    assert report.no_timestamp == 4  # none of them can be placed in UTC
    assert [e.message for e in entries] == ["fine"]


def test_progress_reports_bytes_read(tmp_path: Path) -> None:
    path = write(tmp_path, "".join(f"2026-07-07T10:01:02Z INFO api line {i}\n" for i in range(50_000)))
    seen: list[int] = []
    assert sum(1 for _ in read_log_file(path, progress=seen.append)) == 50_000
    assert seen[-1] == path.stat().st_size and seen == sorted(seen) and len(seen) >= 2


def test_a_year_out_of_range_is_refused() -> None:
    with pytest.raises(LogFormatError):
        read_log_file(FIXTURES / "syslog.log", year=0)


@given(st.lists(st.binary(max_size=120), max_size=25))
@example([b"\r,"])  # a bare carriage return in the first line: the csv module refused the header
def test_arbitrary_bytes_never_crash_and_every_entry_is_aware_utc(chunks: list[bytes]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.log"
        path.write_bytes(b"\n".join(chunks))
        report = LogFileReport()
        entries = list(read_log_file(path, report=report, year=2026))
    assert report.entries == len(entries) == report.parsed + report.unparsed
    for entry in entries:
        assert entry.ts.tzinfo is not None and entry.ts.utcoffset() == timedelta(0)
        assert entry.level in ("ERROR", "WARN", "INFO", "DEBUG")


_SHAPES = st.sampled_from(
    [
        "Dec 31 23:59:{s:02d} h p[1]: {w}",
        "2026-07-07T10:01:{s:02d}Z ERROR svc {w}",
        '{{"ts": "2026-07-07T10:01:{s:02d}+08:00", "msg": "{w}"}}',
        "time=2026-07-07T10:01:{s:02d}Z level=warn msg={w}",
        "[10.30 16:49:{s:02d}] a.exe - {w}",
        "\tat {w}",
        "{w}",
    ]
)


@given(
    st.lists(st.tuples(_SHAPES, st.integers(0, 59), st.text(max_size=40)), max_size=30),
    st.sampled_from(sorted(FORMATS)),
)
def test_arbitrary_lines_in_any_forced_format_never_crash(lines: list[tuple[str, int, str]], format_id: str) -> None:
    import tempfile

    text = "\n".join(shape.format(s=s, w=word) for shape, s, word in lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.log"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        for fmt in ("auto", format_id):
            report = LogFileReport()
            if fmt == "container_csv":  # told to read a CSV of records: no header of one is a clear error
                with pytest.raises(LogFormatError, match="needs a header with a log column and a time column"):
                    read_log_file(path, fmt=fmt, report=report, tz="Europe/Berlin")
                continue
            entries = list(read_log_file(path, fmt=fmt, report=report, tz="Europe/Berlin"))
            assert all(e.ts.utcoffset() == timedelta(0) for e in entries)
            assert report.entries == len(entries)
