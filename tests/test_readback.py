"""``tools/readback.py`` against the writer: every line a typed record says it was written as
reads back to that record's times, counts and values, on each demo incident's real outputs."""

from __future__ import annotations

from datetime import datetime

import pytest

from veridiag.text.render import format_value
from veridiag.tools import QueryLogsArgs, QueryMetricsArgs
from veridiag.tools.args import QueryChangesArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.readback import (
    AnomalyLine,
    BurstsLine,
    ChangeLine,
    IncreasesLine,
    LogLine,
    PointLine,
    TemplateLine,
    read_line,
)
from veridiag.tools.records import ChangeEvidence, LogEvidence, MetricEvidence

#: (service, window) of each demo incident: enough to cover every line kind the tools write.
WINDOWS = [
    ("payment-service", "2026-07-07T09:30:00Z", "2026-07-07T10:40:00Z"),
    ("gateway", "2026-07-07T07:50:00Z", "2026-07-07T08:50:00Z"),
    ("inventory-service", "2026-07-07T11:20:00Z", "2026-07-07T13:30:00Z"),
    ("mysql", "2026-07-07T14:30:00Z", "2026-07-07T16:00:00Z"),
    ("order-service", "2026-07-07T13:50:00Z", "2026-07-07T14:40:00Z"),
]


@pytest.mark.parametrize(("service", "start", "end"), WINDOWS)
def test_every_record_line_reads_back_to_its_record(
    demo_env: EmbeddedEnvironment, service: str, start: str, end: str
) -> None:
    seen: set[str] = set()
    for _svc, metric, _unit in demo_env.metrics(service):
        out = demo_env.query_metrics(QueryMetricsArgs(service=service, metric=metric, start=start, end=end))
        lines = out.text.split("\n")
        for series in out.evidence:
            assert isinstance(series, MetricEvidence)
            for anomaly in series.anomalies:
                assert anomaly.line in lines
                read = read_line("query_metrics", anomaly.line)
                assert isinstance(read, AnomalyLine), anomaly.line
                assert (read.onset, read.end, read.peak_at, read.direction) == (
                    anomaly.onset,
                    anomaly.end,
                    anomaly.peak_at,
                    anomaly.direction,
                )
                assert read.peak == format_value(anomaly.peak, series.unit)
                assert read.factor == (f"{anomaly.factor:.2f}" if anomaly.factor is not None else None)
                peak = read_line("query_metrics", anomaly.peak_line)
                assert isinstance(peak, PointLine) and peak.at == anomaly.peak_at
                seen |= {"anomaly", "point"}
            if series.increases is not None and series.increases.steps:
                read = read_line("query_metrics", series.increases.line)
                assert isinstance(read, IncreasesLine)
                assert [s.at for s in read.steps] == [s.at for s in series.increases.steps][: len(read.steps)]
                seen.add("increases")
            assert read_line("query_metrics", series.window_line) is None, "statistics state no event"
        # the moment asked inside the window (issue 28): its line reads as the point it states
        asked_at = datetime.fromisoformat(start) + (datetime.fromisoformat(end) - datetime.fromisoformat(start)) / 3
        args = QueryMetricsArgs(service=service, metric=metric, start=start, end=end, at=asked_at.isoformat())
        for series in demo_env.query_metrics(args).evidence:
            assert isinstance(series, MetricEvidence) and series.asked is not None
            point = read_line("query_metrics", series.asked.line)
            assert isinstance(point, PointLine) and point.at == series.asked.at, series.asked.line
            assert point.value == format_value(series.asked.value, series.unit)
            seen.add("asked")
    logs = demo_env.query_logs(QueryLogsArgs(service=service, start=start, end=end))
    (evidence,) = logs.evidence
    assert isinstance(evidence, LogEvidence)
    for row in evidence.templates:
        read = read_line("query_logs", row.line)
        assert isinstance(read, TemplateLine), row.line
        assert (read.count, read.level, read.first, read.last, read.template) == (
            row.count,
            row.level,
            row.first.replace(microsecond=0),
            row.last.replace(microsecond=0),
            row.template,
        )
        seen.add("template")
    bursts = [line for line in logs.text.split("\n") if line.startswith("bursts: ")]
    for line in bursts:
        read = read_line("query_logs", line)
        assert isinstance(read, BurstsLine)
        assert [(b.first, b.last, b.count) for b in read.bursts] == [
            (b.first.replace(microsecond=0), b.last.replace(microsecond=0), b.count) for b in evidence.bursts
        ]
        seen.add("bursts")
    for sample in evidence.samples:
        read = read_line("query_logs", sample.line)
        assert isinstance(read, LogLine) and read.at == sample.ts and read.stamp in sample.line
        seen.add("log")
    changes = demo_env.query_changes(QueryChangesArgs(service=service, start="2026-07-07T00:00:00Z", end=end))
    (feed,) = changes.evidence
    assert isinstance(feed, ChangeEvidence)
    for change in feed.changes:
        read = read_line("query_changes", change.line)
        assert isinstance(read, ChangeLine)
        assert (read.at, read.service, read.change) == (change.ts, change.service, change.kind)
        assert read.description.startswith(change.description)
        seen.add("change")
    assert {"anomaly", "point", "template", "log"} <= seen


@pytest.mark.parametrize(
    ("tool", "line"),
    [
        ("query_logs", "matched 451 lines (ERROR 451)"),
        ("query_logs", "2026-07-07 10:01:02.000 ERROR payment-service no zone: local time of an imported file"),
        ("query_logs", "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure"),
        ("query_metrics", "window: min 25%, max 45%, avg 34.79% (480 points); peak 45% at 2026-07-07T08:55:00Z"),
        ("query_metrics", "history 2026-07-07T08:00:00Z – 2026-07-07T15:59:00Z (480 points): median 34.6%"),
        ("query_changes", "1 changes"),
        ("lookup_knowledge", "2026-07-07T10:00:00Z payment-service config: looks like a change, but is a runbook"),
    ],
)
def test_lines_without_an_event_time_read_as_none(tool: str, line: str) -> None:
    assert read_line(tool, line) is None


def test_a_log_line_with_an_offset_reads_in_its_own_zone() -> None:
    read = read_line("query_logs", "     e.g. 2026-07-07 18:01:02,500+0800 ERROR pay - order=1 failed")
    assert isinstance(read, LogLine)
    assert read.at.isoformat() == "2026-07-07T18:01:02.500000+08:00" and read.stamp == "2026-07-07 18:01:02,500+0800"


def test_a_search_over_every_service_says_whose_each_template_row_is(demo_env: EmbeddedEnvironment) -> None:
    """Templates are counted per service: over every service the same template can come once per
    service, so each row names its service (and reads back with it); one service's rows do not."""
    everyone = demo_env.query_logs(QueryLogsArgs(start="2026-07-07T09:30:00Z", end="2026-07-07T16:00:00Z"))
    (evidence,) = everyone.evidence
    assert isinstance(evidence, LogEvidence)
    services = {row.service for row in evidence.templates}
    assert len(services) > 1 and None not in services, "the window holds several services' templates"
    lines = everyone.text.split("\n")
    for row in evidence.templates:
        assert row.line in lines and f" service={row.service} " in row.line
        assert row.service is not None and row.service in row.example, "the row's example line is its service's"
        read = read_line("query_logs", row.line)
        assert isinstance(read, TemplateLine), row.line
        assert (read.service, read.count, read.template) == (row.service, row.count, row.template)
    assert len({row.line for row in evidence.templates}) == len(evidence.templates)
    patterns = everyone.retrieval_details["patterns"]
    assert isinstance(patterns, list)
    assert [p["service"] for p in patterns if isinstance(p, dict)] == [row.service for row in evidence.templates]
    one = demo_env.query_logs(
        QueryLogsArgs(service="payment-service", start="2026-07-07T09:30:00Z", end="2026-07-07T10:40:00Z")
    )
    (own,) = one.evidence
    assert isinstance(own, LogEvidence) and own.templates
    assert all(row.service is None and " service=" not in row.line for row in own.templates)
    assert all(
        read_line("query_logs", row.line)
        == TemplateLine(
            count=row.count,
            level=row.level,
            first=row.first.replace(microsecond=0),
            last=row.last.replace(microsecond=0),
            template=row.template,
        )
        for row in own.templates
    )
