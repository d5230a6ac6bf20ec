"""Traces into the embedded file as per-service series (``data import-traces``).

A span file (``ingest.spanfiles``: nezha's span CSV, OTLP/JSON, Jaeger or Zipkin JSON) is read
span by span; each span's service is named as the metric and log importers name theirs (a
service field as written, a pod by its workload, ``--service`` for the rest); the embedded
backend keeps the spans and derives, per service and minute, ``span_rate``,
``span_duration_p90``, ``span_self_time_p90`` and, when the format states a status,
``span_errors`` (``tools/backends/embedded/_spans.py`` says how and why exactly). So the
survey (``rank_suspects``), ``query_metrics``, charts and claims read spans as they read any
series. The calls between services the spans state go into the call graph as
``import-dependencies`` puts them there (edges from the file, its name their source, to or from
an IP address left out).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

from veridiag.ingest.dependencies import is_host
from veridiag.ingest.importers import ImportFailedError, ImportReport, ServiceSpelling, require_file
from veridiag.ingest.kubernetes import workload_of
from veridiag.ingest.spanfiles import ReadSpan, SpanFileError, SpanFileReport, SpanFormat, read_span_file
from veridiag.tools.backends import TraceReadError
from veridiag.tools.backends.embedded import EdgeRow, EmbeddedEnvironment, SpanRow
from veridiag.tools.words import quantity


class Stored(Protocol):
    added: int
    duplicates: int


class SpanStore(Protocol):
    """Another store of spans than the embedded file: ClickHouse's ``otel_traces``
    (``tools/backends/clickhouse_traces.py``), which derives nothing at import."""

    def add_spans(self, rows: Iterable[SpanRow]) -> Stored: ...


def import_traces(
    env: EmbeddedEnvironment,
    path: Path,
    *,
    service: str | None = None,
    fmt: SpanFormat = "auto",
    store: SpanStore | None = None,
) -> ImportReport:
    """One span file into the embedded file: its spans, the series derived from them, its calls.
    A span's service is its record's service as written, else ``service``, else its pod's
    workload; ``service`` also overrides a workload read from a pod name. A span with none is
    skipped and counted (the import fails when no span has one). With ``store``, the spans go
    there instead (idempotent too), named alike; the series and the call graph are then not
    derived: ``query_traces`` reads them from the spans."""
    require_file(path)
    found = SpanFileReport()
    spelling = ServiceSpelling(env.services())
    workloads: dict[str, str] = {}
    unowned: list[int] = []
    services: set[str] = set()

    by_option = False

    def owner(span: ReadSpan) -> str | None:
        nonlocal by_option
        if span.owner_kind == "service":
            return span.owner
        if service:
            by_option = True
            return service
        if span.owner_kind == "pod":
            return workloads.setdefault(span.owner, workload_of(span.owner))
        return None

    def rows() -> Iterator[SpanRow]:
        for span in read_span_file(path, fmt=fmt, report=found):
            name = owner(span)
            if not name:
                unowned.append(span.at)
                continue
            name = spelling.of(name)
            services.add(name)
            yield SpanRow(
                span.trace_id,
                span.span_id,
                span.parent_id,
                name,
                span.operation,
                span.start_ns,
                span.end_ns,
                span.error,
            )

    try:
        if store is not None:
            return _elsewhere(
                store.add_spans(rows()), path, found, unowned=unowned, services=services, spelling=spelling
            )
        written = env.add_spans(rows(), source=path.name, reach_key=str(path.resolve()))
    except SpanFileError as exc:
        raise ImportFailedError(str(exc)) from None
    except TraceReadError as exc:
        raise ImportFailedError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ImportFailedError(f"{path}: {exc.strerror or exc}") from None
    _checked(path, found, unowned)
    report = ImportReport(
        imported=written.added,
        duplicates=written.duplicates,
        skipped=found.skipped + len(unowned),
        first_skipped=sorted([*found.first_skipped, *unowned[:5]])[:5],
        format=found.format,
        services=sorted(services),
        series=sorted(f"{s}/{m}" for s, m in written.series),
        service_column=f"--service {service}" if by_option else found.owner_column,
        respelt=spelling.respelt(),
        without_service=len(unowned),
        traces=written.traces,
        points=written.points,
        minutes=written.minutes,
        orphans=written.orphans,
    )
    report.left_out += [f"{quantity(n, 'span')}: {why}" for why, n in found.reasons.most_common()]
    if written.partial_minutes:
        report.left_out.append(
            f"span_rate of {written.partial_minutes} minute{'s' if written.partial_minutes != 1 else ''} the files "
            "do not cover whole (a capture's first or last): a count there is no rate"
        )
    _add_edges(env, written.edges, report)
    return report


def _checked(path: Path, found: SpanFileReport, unowned: list[int]) -> None:
    if found.spans == 0:
        reasons = "; ".join(f"{n} {why}" for why, n in found.reasons.most_common(3)) or "none in the file"
        raise ImportFailedError(f"{path}: no span could be read ({reasons})")
    if len(unowned) == found.spans:
        raise ImportFailedError(
            f"{path}: no span says whose it is (no service or pod column or attribute); pass --service"
        )


def _elsewhere(
    written: Stored,
    path: Path,
    found: SpanFileReport,
    *,
    unowned: list[int],
    services: set[str],
    spelling: ServiceSpelling,
) -> ImportReport:
    """The report of a file stored in another span store."""
    _checked(path, found, unowned)
    report = ImportReport(
        imported=written.added,
        duplicates=written.duplicates,
        skipped=found.skipped + len(unowned),
        first_skipped=sorted([*found.first_skipped, *unowned[:5]])[:5],
        format=found.format,
        services=sorted(services),
        service_column=found.owner_column,
        respelt=spelling.respelt(),
        without_service=len(unowned),
    )
    report.left_out += [f"{quantity(n, 'span')}: {why}" for why, n in found.reasons.most_common()]
    return report


def _add_edges(env: EmbeddedEnvironment, edges: list[EdgeRow], report: ImportReport) -> None:
    """The calls the spans state into the call graph, as ``import-dependencies`` stores them."""
    kept = [edge for edge in edges if not (is_host(edge.caller) or is_host(edge.callee))]
    if len(kept) < len(edges):
        report.left_out.append(
            f"{quantity(len(edges) - len(kept), 'edge')} to or from an IP address: a host, not a service"
        )
    if kept:
        env.add_dependencies(kept)
    report.edges = len(kept)
