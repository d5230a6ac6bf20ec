"""Metric CSVs as exporters write them: epoch columns are the time, never a series (issue 26)."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veridiag.ingest.columns import column_key, column_words, is_time_name
from veridiag.ingest.metric_files import MetricFileReport, Sample, read_metric_file

NEZHA = Path(__file__).parent / "fixtures" / "nezha"
PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
TIME_NAMES = column_words().time


def read(path: Path) -> tuple[list[Sample], MetricFileReport]:
    report = MetricFileReport()
    return list(read_metric_file(path, report=report)), report


def spelled(words: list[str]) -> st.SearchStrategy[str]:
    """A name as files write it: CamelCase, snake_case, kebab or spaced, any case."""

    def spell(parts: list[str], style: int) -> str:
        if style == 0:
            return "".join(p[:1].upper() + p[1:] for p in parts)
        if style == 1:
            return "_".join(parts)
        if style == 2:
            return "-".join(p.upper() for p in parts)
        return " ".join(parts)

    return st.builds(spell, st.just(words), st.integers(0, 3))


time_name = st.sampled_from(TIME_NAMES).flatmap(lambda name: spelled(name.split()))
epoch_suffix = st.sampled_from(["", "s", "ms", "ns", "us", "unix nano", "epoch ms", "millis", "seconds"])
epoch_name = st.builds(
    lambda base, suffix: f"{base}_{suffix.replace(' ', '_')}" if suffix else base, time_name, epoch_suffix
)
metric_names = st.lists(
    st.from_regex(r"[a-z]{3,9}_[a-z]{3,9}", fullmatch=True).filter(lambda n: not is_time_name(n)),
    min_size=1,
    max_size=3,
    unique_by=column_key,
)
instants = st.lists(
    st.integers(min_value=0, max_value=600).map(lambda s: timedelta(seconds=s, microseconds=s * 1111 % 10**6)),
    min_size=3,
    max_size=6,
    unique=True,
).map(lambda steps: [datetime(2023, 1, 29, 9, 30, tzinfo=UTC) + step for step in sorted(steps)])


def epoch_cell(moment: datetime, unit: str) -> str:
    whole = int((moment - datetime(1970, 1, 1, tzinfo=UTC)) / timedelta(microseconds=1))
    return str(whole * PER_SECOND[unit] // 10**6)


def truncated(moment: datetime, unit: str) -> datetime:
    if unit == "s":
        return moment.replace(microsecond=0)
    if unit == "ms":
        return moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    return moment


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    moments=instants,
    text_name=st.none() | time_name,
    epoch=st.none() | st.tuples(epoch_name, st.sampled_from(sorted(PER_SECOND))),
    metrics=metric_names,
    order=st.randoms(use_true_random=False),
)
def test_time_and_epoch_columns_give_the_time_and_no_series(
    moments: list[datetime],
    text_name: str | None,
    epoch: tuple[str, str] | None,
    metrics: list[str],
    order: object,
) -> None:
    """Any mix of a text time column and an epoch column (seconds to nanoseconds), in any order,
    named as exporters name them: the rows sit at their times and only the measurements are series."""
    rows = range(len(moments))
    columns: list[tuple[str, list[str]]] = [(m, [f"{r}.{k}" for r in rows]) for k, m in enumerate(metrics)]
    if text_name is not None:
        columns.append((text_name, [m.isoformat() for m in moments]))
    if epoch is not None:
        name, unit = epoch
        if text_name is not None and column_key(name) == column_key(text_name):
            name = f"{name}_{unit}2"
        columns.append((name, [epoch_cell(m, unit) for m in moments]))
    if text_name is None and epoch is None:
        columns.append(("timestamp", [m.isoformat() for m in moments]))
    order.shuffle(columns)  # type: ignore[attr-defined]
    folder = Path(tempfile.mkdtemp())
    try:
        path = folder / "m.csv"
        lines = [",".join(name for name, _cells in columns)]
        lines += [",".join(cells[r] for _name, cells in columns) for r in range(len(moments))]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        samples, report = read(path)
    finally:
        shutil.rmtree(folder)
    assert {s.metric for s in samples} == set(metrics)
    allowed = [moments]
    if epoch is not None:
        allowed.append([truncated(m, epoch[1]) for m in moments])
    stamps = [s.ts for s in samples if s.metric == metrics[0]]
    assert stamps in allowed
    assert [s.value for s in samples if s.metric == metrics[0]] == [float(f"{r}.0") for r in range(len(moments))]
    if text_name is not None and epoch is not None:
        assert len(report.left_out) == 1
        assert "not a series" in report.left_out[0]


@pytest.mark.parametrize("unit", sorted(PER_SECOND))
def test_an_epoch_column_alone_is_the_time_by_its_values(tmp_path: Path, unit: str) -> None:
    moments = [datetime(2023, 1, 29, 9, 30, tzinfo=UTC) + timedelta(minutes=k) for k in range(4)]
    path = tmp_path / "m.csv"
    path.write_text(
        "when_recorded,cpu_percent\n" + "".join(f"{epoch_cell(m, unit)},{k}\n" for k, m in enumerate(moments)),
        encoding="utf-8",
    )
    samples, report = read(path)
    assert report.time_format == f"epoch-{unit}"
    assert [(s.metric, s.ts) for s in samples] == [("cpu_percent", m) for m in moments]


def test_an_unnamed_column_of_the_rows_times_is_no_series(tmp_path: Path) -> None:
    """An epoch column under a name no list holds, beside the time column, is the time again."""
    moments = [datetime(2023, 1, 29, 9, 30, tzinfo=UTC) + timedelta(minutes=k) for k in range(4)]
    path = tmp_path / "m.csv"
    path.write_text(
        "time,collected,cpu_percent\n"
        + "".join(f"{m.isoformat()},{epoch_cell(m, 'ms')},{k}\n" for k, m in enumerate(moments)),
        encoding="utf-8",
    )
    samples, report = read(path)
    assert {s.metric for s in samples} == {"cpu_percent"}
    assert report.left_out == ["collected: not a series — its numbers are the rows' times (epoch-ms); the time is time"]


def test_a_large_rising_measurement_is_still_a_series(tmp_path: Path) -> None:
    """Numbers of an epoch's size that are not the rows' times (bytes sent, a counter) stay a series."""
    path = tmp_path / "m.csv"
    path.write_text(
        "time,bytes_sent\n" + "".join(f"2023-01-29T09:3{k}:00Z,{1_900_000_000 + k * 1000}\n" for k in range(4)),
        encoding="utf-8",
    )
    samples, report = read(path)
    assert {s.metric for s in samples} == {"bytes_sent"}
    assert report.left_out == []


def test_the_nezha_file_takes_time_and_leaves_timestamp() -> None:
    samples, report = read(NEZHA / "onlineboutique" / "metric" / "recommendationservice-6cfdd55578-gfj6q_metric.csv")
    assert report.time_format == "go-time"
    assert report.left_out == [
        "TimeStamp: not a series — another time column (epoch-s, within 1 s of it); the time is Time"
    ]
    assert not any("time" in s.metric for s in samples)


# -- whose rows: pods, services, containers; readable metric names ---------------------------------


def test_a_wide_pod_file_is_its_workloads_with_readable_names() -> None:
    samples, report = read(NEZHA / "trainticket" / "metric" / "ts-contacts-service-866bd68c97-xcqfx_metric.csv")
    assert {s.service for s in samples} == {"ts-contacts-service"}
    assert report.service_column == "PodName (pod → workload)" and report.service_from_pod
    named = {(s.metric, s.unit) for s in samples}
    assert {
        ("cpu_usage_rate", "%"),
        ("memory_usage", "Mi"),
        ("pod_server_latency_p90", "s"),
        ("pod_workload", "Ops"),
        ("network_receive_bytes", "bytes"),
        ("syscall_read", ""),
    } <= named
    assert len(named) == 19  # 22 columns less Time, TimeStamp, PodName


POD_HEADERS = ["PodName", "pod", "pod_name", "Pod Name", "k8s.pod.name"]
OTHER_HEADERS = ["ServiceName", "service", "app", "container_name", "Container"]
owner_headers = st.sampled_from([(h, True) for h in POD_HEADERS] + [(h, False) for h in OTHER_HEADERS])


@settings(max_examples=40, deadline=None)
@given(owner=owner_headers, first=st.booleans(), camel=st.sampled_from(["CpuUsageRate(%)", "cpuUsageRate (%)"]))
def test_any_owner_column_names_the_rows_service(owner: tuple[str, bool], first: bool, camel: str) -> None:
    header, is_pod = owner
    cells = ["ts-order-service-5b67c48447-mv5hb", "redis-cart-0"]
    columns = [header, "time", camel] if first else ["time", camel, header]
    folder = Path(tempfile.mkdtemp())
    try:
        path = folder / "m.csv"
        rows = [columns]
        for k, cell in enumerate(cells):
            by = {header: cell, "time": f"2023-01-29T09:3{k}:00Z", camel: str(k)}
            rows.append([by[c] for c in columns])
        path.write_text("\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
        samples, _report = read(path)
    finally:
        shutil.rmtree(folder)
    expected = ["ts-order-service", "redis-cart"] if is_pod else cells
    assert [(s.service, s.metric, s.unit) for s in samples] == [(e, "cpu_usage_rate", "%") for e in expected]
