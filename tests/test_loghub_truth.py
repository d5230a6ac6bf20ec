"""Android logcat and Blue Gene/L read line by line against loghub's own parse of the same lines
(``*_structured.csv``, trimmed real samples, ``tests/fixtures/logs/NOTICE``), as
``scripts/loghub_eval.py`` measures the other loghub formats on the full 2k samples."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import pytest

from veridiag.ingest.logformats import LogEntry, LogFileReport, read_log_file

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
#: loghub's level spellings and the four levels veridiag keeps (Android: V D I W E F A).
LOGCAT_LEVELS = {"V": "DEBUG", "D": "DEBUG", "I": "INFO", "W": "WARN", "E": "ERROR", "F": "ERROR", "A": "ERROR"}
BGL_LEVELS = {
    "INFO": "INFO",
    "WARNING": "WARN",
    "SEVERE": "ERROR",
    "ERROR": "ERROR",
    "FAILURE": "ERROR",
    "FATAL": "ERROR",
}


def truth(name: str) -> list[dict[str, str]]:
    with (FIXTURES / f"{name}.log_structured.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def entries(name: str, **options: object) -> tuple[list[LogEntry], LogFileReport]:
    report = LogFileReport()
    found = list(read_log_file(FIXTURES / f"{name}.log", report=report, **options))  # type: ignore[arg-type]
    return found, report


def test_logcat_matches_loghub_line_by_line() -> None:
    rows = truth("logcat")
    found, report = entries("logcat", year=2017)
    assert report.format == "logcat" and report.unparsed == 0
    assert (report.year, report.year_source) == (2017, "--year")
    assert len(found) == len(rows)
    for entry, row in zip(found, rows, strict=True):
        month, day = (int(part) for part in row["Date"].split("-"))
        assert (entry.ts.month, entry.ts.day, entry.ts.strftime("%H:%M:%S.%f")[:12]) == (month, day, row["Time"])
        assert entry.ts.year == 2017
        assert entry.level == LOGCAT_LEVELS[row["Level"]], row["LineId"]
        assert entry.component == row["Component"], row["LineId"]
        assert entry.message.strip() == row["Content"].strip(), row["LineId"]


def test_bgl_matches_loghub_line_by_line() -> None:
    rows = truth("bgl")
    found, report = entries("bgl")
    assert report.format == "bgl" and report.unparsed == 0
    assert len(found) == len(rows)
    for entry, row in zip(found, rows, strict=True):
        assert int(entry.ts.timestamp()) == int(row["Timestamp"]), row["LineId"]
        assert entry.ts.microsecond == int(row["Time"].rsplit(".", 1)[1]), row["LineId"]
        # an alert label is the operators' mark of an alert: ERROR whatever the level written
        expected = BGL_LEVELS[row["Level"]] if row["Label"] == "-" else "ERROR"
        assert entry.level == expected, row["LineId"]
        assert entry.component == row["Component"], row["LineId"]
        assert entry.message.strip() == row["Content"].strip(), row["LineId"]
    assert {row["Level"] for row in rows} == {"INFO", "FATAL", "SEVERE", "ERROR", "WARNING"}


@pytest.mark.parametrize(
    ("line", "level"),
    [
        ("12-17 19:31:36.263  1795  1825 F libc    : Fatal signal 11 (SIGSEGV)", "ERROR"),
        ("12-17 19:31:36.263  1795  1825 A DEBUG   : Abort message: 'assert failed'", "ERROR"),
        (
            "- 1118536327 2005.06.11 R30-M0-N9-C:J16-U01 2005-06-11-17.32.07.581048 R30-M0-N9-C:J16-U01 RAS KERNEL "
            "FAILURE data TLB error interrupt",
            "ERROR",
        ),
    ],
)
def test_the_levels_no_sample_line_writes(tmp_path: Path, line: str, level: str) -> None:
    path = tmp_path / "one.log"
    path.write_text(line + "\n", encoding="utf-8")
    (entry,) = read_log_file(path, year=2022)
    assert entry.level == level and entry.parsed


def test_logcat_with_a_year_and_across_new_year(tmp_path: Path) -> None:
    path = tmp_path / "logcat.log"
    path.write_text(
        "12-31 23:59:59.900  1795  1825 I ActivityManager: last of the year\n"
        "01-01 00:00:00.100  1795  1825 W ActivityManager: first of the next\n",
        encoding="utf-8",
    )
    first, second = read_log_file(path, year=2022)
    assert (first.ts, second.ts) == (
        datetime(2022, 12, 31, 23, 59, 59, 900000, tzinfo=UTC),
        datetime(2023, 1, 1, 0, 0, 0, 100000, tzinfo=UTC),
    )
    path.write_text("2023-06-01 12:00:00.000  1795  1825 E chatty  : uid=1000 expire 3 lines\n", encoding="utf-8")
    (entry,) = read_log_file(path)
    assert (entry.ts, entry.component, entry.message) == (
        datetime(2023, 6, 1, 12, tzinfo=UTC),
        "chatty",
        "uid=1000 expire 3 lines",
    )
