"""The call graph — who calls whom — into the embedded file, from either of two files:

* a list of edges: a CSV with a caller and a callee column (``Source,Target,Weight`` as nezha's
  ``dependency.csv``; ``caller,callee``, ``parent,child``, ``source,destination`` …) and an
  optional weight;
* spans: a CSV with trace, span and parent-span ids and whose span it is (nezha's
  ``trace/*.csv``: ``TraceID,SpanID,ParentID,PodName,…``): an edge from the parent span's
  service to the child span's, for spans of two different services, weighted by the calls
  counted.

Services are named as the rest of the import names them: a pod column by its workload, and a
name written in another case than a stored service's by the stored spelling. An end that is an
IP address is a host (nezha lists each service's node beside its calls), not a service: such
edges are left out and counted. A file imported again replaces its own edges' weights.
"""

from __future__ import annotations

import csv
import io
import ipaddress
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from veridiag.ingest.columns import edge_role, record_role, role_of
from veridiag.ingest.importers import ImportFailedError, ImportReport, ServiceSpelling, require_file
from veridiag.ingest.kubernetes import workload_of
from veridiag.tools.backends.embedded import EdgeRow, EmbeddedEnvironment
from veridiag.tools.spanjson import NO_PARENT
from veridiag.tools.words import quantity

#: What a span's parent id says when it has no parent (nezha writes ``root``).


@dataclass(frozen=True)
class _Columns:
    caller: int
    callee: int
    weight: int | None


@dataclass(frozen=True)
class _SpanColumns:
    trace: int | None
    span: int
    parent: int
    owner: int
    pods: bool


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of every row after the header."""
    with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="") as text:
        reader = csv.reader(text)
        next(reader, None)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error:
                continue
            yield reader.line_num, [cell.strip() for cell in row]


def _header(path: Path) -> list[str]:
    with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="") as text:
        try:
            return [cell.strip() for cell in next(csv.reader(text), [])]
        except csv.Error as exc:
            raise ImportFailedError(f"{path}: not a readable CSV: {exc}") from None


def _edge_columns(header: list[str]) -> _Columns | None:
    roles = [edge_role(name) for name in header]
    if "caller" not in roles or "callee" not in roles:
        return None
    weight = roles.index("weight") if "weight" in roles else None
    return _Columns(roles.index("caller"), roles.index("callee"), weight)


def _span_columns(header: list[str]) -> _SpanColumns | None:
    roles = [record_role(name) for name in header]
    owners = [role_of(name) for name in header]
    if "span" not in roles or "parent_span" not in roles:
        return None
    owner = next((j for wanted in ("service", "pod", "container") for j, o in enumerate(owners) if o == wanted), None)
    if owner is None:
        return None
    trace = roles.index("trace") if "trace" in roles else None
    return _SpanColumns(trace, roles.index("span"), roles.index("parent_span"), owner, owners[owner] == "pod")


def is_host(name: str) -> bool:
    """An IP address (with or without a port): a host, not a service."""
    address = name.rsplit(":", 1)[0] if name.count(":") == 1 else name
    try:
        ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    return True


def import_dependencies(env: EmbeddedEnvironment, path: Path) -> ImportReport:
    """A call graph (edges or spans, told apart by the header) into the embedded file."""
    require_file(path)
    header = _header(path)
    edges, spans = _edge_columns(header), _span_columns(header)
    if spans is None and edges is None:
        raise ImportFailedError(
            f"{path}: no caller and callee columns (Source,Target; caller,callee; parent,child …) and no span "
            "columns (SpanID, ParentID and PodName or service)"
        )
    report = ImportReport(time_format="")
    spelling = ServiceSpelling(env.services())
    counts: Counter[tuple[str, str]] = Counter()
    weights: dict[tuple[str, str], float] = {}
    if spans is not None:
        report.format = "spans"
        counts = _span_edges(path, spans, report)
    else:
        assert edges is not None
        report.format = "edges"
        weights = _listed_edges(path, edges, report)
    stated = weights or {edge: float(n) for edge, n in counts.items()}
    rows = []
    hosts = 0
    for (caller, callee), weight in sorted(stated.items()):
        if is_host(caller) or is_host(callee):
            hosts += 1
            continue
        rows.append(EdgeRow(spelling.of(caller), spelling.of(callee), weight, path.name))
    if hosts:
        report.left_out.append(f"{quantity(hosts, 'edge')} to or from an IP address: a host, not a service")
    if not rows:
        raise ImportFailedError(f"{path}: no edge between two services could be read")
    written = env.add_dependencies(rows)
    report.imported, report.duplicates, report.edges = written.added, written.duplicates, len(rows)
    report.in_file = written.in_file
    report.services = sorted({row.caller for row in rows} | {row.callee for row in rows})
    report.respelt = spelling.respelt()
    return report


def _skip(report: ImportReport, number: int) -> None:
    report.skipped += 1
    if len(report.first_skipped) < 5:
        report.first_skipped.append(number)


def _listed_edges(path: Path, columns: _Columns, report: ImportReport) -> dict[tuple[str, str], float]:
    """Each row's edge and weight (1 when the file gives none); an edge listed twice adds up."""
    found: dict[tuple[str, str], float] = {}
    for number, row in _rows(path):
        if not any(row):
            continue
        caller = row[columns.caller] if columns.caller < len(row) else ""
        callee = row[columns.callee] if columns.callee < len(row) else ""
        weight: float | None = 1.0
        if columns.weight is not None:
            try:
                weight = float(row[columns.weight]) if columns.weight < len(row) and row[columns.weight] else 1.0
            except ValueError:
                weight = None
        if not caller or not callee or caller == callee or weight is None:
            _skip(report, number)
            continue
        found[(caller, callee)] = found.get((caller, callee), 0.0) + weight
    return found


def _span_edges(path: Path, columns: _SpanColumns, report: ImportReport) -> Counter[tuple[str, str]]:
    """Calls between services, counted from parent to child span: two passes over the file (a
    child may come before its parent), holding each span's service only."""
    owner_of: dict[tuple[str, str], str] = {}
    workloads: dict[str, str] = {}

    def key(row: list[str], index: int) -> tuple[str, str]:
        trace = row[columns.trace] if columns.trace is not None and columns.trace < len(row) else ""
        return trace, row[index] if index < len(row) else ""

    for _number, row in _rows(path):
        span, owner = key(row, columns.span), row[columns.owner] if columns.owner < len(row) else ""
        if span[1] and owner:
            if columns.pods:
                owner = workloads.setdefault(owner, workload_of(owner))
            owner_of[span] = owner
    calls: Counter[tuple[str, str]] = Counter()
    outside = 0
    for number, row in _rows(path):
        child, parent = key(row, columns.span), key(row, columns.parent)
        callee = owner_of.get(child)
        if callee is None:
            _skip(report, number)
            continue
        if parent[1].lower() in NO_PARENT:
            continue
        caller = owner_of.get(parent)
        if caller is None:
            outside += 1
        elif caller != callee:
            calls[(caller, callee)] += 1
    if outside:
        report.left_out.append(f"{quantity(outside, 'span')} whose parent span is not in the file")
    return calls
