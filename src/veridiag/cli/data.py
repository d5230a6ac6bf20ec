"""``veridiag db …``, ``veridiag data …``, ``veridiag kb …``, ``veridiag tools call``: the evidence layer."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.table import Table
from typer.core import TyperCommand

from veridiag.cli.common import err, fail, out, print_json, settings

if TYPE_CHECKING:
    from rich.progress import Progress

    from veridiag.ingest.batch import BatchReport
    from veridiag.ingest.importers import ImportReport
    from veridiag.tools.backends.clickhouse_traces import ClickHouseTraces
    from veridiag.tools.backends.embedded import EmbeddedEnvironment

# Each command imports the store and the tools it runs, so ``veridiag --help`` loads neither.
#: ``import-metrics --format`` (``ingest.importers.MetricFormat``; a test keeps the two equal).
MetricFormat = Literal["auto", "csv", "openmetrics", "prometheus-json"]
#: ``import-traces --format`` (``ingest.spanfiles.SpanFormat``; a test keeps the two equal).
TraceFormat = Literal["auto", "csv", "otlp-json", "jaeger-json", "zipkin-json"]
LogStoreName = Literal["embedded", "clickhouse"]

db_app = typer.Typer(help="The session store (SQLite by default, PostgreSQL via VERIDIAG_DATABASE_URL).")
data_app = typer.Typer(help="Real data for the embedded backend: import logs and metrics, export metrics.")
kb_app = typer.Typer(help="The knowledge base of runbooks (bundled + knowledge.user_dir).")
tools_app = typer.Typer(help="Call an evidence tool by hand (recorded like any call).")

JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Create or migrate the store to the latest schema."""
    from veridiag.store import StoreError, open_store
    from veridiag.store.database import upgrade

    try:
        config = settings()
        store = open_store(config.store_url, stale_after=config.session_timeout_seconds)
        before, after = upgrade(store.engine)
    except StoreError as exc:
        raise fail(str(exc)) from None
    out.print(f"store {store.engine.url.render_as_string(hide_password=True)}: {before or 'empty'} → {after}")


@db_app.command("current")
def db_current() -> None:
    """Show the store's schema revision and the latest one."""
    from veridiag.store import StoreError, open_store
    from veridiag.store.database import current_revision, head_revision

    try:
        config = settings()
        store = open_store(config.store_url, stale_after=config.session_timeout_seconds)
    except StoreError as exc:
        raise fail(str(exc)) from None
    out.print(f"current {current_revision(store.engine)}, head {head_revision()}")


@db_app.command("compact")
def db_compact(
    older_than_days: Annotated[
        float, typer.Option("--older-than-days", min=0, help="Compress the audits of sessions older than this.")
    ] = 1.0,
) -> None:
    """Compress older sessions' audits now (opening the store does a batch at a time); reading
    them shows the same audit."""
    from veridiag.store import StoreError, open_store

    try:
        config = settings()
        store = open_store(config.store_url, stale_after=config.session_timeout_seconds)
        done = store.compress_older_audits(older_than=older_than_days * 86_400)
    except StoreError as exc:
        raise fail(str(exc)) from None
    out.print(f"compressed {done} session audits older than {older_than_days:g} days")


def _n(count: int, noun: str) -> str:
    """``count`` with ``noun`` agreeing: "1 line", "2 lines" (imported when a message is written)."""
    from veridiag.tools.words import quantity

    return quantity(count, noun)


def _not_new(duplicates: int, in_file: int, *, always: bool = False) -> str:
    """Why rows were not stored anew, in parentheses: already stored (before this import), or
    repeating a row of their own file — a first import of a file with repeats has no row
    "already stored". ``always``: say "0 already stored" rather than nothing."""
    stored = duplicates - in_file
    said = [f"{stored} already stored"] if stored or (always and not in_file) else []
    said += [f"{_n(in_file, 'row')} repeated within the file"] if in_file else []
    return f" ({'; '.join(said)})" if said else ""


def _report(report: ImportReport, what: str, as_json: bool) -> None:
    """``what``: the noun of the rows imported, singular ("log line")."""
    if as_json:
        print_json(report.model_dump(mode="json"))
        return
    already = _not_new(report.duplicates, report.in_file)
    how = f"format {report.format}" + (f", year {report.year} from {report.year_source}" if report.year_source else "")
    out.print(f"imported {_n(report.imported, 'new ' + what)}{already} — {how}")
    if report.services:
        out.print("services: " + ", ".join(report.services))
    if report.series and what != "span":
        out.print("series: " + ", ".join(report.series))
    for column in report.left_out:
        out.print(f"left out {column}")
    for line in [*_container_notes(report), *(_span_notes(report) if what == "span" else [])]:
        out.print(line)
    if report.unparsed:
        out.print(f"{_n(report.unparsed, 'line')} not understood by the {report.format} format (imported whole)")
    if report.continuation_lines:
        out.print(f"{_n(report.continuation_lines, 'continuation line')} (stack traces) kept with their entry")
    if report.changes:
        out.print(f"{_n(report.changes, 'change event')} recorded")
    if report.skipped:
        out.print(f"skipped {_n(report.skipped, 'unreadable ' + what)}, first at line(s) {report.first_skipped}")
    if report.replaced_bytes_lines:
        out.print(f"{_n(report.replaced_bytes_lines, 'line')} with invalid UTF-8 bytes (replaced with �)")


def _container_notes(report: ImportReport) -> list[str]:
    """What an import of container records says beyond the usual."""
    notes = []
    if report.inner_format:
        notes.append(f"lines inside the records: format {report.inner_format}")
    if report.traced:
        notes.append(f"{_n(report.traced, 'line')} kept with their trace and span ids")
    if report.without_service:
        notes.append(f"skipped {_n(report.without_service, 'line')} that name no service (no pod, no service field)")
    if report.partials_joined:
        notes.append(f"{_n(report.partials_joined, 'record')} joined to the line they continue")
    if report.partial_unfinished:
        notes.append(
            f"{_n(report.partial_unfinished, 'long line')} whose end is not in the file (kept as far as they go)"
        )
    return notes


def _span_notes(report: ImportReport) -> list[str]:
    """What an import of spans says beyond the usual."""
    notes = []
    metrics = Counter(name.rsplit("/", 1)[1] for name in report.series)
    if metrics:
        notes.append("series: " + ", ".join(f"{metric} ({_n(n, 'service')})" for metric, n in sorted(metrics.items())))
    if report.traces or report.points:
        notes.append(
            f"{_n(report.points, 'new or changed point')} of the span series over {_n(report.minutes, 'minute')}"
            f" ({_n(report.traces, 'trace')} recomputed)"
        )
    if report.orphans:
        notes.append(f"{_n(report.orphans, 'span')} whose parent span is in no file imported (yet)")
    if report.edges:
        notes.append(f"{_n(report.edges, 'call')} between services in the call graph")
    return notes


def _progress(label: str) -> Progress:
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn  # not for --help

    return Progress(
        TextColumn(label), BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=err, transient=True
    )


@data_app.command("import-logs")
def data_import_logs(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Log files or folders (every file in them): syslog, Apache/nginx, JSON lines, logfmt, log4j-style, "
            "container records (Docker, CRI, Kubernetes shippers, CSV) …"
        ),
    ],
    *,
    service: Annotated[
        str | None,
        typer.Option(
            "--service",
            help="Service these logs belong to (default: a container record's pod, or a record's service field).",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="Force a format by id (see `veridiag data formats`); default: detect.")
    ] = "auto",
    time_format: Annotated[
        str | None,
        typer.Option("--time-format", help="strptime layout of the leading timestamp, for shapes --format lacks."),
    ] = None,
    year: Annotated[
        int | None,
        typer.Option("--year", help="Year for formats that write none (default: the file's dates or mtime)."),
    ] = None,
    tz: Annotated[
        str | None, typer.Option("--tz", help="Zone of timestamps without an offset (default: timezone).")
    ] = None,
    store: Annotated[
        LogStoreName,
        typer.Option(
            "--store",
            help="embedded (the SQLite file) or clickhouse (the clickhouse.* table; the in-process engine "
            "needs the veridiag[clickhouse] extra).",
        ),
    ] = "embedded",
    as_json: JsonOption = False,
) -> None:
    """Import log files into the embedded backend or ClickHouse (streamed, idempotent, with progress)."""
    from veridiag.ingest.batch import expand, import_log_files
    from veridiag.ingest.importers import ImportFailedError
    from veridiag.tools.factory import clickhouse_logs, embedded_environment

    config = settings()
    try:
        named = expand(files, "*")  # a missing path is said before anything is drawn or opened
    except ImportFailedError as exc:
        raise fail(str(exc)) from None
    env = embedded_environment(config, importing=True)
    clickhouse = None
    if store == "clickhouse":
        from veridiag.tools.backends.clickhouse import ClickHouseUnavailableError

        try:
            clickhouse = clickhouse_logs(config, env)
            clickhouse.client()  # a held data directory or a missing extra is said before reading the file
        except ClickHouseUnavailableError as exc:
            raise fail(str(exc)) from None
        # A table an earlier release made gets today's indexes, built over every line it holds
        # (minutes for millions of lines): said before, so the wait is not a silent one.
        err.print(f"preparing ClickHouse table {config.clickhouse.table} …")
        try:
            added = clickhouse.create_tables()
        except Exception as exc:  # the client's: a refused statement, a server gone
            raise fail(f"cannot prepare ClickHouse table {config.clickhouse.table}: {exc}") from None
        if added:
            err.print(f"added to {config.clickhouse.table}: {', '.join(added)}")
    try:
        with _progress("importing {task.description}") as progress:
            task = progress.add_task("logs", total=sum(path.stat().st_size for path in named))
            report = import_log_files(
                env,
                named,
                service=service,
                fmt=fmt,
                time_format=time_format,
                year=year,
                tz=tz or config.timezone,
                progress=lambda done, name: progress.update(task, completed=done, description=name),
                logs=clickhouse,
            )
    finally:
        if clickhouse is not None:
            clickhouse.close()
    _demo_note(env)
    _batch_report(report, "log line", as_json, single=len(files) == 1 and files[0].is_file())


@data_app.command("import-metrics")
def data_import_metrics(
    files: Annotated[
        list[Path],
        typer.Argument(help="Files or folders (their *.csv): CSV (any time format), OpenMetrics, Prometheus JSON."),
    ],
    *,
    service: Annotated[
        str | None,
        typer.Option("--service", help="Service of samples without a service label; overrides a pod's workload."),
    ] = None,
    metric: Annotated[str | None, typer.Option("--metric", help="Metric name when the file gives none.")] = None,
    unit: Annotated[str | None, typer.Option("--unit", help="e.g. ms, %, MB, connections.")] = None,
    fmt: Annotated[MetricFormat, typer.Option("--format", help="auto, csv, openmetrics or prometheus-json.")] = "auto",
    tz: Annotated[
        str | None, typer.Option("--tz", help="Zone of timestamps without an offset (default: timezone).")
    ] = None,
    service_label: Annotated[str, typer.Option("--service-label", help="Label naming the service.")] = "service",
    as_json: JsonOption = False,
) -> None:
    """Import metric series into the embedded backend (idempotent: a re-import changes nothing).

    Several files and folders import in one go; a CSV's PodName (pod, pod_name …) column names
    each row's service: the pod's workload (recommendationservice-6cfdd55578-gfj6q →
    recommendationservice)."""
    from veridiag.ingest.batch import expand, import_metric_files
    from veridiag.ingest.importers import ImportFailedError
    from veridiag.tools.factory import embedded_environment

    config = settings()
    env = embedded_environment(config, importing=True)
    try:
        named = expand(files, "*.csv")  # a missing path is said before anything is drawn
        with _progress("importing {task.description}") as progress:
            task = progress.add_task("metrics", total=sum(path.stat().st_size for path in named))
            report = import_metric_files(
                env,
                named,
                service=service,
                metric=metric,
                unit=unit,
                fmt=fmt,
                tz=tz or config.timezone,
                service_label=service_label,
                progress=lambda done, name: progress.update(task, completed=done, description=name),
            )
    except ImportFailedError as exc:
        raise fail(str(exc)) from None
    _demo_note(env)
    _batch_report(report, "point", as_json, single=len(files) == 1 and files[0].is_file())


def _demo_note(env: EmbeddedEnvironment) -> None:
    """Said on stderr (``--json`` stays one document) after an import into a home that holds the
    bundled demo: answers would read both, and the demo's day as "today"."""
    if env.holds_demo():
        err.print(
            f"note: {env.path} also holds the bundled demo (a shop's day in July 2026): answers read it beside"
            " your data, and times without a date on the demo's day. To keep only your data, import into a new"
            " home (veridiag --home NEW_DIR data import-…: a home you import into first gets no demo), or delete"
            f" {env.path} and import again; VERIDIAG_EMBEDDED__LOAD_DEMO=false keeps the demo out of any home."
        )


def _batch_report(report: BatchReport, what: str, as_json: bool, *, single: bool) -> None:
    """One file named: as ``_report`` (and its failure is the command's); several: file by file."""
    if single:
        (only,) = report.files
        if only.report is None:
            raise fail(f"{only.path}: {only.why}")
        _report(only.report, what, as_json)
        return
    if as_json:
        print_json(report.model_dump(mode="json"))
    else:
        for result in report.files:
            name = Path(result.path).name
            if result.report is None:
                out.print(f"{name}: {result.outcome} — {result.why}")
                continue
            done = result.report
            already = _not_new(done.duplicates, done.in_file)
            whose = f" from {done.service_column}" if done.service_column else ""
            whom = ", ".join(done.services) if len(done.services) <= 5 else _n(len(done.services), "service")
            out.print(
                f"{name}: {_n(done.imported, 'new ' + what)}{already} — {whom or 'no service'}{whose}"
                + (f", {_n(len(done.series), 'series')}" if done.series else "")
                + (f", format {done.format}" if what in ("log line", "edge", "span") else "")
            )
            for note in [*done.left_out, *done.respelt]:
                out.print(f"  left out {note}" if note in done.left_out else f"  {note}")
            for note in [*_container_notes(done), *(_span_notes(done) if what == "span" else [])]:
                out.print(f"  {note}")
            if done.skipped:
                out.print(
                    f"  skipped {_n(done.skipped, what)} without a number (empty, NaN) or a time,"
                    f" first at line(s) {done.first_skipped}"
                )
        counts = report.counts()
        out.print(
            f"{_n(report.imported, 'new ' + what)}{_not_new(report.duplicates, report.in_file, always=True)} from "
            f"{_n(counts['imported'], 'file')}"
            f" in {report.seconds:.1f} s; {counts['skipped']} skipped, {counts['failed']} failed"
        )
        if report.services:
            out.print("services: " + ", ".join(report.services))
    counts = report.counts()
    if counts["failed"] or not counts["imported"]:
        raise typer.Exit(1)


@data_app.command("import-changes")
def data_import_changes(
    file: Annotated[Path, typer.Argument(help="CSV with a header, or JSON lines: time, service, kind, description.")],
    service: Annotated[str | None, typer.Option("--service", help="Service of rows that name none.")] = None,
    tz: Annotated[
        str | None, typer.Option("--tz", help="Zone of timestamps without an offset (default: timezone).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Import a change feed (deploys, config changes, restarts, scaling): the only source of changes."""
    from veridiag.ingest.importers import ImportFailedError, import_changes
    from veridiag.tools.factory import embedded_environment

    config = settings()
    env = embedded_environment(config, importing=True)
    try:
        report = import_changes(env, file, service=service, tz=tz or config.timezone)
    except ImportFailedError as exc:
        raise fail(str(exc)) from None
    _demo_note(env)
    _report(report, "change", as_json)


@data_app.command("import-dependencies")
def data_import_dependencies(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Call-graph CSVs or folders of them: caller/callee edges (Source,Target,Weight; caller,callee; "
            "parent,child …) or spans (TraceID,SpanID,ParentID,PodName …)."
        ),
    ],
    as_json: JsonOption = False,
) -> None:
    """Import who calls whom (idempotent: a file imported again replaces its own edges)."""
    from veridiag.ingest.batch import expand, import_dependency_files
    from veridiag.ingest.importers import ImportFailedError
    from veridiag.tools.factory import embedded_environment

    try:
        named = expand(files, "*.csv")
        env = embedded_environment(settings(), importing=True)
        with _progress("importing {task.description}") as progress:
            task = progress.add_task("call graph", total=sum(path.stat().st_size for path in named))
            report = import_dependency_files(
                env, named, progress=lambda done, name: progress.update(task, completed=done, description=name)
            )
    except ImportFailedError as exc:
        raise fail(str(exc)) from None
    _demo_note(env)
    _batch_report(report, "edge", as_json, single=len(files) == 1 and files[0].is_file())


@data_app.command("import-traces")
def data_import_traces(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Span files or folders (every file in them): CSV of spans (nezha's TraceID,SpanID,ParentID,PodName,"
            "…), OTLP/JSON (the OpenTelemetry Collector's file exporter), Jaeger or Zipkin JSON."
        ),
    ],
    *,
    service: Annotated[
        str | None,
        typer.Option("--service", help="Service of spans that name none; overrides a pod's workload."),
    ] = None,
    fmt: Annotated[TraceFormat, typer.Option("--format", help="auto, csv, otlp-json, jaeger-json or zipkin-json.")] = (
        "auto"
    ),
    store: Annotated[
        LogStoreName,
        typer.Option(
            "--store",
            help="embedded (the SQLite file) or clickhouse (the clickhouse.traces_table, the exporter's otel_traces; "
            "the in-process engine needs the veridiag[clickhouse] extra).",
        ),
    ] = "embedded",
    as_json: JsonOption = False,
) -> None:
    """Import spans as per-service series a minute — span_rate, span_duration_p90, span_self_time_p90,
    span_errors (when the format states a status) — and the calls between services into the call graph.

    Idempotent: a file imported again adds nothing; files that overlap in time merge exactly (the
    spans are kept and each minute is recomputed from all of them). Into ClickHouse, every day of
    the table whose spans changed is then derived (self times and calls, in veridiag's own tables
    beside it), which query_traces reads instead of every service's spans."""
    from veridiag.ingest.batch import expand, import_trace_files
    from veridiag.ingest.importers import ImportFailedError
    from veridiag.tools.backends import TraceReadError
    from veridiag.tools.factory import clickhouse_traces, embedded_environment

    config = settings()
    clickhouse = None
    try:
        named = expand(files, "*")
        env = embedded_environment(config, importing=True)
        if store == "clickhouse":
            clickhouse = _clickhouse_traces(clickhouse_traces(config, env))
        with _progress("importing {task.description}") as progress:
            task = progress.add_task("spans", total=sum(path.stat().st_size for path in named))
            report = import_trace_files(
                env,
                named,
                service=service,
                fmt=fmt,
                progress=lambda done, name: progress.update(task, completed=done, description=name),
                store=clickhouse,
            )
        if clickhouse is not None:
            clickhouse.derive()  # the days imported into: self times and calls read without a scan
    except ImportFailedError as exc:
        raise fail(str(exc)) from None
    except TraceReadError as exc:  # the spans are in; query_traces reads the exporter's table alone
        raise fail(f"spans imported, but not derived: {exc}") from None
    finally:
        if clickhouse is not None:
            clickhouse.close()
    _demo_note(env)
    _batch_report(report, "span", as_json, single=len(files) == 1 and files[0].is_file())


def _clickhouse_traces(traces: ClickHouseTraces) -> ClickHouseTraces:
    """The ClickHouse span table ready to write: made with the exporter's DDL unless it exists;
    a held data directory, a missing extra or a server that refuses said before a file is read."""
    from veridiag.tools.backends import TraceReadError
    from veridiag.tools.backends.clickhouse import ClickHouseUnavailableError

    try:
        traces.create_tables()
        traces.layout  # noqa: B018 — a table of another shape is said now
    except (ClickHouseUnavailableError, TraceReadError) as exc:
        traces.close()
        raise fail(str(exc)) from None
    except Exception as exc:  # the client's: a refused statement, a server gone
        traces.close()
        raise fail(f"cannot prepare ClickHouse table {traces.settings.traces_table}: {exc}") from None
    return traces


@data_app.command("derive-traces")
def data_derive_traces(as_json: JsonOption = False) -> None:
    """Derive the self times and calls of every day of the ClickHouse span table
    (clickhouse.traces_table) whose spans changed since it was last derived, into veridiag's own
    tables beside it: query_traces then reads those instead of every service's spans. For a table
    the OpenTelemetry exporter writes, run it on a schedule (a Kubernetes CronJob); a day changed
    since is read from the exporter's table, as before, until derived again."""
    from veridiag.tools.backends import TraceReadError
    from veridiag.tools.factory import clickhouse_traces

    started = time.perf_counter()
    traces = _clickhouse_traces(clickhouse_traces(settings()))
    table = traces.settings.traces_table
    try:
        days = traces.derive(lambda day, number, total: err.print(f"{table}: deriving {day} ({number}/{total}) …"))
    except TraceReadError as exc:
        raise fail(f"cannot derive {table}: {exc}") from None
    finally:
        traces.close()
    took = round(time.perf_counter() - started, 2)
    if as_json:
        print_json({"table": table, "derived_days": days, "seconds": took})
        return
    done = f": {', '.join(days)}" if days else " (every day was current)"
    out.print(f"{table}: {len(days)} day(s) derived{done} in {took} s")


@data_app.command("formats")
def data_formats(as_json: JsonOption = False) -> None:
    """The log formats ``import-logs`` detects and the span formats ``import-traces`` reads
    (``--format`` of each takes these ids)."""
    from veridiag.ingest.logformats import FORMATS
    from veridiag.ingest.spanfiles import SPAN_FORMATS

    rows = [
        {"id": fmt_id, "title": str(cls.title), "command": "import-logs"} for fmt_id, cls in sorted(FORMATS.items())
    ]
    rows += [{"id": fmt_id, "title": title, "command": "import-traces"} for fmt_id, title in SPAN_FORMATS.items()]
    if as_json:
        print_json(rows)
        return
    table = Table("id", "format", "for")
    for row in rows:
        table.add_row(row["id"], row["title"], row["command"])
    out.print(table)


@data_app.command("export-openmetrics")
def data_export_openmetrics(file: Annotated[Path, typer.Argument(help="Output file (OpenMetrics text).")]) -> None:
    """Write every embedded metric point as OpenMetrics (for promtool tsdb create-blocks-from)."""
    from veridiag.ingest.importers import export_openmetrics
    from veridiag.tools.factory import embedded_environment

    env = embedded_environment(settings())
    with file.open("w", encoding="utf-8") as handle:
        count = export_openmetrics(env, handle)
    out.print(f"wrote {_n(count, 'sample')} to {file}")


@data_app.command("info")
def data_info(as_json: JsonOption = False) -> None:
    """What the embedded backend holds: services, metrics, the call graph's size, the clock."""
    from veridiag.tools.factory import embedded_environment

    env = embedded_environment(settings())
    edges = env.dependencies()
    spans = env.span_summary()
    info = {
        "path": str(env.path),
        "now": env.now().isoformat(),
        "services": env.services(),
        "metrics": [f"{s}/{m} ({u})" for s, m, u in env.metrics()],
        "dependencies": {"edges": len(edges), "services": len({end for edge in edges for end in edge})},
        "spans": {"spans": spans[0], "traces": spans[1]} if spans else {"spans": 0, "traces": 0},
        "data": {service: env.describe(service) for service in env.services()},
    }
    if as_json:
        print_json(info)
        return
    out.print(f"{info['path']} — clock {info['now']}")
    out.print("services: " + ", ".join(info["services"]))
    out.print("metrics: " + ", ".join(info["metrics"]))
    called = len({end for edge in edges for end in edge})
    out.print(
        f"dependencies: {_n(len(edges), 'edge')} between {_n(called, 'service')}" if edges else "dependencies: none"
    )
    out.print(
        f"spans: {spans[0]} of {_n(spans[1], 'trace')}, as the series span_rate, span_duration_p90, span_self_time_p90"
        " (span_errors where they state a status)"
        if spans
        else "spans: none"
    )
    for service in env.services():
        for line in env.describe(service):
            out.print(f"  {line}")


@kb_app.command("index")
def kb_index() -> None:
    """Re-index bundled runbooks plus the user folder."""
    from veridiag.tools.factory import embedded_environment
    from veridiag.tools.knowledge import RunbookError

    try:
        count = embedded_environment(settings()).index_knowledge()
    except RunbookError as exc:
        raise fail(str(exc)) from None
    out.print(f"indexed {_n(count, 'runbook')}")


@kb_app.command("search")
def kb_search(
    query: Annotated[str, typer.Argument(help="Symptoms or question, 中文 or English.")],
    service: Annotated[str | None, typer.Option("--service")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=50)] = 5,
    as_json: JsonOption = False,
) -> None:
    """Search runbooks (FTS5 over rjieba-segmented text, ranked by bm25)."""
    from veridiag.tools.factory import embedded_environment
    from veridiag.tools.knowledge import search

    env = embedded_environment(settings())
    hits = search(env._connection(), query, service=service, limit=limit)
    if as_json:
        print_json(
            [
                {"id": h.runbook.id, "title": h.runbook.title, "score": h.score, "services": list(h.runbook.services)}
                for h in hits
            ]
        )
        return
    if not hits:
        out.print("no runbook matches")
        return
    table = Table("id", "title", "score")
    for hit in hits:
        table.add_row(hit.runbook.id, hit.runbook.title, f"{hit.score:.2f}")
    out.print(table)


#: The ``tool`` argument's help; ``{tools}`` becomes every registered tool when help is shown.
TOOL_HELP = "One of: {tools}."


class _ToolsCallCommand(TyperCommand):
    """``tools call``: its help lists the tools from their registry (``tools/args.py``
    ``TOOL_ARGS``, by id) when it is shown, so a new tool needs no second list here and no other
    command pays for importing the registry's models."""

    def format_help(self, ctx: Any, formatter: Any) -> None:  # typer's vendored click (a private module)
        from veridiag.tools.args import TOOL_ARGS

        for param in self.params:
            if param.name == "tool":
                param.help = TOOL_HELP.format(tools=", ".join(TOOL_ARGS))  # type: ignore[attr-defined]
        super().format_help(ctx, formatter)


@tools_app.command("call", cls=_ToolsCallCommand)
def tools_call(
    tool: Annotated[str, typer.Argument(help=TOOL_HELP)],
    arguments: Annotated[str, typer.Argument(help='JSON arguments, e.g. \'{"service": "payment-service"}\'.')] = "{}",
) -> None:
    """Run one tool in a new session and print the recorded invocation as JSON.

    A call that failed (bad arguments, backend unreachable) is still recorded and printed, and
    says why in one line on stderr, exit status 2."""
    from veridiag.store import StoreError, open_store
    from veridiag.tools import ToolRunner
    from veridiag.tools.factory import ConfigurationError, build_toolbox

    config = settings()
    try:
        store = open_store(config.store_url, stale_after=config.session_timeout_seconds)
        toolbox = build_toolbox(config)
    except (StoreError, ConfigurationError) as exc:
        raise fail(str(exc)) from None
    session = store.create_session(f"tools call {tool}")
    result = ToolRunner(store, toolbox, session.id).run(tool, arguments)
    record = store.get_invocations([result.invocation_id])[result.invocation_id]
    if result.status == "error":
        store.fail_session(session.id, error=f"{tool}: {record.error}")
    else:
        store.finish_session(session.id, "completed")
    print_json({"session_id": session.id, **json.loads(record.model_dump_json())})
    if result.status == "error":
        raise fail(f"{tool} failed (invocation #{record.id}): {record.error or record.output_preview}")
