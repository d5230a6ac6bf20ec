"""The OpenTelemetry ``otel_traces`` table in ClickHouse: its DDL and the SQL ``query_traces`` runs.

Every value a statement needs is a bound ``{name:Type}`` parameter (``Bound.bind``), never text in
the SQL; table and column names come from the settings (``config.OtelTraceColumns``, checked
there) and are quoted here. One builder serves a ClickHouse server over HTTP and the in-process
engine.

What is computed in SQL, and how it matches the embedded file (``embedded/_traces.py``):

* **Which spans**: a service's (and operation's) spans starting in ``[start, end)``, read through
  the exporter's primary key ``(ServiceName, SpanName, toDateTime(Timestamp))`` and its daily
  partitions.
* **One read** (``figures_sql``): the window's and the baseline's figures, callers and callees
  come from one statement that reads the time range once; a span meets its children and its
  parent in one ``GROUP BY`` of (trace, span id) — no join, no second read.
* **Self time**: a span's duration less the union of its direct children's intervals, each
  clipped to the span — ``analysis/traces.py``'s ``self_times``, exactly (not the sum of the
  children, which overcounts overlapping ones): the children's ``(start, end)`` are gathered
  per parent (``groupArray``), sorted by start and folded once (``arrayFold``: covered time and
  the reach so far), so overlapping children count once. A child is a span of the same trace
  whose ``ParentSpanId`` is the span's id, of any service, starting from ``CHILD_LEAD`` before
  the window to the selected spans' last end: a child whose clock puts it more than that before
  its parent is not found.
* **Percentiles**: ``quantilesExactInclusive``, linear between the closest ranks — numpy's
  default, as the embedded file computes them.
* **Errors**: a span failed when its ``StatusCode`` is ``Error`` (the exporter's spelling; older
  exporters wrote ``STATUS_CODE_ERROR``); a span with an empty ``StatusCode`` states no status
  (what veridiag writes for a span file that has none, as nezha's CSVs), so the error count is
  None when no span of the set states one, never 0.
* **Calls**: a caller → callee edge is a child span whose parent span (same trace,
  ``ParentSpanId`` = the parent's ``SpanId``) is another service's; it counts in the window the
  child starts in. The caller's span is looked for from ``CALLER_LEAD`` before the window.
* **Derived spans** (ours, beside the exporter's table; issue 29): reading a window's children
  means reading every service's spans of the range, as the primary key leads with the service.
  ``derive_sql`` computes, once per day of spans, each span's self time and each call between
  two services (child, parent, their starts) into ``{table}_veridiag_spans``, ordered like the
  exporter's table; ``derived_figures_sql`` then reads only the service's rows and the calls of
  the range. ``{table}_veridiag_days`` keeps, per day derived, the exporter table's row count and
  newest insert of every day its computation read (``system.parts``): a day whose spans changed
  since (an insert, a delete) is read from the exporter's table again, as is one never derived.
  The derivation's version (``DERIVATION``) is the days table's comment and each day's mark's:
  a day another veridiag derived is read as not derived, and tables it made are made anew.
* **Spans by trace** (ours, derived with the rest): the exporter's table finds a trace's spans
  only through its bloom filter over every service's spans of the trace's seconds (~30 granules
  read for three traces at 10 M spans); ``{table}_veridiag_traces`` keeps each day's spans
  ordered by trace id, as Jaeger's and Tempo's stores do, so the slowest traces' spans are a few
  granules (``spans_sql``, ``derived_spans_sql``: the same rows).
"""

from __future__ import annotations

from collections.abc import Mapping
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

#: Ours: per span its figures (kind 0); per call between two services the child's figures, keyed
#: by the child (kind 1: ``Other`` the caller) and by the caller (kind 2: ``ServiceName`` and
#: ``SpanName`` the caller's, ``Other`` the child); ``CallerStart`` the caller's start. By day.
DERIVED_DDL = """CREATE TABLE IF NOT EXISTS {derived} (
    Day Date,
    Kind UInt8,
    ServiceName LowCardinality(String),
    SpanName LowCardinality(String),
    Start Int64 CODEC(Delta(8), ZSTD(1)),
    Duration Int64 CODEC(T64, ZSTD(1)),
    Own Int64 CODEC(T64, ZSTD(1)),
    Failed UInt8,
    Stated UInt8,
    Other LowCardinality(String),
    OtherName LowCardinality(String),
    CallerStart Int64 CODEC(Delta(8), ZSTD(1))
) ENGINE = MergeTree()
PARTITION BY Day
ORDER BY (Kind, ServiceName, SpanName, Start)
"""
#: Ours: every span of a day by its trace (``spans_sql``'s columns, ``derived_spans_sql``).
DERIVED_TRACES_DDL = """CREATE TABLE IF NOT EXISTS {traces} (
    Day Date,
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    ServiceName LowCardinality(String),
    SpanName LowCardinality(String),
    Start Int64 CODEC(Delta(8), ZSTD(1)),
    Duration Int64 CODEC(T64, ZSTD(1)),
    Failed UInt8,
    Stated UInt8
) ENGINE = MergeTree()
PARTITION BY Day
ORDER BY (TraceId, Start)
"""
#: The derivation's version: raised whenever the derived rows change in columns or meaning. The
#: days table's comment says which made the tables (``derive`` makes tables of another anew), each
#: day's mark which derived the day (a reader takes no other's, whoever wrote it: no statement more).
DERIVATION = 3
#: Ours: which days are derived, under which ``DERIVATION``, and of every day their computation
#: read, the exporter table's rows and its newest insert (block number: a merge keeps it, an
#: insert raises it). Made last, its comment the ``DERIVATION`` (``derivation_comment``).
DERIVED_DAYS_DDL = """CREATE TABLE IF NOT EXISTS {days} (
    Day Date,
    Partitions Array(String),
    Counts Array(Int64),
    Blocks Array(Int64),
    Version UInt64,
    Derivation UInt32 DEFAULT 0
) ENGINE = ReplacingMergeTree(Version)
ORDER BY Day
COMMENT '{comment}'
"""


def derivation_comment(derivation: int = DERIVATION) -> str:
    """The days table's comment: the derivation that made the tables."""
    return f"veridiag derivation {derivation}"


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
    #: Our derived tables are beside it, of this ``DERIVATION``, and the table is partitioned by
    #: day (``derive_sql``).
    derived: bool = False
    #: The table is partitioned by day: its days can be derived.
    daily: bool = False

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

    @property
    def derived_table(self) -> str:
        return self.beside("_veridiag_spans")

    @property
    def days_table(self) -> str:
        return self.beside("_veridiag_days")

    @property
    def traces_table(self) -> str:
        return self.beside("_veridiag_traces")

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


#: A span's self time: ``me`` (start, duration, …) less the union of its children's intervals
#: (``kids``: start, end, …), each clipped to it, children from ``CHILD_LEAD`` before it on.
_OWN = (
    "greatest(toInt64(0), me.2 - arrayFold((acc, x) -> (acc.1 + greatest(toInt64(0), "
    "least(x.2, me.1 + me.2) - greatest(x.1, acc.2)), greatest(acc.2, least(x.2, me.1 + me.2))), "
    f"arraySort(arrayMap(k -> (k.1, k.2), arrayFilter(k -> k.1 >= me.1 - {int(CHILD_LEAD.total_seconds()) * 10**9}, "
    "kids))), (toInt64(0), me.1)).1)"
)


@dataclass(frozen=True)
class Group:
    """One set of spans asked about: a service's (operation's) spans starting in ``[start, end)``."""

    service: str
    operation: str | None
    start_ns: int
    end_ns: int


def figures_sql(layout: TraceLayout, bound: Bound, groups: list[Group], *, calls: bool, lead_ns: int) -> str:
    """One statement, one read of the time range, for every group: per (kind, group, other
    service) a row of count, failed, stated, duration p50/p90/p99 and self time p50/p90 (ns).
    Kind 0 is the group's own spans (other ''), kind 1 its callees, kind 2 its callers (per
    other service; only with ``calls``, whose groups are one service's windows).

    The range's rows that matter are of four roles, each keyed by a span id so that one
    ``GROUP BY (trace, key)`` brings a span together with its relatives, without a join: a
    selected span (role 0, keyed by its own id), a child of one (role 2, keyed by its parent
    id: the selected span's), and, for the callers, a selected span again (role 1, keyed by its
    parent id) with its parent (role 3, keyed by its own id). A child is found by the parent id
    first (one column over the range, against the selected spans' ids), a parent likewise."""
    trace, span, parent = layout.col("trace_id"), layout.col("span_id"), layout.col("parent_span_id")
    name, ts = layout.col("service"), layout.col("timestamp")
    windows = [(g.start_ns, g.end_ns) for g in groups]

    def window_of(moment: str) -> str:
        cases = [
            f"{moment} >= {bound.bind(a, 'Int64')} AND {moment} < {bound.bind(b, 'Int64')}, {index}"
            for index, (a, b) in enumerate(windows)
        ]
        return f"multiIf({', '.join(cases)}, -1)"

    def own(group: Group) -> str:
        sql = f"{name} = {bound.bind(group.service, 'String')}"
        if group.operation is not None:
            sql += f" AND {layout.col('span_name')} = {bound.bind(group.operation, 'String')}"
        return sql

    # A selected span: of a group's service (operation), starting in its window; with ``calls``
    # also up to ``lead_ns`` before it (a caller of what starts in the window).
    lead = lead_ns if calls else 0
    selected = " OR ".join(f"({own(g)} AND {bound.window(layout, g.start_ns - lead, g.end_ns)})" for g in groups)
    in_group = (
        "multiIf("
        + ", ".join(
            f"{own(g)} AND {bound.window(layout, g.start_ns, g.end_ns)}, {index}" for index, g in enumerate(groups)
        )
        + ", -1)"
    )
    first_ns = min(g.start_ns for g in groups) - lead_ns
    last_ns = max(g.end_ns for g in groups) + lead_ns
    ids = f"(SELECT {span} FROM {layout.name} WHERE {selected})"
    parents = f"(SELECT {parent} FROM {layout.name} WHERE {selected})" if calls else "[]"
    ends = f"(SELECT max({layout.end_ns}) FROM {layout.name} WHERE {selected})"
    fold = _OWN
    firsts = bound.bind([a - lead_ns for a, _b in windows], "Array(Int64)")
    lasts = bound.bind([b for _a, b in windows], "Array(Int64)")
    service = bound.bind(groups[0].service, "String")
    callees = (
        f"arrayMap(k -> (toUInt8(1), k.6, k.3, k.4, k.5, toInt64(0), toInt64(0)), "
        f"arrayFilter(k -> k.6 >= 0 AND k.3 != {service} AND me.1 >= arrayElement({firsts}, k.6 + 1) "
        f"AND me.1 < arrayElement({lasts}, k.6 + 1), kids))"
        if calls
        else "[]"
    )
    callers = (
        f"if(has_parent AND up_service != {service}, arrayMap(u -> (toUInt8(2), u.1, up_service, u.2, u.3, "
        "toInt64(0), toInt64(0)), ups), [])"
        if calls
        else "[]"
    )
    return f"""
SELECT kind, grp, other, count(), countIf(failed), countIf(stated),
    quantilesExactInclusiveIf(0.5, 0.9, 0.99)(d, kind = 0), quantilesExactInclusiveIf(0.5, 0.9)(own, kind = 0)
FROM (
    SELECT item.1 AS kind, item.2 AS grp, item.3 AS other, item.4 AS failed, item.5 AS stated,
        item.6 AS d, item.7 AS own
    FROM (
        SELECT countIf(role = 0) > 0 AS has_me, anyIf(tuple(s, d, failed, stated, grp), role = 0) AS me,
            groupArrayIf(tuple(s, s + d, service, failed, stated, window), role = 2) AS kids,
            groupArrayIf(tuple(grp, failed, stated), role = 1) AS ups,
            countIf(role = 3) > 0 AS has_parent, anyIf(service, role = 3) AS up_service
        FROM (
            SELECT {trace} AS trace, toString({name}) AS service, {layout.start_ns} AS s,
                toInt64({layout.col("duration")}) AS d, toUInt8({layout.failed}) AS failed,
                toUInt8({layout.stated}) AS stated, toInt64({window_of(layout.start_ns) if calls else "-1"}) AS window,
                toInt64({f"if({own(groups[0])}, window, -1)" if calls else in_group}) AS grp,
                arrayJoin(arrayFilter(r -> r.2, [
                    (toUInt8(0), {selected}, {span}),
                    (toUInt8(1), {"grp >= 0" if calls else "0"}, {parent}),
                    (toUInt8(2), {parent} IN {ids} AND {parent} != {span}, {parent}),
                    (toUInt8(3), {f"{span} IN {parents}" if calls else "0"}, {span})
                ])) AS r, r.1 AS role, r.3 AS key
            FROM {layout.name}
            WHERE {ts} >= fromUnixTimestamp64Nano({bound.bind(first_ns, "Int64")})
                AND {ts} < fromUnixTimestamp64Nano(greatest({bound.bind(last_ns, "Int64")}, {ends}))
                AND (({selected}) OR {parent} IN {ids}{f" OR {span} IN {parents}" if calls else ""})
        )
        GROUP BY trace, key
    )
    ARRAY JOIN arrayConcat(
        if(has_me AND me.5 >= 0, [(toUInt8(0), me.5, '', me.3, me.4, me.2, {fold})], []),
        if(has_me, {callees}, []),
        {callers}
    ) AS item
)
GROUP BY kind, grp, other"""


def derive_sql(layout: TraceLayout, bound: Bound, day: str, first_ns: int, last_ns: int) -> str:
    """Insert the derived rows of the spans starting in ``[first_ns, last_ns)`` (of ``day``): per
    span its duration, self time and status (kind 0), per child of another service its own with
    its caller's service, operation and start (kinds 1 and 2, ``DERIVED_DDL``). Children are looked for from
    ``CHILD_LEAD`` before the range to its spans' last end (at least ``CHILD_LEAD`` past it), by
    one ``GROUP BY`` (trace, span id) as ``figures_sql`` does."""
    trace, span, parent, ts = (layout.col(role) for role in ("trace_id", "span_id", "parent_span_id", "timestamp"))
    lead = int(CHILD_LEAD.total_seconds()) * 10**9
    mine = bound.window(layout, first_ns, last_ns)
    ends = f"(SELECT max({layout.end_ns}) FROM {layout.name} WHERE {mine})"
    return f"""
INSERT INTO {layout.derived_table}
    (Day, Kind, ServiceName, SpanName, Start, Duration, Own, Failed, Stated, Other, OtherName, CallerStart)
SELECT {bound.bind(day, "Date")}, item.1, item.2, item.3, item.4, item.5, item.6, item.7, item.8, item.9, item.10,
    item.11
FROM (
    SELECT anyIf(tuple(s, d, failed, stated, service, operation), role = 0) AS me,
        groupArrayIf(tuple(s, s + d, service, operation, failed, stated), role = 2) AS kids
    FROM (
        SELECT {trace} AS trace, toString({layout.col("service")}) AS service,
            toString({layout.col("span_name")}) AS operation, {layout.start_ns} AS s,
            toInt64({layout.col("duration")}) AS d, toUInt8({layout.failed}) AS failed,
            toUInt8({layout.stated}) AS stated,
            arrayJoin(arrayFilter(r -> r.2, [
                (toUInt8(0), {mine}, {span}),
                (toUInt8(2), {parent} != '' AND {parent} != {span}, {parent})
            ])) AS r, r.1 AS role, r.3 AS key
        FROM {layout.name}
        WHERE {ts} >= fromUnixTimestamp64Nano({bound.bind(first_ns - lead, "Int64")})
            AND {ts} < fromUnixTimestamp64Nano(greatest({bound.bind(last_ns + lead, "Int64")}, {ends}))
    )
    GROUP BY trace, key
    HAVING countIf(role = 0) > 0
)
ARRAY JOIN arrayConcat(
    [(toUInt8(0), me.5, me.6, me.1, me.2, {_OWN}, me.3, me.4, '', '', toInt64(0))],
    arrayFlatten(arrayMap(k -> [(toUInt8(1), k.3, k.4, k.1, k.2 - k.1, toInt64(0), k.5, k.6, me.5, me.6, me.1),
        (toUInt8(2), me.5, me.6, k.1, k.2 - k.1, toInt64(0), k.5, k.6, k.3, k.4, me.1)],
        arrayFilter(k -> k.3 != me.5, kids)))
) AS item"""


def derive_traces_sql(layout: TraceLayout, bound: Bound, day: str, first_ns: int, last_ns: int) -> str:
    """Insert the spans starting in ``[first_ns, last_ns)`` (of ``day``) into the spans by trace."""
    return f"""
INSERT INTO {layout.traces_table}
    (Day, TraceId, SpanId, ParentSpanId, ServiceName, SpanName, Start, Duration, Failed, Stated)
SELECT {bound.bind(day, "Date")}, {layout.col("trace_id")}, {layout.col("span_id")}, {layout.col("parent_span_id")},
    toString({layout.col("service")}), toString({layout.col("span_name")}), {layout.start_ns},
    toInt64({layout.col("duration")}), toUInt8({layout.failed}), toUInt8({layout.stated})
FROM {layout.name}
WHERE {bound.window(layout, first_ns, last_ns)}"""


#: A trace's spans as ``spans_sql`` and ``derived_spans_sql`` return them, by start.
Bounds = Mapping[str, tuple[int, int] | None]


def spans_sql(layout: TraceLayout, bound: Bound, bounds: Bounds) -> str:
    """The traces' spans (each trace's starting in its bounds, when given: the primary key's time
    narrows every service's spans to them) from the exporter's table: trace, span, parent,
    service, operation, start, end (ns), failed, stated; by start and span id."""
    trace = layout.col("trace_id")
    which = " OR ".join(
        f"({trace} = {bound.bind(trace_id, 'String')}{f' AND {bound.window(layout, *at)}' if at else ''})"
        for trace_id, at in bounds.items()
    )
    return (
        f"SELECT {trace}, {layout.col('span_id')}, {layout.col('parent_span_id')}, {layout.col('service')}, "
        f"{layout.col('span_name')}, {layout.start_ns} AS s, {layout.end_ns}, {layout.failed}, {layout.stated} "
        f"FROM {layout.name} WHERE {which} ORDER BY s, {layout.col('span_id')}"
    )


def derived_spans_sql(layout: TraceLayout, bound: Bound, bounds: dict[str, tuple[int, int]], days: list[str]) -> str:
    """``spans_sql``'s rows from the spans by trace (of ``days``, which hold every bound): each
    trace's by its primary key."""
    which = " OR ".join(
        f"(TraceId = {bound.bind(trace_id, 'String')} AND Start >= {bound.bind(first, 'Int64')} "
        f"AND Start < {bound.bind(last, 'Int64')})"
        for trace_id, (first, last) in bounds.items()
    )
    return (
        "SELECT TraceId, SpanId, ParentSpanId, ServiceName, SpanName, Start AS s, Start + Duration, Failed, Stated "
        f"FROM {layout.traces_table} WHERE Day IN {bound.bind(days, 'Array(Date)')} "
        f"AND TraceId IN {bound.bind(list(bounds), 'Array(String)')} AND ({which}) ORDER BY s, SpanId"
    )


def derived_figures_sql(layout: TraceLayout, bound: Bound, groups: list[Group], *, calls: bool, lead_ns: int) -> str:
    """``figures_sql``'s rows from the derived table, each part by its primary key: the groups'
    spans (kind 0), and with ``calls`` the calls from the service (its kind 2 rows: the child
    starts in a window, the caller from ``lead_ns`` before it) and into it (its kind 1 rows: the
    caller from ``lead_ns`` before the first window)."""
    derived = layout.derived_table

    def own(group: Group, service: str = "ServiceName", name: str = "SpanName") -> str:
        sql = f"{service} = {bound.bind(group.service, 'String')}"
        if group.operation is not None:
            sql += f" AND {name} = {bound.bind(group.operation, 'String')}"
        return sql

    def within(group: Group, column: str = "Start") -> str:
        first, last = bound.bind(group.start_ns, "Int64"), bound.bind(group.end_ns, "Int64")
        return f"{column} >= {first} AND {column} < {last}"

    def which(cases: list[str]) -> str:
        return "multiIf(" + ", ".join(f"{case}, {index}" for index, case in enumerate(cases)) + ", -1)"

    spans = (
        f"SELECT toUInt8(0) AS kind, toInt64({which([f'{own(g)} AND {within(g)}' for g in groups])}) AS grp, "
        f"'' AS other, Failed AS failed, Stated AS stated, Duration AS d, Own AS own FROM {derived} "
        f"WHERE Kind = 0 AND ({' OR '.join(f'({own(g)} AND {within(g)})' for g in groups)})"
    )
    if not calls:
        return _figures_of(spans)
    first = bound.bind(min(g.start_ns for g in groups) - lead_ns, "Int64")
    last = bound.bind(max(g.end_ns for g in groups), "Int64")
    callees = which(
        [
            f"{within(g)} AND CallerStart >= {bound.bind(g.start_ns - lead_ns, 'Int64')} "
            f"AND CallerStart < {bound.bind(g.end_ns, 'Int64')}"
            for g in groups
        ]
    )
    callers = which([within(g) for g in groups])
    return _figures_of(
        f"""{spans}
        UNION ALL
        SELECT toUInt8(1), toInt64({callees}), toString(Other), Failed, Stated, 0, 0 FROM {derived}
        WHERE Kind = 2 AND {own(groups[0])} AND Start >= {first} AND Start < {last}
        UNION ALL
        SELECT toUInt8(2), toInt64({callers}), toString(Other), Failed, Stated, 0, 0 FROM {derived}
        WHERE Kind = 1 AND {own(groups[0])} AND Start >= {first} AND Start < {last} AND CallerStart >= {first}"""
    )


def _figures_of(rows: str) -> str:
    return f"""
SELECT kind, grp, other, count(), countIf(failed), countIf(stated),
    quantilesExactInclusiveIf(0.5, 0.9, 0.99)(d, kind = 0), quantilesExactInclusiveIf(0.5, 0.9)(own, kind = 0)
FROM ({rows})
WHERE grp >= 0
GROUP BY kind, grp, other"""
