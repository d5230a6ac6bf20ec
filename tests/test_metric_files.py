"""read_metric_file: CSV with odd timestamps, OpenMetrics / Prometheus text, Prometheus JSON."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veridiag.ingest.metric_files import MetricFileError, MetricFileReport, Sample, read_metric_file

FIXTURES = Path(__file__).parent / "fixtures" / "metrics"
T = datetime(2014, 3, 14, 3, 30, tzinfo=UTC)


def read(path: Path, **kwargs: object) -> tuple[list[Sample], MetricFileReport]:
    report = MetricFileReport()
    samples = list(read_metric_file(path, report=report, **kwargs))  # type: ignore[arg-type]
    return samples, report


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# -- CSV ------------------------------------------------------------------------------------------


def test_csv_us_dates_unit_from_header_and_skipped_rows() -> None:
    samples, report = read(FIXTURES / "us_dates.csv")
    assert (report.format, report.time_format) == ("csv", "%m/%d/%Y %H:%M")
    assert [(s.ts.strftime("%H:%M"), s.value) for s in samples] == [
        ("03:30", 120.0),
        ("03:31", 118.5),
        ("03:35", 119.0),
        ("13:36", 121.0),
    ]
    assert {(s.metric, s.unit, s.service) for s in samples} == {("latency_ms", "ms", None)}
    assert samples[0].ts == T
    # line 4: empty value, line 5: NaN, line 6: "not a date"
    assert (report.samples, report.skipped, report.first_skipped) == (4, 3, [4, 5, 6])
    assert report.series == {(None, "latency_ms")}


def test_csv_month_names_semicolons_and_decimal_commas() -> None:
    samples, report = read(FIXTURES / "named_months.csv", metric="p99_latency")
    assert report.time_format == "%d-%b-%Y %H:%M:%S"
    assert [s.value for s in samples] == [1.5, 2.25, 3.0]
    assert samples[2].ts == datetime(2014, 3, 14, 15, 33, tzinfo=UTC)
    assert {(s.metric, s.unit) for s in samples} == {("p99_latency", "ms")}  # unit from "value (ms)"
    assert (report.skipped, report.first_skipped) == (1, [4])  # inf


@given(
    columns=st.lists(
        st.lists(st.decimals(min_value=-10_000, max_value=10_000, places=2), min_size=3, max_size=6),
        min_size=1,
        max_size=3,
    ),
    delimiter=st.sampled_from([";", "\t", "|"]),
)
def test_csv_every_value_with_a_decimal_comma(columns: list[list[object]], delimiter: str) -> None:
    """A spreadsheet's export in most of Europe: ``;`` between cells, ``1,5`` in them — every value
    (not only a few beside whole numbers) is a number, read as the dot would write it."""
    rows = min(len(column) for column in columns)
    names = [f"cpu_{j}_percent" for j in range(len(columns))]
    lines = [delimiter.join(["time", *names])]
    for i in range(rows):
        cells = [f"{column[i]:.2f}".replace(".", ",") for column in columns]
        lines.append(delimiter.join([f"2014-03-14T03:{30 + i:02d}:00Z", *cells]))
    with tempfile.TemporaryDirectory() as tmp:
        samples, report = read(write(Path(tmp), "export.csv", "\n".join(lines) + "\n"))
    assert report.skipped == 0
    expected = sorted(
        (name, i, float(f"{column[i]:.2f}")) for name, column in zip(names, columns, strict=True) for i in range(rows)
    )
    assert sorted((s.metric, s.ts.minute - 30, s.value) for s in samples) == expected


def test_csv_generic_value_column_needs_a_metric_name() -> None:
    path = FIXTURES / "named_months.csv"
    with pytest.raises(MetricFileError, match=r"named_months\.csv: .*'value \(ms\)'.*pass --metric"):
        read_metric_file(path)
    with pytest.raises(MetricFileError, match=r"epoch_ms\.csv: it has no header.*--metric"):
        read_metric_file(FIXTURES / "epoch_ms.csv")


def test_csv_headerless_epoch_milliseconds() -> None:
    samples, report = read(FIXTURES / "epoch_ms.csv", metric="cpu_load", unit="")
    assert report.time_format == "epoch-ms"
    assert [(s.ts.minute, s.value, s.unit) for s in samples] == [(30, 0.5, ""), (31, 0.75, ""), (32, 0.25, "")]
    assert samples[0].ts == T


def test_csv_several_value_columns_and_a_service_column() -> None:
    samples, report = read(FIXTURES / "multi.csv")
    assert report.time_format == "iso8601"
    assert report.series == {
        (service, metric)
        for service in ("edge-api", "billing")
        for metric in ("cpu_percent", "mem_bytes", "requests_s")
    }
    units = {s.metric: s.unit for s in samples}
    assert units == {"cpu_percent": "%", "mem_bytes": "bytes", "requests_s": ""}
    late = [s for s in samples if s.service == "billing" and s.metric == "cpu_percent"][-1]
    assert (late.ts, late.value) == (datetime(2014, 3, 14, 2, 31, tzinfo=UTC), 13.5)  # +01:00 to UTC
    assert (report.samples, report.skipped, report.first_skipped) == (11, 1, [5])  # the empty mem_bytes


def test_csv_metric_prefixes_several_columns_and_unit_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, "two.csv", "time,p50,p99\n2014-03-14 03:30,1,2\n")
    samples, _report = read(path, metric="latency", unit="ms")
    assert [(s.metric, s.unit, s.value) for s in samples] == [("latency_p50", "ms", 1.0), ("latency_p99", "ms", 2.0)]


def test_csv_long_format_with_a_metric_column(tmp_path: Path) -> None:
    text = "ts,service,metric,value\n1394767800,api,latency_ms,12\n1394767800,api,cpu_percent,40\n1394767860,api,,41\n"
    samples, report = read(write(tmp_path, "long.csv", text))
    assert [(s.metric, s.unit, s.service, s.value) for s in samples] == [
        ("latency_ms", "ms", "api", 12.0),
        ("cpu_percent", "%", "api", 40.0),
    ]
    assert report.first_skipped == [4]  # no metric name on that row


def test_csv_naive_times_in_the_given_zone(tmp_path: Path) -> None:
    path = write(tmp_path, "paris.csv", "time,latency_ms\n2014-03-14 04:30:00,5\n2014-07-14 05:30:00,6\n")
    samples, _report = read(path, tz="Europe/Paris")
    assert [s.ts for s in samples] == [T, datetime(2014, 7, 14, 3, 30, tzinfo=UTC)]  # CET, then CEST


def test_csv_odd_row_goes_to_dateparser_garbage_is_skipped(tmp_path: Path) -> None:
    text = "timestamp,errors\n2014-03-14 03:30:00,1\n14 March 2014 03:31,2\n???,3\n2014-03-14 03:32:00,4\n"
    samples, report = read(write(tmp_path, "mixed.csv", text), metric="errors_total")
    assert [(s.ts.minute, s.value) for s in samples] == [(30, 1.0), (31, 2.0), (32, 4.0)]
    assert (report.skipped, report.first_skipped) == (1, [4])


def test_csv_day_first_dates_are_told_apart_by_later_rows(tmp_path: Path) -> None:
    rows = "".join(f"{day:02d}/02/2014 10:00,{day}\n" for day in (1, 5, 9, 13, 17))
    samples, report = read(write(tmp_path, "dmy.csv", "date,queue_depth\n" + rows))
    assert report.time_format == "%d/%m/%Y %H:%M"
    assert samples[0].ts == datetime(2014, 2, 1, 10, tzinfo=UTC)


def test_csv_chinese_dates_and_compact_stamps(tmp_path: Path) -> None:
    zh = write(tmp_path, "zh.csv", "时间,qps\n2014年3月14日 11:30,5\n2014年3月14日 11:31,6\n")
    samples, report = read(zh, tz="Asia/Shanghai")
    assert (report.time_format, samples[0].ts) == ("%Y年%m月%d日 %H:%M", T)
    compact = write(tmp_path, "compact.csv", "20140314033000,1\n20140314033100,2\n")
    samples, report = read(compact, metric="qps")
    assert (report.time_format, samples[0].ts) == ("%Y%m%d%H%M%S", T)


def test_csv_non_utf8_bytes_are_replaced(tmp_path: Path) -> None:
    path = write(tmp_path, "latin.csv", b"timestamp,service,rss_bytes\n2014-03-14T03:30:00Z,caf\xe9,10\n")
    [sample], _report = read(path)
    assert (sample.service, sample.value) == ("caf\ufffd", 10.0)


def test_csv_is_streamed() -> None:
    report = MetricFileReport()
    stream = read_metric_file(FIXTURES / "us_dates.csv", report=report)
    assert report.samples == 0
    next(stream)
    assert report.samples == 1


# -- exposition --------------------------------------------------------------------------------


def test_openmetrics_labels_units_and_samples_without_time() -> None:
    samples, report = read(FIXTURES / "exposition.om")
    assert report.format == "openmetrics"
    latency = [s for s in samples if s.metric == "http_request_duration_seconds"]
    assert [(s.service, s.unit, s.value, s.labels) for s in latency] == [
        ("edge-api", "s", 0.25, (("quantile", "0.99"),)),
        ("edge-api", "s", 0.5, (("quantile", "0.99"),)),
        ("billing", "s", 0.125, (("quantile", "0.99"),)),  # from job
    ]
    assert latency[1].ts == datetime(2014, 3, 14, 3, 31, 0, 500000, tzinfo=UTC)
    assert [(s.metric, s.unit) for s in samples[3:]] == [("db_connections_pending", ""), ("cpu_percent", "%")]
    # line 9 has no timestamp, line 10 is NaN
    assert (report.samples, report.skipped, report.first_skipped) == (5, 2, [9, 10])


def test_prometheus_text_format_has_milliseconds(tmp_path: Path) -> None:
    text = (
        "# HELP requests handled\n# TYPE requests counter\n"
        'requests{service="api"} 10 1394767800000\n'
        'requests{service="api"} 12 1394767860\n'  # seconds by mistake: read as such
        "# TYPE queue_ms gauge\nqueue_ms 3 1394767800000\n"
        "jobs_created 1394000000 1394767800000\n"  # a creation time, no measurement
    )
    samples, report = read(write(tmp_path, "x.prom", text))
    assert report.format == "prometheus-text"
    assert [(s.metric, s.service, s.unit, s.ts, s.value) for s in samples] == [
        ("requests", "api", "", T, 10.0),
        ("requests", "api", "", datetime(2014, 3, 14, 3, 31, tzinfo=UTC), 12.0),
        ("queue_ms", None, "ms", T, 3.0),
    ]
    assert (report.skipped, report.first_skipped) == (1, [7])


def test_our_own_export_reads_back(tmp_path: Path) -> None:
    """``veridiag data export-openmetrics`` writes exactly this shape."""
    lines = [f'cpu_percent{{service="edge-api"}} {40 + i:g} {1394767800 + 60 * i:.3f}' for i in range(5000)]
    lines[2500] = 'cpu_percent{service="edge-api" 41 1394767800.000'  # broken: only this line is lost
    text = "# TYPE cpu_percent gauge\n" + "\n".join(lines) + "\n# EOF\n"
    samples, report = read(write(tmp_path, "export.om", text))
    assert report.format == "openmetrics"
    assert (report.samples, report.skipped, report.first_skipped) == (4999, 1, [2502])
    assert samples[-1].ts == datetime.fromtimestamp(1394767800 + 60 * 4999, UTC)
    assert {(s.service, s.unit) for s in samples} == {("edge-api", "%")}


# -- JSON ----------------------------------------------------------------------------------------


def test_prometheus_json_matrix() -> None:
    samples, report = read(FIXTURES / "query_range.json")
    assert report.format == "prometheus-json"
    assert [(s.service, s.ts.second, s.ts.microsecond, s.value) for s in samples] == [
        ("edge-api", 0, 0, 120.0),
        ("edge-api", 0, 500000, 118.5),
        ("billing", 0, 0, 15.0),
        ("billing", 0, 0, 16.0),
    ]
    assert samples[0].labels == (("instance", "10.0.0.1:9100"),)
    assert report.series == {("edge-api", "http_requests_per_second"), ("billing", "http_requests_per_second")}
    assert (report.skipped, report.first_skipped) == (2, [3, 5])  # NaN, +Inf


def test_prometheus_json_vector_names_series_by_metric() -> None:
    samples, _report = read(FIXTURES / "query_vector.json", metric="error_ratio")
    assert [(s.metric, s.service, s.value, s.unit) for s in samples] == [
        ("error_ratio", "edge-api", 0.042, ""),
        ("error_ratio", "billing", 0.001, ""),
    ]
    assert samples[0].ts == datetime(2014, 3, 14, 3, 30, 0, 250000, tzinfo=UTC)
    with pytest.raises(MetricFileError, match=r"query_vector\.json: .*__name__.*--metric"):
        read_metric_file(FIXTURES / "query_vector.json")


def test_prometheus_json_errors(tmp_path: Path) -> None:
    failed = write(tmp_path, "failed.json", '{"status":"error","errorType":"bad_data","error":"parse error at char 4"}')
    with pytest.raises(MetricFileError, match=r"failed\.json: the query failed: parse error at char 4"):
        read_metric_file(failed)
    with pytest.raises(MetricFileError, match=r"broken\.json: not valid JSON"):
        read_metric_file(write(tmp_path, "broken.json", '{"data": '))
    with pytest.raises(MetricFileError, match=r"string\.json: expected data.resultType"):
        read_metric_file(write(tmp_path, "string.json", '{"data":{"resultType":"string","result":[1,"x"]}}'))


# -- detection and bad files ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("exposition.om", "openmetrics"),
        ("query_range.json", "prometheus-json"),
        ("multi.csv", "csv"),
    ],
)
def test_auto_detection_from_the_content(tmp_path: Path, fixture: str, expected: str) -> None:
    path = tmp_path / "data.txt"  # no telling extension
    shutil.copy(FIXTURES / fixture, path)
    _samples, report = read(path)
    assert report.format == expected


def test_explicit_format_wins(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    shutil.copy(FIXTURES / "exposition.om", path)
    _samples, report = read(path, fmt="openmetrics")
    assert report.samples == 5


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("empty.csv", "", "the file is empty"),
        ("blank.csv", "\n \n", "the file is empty"),
        ("header.csv", "timestamp,value\n", "only a header"),
        ("notime.csv", "host,value\na,1\nb,2\n", "no column of timestamps"),
        ("novalue.csv", "timestamp,host\n2014-03-14 03:30,a\n", "no numeric value column"),
        ("badtime.csv", "timestamp,value\nyesterday,1\n", "column 'timestamp' holds no time"),
        ("garbage.om", "# TYPE x gauge\nx{ 1 2\n", "no sample could be read; 1 skipped"),
    ],
)
def test_unreadable_files_say_which_and_why(tmp_path: Path, name: str, content: str, problem: str) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(MetricFileError) as raised:
        list(read_metric_file(path, metric="m"))
    assert str(raised.value).startswith(f"{path}: ")
    assert problem in str(raised.value)


def test_missing_file_bad_metric_name_bad_zone(tmp_path: Path) -> None:
    with pytest.raises(MetricFileError, match=r"nope\.csv: cannot read"):
        read_metric_file(tmp_path / "nope.csv")
    with pytest.raises(MetricFileError, match="Prometheus name"):
        read_metric_file(FIXTURES / "epoch_ms.csv", metric="cpu load")
    with pytest.raises(MetricFileError, match="unknown time zone 'Mars/Olympus'"):
        read_metric_file(FIXTURES / "epoch_ms.csv", metric="cpu", tz="Mars/Olympus")


# -- properties ----------------------------------------------------------------------------------------

_CELLS = st.sampled_from(
    ["2014-03-14 03:30", "03/14/2014 03:30", "1394767800", "1.5", "NaN", "", "x", "14-Mar-2014", '"', ";", "1e400"]
)


def _survives(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.csv"
        path.write_bytes(data)
        report = MetricFileReport()
        try:
            samples = list(read_metric_file(path, fmt="csv", metric="fuzz", report=report))
        except MetricFileError as exc:
            assert str(exc).startswith(str(path))
            return
        assert samples
        assert report.samples == len(samples)
        assert all(s.ts.tzinfo is UTC for s in samples)


@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_as_csv_never_crash(data: bytes) -> None:
    _survives(data)


@given(rows=st.lists(st.lists(_CELLS, min_size=1, max_size=4), max_size=12), delimiter=st.sampled_from([",", ";"]))
def test_csv_like_rows_never_crash(rows: list[list[str]], delimiter: str) -> None:
    _survives("\n".join(delimiter.join(row) for row in rows).encode())
