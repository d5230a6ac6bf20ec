"""``veridiag db …``, ``veridiag data …``, ``veridiag kb …``, ``veridiag tools call``: the evidence layer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from veridiag.cli.common import err, fail, out, print_json, settings
from veridiag.store import StoreError, open_store
from veridiag.store.database import current_revision, head_revision, upgrade
from veridiag.tools import ToolRunner
from veridiag.tools.factory import ConfigurationError, build_toolbox, embedded_environment
from veridiag.tools.importers import (
    ImportFailedError,
    ImportReport,
    export_openmetrics,
    import_logs,
    import_metrics_csv,
)
from veridiag.tools.knowledge import RunbookError, search

db_app = typer.Typer(help="The session store (SQLite by default, PostgreSQL via VERIDIAG_DATABASE_URL).")
data_app = typer.Typer(help="Real data for the embedded backend: import logs and metrics, export metrics.")
kb_app = typer.Typer(help="The knowledge base of runbooks (bundled + knowledge.user_dir).")
tools_app = typer.Typer(help="Call an evidence tool by hand (recorded like any call).")

JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Create or migrate the store to the latest schema."""
    try:
        store = open_store(settings().store_url)
        before, after = upgrade(store.engine)
    except StoreError as exc:
        raise fail(str(exc)) from None
    out.print(f"store {store.engine.url.render_as_string(hide_password=True)}: {before or 'empty'} → {after}")


@db_app.command("current")
def db_current() -> None:
    """Show the store's schema revision and the latest one."""
    try:
        store = open_store(settings().store_url)
    except StoreError as exc:
        raise fail(str(exc)) from None
    out.print(f"current {current_revision(store.engine)}, head {head_revision()}")


def _report(report: ImportReport, what: str, as_json: bool) -> None:
    if as_json:
        print_json(report.__dict__)
        return
    out.print(f"imported {report.imported} {what} (timestamps: {report.time_format})")
    if report.skipped:
        out.print(f"skipped {report.skipped} unreadable lines, first at line(s) {report.first_skipped}")
    if report.replaced_bytes_lines:
        out.print(f"{report.replaced_bytes_lines} lines had invalid UTF-8 bytes (replaced with �)")


@data_app.command("import-logs")
def data_import_logs(
    file: Annotated[Path, typer.Argument(help="A log file; one entry per line.")],
    service: Annotated[str, typer.Option("--service", help="Service these logs belong to.")],
    time_format: Annotated[
        str | None, typer.Option("--time-format", help="strptime format of the leading timestamp (default: detect).")
    ] = None,
    year: Annotated[int | None, typer.Option("--year", help="Year for syslog timestamps (default: this year).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Import a log file into the embedded backend (streamed, with progress)."""
    env = embedded_environment(settings())
    size = file.stat().st_size if file.exists() else 0
    with Progress(
        TextColumn("importing logs"), BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=err, transient=True
    ) as progress:
        task = progress.add_task("logs", total=size)
        try:
            report = import_logs(
                env,
                file,
                service=service,
                time_format=time_format,
                year=year,
                progress=lambda done: progress.update(task, completed=done),
            )
        except ImportFailedError as exc:
            raise fail(str(exc)) from None
    _report(report, "log lines", as_json)


@data_app.command("import-metrics")
def data_import_metrics(
    file: Annotated[Path, typer.Argument(help="CSV with timestamp,value rows (ISO-8601 or epoch).")],
    service: Annotated[str, typer.Option("--service")],
    metric: Annotated[str, typer.Option("--metric")],
    unit: Annotated[str, typer.Option("--unit", help="e.g. ms, %, MB, connections.")] = "",
    as_json: JsonOption = False,
) -> None:
    """Import a metric series into the embedded backend."""
    env = embedded_environment(settings())
    try:
        report = import_metrics_csv(env, file, service=service, metric=metric, unit=unit)
    except ImportFailedError as exc:
        raise fail(str(exc)) from None
    _report(report, "points", as_json)


@data_app.command("export-openmetrics")
def data_export_openmetrics(file: Annotated[Path, typer.Argument(help="Output file (OpenMetrics text).")]) -> None:
    """Write every embedded metric point as OpenMetrics (for promtool tsdb create-blocks-from)."""
    env = embedded_environment(settings())
    with file.open("w", encoding="utf-8") as handle:
        count = export_openmetrics(env, handle)
    out.print(f"wrote {count} samples to {file}")


@data_app.command("info")
def data_info(as_json: JsonOption = False) -> None:
    """What the embedded backend holds: services, metrics, the clock."""
    env = embedded_environment(settings())
    info = {
        "path": str(env.path),
        "now": env.now().isoformat(),
        "services": env.services(),
        "metrics": [f"{s}/{m} ({u})" for s, m, u in env.metrics()],
    }
    if as_json:
        print_json(info)
        return
    out.print(f"{info['path']} — clock {info['now']}")
    out.print("services: " + ", ".join(info["services"]))
    out.print("metrics: " + ", ".join(info["metrics"]))


@kb_app.command("index")
def kb_index() -> None:
    """Re-index bundled runbooks plus the user folder."""
    try:
        count = embedded_environment(settings()).index_knowledge()
    except RunbookError as exc:
        raise fail(str(exc)) from None
    out.print(f"indexed {count} runbooks")


@kb_app.command("search")
def kb_search(
    query: Annotated[str, typer.Argument(help="Symptoms or question, 中文 or English.")],
    service: Annotated[str | None, typer.Option("--service")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=50)] = 5,
    as_json: JsonOption = False,
) -> None:
    """Search runbooks (FTS5 over rjieba-segmented text, ranked by bm25)."""
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


@tools_app.command("call")
def tools_call(
    tool: Annotated[str, typer.Argument(help="query_logs, query_metrics or lookup_knowledge.")],
    arguments: Annotated[str, typer.Argument(help='JSON arguments, e.g. \'{"service": "payment-service"}\'.')] = "{}",
) -> None:
    """Run one tool in a new session and print the recorded invocation as JSON."""
    config = settings()
    try:
        store = open_store(config.store_url)
        toolbox = build_toolbox(config)
    except (StoreError, ConfigurationError) as exc:
        raise fail(str(exc)) from None
    session = store.create_session(f"tools call {tool}")
    result = ToolRunner(store, toolbox, session.id).run(tool, arguments)
    store.finish_session(session.id, "completed")
    record = store.get_invocations([result.invocation_id])[result.invocation_id]
    print_json({"session_id": session.id, **json.loads(record.model_dump_json())})
    if result.status == "error":
        raise typer.Exit(1)
