"""``query_logs`` on a seeded store: counts summed per minute equal counting the lines one by
one, the full-text index is searched once per call, and no statement walks the whole log."""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.builders import readable
from veridiag.text.search import fts_query
from veridiag.tools import QueryLogsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment, LogRow, _logs, _schema
from veridiag.tools.records import LogEvidence
from veridiag.tools.render import BURST_GAP_MS, group_bursts, group_spans

DAY = datetime(2026, 3, 1, tzinfo=UTC)
SERVICES = ("pay", "order", "gateway")
LEVELS = ("ERROR", "INFO", "WARN")
MESSAGES = (
    "order={n} ERR_TIMEOUT request timeout cost={n}ms",
    "HikariPool-1 - Connection is not available, waiting={n}",
    "GET /api/orders/{n} status=200 cost={n}ms",
    "retry {n} of payment for order={n}",
)
SEED_LINES = 6000


def _seeded_rows(seed: int = 11) -> Iterator[LogRow]:
    """Two days of lines: quiet hours (so bursts split), lines on minute boundaries, repeated
    instants, lines out of time order and lines the importer did not understand."""
    rng = random.Random(seed)
    for index in range(SEED_LINES):
        hour = rng.choice([0, 1, 2, 9, 10, 10, 10, 11, 23, 24, 25, 33])
        offset = rng.choice([0, rng.randrange(60) * 1000, rng.randrange(3_600_000)])
        ts = DAY + timedelta(hours=hour, milliseconds=offset)
        message = rng.choice(MESSAGES).format(n=rng.randrange(1000))
        level = rng.choices(LEVELS, weights=(1, 6, 2))[0]
        service = SERVICES[index % 3]
        text = f"{ts:%Y-%m-%dT%H:%M:%S}Z {level} {message}"
        yield LogRow(ts, service, level, text, message, parsed=rng.random() > 0.02)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedEnvironment:
    env = EmbeddedEnvironment(tmp_path_factory.mktemp("logs") / "env.db", load_demo=False)
    rows = list(_seeded_rows())
    env.add_logs(rows[:4000])
    env.add_logs(rows[4000:])  # a second import adds to minutes the first one counted
    return env


def _line_by_line(
    conn: sqlite3.Connection, args: QueryLogsArgs, start: datetime, end: datetime, read: int | None = None
) -> dict[str, Any]:
    """What query_logs reports, counted straight from the matching lines (only the first ``read``
    matching ones in storage order, when given)."""
    where = "ts >= ? AND ts < ?"
    params: list[Any] = [int(start.timestamp() * 1000), int(end.timestamp() * 1000)]
    for column, value in (("service", args.service), ("level", args.level)):
        if value:
            where += f" AND {column} = ?"
            params.append(value)
    if args.query:
        where += " AND id IN (SELECT rowid FROM log_fts WHERE log_fts MATCH ?)"
        params.append(fts_query(args.query))
    if read is not None:
        where += f" AND id IN (SELECT id FROM log_line WHERE {where} ORDER BY id LIMIT {read})"
        params += params
    by_level = dict(conn.execute(f"SELECT level, COUNT(*) FROM log_line WHERE {where} GROUP BY 1", params))
    groups = conn.execute(
        f"SELECT COUNT(*), MIN(ts), MIN(id) FROM log_line WHERE {where} "
        "GROUP BY service, template_id, level ORDER BY 1 DESC, 2",
        params,
    ).fetchall()
    examples = [
        conn.execute("SELECT line FROM log_line WHERE id = ?", (first_id,)).fetchone()[0] for *_, first_id in groups
    ]
    stamps = conn.execute(f"SELECT ts FROM log_line WHERE {where} ORDER BY ts LIMIT ?", [*params, _logs.BURST_SAMPLE])
    first = [
        line
        for (line,) in conn.execute(
            f"SELECT line FROM log_line WHERE {where} ORDER BY ts, id LIMIT ?", [*params, args.limit]
        )
    ]
    matched = sum(by_level.values())
    return {
        "by_level": by_level,
        "patterns": [(count, example) for (count, *_), example in zip(groups, examples, strict=True)][
            : _logs.TOP_TEMPLATES
        ],
        "bursts": group_bursts(ts for (ts,) in stamps),
        "lines": first,
        "showing": (len(first), matched) if len(first) < matched else None,
    }


def _reported(env: EmbeddedEnvironment, args: QueryLogsArgs) -> dict[str, Any]:
    out = env.query_logs(args)
    if out.status == "no_data":
        return {"by_level": {}, "patterns": [], "bursts": [], "lines": [], "showing": None}
    assert out.status == "ok", out.text
    (evidence,) = out.evidence
    assert isinstance(evidence, LogEvidence)
    return {
        "by_level": readable(out.retrieval_details)["by_level"],
        "patterns": [(p["count"], p["example"]) for p in readable(out.retrieval_details)["patterns"]],
        "bursts": evidence.bursts,
        "lines": [sample.line for sample in evidence.samples],
        "showing": next(
            ((int(a), int(b)) for a, b in re.findall(r"^showing (\d+) of (\d+) lines", out.text, re.M)), None
        ),
    }


windows = st.tuples(
    st.integers(0, 36 * 60) | st.sampled_from([0, 540, 600]),  # start, minutes after DAY
    st.integers(0, 59_999) | st.just(0),  # start, ms into the minute
    st.sampled_from([30, 59_999, 60_000, 61_000, 3_600_000, 86_400_000, 2 * 86_400_000]),
)


@given(
    window=windows,
    service=st.sampled_from([None, *SERVICES]),
    level=st.sampled_from([None, *LEVELS]),
    query=st.sampled_from([None, None, "ERR_TIMEOUT", "timeout", "HikariPool waiting", "order"]),
    limit=st.integers(1, 500),
)
def test_query_logs_reports_what_counting_the_lines_one_by_one_gives(  # noqa: PLR0917 (hypothesis draws them)
    seeded: EmbeddedEnvironment,
    window: tuple[int, int, int],
    service: str | None,
    level: str | None,
    query: str | None,
    limit: int,
) -> None:
    """… and lists no more lines than ``limit`` asks, saying how many of the matched it shows
    when that is fewer."""
    minutes, millis, length = window
    start = DAY + timedelta(minutes=minutes, milliseconds=millis)
    end = start + timedelta(milliseconds=length)
    args = QueryLogsArgs(
        service=service, level=level, query=query, start=start.isoformat(), end=end.isoformat(), limit=limit
    )
    expected = _line_by_line(seeded._connection(), args, start, end)
    assert _reported(seeded, args) == expected


@pytest.mark.parametrize("query", [None, "order"])
def test_bursts_past_the_sample_end_where_the_sample_does(
    seeded: EmbeddedEnvironment, monkeypatch: pytest.MonkeyPatch, query: str | None
) -> None:
    monkeypatch.setattr(_logs, "BURST_SAMPLE", 777)  # ends inside a minute
    args = QueryLogsArgs(query=query, start=DAY.isoformat(), end=(DAY + timedelta(days=2)).isoformat())
    reported = _reported(seeded, args)
    assert sum(b.count for b in reported["bursts"]) <= 777
    assert reported == _line_by_line(seeded._connection(), args, DAY, DAY + timedelta(days=2))


@given(st.lists(st.integers(0, 3 * 86_400_000), max_size=300))
def test_bursts_from_minute_spans_equal_bursts_from_the_lines(stamps: list[int]) -> None:
    assert _schema.MINUTE_MS < BURST_GAP_MS
    minutes: dict[int, list[int]] = {}
    for ts in sorted(stamps):
        span = minutes.setdefault(ts // _schema.MINUTE_MS, [ts, ts, 0])
        span[1], span[2] = ts, span[2] + 1
    spans = [(first, last, count) for _minute, (first, last, count) in sorted(minutes.items())]
    assert group_spans(spans) == group_bursts(sorted(stamps))


def _statements(env: EmbeddedEnvironment, args: QueryLogsArgs) -> list[str]:
    conn = env._connection()
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        assert env.query_logs(args).status == "ok"
    finally:
        conn.set_trace_callback(None)
    return [s for s in seen if s.lstrip().upper().startswith(("SELECT", "INSERT", "WITH"))]


def _plan(conn: sqlite3.Connection, statement: str) -> str:
    return "\n".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}"))


@pytest.mark.parametrize(
    "args",
    [
        QueryLogsArgs(service="pay", level="ERROR", start="2026-03-01T00:00:00Z", end="2026-03-02T00:00:00Z"),
        QueryLogsArgs(service="pay", start="2026-03-01T09:59:30Z", end="2026-03-01T11:00:10Z"),
        QueryLogsArgs(level="WARN", start="2026-03-01T10:00:00Z", end="2026-03-01T11:00:00Z"),
        QueryLogsArgs(query="timeout", start="2026-03-01T09:00:00Z", end="2026-03-01T12:00:00Z"),
        QueryLogsArgs(service="order", query="HikariPool", start="2026-03-01T00:00:00Z", end="2026-03-03T00:00:00Z"),
    ],
)
def test_one_full_text_search_per_call_and_no_walk_over_the_log(
    seeded: EmbeddedEnvironment, args: QueryLogsArgs
) -> None:
    conn = seeded._connection()
    statements = _statements(seeded, args)
    searches = [s for s in statements if "MATCH" in s]
    assert len(searches) == (1 if args.query else 0)
    plans = {statement: _plan(conn, statement) for statement in statements}
    walks = [statement for statement, plan in plans.items() if "SCAN log_line" in plan]
    assert walks == [], "every read of log_line seeks through an index"
    for statement, plan in plans.items():
        if "log_fts" in statement:
            assert plan.index("log_fts") < plan.index("log_line"), "hits are looked up by id, not the window walked"
            assert "log_fts.rowid BETWEEN" in statement, "only the window's ids are searched"


def test_whole_minutes_are_counted_from_log_minute_and_the_first_lines_stop_early(
    seeded: EmbeddedEnvironment,
) -> None:
    args = QueryLogsArgs(service="pay", level="ERROR", start="2026-03-01T00:00:00Z", end="2026-03-02T00:00:00Z")
    statements = _statements(seeded, args)
    conn = seeded._connection()
    assert any("FROM log_minute" in s for s in statements)
    assert not [s for s in statements if "FROM log_line" in s and "GROUP BY" in s], "no line is counted one by one"
    (listing,) = [s for s in statements if f"ORDER BY ts, id LIMIT {args.limit}" in s]
    plan = _plan(conn, listing)
    assert "ix_log_service_level_ts" in plan and "TEMP B-TREE" not in plan, "the index gives the order: LIMIT stops"


def test_a_file_without_minute_counts_gets_them_on_open(tmp_path: Path) -> None:
    path = tmp_path / "env.db"
    env = EmbeddedEnvironment(path, load_demo=False)
    env.add_logs(list(_seeded_rows())[:900])
    asked = [
        QueryLogsArgs(service="pay", start="2026-03-01T00:00:00Z", end="2026-03-03T00:00:00Z"),
        QueryLogsArgs(query="timeout", start="2026-03-01T00:00:00Z", end="2026-03-03T00:00:00Z"),
    ]
    before = [env.query_logs(args).retrieval_details for args in asked]
    # A file of an older release: no minute counts, none of the read indexes.
    env._connection().executescript("DROP TABLE log_minute; DROP INDEX ix_log_service_level_ts; DROP INDEX ix_log_hit;")
    reopened = EmbeddedEnvironment(path, load_demo=False)
    again = EmbeddedEnvironment(path, load_demo=False)  # idempotent: nothing counted twice
    assert [reopened.query_logs(args).retrieval_details for args in asked] == before
    assert [again.query_logs(args).retrieval_details for args in asked] == before


def _ordered_env(path: Path) -> EmbeddedEnvironment:
    """The seeded lines imported in time order, one service: the ids of a window are its lines."""
    env = EmbeddedEnvironment(path, load_demo=False)
    env.add_logs(sorted((row._replace(service="pay") for row in _seeded_rows()), key=lambda row: row.ts))
    return env


def test_a_search_too_broad_to_read_counts_every_match_and_says_what_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _ordered_env(tmp_path / "env.db")
    monkeypatch.setattr(_logs, "LOOKUP_CAP", 100)
    start, end = DAY + timedelta(hours=9), DAY + timedelta(hours=12)
    args = QueryLogsArgs(query="order", start=start.isoformat(), end=end.isoformat())
    conn = env._connection()
    total = sum(_line_by_line(conn, args, start, end)["by_level"].values())
    assert total > 100
    out = env.query_logs(args)
    (evidence,) = out.evidence
    assert isinstance(evidence, LogEvidence)
    assert (evidence.matched, evidence.counted) == (total, 100), "every match counted, the first 100 read"
    assert readable(out.retrieval_details)["matched"] == total
    # the lines listed are of those read; how many they are of is every match
    assert _reported(env, args) == {**_line_by_line(conn, args, start, end, read=100), "showing": (args.limit, total)}
    assert evidence.line.startswith(f"matched {total} lines (of the first 100 read: ")
    assert f"{total} lines match; only the first 100 in storage order were read" in out.text
    assert "templates (in a sample of the lines):" in out.text


@pytest.mark.parametrize(
    "args",
    [
        QueryLogsArgs(query="order", start="2026-03-01T09:30:00Z", end="2026-03-01T11:00:00Z"),  # lines out of order
        QueryLogsArgs(service="pay", query="order", start="2026-03-01T00:00:00Z", end="2026-03-03T00:00:00Z"),
    ],
)
def test_matches_that_the_index_cannot_count_alone_are_all_read(
    seeded: EmbeddedEnvironment, monkeypatch: pytest.MonkeyPatch, args: QueryLogsArgs
) -> None:
    """Where the window's ids hold other lines too (imported out of time order, another service),
    counting matches needs each line: every one is read, however many."""
    monkeypatch.setattr(_logs, "LOOKUP_CAP", 50)
    start, end = datetime.fromisoformat(args.start or ""), datetime.fromisoformat(args.end or "")
    expected = _line_by_line(seeded._connection(), args, start, end)
    assert sum(expected["by_level"].values()) > 50
    out = seeded.query_logs(args)
    assert "counted" not in readable(out.retrieval_details)
    assert _reported(seeded, args) == expected


def test_a_capped_search_looks_lines_up_once_and_counts_in_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _ordered_env(tmp_path / "env.db")
    monkeypatch.setattr(_logs, "LOOKUP_CAP", 100)
    statements = _statements(
        env, QueryLogsArgs(query="order", start="2026-03-01T00:00:00Z", end="2026-03-03T00:00:00Z")
    )
    searches = [s for s in statements if "MATCH" in s]
    assert len(searches) == 2
    lookup, count = searches
    assert "JOIN log_line" in lookup and "LIMIT 100" in lookup
    assert "log_line" not in count, "the total comes from the full-text index alone"
    plan = _plan(env._connection(), lookup)
    assert "TEMP B-TREE" not in plan, "matches come in id order: the LIMIT stops the search"
