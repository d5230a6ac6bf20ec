"""The OpenTelemetry ``otel_traces`` table in ClickHouse: its DDL and the SQL ``query_traces`` runs.

Every value a statement needs is a bound ``{name:Type}`` parameter (``Bound.bind``), never text in
the SQL; table and column names come from the settings (``config.OtelTraceColumns``, checked
there) and are quoted here. One builder serves a ClickHouse server over HTTP and the in-process
engine.

What is computed in SQL, and how it matches the embedded file (``embedded/_traces.py``):

* **Which spans**: a service's (and operation's) spans starting in ``[start, end)``, read through
  the exporter's primary key ``(ServiceName, SpanName, toDateTime(Timestamp))`` and its daily
  partitions.
* **Self time** (``STATS``): a span's duration less the union of its direct children's
  intervals, each clipped to the span — ``analysis/traces.py``'s ``self_times``, exactly: the
  children's ``(start, end)`` are gathered per parent (``groupArray``), sorted by start and
  folded once (``arrayFold``: covered time and the reach so far), so overlapping children count
  once. A child is a span of the same trace whose ``ParentSpanId`` is the span's id, of any
  service, starting from ``CHILD_LEAD`` before the window to the selected spans' last end: a
  child whose clock puts it more than that before its parent is not found.
* **Percentiles**: ``quantilesExactInclusive``, linear between the closest ranks — numpy's
  default, as the embedded file computes them.
* **Errors**: a span failed when its ``StatusCode`` is ``Error`` (the exporter's spelling; older
  exporters wrote ``STATUS_CODE_ERROR``); a span with an empty ``StatusCode`` states no status
  (what veridiag writes for a span file that has none, as nezha's CSVs), so the error count is
  None when no span of the set states one, never 0.
* **Calls** (``CALLS``): a caller → callee edge is a child span whose parent span (same trace,
  ``ParentSpanId`` = the parent's ``SpanId``) is another service's; it counts in the window the
  child starts in. The caller's span is looked for from ``CALLER_LEAD`` before the window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from veridiag.config import OtelTraceColumns
from veridiag.tools.backends.otel_logs import quote

#: The OpenTelemetry Collector's ClickHouse exporter's traces table (exporter/clickhouseexporter,
#: ``internal/sqltemplates/traces_table.sql``, the bloom-filter variant), engine MergeTree, no TTL.
EXPORTER_TRACES_DDL = """CREATE TABLE IF NOT EXISTS {table} (
    Timestamp DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    TraceState String CODEC(ZSTD(1)),
    SpanName LowCardinality(String) CODEC(ZSTD(1)),
    SpanKind LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion String CODEC(ZSTD(1)),
    SpanAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1)),
    StatusMessage String CODEC(ZSTD(1)),
    Events Nested (
        Timestamp DateTime64(9),
        Name LowCardinality(String),
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    Links Nested (
        TraceId String,
        SpanId String,
        TraceState String,
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_res_attr_key mapKeys(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_res_attr_value mapValues(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_key mapKeys(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_value mapValues(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_duration Duration TYPE minmax GRANULARITY 1,
    INDEX idx_lower_span_name lower(SpanName) TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8
) ENGINE = MergeTree()
PARTITION BY toDate(Timestamp)
PRIMARY KEY (ServiceName, SpanName, toDateTime(Timestamp))
ORDER BY (ServiceName, SpanName, toDateTime(Timestamp), Timestamp)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1
"""
#: The exporter's trace id → first and last span start table and the view that fills it
#: (``traces_id_ts_lookup_table.sql``, ``traces_id_ts_lookup_mv.sql``): the slowest traces'
#: spans are read within their bounds when it holds them.
EXPORTER_LOOKUP_DDL = """CREATE TABLE IF NOT EXISTS {lookup} (
    TraceId String CODEC(ZSTD(1)),
    Start SimpleAggregateFunction(min, DateTime) CODEC(ZSTD(1)),
    End SimpleAggregateFunction(max, DateTime) CODEC(ZSTD(1))
) ENGINE = MergeTree()
PARTITION BY toStartOfWeek(Start)
ORDER BY (TraceId)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1
"""
EXPORTER_LOOKUP_VIEW_DDL = """CREATE MATERIALIZED VIEW IF NOT EXISTS {view} TO {lookup}
AS SELECT TraceId, min(Timestamp) AS Start, max(Timestamp) AS End
FROM {table} WHERE TraceId != '' GROUP BY TraceId
"""

#: Status codes of a failed span: the exporter's (pdata's ``StatusCode.String()``), and older
#: exporters' proto names.
ERROR_CODES = ("Error", "STATUS_CODE_ERROR")
#: How long before the window a calling span may have started and still call into it (the
#: embedded file's ``CALLER_LEAD``), and a child before its parent (clock skew).
CALLER_LEAD = timedelta(minutes=10)
CHILD_LEAD = timedelta(minutes=10)
#: Without the lookup table, the slowest traces' spans are looked for this far around the
#: chosen spans' starts.
TRACE_REACH = timedelta(hours=1)

#: Column type checks: what each configured column must be for the SQL to mean what it says.
_STRING_TYPES = ("String", "LowCardinality(String)", "FixedString(")
_INTEGER_TYPES = ("UInt64", "Int64", "UInt32", "Int32")


def column_problem(role: str, kind: str) -> str | None:
    """Why a column of this role and ClickHouse type cannot be read as one (None: it can)."""
    kind = kind.removeprefix("Nullable(").removesuffix(")") if kind.startswith("Nullable(") else kind
    if role == "timestamp":
        return None if kind.startswith("DateTime64(") else f"is {kind}, not DateTime64 (the span's start, in ns)"
    if role == "duration":
        return None if kind in _INTEGER_TYPES else f"is {kind}, not an integer (the span's duration in ns)"
    return None if kind.startswith(_STRING_TYPES) else f"is {kind}, not a String"


@dataclass(frozen=True)
class TraceLayout:
    """The spans' table and its columns, and whether the exporter's lookup table is beside it."""

    database: str
    table: str
    columns: OtelTraceColumns
    lookup: bool = False

    def beside(self, suffix: str = "") -> str:
        return f"{quote(self.database)}.{quote(self.table + suffix)}"

    @property
    def name(self) -> str:
        return self.beside()

    @property
    def lookup_table(self) -> str:
        return self.beside("_trace_id_ts")

    @property
    def lookup_view(self) -> str:
        return self.beside("_trace_id_ts_mv")

    def col(self, role: str) -> str:
        return quote(getattr(self.columns, role))

    @property
    def start_ns(self) -> str:
        return f"toUnixTimestamp64Nano({self.col('timestamp')})"

    @property
    def end_ns(self) -> str:
        return f"({self.start_ns} + toInt64({self.col('duration')}))"

    @property
    def failed(self) -> str:
        codes = ", ".join(f"'{code}'" for code in ERROR_CODES)
        return f"{self.col('status_code')} IN ({codes})"

    @property
    def stated(self) -> str:
        return f"{self.col('status_code')} != ''"


@dataclass
class Bound:
    """One statement's bound parameters."""

    params: dict[str, Any] = field(default_factory=dict)

    def bind(self, value: Any, kind: str) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f"{{{name}:{kind}}}"

    def window(self, layout: TraceLayout, start_ns: int, end_ns: int) -> str:
        """``[start, end)`` on the span's start: the primary key's time and the partitions narrow it."""
        ts = layout.col("timestamp")
        first, last = self.bind(start_ns, "Int64"), self.bind(end_ns, "Int64")
        return f"{ts} >= fromUnixTimestamp64Nano({first}) AND {ts} < fromUnixTimestamp64Nano({last})"

    def selected(self, layout: TraceLayout, service: str, operation: str | None, start_ns: int, end_ns: int) -> str:
        """A service's (operation's) spans starting in the window."""
        sql = f"{layout.col('service')} = {self.bind(service, 'String')} AND {self.window(layout, start_ns, end_ns)}"
        if operation is not None:
            sql += f" AND {layout.col('span_name')} = {self.bind(operation, 'String')}"
        return sql


def stats_sql(layout: TraceLayout, bound: Bound, groups: list[str], first_ns: int) -> str:
    """Per group (its index in ``groups``, each a condition selecting spans): count, errors, stated,
    duration p50/p90/p99 (ns) and self time p50/p90 (ns), self times from the spans' children
    (module docstring); one statement for all, so a window and its baseline, or several callees,
    share one read of the children, which are looked for from ``first_ns`` on. A child is found
    by its parent's span id first (one column read over the range), then joined on its trace too."""
    trace, span, parent = layout.col("trace_id"), layout.col("span_id"), layout.col("parent_span_id")
    ts = layout.col("timestamp")
    first = bound.bind(first_ns, "Int64")
    which = ", ".join(f"if({condition}, {index}, -1)" for index, condition in enumerate(groups))
    anywhere = " OR ".join(f"({condition})" for condition in groups)
    return f"""
WITH picked AS (
    SELECT {trace} AS trace, {span} AS span, {layout.start_ns} AS s, toInt64({layout.col("duration")}) AS d,
        {layout.failed} AS failed, {layout.stated} AS stated, arrayJoin([{which}]) AS grp
    FROM {layout.name} WHERE {anywhere}
),
kids AS (
    SELECT {trace} AS trace, {parent} AS parent, groupArray(({layout.start_ns}, {layout.end_ns})) AS spans
    FROM {layout.name}
    WHERE {ts} >= fromUnixTimestamp64Nano({first})
        AND {ts} < fromUnixTimestamp64Nano((SELECT max(s + d) FROM picked) + 1)
        AND {parent} IN (SELECT span FROM picked) AND {parent} != {span}
    GROUP BY trace, parent
)
SELECT grp, count(), countIf(failed), countIf(stated),
    quantilesExactInclusive(0.5, 0.9, 0.99)(d), quantilesExactInclusive(0.5, 0.9)(own)
FROM (
    SELECT p.grp AS grp, p.d AS d, p.failed AS failed, p.stated AS stated,
        greatest(toInt64(0), p.d - arrayFold(
            (acc, x) -> (acc.1 + greatest(toInt64(0), least(x.2, p.s + p.d) - greatest(x.1, acc.2)),
                         greatest(acc.2, least(x.2, p.s + p.d))),
            arraySort(k.spans), (toInt64(0), p.s)).1) AS own
    FROM picked AS p LEFT JOIN kids AS k ON k.trace = p.trace AND k.parent = p.span
    WHERE p.grp >= 0
)
GROUP BY grp"""


def calls_sql(
    layout: TraceLayout,
    bound: Bound,
    service: str,
    operation: str | None,
    *,
    windows: list[tuple[int, int]],
    lead_ns: int,
) -> str:
    """Per window (its index), caller → callee edge: calls, failed, stated — the service's callers
    (its spans in the window whose parent is another service's) and its callees (other services'
    spans in the window whose parent is one of its spans since ``lead_ns`` before the window).
    Two reads of the range, for all windows: parents by the span ids the service's spans name,
    children by the parent ids; each then joined on its trace too."""
    trace, span, parent, name = (layout.col(c) for c in ("trace_id", "span_id", "parent_span_id", "service"))
    others = f"{name} != {bound.bind(service, 'String')}"
    first_ns, last_ns = min(a for a, _b in windows), max(b for _a, b in windows)

    def which(moment: str, lead: int) -> str:
        """The window ``moment`` (ns) falls in, -1 for none."""
        cases = [
            f"{moment} >= {bound.bind(a - lead, 'Int64')} AND {moment} < {bound.bind(b, 'Int64')}, {index}"
            for index, (a, b) in enumerate(windows)
        ]
        return f"multiIf({', '.join(cases)}, -1)"

    # the caller's span of a call in window i started at most ``lead_ns`` before it
    firsts = bound.bind([a - lead_ns for a, _b in windows], "Array(Int64)")
    ends = bound.bind([b for _a, b in windows], "Array(Int64)")
    mine = bound.selected(layout, service, operation, first_ns, last_ns)
    mine_before = bound.selected(layout, service, operation, first_ns - lead_ns, last_ns)
    around = bound.window(layout, first_ns - lead_ns, last_ns + lead_ns)
    inside = bound.window(layout, first_ns, last_ns)
    return f"""
SELECT c.grp, p.service, c.service, count(), countIf(c.failed), countIf(c.stated) FROM (
    SELECT {trace} AS trace, {parent} AS parent, {name} AS service, {layout.failed} AS failed,
        {layout.stated} AS stated, {which(layout.start_ns, 0)} AS grp
    FROM {layout.name} WHERE {mine}
) AS c
INNER JOIN (
    SELECT {trace} AS trace, {span} AS span, {name} AS service FROM {layout.name}
    WHERE {around} AND {others} AND {span} IN (SELECT {parent} FROM {layout.name} WHERE {mine})
) AS p ON p.trace = c.trace AND p.span = c.parent
WHERE c.grp >= 0
GROUP BY c.grp, p.service, c.service
UNION ALL
SELECT c.grp, p.service, c.service, count(), countIf(c.failed), countIf(c.stated) FROM (
    SELECT {trace} AS trace, {span} AS span, {name} AS service, {layout.start_ns} AS s
    FROM {layout.name} WHERE {mine_before}
) AS p
INNER JOIN (
    SELECT {trace} AS trace, {parent} AS parent, {name} AS service, {layout.failed} AS failed,
        {layout.stated} AS stated, {which(layout.start_ns, 0)} AS grp
    FROM {layout.name}
    WHERE {inside} AND {others} AND {parent} IN (SELECT {span} FROM {layout.name} WHERE {mine_before})
) AS c ON c.trace = p.trace AND c.parent = p.span
WHERE c.grp >= 0 AND p.s >= arrayElement({firsts}, c.grp + 1) AND p.s < arrayElement({ends}, c.grp + 1)
GROUP BY c.grp, p.service, c.service"""
