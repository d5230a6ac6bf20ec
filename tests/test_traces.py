"""Spans into per-service series (``data import-traces``): nezha's span CSVs (a trimmed real
fixture whose two files overlap, as the dataset's do), OTLP/JSON, Jaeger and Zipkin JSON;
self time; exact merges of overlapping files; idempotency; bad files; and the survey reading
the series as any other."""

from __future__ import annotations

import csv
import json
import random
import sqlite3
import statistics
import tempfile
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, get_args
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veridiag.analysis.signatures import family_of
from veridiag.analysis.traces import TimedSpan, self_times
from veridiag.cli import data
from veridiag.cli.app import app
from veridiag.ingest import spanfiles
from veridiag.ingest.batch import import_trace_files
from veridiag.ingest.importers import ImportFailedError
from veridiag.ingest.kubernetes import workload_of
from veridiag.ingest.traces import import_traces
from veridiag.tools.args import RankSuspectsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.records import SuspectEvidence
from veridiag.tools.suspects import SuspectSearch

TRACES = Path(__file__).parent / "fixtures" / "nezha_days" / "trainticket-2023-01-29" / "trace"
BEFORE, AFTER = TRACES / "10_04_trace.csv", TRACES / "10_05_trace.csv"
SHARED_TRACE = "7439456a2622c0da522f6f21972316d0"
MINUTE_NS = 60 * 10**9
runner = CliRunner()

Row = dict[str, str]
Points = dict[tuple[str, str, int], float]


def rows_of(*paths: Path) -> list[Row]:
    found: dict[tuple[str, str], Row] = {}
    for path in paths:
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                found.setdefault((row["TraceID"], row["SpanID"]), row)
    return list(found.values())


def write_rows(path: Path, rows: list[Row]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def environment(folder: Path, name: str = "e.db") -> EmbeddedEnvironment:
    return EmbeddedEnvironment(folder / name, load_demo=False)


def span_points(env: EmbeddedEnvironment, metric: str | None = None) -> Points:
    rows = env._connection().execute(
        "SELECT service, metric, ts, value FROM metric_point WHERE metric LIKE 'span%' ORDER BY 1, 2, 3"
    )
    return {(s, m, ts): v for s, m, ts, v in rows if metric is None or m == metric}


def edge_weights(env: EmbeddedEnvironment) -> dict[tuple[str, str], float]:
    rows = env._connection().execute("SELECT caller, callee, SUM(weight) FROM call_edge GROUP BY 1, 2")
    return {(a, b): w for a, b, w in rows}


# -- what the series should be, computed from the rows another way -------------------------------


def covered_ns(start: int, end: int, children: list[tuple[int, int]]) -> int:
    """Time of ``[start, end]`` under at least one child: a sweep over the clipped ends."""
    events = []
    for a, b in children:
        first, last = max(a, start), min(b, end)
        if last > first:
            events += [(first, 1), (last, -1)]
    total, depth, since = 0, 0, start
    for moment, step in sorted(events):
        if depth > 0:
            total += moment - since
        depth += step
        since = moment
    return total


def expected_series(rows: list[Row]) -> dict[str, Points]:
    """Per metric, (workload, minute in ms) → value, from the rows themselves."""
    children: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for row in rows:
        children[(row["TraceID"], row["ParentID"])].append((int(row["StartTimeUnixNano"]), int(row["EndTimeUnixNano"])))
    durations: dict[tuple[str, int], list[float]] = defaultdict(list)
    owns: dict[tuple[str, int], list[float]] = defaultdict(list)
    for row in rows:
        start, end = int(row["StartTimeUnixNano"]), int(row["EndTimeUnixNano"])
        key = (workload_of(row["PodName"]), start // MINUTE_NS * 60_000)
        durations[key].append((end - start) / 1e6)
        own = end - start - covered_ns(start, end, children[(row["TraceID"], row["SpanID"])])
        owns[key].append(own / 1e6)

    def p90(values: list[float]) -> float:
        return values[0] if len(values) == 1 else statistics.quantiles(values, n=10, method="inclusive")[-1]

    return {
        "span_duration_p90": {(s, "span_duration_p90", m): p90(v) for (s, m), v in durations.items()},
        "span_self_time_p90": {(s, "span_self_time_p90", m): p90(v) for (s, m), v in owns.items()},
        "counts": {(s, "span_rate", m): float(len(v)) for (s, m), v in durations.items()},
    }


def assert_close(found: Points, expected: Points, tolerance: float = 1e-9) -> None:
    assert set(found) == set(expected)
    for key, value in expected.items():
        assert found[key] == pytest.approx(value, abs=tolerance), key


# -- nezha's span CSVs ---------------------------------------------------------------------------


def test_the_nezha_spans_become_the_series_they_state(tmp_path: Path) -> None:
    env = environment(tmp_path)
    first = import_traces(env, BEFORE)
    second = import_traces(env, AFTER)
    shared = sum(1 for row in rows_of(BEFORE) if row["TraceID"] == SHARED_TRACE)
    assert (first.imported, first.duplicates) == (len(rows_of(BEFORE)), 0)
    assert (second.imported, second.duplicates) == (len(rows_of(AFTER)) - shared, shared), "one trace is in both"
    assert first.format == second.format == "csv" and first.service_column == "PodName (pod → workload)"
    rows = rows_of(BEFORE, AFTER)
    expected = expected_series(rows)
    assert_close(span_points(env, "span_duration_p90"), expected["span_duration_p90"])
    assert_close(span_points(env, "span_self_time_p90"), expected["span_self_time_p90"])
    # A count is a rate only in the minutes the two files' reaches cover whole. The first file's
    # spans start 10:03:11–10:04:09 with at most 25.4 s between two, the second's 10:04:08–10:05:02
    # with at most 25.0 s: together 10:02:45–10:05:27, which holds 10:03 and 10:04 whole.
    whole = {int(datetime(2023, 1, 29, 10, m, tzinfo=UTC).timestamp() * 1000) for m in (3, 4)}
    rates = {key: n for key, n in expected["counts"].items() if key[2] in whole}
    assert span_points(env, "span_rate") == rates
    assert not span_points(env, "span_errors"), "nezha's CSVs state no status"
    assert {"ts-travel-service", "ts-gateway-service"} <= set(second.services)
    assert any("span_rate of 1 minute the files do not cover whole" in note for note in second.left_out)


def test_the_calls_the_spans_state_are_the_call_graph(tmp_path: Path) -> None:
    env = environment(tmp_path)
    report = import_trace_files(env, [BEFORE, AFTER])
    service = {(r["TraceID"], r["SpanID"]): workload_of(r["PodName"]) for r in rows_of(BEFORE, AFTER)}
    calls: Counter[tuple[str, str]] = Counter()
    for row in rows_of(BEFORE, AFTER):
        caller = service.get((row["TraceID"], row["ParentID"]))
        callee = service[(row["TraceID"], row["SpanID"])]
        if caller is not None and caller != callee:
            calls[(caller, callee)] += 1
    assert edge_weights(env) == {edge: float(n) for edge, n in calls.items()}
    assert ("ts-gateway-service", "ts-travel-service") in env.dependencies()
    assert all(f.report is not None and f.report.edges > 0 for f in report.files)


def test_a_file_imported_again_adds_nothing(tmp_path: Path) -> None:
    env = environment(tmp_path)
    import_trace_files(env, [TRACES])
    conn = env._connection()
    tables = ("span", "span_reach", "metric_point", "metric_series", "call_edge")

    def dump() -> dict[str, list[tuple[object, ...]]]:
        return {table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall()) for table in tables}

    before = dump()
    again = import_trace_files(env, [AFTER, BEFORE, TRACES])  # the folder's 10_04 and 10_05 are named already
    assert dump() == before
    read = sum(len(rows_of(path)) for path in (AFTER, BEFORE, TRACES / "09_30_trace.csv"))
    assert (again.imported, again.duplicates) == (0, read)
    for result in again.files:
        assert result.report is not None and result.report.imported == result.report.points == 0


def test_a_span_stated_again_otherwise_takes_its_new_values(tmp_path: Path) -> None:
    """A file imported again after an edit — spans of another service, one longer, one of another
    pod — leaves the series of the edited spans, with no point left where no span supports it."""
    rows = rows_of(BEFORE)
    env = environment(tmp_path)
    import_traces(env, write_rows(tmp_path / "spans.csv", rows))
    edited = [dict(row) for row in rows]
    # all of ts-inside-payment-service's spans (three, at 10:03:14) said to be another service's:
    # their times, and so the file's reach, stay as they were — only the spans say that
    # ts-inside-payment-service has nothing in 10:03 any more
    moving = [row for row in edited if workload_of(row["PodName"]) == "ts-inside-payment-service"]
    assert len({int(row["StartTimeUnixNano"]) // MINUTE_NS for row in moving}) == 1
    for row in moving:
        row["PodName"] = "ts-payment-service-7d4b9c8f6d-x2x4z"
    longer = next(row for row in edited if row not in moving)
    longer["EndTimeUnixNano"] = str(int(longer["EndTimeUnixNano"]) + 7_000_000_000)
    elsewhere = next(row for row in reversed(edited) if row not in moving)
    elsewhere["PodName"] = "ts-elsewhere-service-6f6cfc45b-h5m2n"
    changed = len(moving) + 2
    report = import_traces(env, write_rows(tmp_path / "spans.csv", edited))
    assert (report.imported, report.duplicates) == (changed, len(rows) - changed)
    assert not any(service == "ts-inside-payment-service" for service, _m, _ts in span_points(env))
    expected = expected_series(edited)
    assert_close(span_points(env, "span_duration_p90"), expected["span_duration_p90"])
    assert_close(span_points(env, "span_self_time_p90"), expected["span_self_time_p90"])
    rates = span_points(env, "span_rate")
    assert all(expected["counts"][key] == count for key, count in rates.items())


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_overlapping_files_in_any_order_merge_exactly(data: st.DataObject) -> None:
    """However the spans are spread over files — a span in one, two or three of them — and in
    whatever order the files come, each minute's percentiles are those of all its spans, and a
    rate, where one is written, counts every span of the minute."""
    rows = rows_of(BEFORE, AFTER)
    homes = data.draw(st.lists(st.sets(st.integers(0, 2), min_size=1), min_size=len(rows), max_size=len(rows)))
    order = data.draw(st.permutations([0, 1, 2]))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        files = [[row for row, home in zip(rows, homes, strict=True) if index in home] for index in range(3)]
        env = environment(root)
        for index in order:
            if files[index]:
                import_traces(env, write_rows(root / f"part{index}.csv", files[index]))
        expected = expected_series(rows)
        assert_close(span_points(env, "span_duration_p90"), expected["span_duration_p90"])
        assert_close(span_points(env, "span_self_time_p90"), expected["span_self_time_p90"])
        rates = span_points(env, "span_rate")
        assert all(expected["counts"][key] == count for key, count in rates.items())
        whole = environment(root, "whole.db")
        import_traces(whole, write_rows(root / "whole.csv", rows))
        assert edge_weights(env) == edge_weights(whole)


def test_twelve_files_or_one_give_the_same_series(tmp_path: Path) -> None:
    """Both fixture files, or one file of their spans (the shared trace once): the same points,
    rates included — the reaches join across the overlap as the whole file's does."""
    split, joined = environment(tmp_path, "split.db"), environment(tmp_path, "joined.db")
    import_trace_files(split, [BEFORE, AFTER])
    import_traces(joined, write_rows(tmp_path / "both.csv", rows_of(BEFORE, AFTER)))
    assert span_points(split) == span_points(joined)


# -- self time -----------------------------------------------------------------------------------


@st.composite
def span_trees(draw: st.DrawFn) -> tuple[list[TimedSpan], int]:
    """A trace whose children never overlap each other and lie inside their parents; and the
    root's duration."""
    spans: list[TimedSpan] = []
    counter = iter(range(10**6))

    def grow(parent: str, start: int, end: int, depth: int) -> None:
        span_id = f"s{next(counter)}"
        spans.append(TimedSpan(span_id, parent, start, end))
        if depth >= 4 or end - start < 4:
            return
        cuts = sorted(draw(st.lists(st.integers(start, end), max_size=6, unique=True)))
        for a, b in zip(cuts[0::2], cuts[1::2], strict=False):
            grow(span_id, a, b, depth + 1)

    start = draw(st.integers(0, 10**18))
    end = start + draw(st.integers(0, 10**9))
    grow("", start, end, 0)
    draw(st.randoms()).shuffle(spans)
    return spans, end - start


@given(span_trees())
def test_self_times_of_a_nested_trace_add_up_to_the_root(tree: tuple[list[TimedSpan], int]) -> None:
    spans, root = tree
    found = self_times(spans)
    assert all(value >= 0 for value in found.values())
    assert sum(found.values()) == root
    parents = {span.parent_id for span in spans}
    assert all(found[s.span_id] == s.end_ns - s.start_ns for s in spans if s.span_id not in parents)


@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.integers(-5, 40), st.integers(0, 10**6), st.integers(0, 10**6)),
        min_size=1,
        max_size=30,
        unique_by=lambda t: t[0],
    )
)
def test_self_time_is_never_below_0_nor_above_the_duration(items: list[tuple[int, int, int, int]]) -> None:
    """Any spans at all: children overlapping, outliving their parent, a parent unknown or the span itself."""
    spans = [TimedSpan(f"s{i}", f"s{p}" if p >= 0 else "", a, a + d) for i, p, a, d in items]
    found = self_times(spans)
    assert set(found) == {s.span_id for s in spans}
    assert all(0 <= found[s.span_id] <= s.end_ns - s.start_ns for s in spans)


# -- what they measure -----------------------------------------------------------------------------


@given(style=st.sampled_from(["snake", "camel", "kebab"]), prefix=st.sampled_from([[], ["span"], ["trace", "span"]]))
def test_the_span_series_are_read_as_what_they_measure(style: str, prefix: list[str]) -> None:
    def spelt(words: list[str]) -> str:
        if style == "camel":
            return "".join(w.capitalize() for w in words)
        return ("_" if style == "snake" else "-").join(words)

    cases = {
        ("self", "time", "p90"): ("self_time", "cause"),
        ("exclusive", "time", "ms"): ("self_time", "cause"),
        ("duration", "p90"): ("latency", "effect"),
        ("errors",): ("errors", "cause"),
        ("rate",): ("traffic", "effect"),
    }
    for words, (family, role) in cases.items():
        found = family_of(spelt([*prefix, *words]))
        assert (found.id, found.role) == (family, role), spelt([*prefix, *words])


# -- bad files -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dropped", "said"),
    [
        (["SpanID"], "a span id"),
        (["StartTimeUnixNano"], "a start time"),
        (["EndTimeUnixNano", "Duration"], "an end time or a duration"),
    ],
)
def test_a_file_without_what_every_span_needs_says_what_it_lacks(tmp_path: Path, dropped: list[str], said: str) -> None:
    rows = [{k: v for k, v in row.items() if k not in dropped} for row in rows_of(BEFORE)]
    path = write_rows(tmp_path / "spans.csv", rows)
    env = environment(tmp_path)
    with pytest.raises(ImportFailedError, match=f"no column of {said}"):
        import_traces(env, path)
    assert not span_points(env) and env.span_summary() is None
    home = {"VERIDIAG_HOME": str(tmp_path / "home"), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}
    done = runner.invoke(app, ["data", "import-traces", str(path)], env=home)
    assert done.exit_code == 2 and said in done.stderr and "Traceback" not in done.stderr


def test_unreadable_durations_and_unknown_parents_are_counted(tmp_path: Path) -> None:
    """Without end times, a duration that is no number skips its span (counted, with its line);
    a span whose parent is in no file is kept and counted; its self time is its own."""
    rows = [{k: v for k, v in row.items() if k != "EndTimeUnixNano"} for row in rows_of(BEFORE)]
    bad_lines = [5, 9, 30]
    for line in bad_lines:
        rows[line - 2]["Duration"] = random.Random(line).choice(["abc", "", "12ms", "NaN", "1e400"])
    orphaned = [r for r in rows if r["ParentID"] != "root"][:3]
    for number, row in enumerate(orphaned):
        row["ParentID"] = f"feedfacefeed{number:04d}"
    env = environment(tmp_path)
    report = import_traces(env, write_rows(tmp_path / "spans.csv", rows))
    assert (report.imported, report.skipped, report.first_skipped) == (len(rows) - 3, 3, bad_lines)
    assert report.left_out[0] == "3 spans: no readable end time or duration"
    kept = [r for i, r in enumerate(rows, start=2) if i not in bad_lines]
    stored = {(r["TraceID"], r["SpanID"]) for r in kept}
    # the three re-parented spans, and the children of the three skipped
    assert report.orphans == sum(
        1 for r in kept if r["ParentID"] != "root" and (r["TraceID"], r["ParentID"]) not in stored
    )
    assert report.orphans >= 3
    expected = expected_series(
        [dict(r, EndTimeUnixNano=str(int(r["StartTimeUnixNano"]) + int(r["Duration"]) * 1000)) for r in kept]
    )
    assert_close(span_points(env, "span_duration_p90"), expected["span_duration_p90"], tolerance=1e-6)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "the file is empty"),
        (b'{"hello": "world"}', "JSON of no span format known"),
        (b'{"resourceSpans": [', "not readable JSON"),
        (b"TraceID,SpanID,ParentID,PodName,StartTimeUnixNano,EndTimeUnixNano\n", "no span could be read"),
        (b"a,b\n1,2\n", "no column of a span id"),
        (b'{"data": "nope"}', "not Jaeger's trace JSON"),
    ],
)
def test_a_file_that_holds_no_spans_is_a_clear_error(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "spans"
    path.write_bytes(content)
    with pytest.raises(ImportFailedError, match=said):
        import_traces(environment(tmp_path), path)


def test_spans_without_a_service_need_one_named(tmp_path: Path) -> None:
    rows = [{k: v for k, v in row.items() if k != "PodName"} for row in rows_of(BEFORE)]
    path = write_rows(tmp_path / "spans.csv", rows)
    with pytest.raises(ImportFailedError, match="pass --service"):
        import_traces(environment(tmp_path), path)
    report = import_traces(environment(tmp_path, "named.db"), path, service="checkout")
    assert report.services == ["checkout"] and report.service_column == "--service checkout"


cells = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", "root", "NaN", "-1", "1e999", "abc", "1674986594779000000", "0x1f", '"', "\x00"]),
)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_corruption_is_counted_never_a_crash(data: st.DataObject) -> None:
    """Cells replaced by anything: the import fails with a clear error, or every data row is
    imported, a duplicate, or skipped and counted — none silently lost."""
    rows = rows_of(BEFORE)[:20]
    columns = list(rows[0])
    for _ in range(data.draw(st.integers(1, 15))):
        row = data.draw(st.sampled_from(rows))
        row[data.draw(st.sampled_from(columns))] = data.draw(cells)
    with tempfile.TemporaryDirectory() as folder:
        path = write_rows(Path(folder) / "spans.csv", rows)
        with path.open(encoding="utf-8", newline="") as handle:
            data_rows = sum(1 for row in list(csv.reader(handle))[1:] if any(cell.strip() for cell in row))
        try:
            report = import_traces(environment(Path(folder)), path)
        except ImportFailedError as exc:
            assert str(exc).startswith(str(path))
            return
        assert report.imported + report.duplicates + report.skipped == data_rows


# -- OTLP, Jaeger and Zipkin JSON --------------------------------------------------------------------


def failing(row: Row) -> bool:
    """Spans the conversions mark failed: those of ts-travel-service after the injection."""
    return workload_of(row["PodName"]) == "ts-travel-service" and int(row["StartTimeUnixNano"]) >= 1674986674 * 10**9


def as_otlp_lines(rows: list[Row]) -> str:
    """One ``{"resourceSpans": …}`` a line per service, as the Collector's file exporter writes
    them (uint64 times as strings, fields the importer does not read included)."""
    by_service: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_service[workload_of(row["PodName"])].append(row)
    lines = []
    for service, spans in sorted(by_service.items()):
        resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
        converted = [
            {
                "traceId": r["TraceID"],
                "spanId": r["SpanID"],
                "parentSpanId": "" if r["ParentID"] == "root" else r["ParentID"],
                "flags": 256,
                "name": r["OperationName"],
                "kind": 2,
                "startTimeUnixNano": r["StartTimeUnixNano"],
                "endTimeUnixNano": r["EndTimeUnixNano"],
                "attributes": [{"key": "k8s.pod.name", "value": {"stringValue": r["PodName"]}}],
                "status": {"code": 2, "message": "boom"} if failing(r) else {},
            }
            for r in spans
        ]
        scope = {"scope": {"name": "io.opentelemetry.spring-webmvc-6.0", "version": "2.1.0"}, "spans": converted}
        lines.append(json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [scope], "schemaUrl": ""}]}))
    return "\n".join(lines) + "\n"


def micros(value: str) -> int:
    return int(value) // 1000


def as_jaeger(rows: list[Row]) -> str:
    traces: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        traces[row["TraceID"]].append(row)
    data = []
    for trace_id, spans in traces.items():
        processes = {
            f"p{i}": {"serviceName": s} for i, s in enumerate(sorted({workload_of(r["PodName"]) for r in spans}))
        }
        process_of = {p["serviceName"]: key for key, p in processes.items()}
        data.append(
            {
                "traceID": trace_id,
                "spans": [
                    {
                        "traceID": trace_id,
                        "spanID": r["SpanID"],
                        "operationName": r["OperationName"],
                        "references": []
                        if r["ParentID"] == "root"
                        else [{"refType": "CHILD_OF", "traceID": trace_id, "spanID": r["ParentID"]}],
                        "startTime": micros(r["StartTimeUnixNano"]),
                        "duration": micros(r["EndTimeUnixNano"]) - micros(r["StartTimeUnixNano"]),
                        "tags": [{"key": "error", "type": "bool", "value": True}] if failing(r) else [],
                        "logs": [],
                        "processID": process_of[workload_of(r["PodName"])],
                        "warnings": None,
                    }
                    for r in spans
                ],
                "processes": processes,
                "warnings": None,
            }
        )
    return json.dumps({"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None})


def as_zipkin(rows: list[Row]) -> str:
    return json.dumps(
        [
            {
                "traceId": r["TraceID"],
                "id": r["SpanID"],
                **({} if r["ParentID"] == "root" else {"parentId": r["ParentID"]}),
                "kind": "SERVER",
                "name": r["OperationName"].lower(),
                "timestamp": micros(r["StartTimeUnixNano"]),
                "duration": micros(r["EndTimeUnixNano"]) - micros(r["StartTimeUnixNano"]),
                "localEndpoint": {"serviceName": workload_of(r["PodName"]), "ipv4": "10.0.0.1"},
                "tags": {"error": "boom", "http.method": "GET"} if failing(r) else {"http.method": "GET"},
            }
            for r in rows
        ]
    )


@pytest.mark.parametrize(
    ("fmt", "convert", "name", "tolerance"),
    [
        ("otlp-json", as_otlp_lines, "traces.json", 1e-9),
        ("jaeger-json", as_jaeger, "trace.json", 0.003),  # microseconds: a µs or two off in each span
        ("zipkin-json", as_zipkin, "spans.json", 0.003),
    ],
)
def test_the_json_formats_give_the_series_the_csv_gives_and_errors(
    tmp_path: Path, fmt: str, convert: object, name: str, tolerance: float
) -> None:
    rows = rows_of(BEFORE, AFTER)
    assert callable(convert)
    path = tmp_path / name
    path.write_text(convert(rows), encoding="utf-8")
    env = environment(tmp_path)
    report = import_traces(env, path)
    assert report.format == fmt and report.imported == len(rows) and report.skipped == 0
    expected = expected_series(rows)
    assert_close(span_points(env, "span_duration_p90"), expected["span_duration_p90"], tolerance)
    assert_close(span_points(env, "span_self_time_p90"), expected["span_self_time_p90"], tolerance)
    failed: Counter[tuple[str, str, int]] = Counter()
    for row in rows:
        key = (workload_of(row["PodName"]), "span_errors", int(row["StartTimeUnixNano"]) // MINUTE_NS * 60_000)
        failed[key] += failing(row)
    assert span_points(env, "span_errors") == {key: float(n) for key, n in failed.items()}
    assert max(failed.values()) > 0 and min(failed.values()) == 0
    again = import_traces(env, path)
    assert (again.imported, again.points) == (0, 0)


def test_a_malformed_json_span_is_skipped_and_counted(tmp_path: Path) -> None:
    spans = json.loads(as_zipkin(rows_of(BEFORE)))
    del spans[3]["timestamp"]
    spans[7]["duration"] = "soon"
    spans[9] = "not a span"
    path = tmp_path / "zipkin.json"
    path.write_text(json.dumps(spans), encoding="utf-8")
    report = import_traces(environment(tmp_path), path)
    assert (report.imported, report.skipped, report.first_skipped) == (len(spans) - 3, 3, [4, 8, 10])
    lines = as_otlp_lines(rows_of(BEFORE)).splitlines()
    lines.insert(1, "{not json")
    broken = tmp_path / "otlp.json"
    broken.write_text("\n".join(lines), encoding="utf-8")
    report = import_traces(environment(tmp_path, "otlp.db"), broken)
    assert (report.imported, report.skipped, report.first_skipped) == (len(rows_of(BEFORE)), 1, [2])


def test_a_zipkin_span_shared_by_client_and_server_is_a_call(tmp_path: Path) -> None:
    client = {
        "traceId": "t1",
        "id": "a1",
        "kind": "CLIENT",
        "timestamp": 1_000_000,
        "duration": 900,
        "localEndpoint": {"serviceName": "frontend"},
    }
    server = dict(
        client, kind="SERVER", shared=True, timestamp=1_000_100, duration=700, localEndpoint={"serviceName": "cart"}
    )
    path = tmp_path / "shared.json"
    path.write_text(json.dumps([client, server]), encoding="utf-8")
    env = environment(tmp_path)
    import_traces(env, path)
    assert env.dependencies() == [("frontend", "cart")]
    own = dict(env._connection().execute("SELECT service, self_ns FROM span"))
    assert own == {"frontend": 200_000, "cart": 700_000}


def test_the_cli_offers_the_span_formats_the_reader_reads() -> None:
    assert get_args(data.TraceFormat) == get_args(spanfiles.SpanFormat)
    assert set(get_args(spanfiles.SpanFormat)) == {"auto", *spanfiles.SPAN_FORMATS}


# -- the survey reads them as any series -------------------------------------------------------------

START = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)


def shop_spans(rng: random.Random, minutes: int, slow_from: int, factor: float) -> list[Row]:
    """Traces of a gateway calling api calling db, a few a second; from minute ``slow_from`` on
    db's own work takes ``factor`` times as long (api and the gateway only wait longer)."""
    rows = []
    for n in range(minutes * 20):
        start = int((START + timedelta(seconds=3 * n + rng.uniform(0, 2))).timestamp() * 10**9)
        own = {"gateway": rng.gauss(2.0, 0.2), "api": rng.gauss(3.0, 0.3), "db": rng.gauss(5.0, 0.5)}
        if n >= slow_from * 20:
            own["db"] *= factor
        db_ns = int(own["db"] * 1e6)
        api_ns = int(own["api"] * 1e6) + db_ns
        gateway_ns = int(own["gateway"] * 1e6) + api_ns
        trace = f"{n:032x}"
        starts = {
            "gateway": start,
            "api": start + int(own["gateway"] * 5e5),
            "db": start + int(own["gateway"] * 5e5) + int(own["api"] * 5e5),
        }
        lengths = {"gateway": gateway_ns, "api": api_ns, "db": db_ns}
        parents = {"gateway": "root", "api": f"{n:012x}0001", "db": f"{n:012x}0002"}
        for index, service in enumerate(("gateway", "api", "db"), start=1):
            rows.append(
                {
                    "TraceID": trace,
                    "SpanID": f"{n:012x}{index:04d}",
                    "ParentID": parents[service],
                    "PodName": f"{service}-7d4b9c8f6d-x2x4z",
                    "OperationName": f"GET /{service}",
                    "StartTimeUnixNano": str(starts[service]),
                    "EndTimeUnixNano": str(starts[service] + lengths[service]),
                    "Duration": str(lengths[service] // 1000),
                }
            )
    return rows


def test_a_service_whose_own_work_slowed_is_the_culprit_its_callers_only_wait(tmp_path: Path) -> None:
    """Every service's spans take longer from 07:30; only db's self time grows (×20: a ×6 alone
    scores 0.25, below what stands out, as a ×6 latency would). The survey, with
    nothing but the imported spans, names db from its self time (a cause) and explains the
    callers' longer spans (an effect) by it, through the call graph the spans gave."""
    env = environment(tmp_path)
    import_traces(env, write_rows(tmp_path / "spans.csv", shop_spans(random.Random(3), 120, 90, 20.0)))
    at = START + timedelta(minutes=90)
    args = {
        "start": (at - timedelta(minutes=30)).isoformat(),
        "end": (at + timedelta(minutes=30)).isoformat(),
        "at": at.isoformat(),
    }
    output = SuspectSearch(env, env, env, now=env.now()).run(RankSuspectsArgs.model_validate(args))
    [evidence] = output.evidence
    assert isinstance(evidence, SuspectEvidence)
    first = evidence.suspects[0]
    assert evidence.standout and first.service == "db", output.text
    assert (first.signals[0].name, first.signals[0].family, first.signals[0].role) == (
        "span_self_time_p90",
        "self_time",
        "cause",
    )
    callers = {s.service: s for s in evidence.suspects[1:]}
    for caller in ("api", "gateway"):
        assert "db" in callers[caller].explained_by
        assert "span_self_time_p90" not in {s.name for s in callers[caller].signals}
        assert "span_duration_p90" in {s.name for s in callers[caller].signals}
    assert first.signals[0].line in output.text.splitlines()


# -- the command -------------------------------------------------------------------------------------


def test_the_cli_imports_a_folder_and_data_info_counts_the_spans(tmp_path: Path) -> None:
    home = {"VERIDIAG_HOME": str(tmp_path / "home"), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}
    done = runner.invoke(app, ["data", "import-traces", str(TRACES)], env=home)
    assert done.exit_code == 0, done.stderr
    assert f"10_04_trace.csv: {len(rows_of(BEFORE))} new spans — " in done.stdout and "format csv" in done.stdout
    shared = sum(1 for r in rows_of(BEFORE) if r["TraceID"] == SHARED_TRACE)
    assert f"10_05_trace.csv: {len(rows_of(AFTER)) - shared} new spans ({shared} already stored)" in done.stdout
    assert "calls between services in the call graph" in done.stdout
    again = runner.invoke(app, ["data", "import-traces", str(BEFORE), "--json"], env=home)
    assert again.exit_code == 0 and json.loads(again.stdout)["imported"] == 0
    info = json.loads(runner.invoke(app, ["data", "info", "--json"], env=home).stdout)
    stored = rows_of(*sorted(TRACES.glob("*.csv")))
    assert info["spans"] == {"spans": len(stored), "traces": len({r["TraceID"] for r in stored})}
    assert "ts-travel-service/span_self_time_p90 (ms)" in info["metrics"]
    formats = json.loads(runner.invoke(app, ["data", "formats", "--json"], env=home).stdout)
    assert {f["id"] for f in formats if f["command"] == "import-traces"} == set(spanfiles.SPAN_FORMATS)
    metrics = runner.invoke(
        app,
        [
            "tools",
            "call",
            "query_metrics",
            json.dumps(
                {
                    "service": "ts-travel-service",
                    "metric": "span_self_time_p90",
                    "start": "2023-01-29T10:00:00Z",
                    "end": "2023-01-29T10:10:00Z",
                }
            ),
        ],
        env=home,
    )
    assert metrics.exit_code == 0 and '"status": "ok"' in metrics.stdout


def test_a_file_from_before_spans_gains_their_tables(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    EmbeddedEnvironment(path, load_demo=False).close()
    conn = sqlite3.connect(path)  # as a version 5 file was
    conn.executescript("DROP TABLE span; DROP TABLE span_reach; PRAGMA user_version=5;")
    conn.close()
    env = EmbeddedEnvironment(path, load_demo=False)
    assert env.span_summary() is None
    assert import_traces(env, BEFORE).imported == len(rows_of(BEFORE))


@pytest.mark.parametrize(
    ("column", "cell"),
    [
        ("StartTimeUnixNano", "²"),  # a digit to str.isdigit, no number to float
        ("StartTimeUnixNano", "9999-12-31T23:59:59Z"),  # past what the store's integers hold
        ("StartTimeUnixNano", "99999999999999999999"),
    ],
)
def test_a_time_no_store_can_hold_is_a_skipped_row_not_a_crash(tmp_path: Path, column: str, cell: str) -> None:
    rows = rows_of(BEFORE)[:5]
    rows[2][column] = cell
    report = import_traces(environment(tmp_path), write_rows(tmp_path / "spans.csv", rows))
    assert report.skipped == 1 and report.imported + report.duplicates == 4, report


def test_a_large_file_builds_its_read_indexes_once_after_and_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file past ``BULK_SPANS`` spans is written without the covering read index, which is
    built again after it: the stored spans, series and every window's figures are those of a
    file written with the index kept up, the index is there after, and a later small file keeps
    it up as it writes."""
    from veridiag.analysis.traces import SpanFilter
    from veridiag.tools.backends.embedded import _schema, _spans

    kept = environment(tmp_path / "kept")
    import_trace_files(kept, [TRACES])
    monkeypatch.setattr(_spans, "BULK_SPANS", 50)
    bulk = environment(tmp_path / "bulk")
    import_trace_files(bulk, [TRACES])
    tables = ("span", "span_reach", "metric_point", "metric_series", "call_edge")
    for table in tables:
        rows = f"SELECT * FROM {table}"
        assert sorted(bulk._connection().execute(rows)) == sorted(kept._connection().execute(rows)), table
    names = {n for (n,) in bulk._connection().execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert set(_schema.BULK_DROPPED) <= names
    window = SpanFilter(
        service="ts-travel-service",
        start=datetime(2023, 1, 29, 10, tzinfo=UTC),
        end=datetime(2023, 1, 29, 11, tzinfo=UTC),
    )
    assert bulk.span_stats(window) == kept.span_stats(window)
    assert bulk.call_counts(window) == kept.call_counts(window)
    # every read of a window looks each span up in an index that holds what it takes of it
    conn = bulk._connection()
    sent: list[tuple[str, list[object]]] = []
    real = conn.execute

    def traced(sql: str, params: Any = ()) -> Any:
        sent.append((sql, list(params)))
        return real(sql, params)

    with mock.patch.object(bulk, "_connection", return_value=mock.Mock(execute=traced)):
        bulk.span_stats(window), bulk.call_counts(window), bulk.slowest_traces(window, 3)
    plans = {sql: [str(row[-1]) for row in real(f"EXPLAIN QUERY PLAN {sql}", params)] for sql, params in sent}
    joins = [sql for sql in plans if " JOIN " in sql]
    assert len(joins) == 2 and len(plans) >= 4, plans  # callers and callees
    for sql, plan in plans.items():
        searches = [step for step in plan if step.startswith("SEARCH")]
        # a span by its whole key (a caller's parent) is the table's own row; a trace's spans by its
        # id (a slowest trace read whole) its own range — but never a trace's spans to find children
        whole = "PRIMARY KEY (trace_id=? AND span_id=?)" if sql in joins else "PRIMARY KEY (trace_id=?)"
        assert searches and all("COVERING INDEX" in step or whole in step for step in searches), (sql, plan)


def test_a_file_with_the_read_indexes_of_an_earlier_version_gets_the_current_ones_and_loses_those(
    tmp_path: Path,
) -> None:
    """A file written by an earlier veridiag (its span indexes not covering the callers' and
    callees' reads) is given the current ones when opened, and the retired ones are dropped
    (each would slow every later import); the figures read are the same."""
    from veridiag.analysis.traces import SpanFilter
    from veridiag.tools.backends.embedded import _schema

    env = environment(tmp_path)
    import_trace_files(env, [TRACES])
    window = SpanFilter(
        service="ts-travel-service",
        start=datetime(2023, 1, 29, 10, tzinfo=UTC),
        end=datetime(2023, 1, 29, 11, tzinfo=UTC),
    )
    expected = (env.span_stats(window), env.call_counts(window))
    conn = env._connection()
    for name in _schema._READ_INDEXES:
        conn.execute(f"DROP INDEX {name}")
    conn.execute("CREATE INDEX ix_span_service_figures ON span(service, start_ns, end_ns, self_ns, error, trace_id)")
    conn.execute("CREATE INDEX ix_span_parent ON span(trace_id, parent_id)")
    conn.commit()
    env.close()
    reopened = environment(tmp_path)
    try:
        names = {n for (n,) in reopened._connection().execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert set(_schema._READ_INDEXES) <= names and not names & {"ix_span_service_figures", "ix_span_parent"}, names
        assert (reopened.span_stats(window), reopened.call_counts(window)) == expected
    finally:
        reopened.close()
