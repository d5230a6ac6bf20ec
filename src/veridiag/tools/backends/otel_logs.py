"""The OpenTelemetry ``otel_logs`` table in ClickHouse: its DDL and the SQL ``query_logs`` runs.

Every value a query needs is a bound ``{name:Type}`` parameter (``Where.bind``), never text in
the SQL; table and column names come from the settings, checked by ``config.OtelLogColumns`` and
quoted here. One builder serves a ClickHouse server over HTTP and the in-process engine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from veridiag.config import OtelLogColumns

#: The OpenTelemetry Collector's ClickHouse exporter's logs table (exporter/clickhouseexporter,
#: ``internal/sqltemplates/logs_table.sql``), engine MergeTree, no TTL; ``{extra}`` is where
#: veridiag's own columns and index go when it creates the table itself.
EXPORTER_LOGS_DDL = """CREATE TABLE IF NOT EXISTS {table} (
    Timestamp DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TimestampTime DateTime DEFAULT toDateTime(Timestamp),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    TraceFlags UInt8,
    SeverityText LowCardinality(String) CODEC(ZSTD(1)),
    SeverityNumber UInt8,
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    Body String CODEC(ZSTD(1)),
    ResourceSchemaUrl LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeSchemaUrl LowCardinality(String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion LowCardinality(String) CODEC(ZSTD(1)),
    ScopeAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    LogAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),{extra}

    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_res_attr_key mapKeys(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_res_attr_value mapValues(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_scope_attr_key mapKeys(ScopeAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_scope_attr_value mapValues(ScopeAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_log_attr_key mapKeys(LogAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_log_attr_value mapValues(LogAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_body Body TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8,
    INDEX idx_body_ngrambf Body TYPE ngrambf_v1(4, 32768, 3, 0) GRANULARITY 1{extra_index}
) ENGINE = MergeTree()
PARTITION BY toDate(TimestampTime)
PRIMARY KEY (ServiceName, TimestampTime)
ORDER BY (ServiceName, TimestampTime, Timestamp)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1{extra_settings}
"""

#: LogAttributes keys veridiag writes on import.
TEMPLATE_ATTRIBUTE = "veridiag.template_id"
#: Set ("1") only on lines the importer did not understand: the exporter's bloom filter on
#: mapKeys(LogAttributes) then skips every granule without one.
UNPARSED_ATTRIBUTE = "veridiag.unparsed"
KEY_ATTRIBUTE = "veridiag.key"

#: Joins two adjacent words into one token of the word-pair index: a character no log writes
#: (Unicode private use) that ``splitByNonAlpha`` keeps inside a token, as it keeps every non-ASCII one.
PAIR_JOINER = "\ue000"
_NOT_JOINER = "\ue001"
#: A word character of ``splitByNonAlpha`` and ``hasToken`` (ASCII letters and digits, and every
#: non-ASCII character) and a separator, as RE2 classes over lower-cased text.
_WORD = r"[0-9a-z\x{80}-\x{10FFFF}]"
_GAP = r"[^0-9a-z\x{80}-\x{10FFFF}]"
_ASCII_RUN = r"[\x{00}-\x{7F}]+"


def _literal(text: str) -> str:
    """A ClickHouse string literal (DDL cannot take bound parameters)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def pairs_expression(body: str) -> str:
    """Every two adjacent words of lower(body) joined by ``PAIR_JOINER`` (with a few words left
    alone): the words paired from the first, then from the second, by two regex passes. A
    joiner in the line is first made another private-use character (a word character still),
    so no word of a line can be a pair: a pair found is two adjacent words, and a phrase needs
    no check of its words on their own. A lambda
    (``arrayMap``) would be shorter, but the 26.9 engine cannot evaluate an index expression
    holding one on a part whose index is not materialised (measured)."""
    low = f"lower(replaceAll({body}, {_literal(PAIR_JOINER)}, {_literal(_NOT_JOINER)}))"
    words, joined = _literal(f"({_WORD}+){_GAP}+({_WORD}+)"), _literal(r"\1" + PAIR_JOINER + r"\2 ")
    pair = f"{words}, {joined}"
    second = f"replaceRegexpOne({low}, {_literal(f'^{_GAP}*{_WORD}+')}, '')"
    return f"concat(replaceRegexpAll({low}, {pair}), ' ', replaceRegexpAll({second}, {pair}))"


def bigrams_expression(body: str) -> str:
    """The line with every run of ASCII made one space, for an index of its adjacent character
    pairs: the words of Chinese text, which no word tokenizer splits, found by their characters
    (two adjacent characters of the line are adjacent here, as a space never joins two)."""
    return f"replaceRegexpAll({body}, {_literal(_ASCII_RUN)}, ' ')"


#: What ``import-logs --store clickhouse`` adds when it creates the table: the template id
#: materialised from the line's attribute (grouping reads a small integer column, not a map),
#: text (inverted) indexes on lower(Body)'s words and on its adjacent word pairs (a word or a
#: two-word phrase, case-insensitive as FTS5 matches them, is then found from the index without
#: reading a line: a word in 5 % of 10 M lines took 540 ms through a token bloom filter, ~50 ms
#: so), and a window of inserted blocks remembered so a retried batch is not stored twice.
_VERIDIAG_COLUMN = f"\n    LogTemplateId UInt64 MATERIALIZED toUInt64OrZero(LogAttributes['{TEMPLATE_ATTRIBUTE}']),"
VERIDIAG_INDEXES = {
    "idx_body_words": "lower(Body) TYPE text(tokenizer = splitByNonAlpha)",
    "idx_body_pairs": f"{pairs_expression('Body')} TYPE text(tokenizer = splitByNonAlpha)",
    "idx_body_bigrams": f"{bigrams_expression('Body')} TYPE text(tokenizer = ngrams(2))",
}
#: Text indexes are generally available from ClickHouse 26.2; an older server (25.8 is an LTS
#: release) gets the token bloom filter on lower(Body) earlier releases of veridiag made.
TEXT_INDEXES_SINCE = (26, 2)
_TOKEN_INDEX = {"idx_body_lower": "lower(Body) TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8"}


def veridiag_indexes(text: bool) -> dict[str, str]:
    """The indexes veridiag gives a table it makes: text indexes, or (an older server) the token index."""
    return VERIDIAG_INDEXES if text else _TOKEN_INDEX


_VERIDIAG_SETTINGS = ", non_replicated_deduplication_window = 1000"

#: Template texts per (service, id) and each service's miner state, newest version kept.
TEMPLATES_DDL = """CREATE TABLE IF NOT EXISTS {table} (
    ServiceName LowCardinality(String), TemplateId UInt64, Template String, Version UInt64
) ENGINE = ReplacingMergeTree(Version) ORDER BY (ServiceName, TemplateId)"""
MINER_DDL = """CREATE TABLE IF NOT EXISTS {table} (
    ServiceName String, State String, Version UInt64
) ENGINE = ReplacingMergeTree(Version) ORDER BY ServiceName"""

#: Lines per service, minute, template and severity, kept by the engine as lines arrive (a
#: materialised view): a window's whole minutes are then counted from ~1 row per minute and
#: template, not from every line (a day of a 2.8 M-line service: 430 ms read line by line).
#: The embedded file keeps the same counts (``log_minute``).
MINUTES_DDL = """CREATE TABLE IF NOT EXISTS {minutes} (
    ServiceName LowCardinality(String), Minute DateTime, LogTemplateId UInt64,
    SeverityNumber UInt8, SeverityText LowCardinality(String),
    Lines SimpleAggregateFunction(sum, UInt64),
    First SimpleAggregateFunction(min, DateTime64(9)), Last SimpleAggregateFunction(max, DateTime64(9)),
    Unleveled SimpleAggregateFunction(sum, UInt64)
) ENGINE = AggregatingMergeTree PARTITION BY toDate(Minute)
ORDER BY (ServiceName, Minute, LogTemplateId, SeverityNumber, SeverityText)"""
_MINUTES_SELECT = """SELECT ServiceName, toStartOfMinute(TimestampTime) AS Minute, LogTemplateId, SeverityNumber,
    SeverityText, count() AS Lines, min(Timestamp) AS First, max(Timestamp) AS Last,
    countIf(SeverityNumber = 0 AND SeverityText = '') AS Unleveled
FROM {table} GROUP BY ServiceName, Minute, LogTemplateId, SeverityNumber, SeverityText"""
MINUTES_VIEW_DDL = "CREATE MATERIALIZED VIEW IF NOT EXISTS {view} TO {minutes} AS " + _MINUTES_SELECT
#: The counts of the lines a table held before its view was made (an earlier veridiag's import).
MINUTES_BACKFILL = "INSERT INTO {minutes} " + _MINUTES_SELECT

#: A line's leading timestamp, ids and numbers, masked at query time when the table has no
#: template column (RE2 syntax; the embedded backend masks a missing template the same way).
MASKS = (
    (r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?Z?\s*", ""),
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>"),
    (r"\b[0-9a-f]{12,}\b", "<hex>"),
    (r"\d+(?:\.\d+)?", "<n>"),  # inside words too ("30ms"): RE2 has no look-behind
)

_TOKEN = re.compile(r"[0-9a-z]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def quote(name: str) -> str:
    """A checked identifier (``db.table`` parts too) in back quotes."""
    return ".".join(f"`{part}`" for part in name.split("."))


def exporter_ddl(database: str, table: str, *, veridiag: bool, text_indexes: bool = True) -> str:
    """The exporter's ``CREATE TABLE``; with veridiag's template column, indexes and settings."""
    indexes = veridiag_indexes(text_indexes) if veridiag else {}
    return EXPORTER_LOGS_DDL.format(
        table=f"{quote(database)}.{quote(table)}",
        extra=_VERIDIAG_COLUMN if veridiag else "",
        extra_index="".join(f",\n    INDEX {name} {definition}" for name, definition in indexes.items()),
        extra_settings=_VERIDIAG_SETTINGS if veridiag else "",
    )


@dataclass(frozen=True)
class Layout:
    """What one logs table offers, read from the system tables when the backend opens it."""

    database: str
    table: str
    columns: OtelLogColumns
    #: The exporter's ``TimestampTime`` (leads its primary key) is there.
    timestamp_time: bool = False
    #: The template column, and the table of template texts beside it.
    template: bool = False
    #: The name of a token index on lower(Body), if any.
    body_index: str | None = None
    #: That index is a text (inverted) index splitting as ``hasToken`` does: a word is then
    #: found from the index alone, no line read.
    words_indexed: bool = False
    #: The name of a text index on lower(Body)'s adjacent word pairs (``pairs_expression``), if any.
    pair_index: str | None = None
    #: The name of a text index on the character pairs of Body's non-ASCII text (``bigrams_expression``).
    bigram_index: str | None = None
    #: The ``LogAttributes`` map (importer's parsed flag) is there.
    attributes: bool = False
    #: The per-minute counts (``MINUTES_DDL``) beside the table.
    minutes: bool = False

    def beside(self, suffix: str = "") -> str:
        """This table's quoted name, or (a suffix) that of a table veridiag keeps beside it."""
        return f"{quote(self.database)}.{quote(self.table + suffix)}"

    @property
    def name(self) -> str:
        return self.beside()

    @property
    def templates_table(self) -> str:
        return self.beside("_templates")

    @property
    def miner_table(self) -> str:
        return self.beside("_miner")

    @property
    def minutes_table(self) -> str:
        return self.beside("_minutes")

    @property
    def minutes_view(self) -> str:
        return self.beside("_minutes_mv")

    def col(self, name: str) -> str:
        return quote(getattr(self.columns, name))

    @property
    def ts_ms(self) -> str:
        return f"toUnixTimestamp64Milli(toDateTime64({self.col('timestamp')}, 3))"

    @property
    def level(self) -> str:
        """The four levels veridiag keeps, from the OTel severity number (its text when 0); a line
        with neither (OTel's "unspecified": the log wrote no level) reads as INFO, as in the
        embedded file, and ``unleveled`` counts it."""
        number, text = self.col("severity_number"), self.col("severity_text")
        return (
            f"multiIf({number} >= 17, 'ERROR', {number} >= 13, 'WARN', {number} >= 9, 'INFO', "
            f"{number} >= 1, 'DEBUG', {text} = '', 'INFO', upper({text}))"
        )

    @property
    def unleveled(self) -> str:
        """True for a line that wrote no level (severity number 0 and no severity text)."""
        return f"({self.col('severity_number')} = 0 AND {self.col('severity_text')} = '')"

    def paths(self, searched: bool) -> list[str]:
        """Which way this table is read, in words for the output and the retrieval details."""
        said = [f"clickhouse table {self.database}.{self.table}"]
        said.append(
            "window by primary key (service, TimestampTime)"
            if self.timestamp_time
            else f"window by {self.columns.timestamp} (no TimestampTime column)"
        )
        said.append(
            f"templates from column {self.columns.template}"
            if self.template
            else "templates: lines with numbers and ids masked at query time (no template column)"
        )
        if self.minutes and not searched:
            said.append(f"whole minutes counted from the per-minute table {self.table}_minutes")
        if searched:
            kind = "text index" if self.words_indexed else "token index"
            said.append(
                f"words through {kind} {self.body_index} on lower({self.columns.body})"
                if self.body_index
                else f"words by reading every line of the window (no token index on lower({self.columns.body}))"
            )
            if self.pair_index:
                said.append(f"phrases through word-pair text index {self.pair_index}")
            if self.bigram_index:
                said.append(f"Chinese words through character-pair text index {self.bigram_index}")
        return said

    @property
    def bigrams(self) -> str:
        return bigrams_expression(self.col("body"))

    @property
    def pairs(self) -> str:
        return pairs_expression(self.col("body"))


@dataclass
class Where:
    """One query's conditions and their bound parameters (per call)."""

    layout: Layout
    clauses: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    #: A condition reads each line of the window (its text), not an index alone.
    reads_lines: bool = False

    def bind(self, value: Any, kind: str) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f"{{{name}:{kind}}}"

    def window(self, start_ms: int, end_ms: int) -> Where:
        """``[start, end)``; through ``TimestampTime`` when present, so the primary key and the
        partitions narrow the read. That column is the exporter's ``toDateTime(Timestamp)`` (its
        DEFAULT: the second the line was written in), so a window of whole seconds is exact
        through it alone, and the 8-byte ``Timestamp`` of every line in range is not read (a day
        of 10 M lines: 220 → 50 ms to count a word, measured); other windows check it too."""
        ts = self.layout.col("timestamp")
        whole_seconds = start_ms % 1000 == 0 and end_ms % 1000 == 0
        if not (self.layout.timestamp_time and whole_seconds):
            self.clauses.append(f"{ts} >= fromUnixTimestamp64Milli({self.bind(start_ms, 'Int64')})")
            self.clauses.append(f"{ts} < fromUnixTimestamp64Milli({self.bind(end_ms, 'Int64')})")
        if self.layout.timestamp_time:
            tt = self.layout.col("timestamp_time")
            self.clauses.append(f"{tt} >= toDateTime({self.bind(start_ms // 1000, 'Int64')})")
            last = "<" if whole_seconds else "<="
            self.clauses.append(f"{tt} {last} toDateTime({self.bind(end_ms // 1000, 'Int64')})")
        return self

    def outside(self, start_ms: int, end_ms: int) -> Where:
        """Not in ``[start, end)``, whole seconds: the partial minutes at a window's two ends."""
        if self.layout.timestamp_time:
            tt = self.layout.col("timestamp_time")
            first, last = self.bind(start_ms // 1000, "Int64"), self.bind(end_ms // 1000, "Int64")
            self.clauses.append(f"({tt} < toDateTime({first}) OR {tt} >= toDateTime({last}))")
        else:
            ts = self.layout.col("timestamp")
            first, last = self.bind(start_ms, "Int64"), self.bind(end_ms, "Int64")
            self.clauses.append(
                f"({ts} < fromUnixTimestamp64Milli({first}) OR {ts} >= fromUnixTimestamp64Milli({last}))"
            )
        return self

    def copy(self) -> Where:
        return Where(self.layout, list(self.clauses), dict(self.params), self.reads_lines)

    def any_of(self, points: Sequence[tuple[str, int]]) -> Where:
        """Only lines of these (service, ms) instants: a few ranges of the primary key."""
        service, ts = self.layout.col("service"), self.layout.col("timestamp")
        ranges = []
        for name, at in points:
            point = (
                f"{service} = {self.bind(name, 'String')} "
                f"AND {ts} >= fromUnixTimestamp64Milli({self.bind(at, 'Int64')}) "
                f"AND {ts} < fromUnixTimestamp64Milli({self.bind(at + 1, 'Int64')})"
            )
            if self.layout.timestamp_time:
                point += f" AND {self.layout.col('timestamp_time')} = toDateTime({self.bind(at // 1000, 'Int64')})"
            ranges.append(f"({point})")
        self.clauses.append("(" + " OR ".join(ranges) + ")")
        return self

    def equals(self, expression: str, value: str | None) -> Where:
        if value:
            self.clauses.append(f"{expression} = {self.bind(value, 'String')}")
        return self

    def service(self, service: str | None) -> Where:
        return self.equals(self.layout.col("service"), service)

    def level(self, level: str | None) -> Where:
        return self.equals(self.layout.level, level)

    def unparsed(self) -> Where:
        attributes = self.layout.col("log_attributes")
        self.clauses.append(f"mapContains({attributes}, {self.bind(UNPARSED_ATTRIBUTE, 'String')})")
        return self

    def terms(self, terms: Sequence[Sequence[str]]) -> Where:
        """Every term found, as FTS5 finds it: a word is a whole token, case-insensitive; a phrase's
        words stand in order with only separators between (ASCII ones: to ``hasToken`` and the
        text indexes a non-ASCII character belongs to the word). ClickHouse's token functions
        see no words inside a run of Chinese, so such words are found as substrings."""
        lowered = f"lower({self.layout.col('body')})"
        self.reads_lines = self.reads_lines or not self.layout.words_indexed
        for term in terms:
            tokens: list[str] = []
            for word in term:
                low = word.lower()
                if low.isascii():
                    tokens += _TOKEN.findall(low)
                else:
                    self._substring(word)
            paired = len(tokens) > 1 and self.layout.pair_index
            # Each adjacent pair from the pair index (its words need no check of their own: an
            # index more to intersect doubled the cost): a two-word phrase needs no line read.
            for token in [] if paired else dict.fromkeys(tokens):
                self.clauses.append(f"hasToken({lowered}, {self.bind(token, 'String')})")
            for pair in dict.fromkeys(pairwise(tokens)) if paired else ():
                needle = self.bind(PAIR_JOINER.join(pair), "String")
                self.clauses.append(f"hasToken({self.layout.pairs}, {needle})")
            if len(tokens) > 2 or (len(tokens) == 2 and not self.layout.pair_index):
                pattern = f"(?:^|{_GAP})" + f"{_GAP}+".join(tokens) + f"(?:{_GAP}|$)"
                self.clauses.append(f"match({lowered}, {self.bind(pattern, 'String')})")
                self.reads_lines = True
        return self

    def _substring(self, word: str) -> None:
        """A word with non-ASCII characters, anywhere in a line (case-insensitive). Its adjacent
        character pairs come from the bigram index when there is one: they are the word itself
        when it is two characters without case (Chinese); otherwise the lines they leave are read."""
        bigrams = [a + b for a, b in pairwise(word)]
        if self.layout.bigram_index and bigrams and all(_NON_ASCII.fullmatch(pair) for pair in bigrams):
            needles = self.bind(list(dict.fromkeys(bigrams)), "Array(String)")
            self.clauses.append(f"hasAllTokens({self.layout.bigrams}, {needles})")
            if len(word) == 2 and word.lower() == word.upper():
                return
        self.clauses.append(f"positionCaseInsensitiveUTF8({self.layout.col('body')}, {self.bind(word, 'String')}) > 0")
        self.reads_lines = True

    @property
    def sql(self) -> str:
        return " AND ".join(self.clauses) or "1"


def template_key(layout: Layout, where: Where) -> str:
    """What lines are grouped by: the template column, else the masked line."""
    if layout.template:
        return layout.col("template")
    masked = layout.col("body")
    for pattern, replacement in MASKS:
        masked = f"replaceRegexpAll({masked}, {where.bind(pattern, 'String')}, {where.bind(replacement, 'String')})"
    return masked
