"""Counts in tool outputs and CLI messages agree with their noun: "1 line", "2 lines" — a reader
of a recorded output should not have to forgive "1 points" — and the lines that read outputs
back (``tools/readback.py``) read either form."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from veridiag.analysis.anomaly import AnomalyReport
from veridiag.cli.app import app
from veridiag.tools.readback import BurstsLine, read_line
from veridiag.tools.records import Burst, ChangeRecord, LogSample
from veridiag.tools.render import changes_output, logs_output, metrics_output
from veridiag.tools.words import plural, quantity

T0 = datetime(2026, 7, 7, 10, tzinfo=UTC)
REQUEST = {"service": "pay", "start": "2026-07-07T10:00:00+00:00", "end": "2026-07-07T11:00:00+00:00"}
#: A count of one written with a plural noun, as the outputs wrote it.
ONE_PLURAL = re.compile(r"(?<![\d.])1 (?:lines|points|steps|changes|runbooks|spans|services|calls|errors|traces)\b")

counts = st.integers(0, 3)


@given(st.integers(-3, 10**6), st.sampled_from(["line", "point", "step", "series", "match"]))
def test_a_count_takes_the_singular_only_when_it_is_one(count: int, noun: str) -> None:
    written = quantity(count, noun)
    assert written.startswith(f"{count} ")
    assert (written == f"1 {noun}") == (count == 1)
    assert plural(2, "series") == "series" and plural(2, "match") == "matches"


@given(matched=st.integers(1, 3), bursts=st.lists(st.integers(1, 3), max_size=3))
def test_a_logs_output_writes_one_line_as_one_line(matched: int, bursts: list[int]) -> None:
    samples = [
        LogSample(ts=T0, service="pay", level="ERROR", line=f"{T0.isoformat()} ERROR boom {i}") for i in range(3)
    ]
    groups = [Burst(first=T0 + timedelta(hours=i), last=T0 + timedelta(hours=i), count=n) for i, n in enumerate(bursts)]
    rendered, evidence = logs_output(
        REQUEST, matched=matched, by_level={"ERROR": matched}, bursts=groups, samples=samples[:matched], limit=1
    )
    assert not ONE_PLURAL.search(rendered.text), rendered.text
    assert evidence.line.startswith(f"matched {quantity(matched, 'line')} ")
    if evidence.bursts_line is not None:
        read = read_line("query_logs", evidence.bursts_line)
        assert isinstance(read, BurstsLine) and [b.count for b in read.bursts] == bursts


@given(points=st.integers(1, 3))
def test_a_metrics_output_writes_one_point_as_one_point(points: int) -> None:
    window = [(T0 + timedelta(minutes=i), 1.5) for i in range(points)]
    rendered, _evidence = metrics_output(
        REQUEST,
        service="pay",
        metric="latency_ms",
        unit="ms",
        window=window,
        history=None,
        report=AnomalyReport(baseline=None, anomalies=[]),
    )
    assert not ONE_PLURAL.search(rendered.text), rendered.text
    assert f"({quantity(points, 'point')})" in rendered.text


@given(count=st.integers(1, 3))
def test_a_changes_output_writes_one_change_as_one_change(count: int) -> None:
    changes = [
        ChangeRecord(
            ts=T0, service="pay", kind="deploy", description=f"v{i}", line=f"{T0.isoformat()} pay deploy: v{i}"
        )
        for i in range(count)
    ]
    rendered, evidence = changes_output(REQUEST, changes)
    assert evidence.line == quantity(count, "change")
    assert not ONE_PLURAL.search(rendered.text)


@pytest.mark.parametrize("lines", [1, 2])
def test_an_import_message_agrees_with_its_count(tmp_path: Path, lines: int) -> None:
    data = tmp_path / "app.log"
    data.write_text("".join(f"2026-01-05T10:00:0{i}Z ERROR boom {i}\n" for i in range(lines)), encoding="utf-8")
    env = {"VERIDIAG_HOME": str(tmp_path / "home")}
    done = CliRunner().invoke(app, ["data", "import-logs", str(data), "--service", "my-api"], env=env)
    assert done.exit_code == 0, done.stderr
    assert f"imported {quantity(lines, 'new log line')} " in done.stdout
    assert not ONE_PLURAL.search(done.stdout) and "1 new log lines" not in done.stdout
