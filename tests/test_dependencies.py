"""The call graph (issue 26): caller/callee CSVs and span CSVs into the embedded file, idempotent,
readable by the offline roles (``dependencies()``) and counted by ``data info``."""

from __future__ import annotations

import csv
import json
import random
import shutil
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veridiag.cli.app import app
from veridiag.ingest.batch import import_dependency_files
from veridiag.ingest.columns import column_words
from veridiag.ingest.dependencies import import_dependencies
from veridiag.ingest.importers import ImportFailedError
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.catalogue import LogsElsewhere
from veridiag.tools.records import Span

NEZHA = Path(__file__).parent / "fixtures" / "nezha"
GRAPH = NEZHA / "onlineboutique" / "metric" / "dependency.csv"
SPANS = NEZHA / "trainticket" / "trace" / "09_30_trace.csv"
runner = CliRunner()


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_boutique_call_graph_without_its_hosts(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    report = import_dependencies(env, GRAPH)
    listed = rows_of(GRAPH)
    services = [(r["Source"], r["Target"]) for r in listed if not r["Target"].replace(".", "").isdigit()]
    assert env.dependencies() == sorted(services)
    assert report.format == "edges" and report.edges == report.imported == len(services)
    assert report.left_out == [f"{len(listed) - len(services)} edges to or from an IP address: a host, not a service"]
    again = import_dependencies(env, GRAPH)
    assert (again.imported, again.duplicates) == (0, len(services))
    assert env.dependencies() == sorted(services)


def test_span_edges_are_calls_between_services_counted(tmp_path: Path) -> None:
    """Parent span's service → child span's service, different services only, counted by hand."""
    spans = rows_of(SPANS)
    pod_of = {(r["TraceID"], r["SpanID"]): r["PodName"].rsplit("-", 2)[0] for r in spans}
    expected: Counter[tuple[str, str]] = Counter()
    for r in spans:
        caller = pod_of.get((r["TraceID"], r["ParentID"]))
        callee = pod_of[(r["TraceID"], r["SpanID"])]
        if caller is not None and caller != callee:
            expected[(caller, callee)] += 1
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    report = import_dependencies(env, SPANS)
    assert report.format == "spans" and report.edges == len(expected)
    stored = env._connection().execute("SELECT caller, callee, weight FROM call_edge WHERE source = ?", (SPANS.name,))
    assert {(a, b): w for a, b, w in stored} == {edge: float(n) for edge, n in expected.items()}
    assert ("ts-gateway-service", "ts-travel-service") in env.dependencies()


def test_a_child_before_its_parent_and_a_parent_elsewhere(tmp_path: Path) -> None:
    spans = rows_of(SPANS)
    random.Random(7).shuffle(spans)
    orphan = dict(spans[0], SpanID="feedfacefeedface", ParentID="0123456789abcdef")
    path = tmp_path / "spans.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(spans[0]))
        writer.writeheader()
        writer.writerows([*spans, orphan])
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    report = import_dependencies(env, path)
    reference = EmbeddedEnvironment(tmp_path / "r.db", load_demo=False)
    import_dependencies(reference, SPANS)
    assert env.dependencies() == reference.dependencies()
    assert report.left_out == ["1 span whose parent span is not in the file"]


caller_names = st.sampled_from(column_words().caller)
callee_names = st.sampled_from(column_words().callee)


def spell(name: str, style: int) -> str:
    parts = name.split()
    return ["_".join(parts), "".join(p.title() for p in parts), " ".join(p.upper() for p in parts)][style]


@settings(max_examples=40, deadline=None)
@given(caller_names, callee_names, st.integers(0, 2), st.booleans(), st.booleans())
def test_any_caller_callee_header_reads_the_same_graph(
    caller: str, callee: str, style: int, weighted: bool, callee_first: bool
) -> None:
    edges = [
        ("frontend", "cartservice", 3.0),
        ("checkoutservice", "paymentservice", 1.0),
        ("frontend", "adservice", 2.0),
    ]
    header = (
        [spell(callee, style), spell(caller, style)] if callee_first else [spell(caller, style), spell(callee, style)]
    )
    folder = Path(tempfile.mkdtemp())
    try:
        path = folder / "graph.csv"
        lines = [",".join([*header, "calls"] if weighted else header)]
        for a, b, w in edges:
            cells = [b, a] if callee_first else [a, b]
            lines.append(",".join([*cells, f"{w:g}"] if weighted else cells))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        env = EmbeddedEnvironment(folder / "e.db", load_demo=False)
        import_dependencies(env, path)
        stored = dict(
            ((a, b), w) for a, b, w in env._connection().execute("SELECT caller, callee, weight FROM call_edge")
        )
        env.close()
    finally:
        shutil.rmtree(folder)
    assert stored == {(a, b): (w if weighted else 1.0) for a, b, w in edges}


def test_a_file_with_no_graph_says_what_it_lacks(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    path = tmp_path / "metrics.csv"
    path.write_text("time,cpu\n2023-01-29T09:30:00Z,1\n", encoding="utf-8")
    with pytest.raises(ImportFailedError, match="no caller and callee columns"):
        import_dependencies(env, path)
    only_hosts = tmp_path / "hosts.csv"
    only_hosts.write_text("Source,Target\nadservice,33.33.33.76\n", encoding="utf-8")
    with pytest.raises(ImportFailedError, match="no edge between two services"):
        import_dependencies(env, only_hosts)
    assert env.dependencies() == []


def test_the_graph_is_read_where_logs_live_elsewhere(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    import_dependency_files(env, [GRAPH, SPANS.parent])

    class NoLogs:
        def services(self) -> list[str]:
            return []

        def log_span(self, service: str) -> Span | None:
            return None

        def table_span(self) -> Span | None:
            return None

    assert LogsElsewhere(env, NoLogs()).dependencies() == env.dependencies() != []


def test_a_file_from_before_the_call_graph_gains_its_table(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    EmbeddedEnvironment(path, load_demo=False).close()
    conn = sqlite3.connect(path)  # as a version 4 file was
    conn.execute("DROP TABLE call_edge")
    conn.execute("PRAGMA user_version=4")
    conn.commit()
    conn.close()
    env = EmbeddedEnvironment(path, load_demo=False)
    assert env.dependencies() == []
    assert import_dependencies(env, GRAPH).imported > 0


def test_the_cli_imports_a_folder_and_data_info_counts_the_edges(tmp_path: Path) -> None:
    env = {"VERIDIAG_HOME": str(tmp_path / "home"), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}
    done = runner.invoke(app, ["data", "import-dependencies", str(GRAPH), str(SPANS.parent)], env=env)
    assert done.exit_code == 0, done.stderr
    assert "dependency.csv: 14 new edges — " in done.stdout and "format edges" in done.stdout
    assert "09_30_trace.csv: " in done.stdout and "format spans" in done.stdout
    info = runner.invoke(app, ["data", "info", "--json"], env=env)
    counted = json.loads(info.stdout)["dependencies"]
    reference = EmbeddedEnvironment(tmp_path / "r.db", load_demo=False)
    import_dependency_files(reference, [GRAPH, SPANS.parent])
    assert counted["edges"] == len(reference.dependencies())
    text = runner.invoke(app, ["data", "info"], env=env)
    assert f"dependencies: {counted['edges']} edges between {counted['services']} services" in text.stdout
