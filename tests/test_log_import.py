"""Bulk log import: many batches stored in order and once, streamed, all or nothing; its benchmark."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from veridiag.bench import log_import
from veridiag.text.tokens import segment
from veridiag.tools.backends.embedded import EmbeddedEnvironment, LogRow, _ingest, _schema

START = datetime(2026, 7, 7, tzinfo=UTC)


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> int:
    """Batches of 7 rows, so a few dozen rows cross many batches."""
    monkeypatch.setattr(_ingest, "BATCH", 7)
    return 7


def log_rows(count: int) -> list[LogRow]:
    """Lines of two services and two shapes, one repeated verbatim at the same instant."""
    rows = [
        LogRow(
            START + timedelta(seconds=index),
            ("api", "db")[index % 2],
            "ERROR" if index % 5 == 0 else "INFO",
            f"request {index} took {index * 3}ms" if index % 3 else f"cache miss for key k{index}",
        )
        for index in range(count)
    ]
    return [*rows, rows[-1]]


def stored(env: EmbeddedEnvironment) -> list[tuple[int, int, str, str, str, int]]:
    return (
        env._connection()
        .execute("SELECT id, ts, service, level, line, template_id FROM log_line ORDER BY id")
        .fetchall()
    )


def test_many_batches_store_every_row_once_in_file_order(
    tmp_path: Path, small_batches: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = log_rows(60)
    batched = EmbeddedEnvironment(tmp_path / "batched.db", load_demo=False)
    written = batched.add_logs(iter(rows))
    assert (written.added, written.duplicates) == (61, 0), "the repeated line is a second line"
    lines = stored(batched)
    assert [row[0] for row in lines] == list(range(1, 62))
    assert [row[4] for row in lines] == [row.text for row in rows]
    again = batched.add_logs(iter(rows))
    assert (again.added, again.duplicates) == (0, 61)

    monkeypatch.setattr(_ingest, "BATCH", 10_000)  # the same rows in one batch are stored identically
    whole = EmbeddedEnvironment(tmp_path / "whole.db", load_demo=False)
    whole.add_logs(iter(rows))
    assert stored(whole) == lines
    templates = "SELECT service, id, template FROM log_template ORDER BY service, id"
    assert whole._connection().execute(templates).fetchall() == batched._connection().execute(templates).fetchall()


def test_reading_stays_a_batch_ahead_of_writing(
    tmp_path: Path, small_batches: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Streaming: a file is never read far ahead of what is written, whatever its size."""
    pulled = 0
    ahead: list[int] = []
    write = _ingest._LogWriter.write

    def counting(rows: list[LogRow]) -> Iterator[LogRow]:
        nonlocal pulled
        for row in rows:
            pulled += 1
            yield row

    def watched(writer: _ingest._LogWriter, batch: list[tuple[int, int, LogRow]]) -> None:
        ahead.append(pulled - writer.written.added - writer.written.duplicates)
        write(writer, batch)

    monkeypatch.setattr(_ingest._LogWriter, "write", watched)
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    assert env.add_logs(counting(log_rows(200))).added == 201
    assert len(ahead) == 29
    assert max(ahead) <= small_batches


def test_a_read_error_mid_file_stores_nothing(tmp_path: Path, small_batches: int) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)

    def broken() -> Iterator[LogRow]:
        yield from log_rows(40)
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        env.add_logs(broken())
    assert stored(env) == []
    assert env.add_logs(iter(log_rows(10))).added == 11, "the store is usable after the failure"


def test_a_write_error_reaches_the_caller_and_stores_nothing(
    tmp_path: Path, small_batches: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)

    def failing(text: str) -> str:
        if text == "request 31 took 93ms":
            raise sqlite3.OperationalError("database or disk is full")
        return segment(text)

    monkeypatch.setattr(_ingest, "segment", failing)
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        env.add_logs(iter(log_rows(60)))
    assert stored(env) == []


def test_the_import_benchmark_runs_the_command_in_a_child_and_reports_its_peak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A smoke run of the 10 M import in ``veridiag bench --only tools``; a store named in the
    environment is left alone. The peak is the child's own, however large this process is."""
    monkeypatch.setenv("VERIDIAG_EMBEDDED__PATH", "/nonexistent/do-not-write-here.db")
    ballast = bytearray(400 * 2**20)
    ballast[:: 2**12] = b"x" * len(ballast[:: 2**12])  # resident: 400 MB in this process
    result = log_import.run(lines=2_000)
    assert result.import_10m_lines == 2_000
    for value in (
        result.import_10m_seconds,
        result.import_10m_tenth_seconds,
        result.import_10m_rss_mb,
        result.import_10m_fixed_rss_mb,
    ):
        assert value > 0
    assert 300 > result.import_10m_rss_mb >= result.import_10m_fixed_rss_mb > 20, "a child's peak, not ours"
    # lines/s comes from the unrounded seconds
    assert result.import_10m_lines_per_s == pytest.approx(2_000 / result.import_10m_seconds, rel=0.01)
    del ballast


def test_the_full_text_index_merges_sixteen_segments_at_a_time_in_new_and_older_files(tmp_path: Path) -> None:
    """Fewer merges while a big file is imported; a file of an older release gets the policy on open."""
    path = tmp_path / "e.db"
    setting = "SELECT v FROM log_fts_config WHERE k = 'automerge'"
    env = EmbeddedEnvironment(path, load_demo=False)
    assert env._connection().execute(setting).fetchone() == (_schema.AUTOMERGE,)
    with env.connect() as conn:
        conn.execute("DELETE FROM log_fts_config WHERE k = 'automerge'")  # FTS5's default: 4
    reopened = EmbeddedEnvironment(path, load_demo=False)
    assert reopened._connection().execute(setting).fetchone() == (_schema.AUTOMERGE,)
    assert reopened.add_logs(iter(log_rows(40))).added == 41
