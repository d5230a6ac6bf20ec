"""SQLite next to ClickHouse (issue 18): the same generated lines in the embedded file and in an
``otel_logs`` table on the in-process engine, each ``query_logs`` shape timed on both, interleaved.

The lines are shaped like production: services with skewed volumes (Zipf), four levels, English
and Chinese templates with ids and latencies, and an incident burst. Both stores are built once
into the bench cache (``tools.cache_folder``) and reused; building them is not timed here.
The in-process engine opens one data directory per process, so every size is a table of one
directory. Needs the ``veridiag[clickhouse]`` extra.
"""

from __future__ import annotations

import gc
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from pydantic import BaseModel

from veridiag.bench.stats import summary, time_runs
from veridiag.bench.tools import StoreBuild, cache_folder
from veridiag.config import ClickHouseSettings
from veridiag.tools import QueryLogsArgs
from veridiag.tools.backends.clickhouse import ClickHouseLogs
from veridiag.tools.backends.embedded import EmbeddedEnvironment, LogRow, _schema

START = datetime(2026, 7, 7, 0, 0, tzinfo=UTC)
#: Bump when ``shaped_rows`` writes other lines: cached stores are named after it.
GENERATOR_VERSION = 1
SERVICES = [f"svc-{n:02d}" for n in range(20)]
#: (level, share, template) — ``{n}`` a number, ``{id}`` an order id.
TEMPLATES = [
    ("INFO", 0.50, "GET /api/orders/{id} status=200 cost={n}ms"),
    ("INFO", 0.15, "POST /api/cart/{id} status=201 cost={n}ms"),
    ("INFO", 0.08, "订单 {id} 创建成功 耗时 {n}ms"),
    ("DEBUG", 0.15, "cache hit key=sku:{id} ttl={n}s"),
    ("WARN", 0.02, "HikariPool-1 - Connection is not available, waiting={n}"),
    ("WARN", 0.01, "库存 同步 延迟 {n}ms sku={id}"),
    ("WARN", 0.05, "slow query took {n}ms table=t_stock"),
    ("ERROR", 0.02, "order={id} ERR_TIMEOUT request timeout cost={n}ms"),
    ("ERROR", 0.01, "支付 超时 order={id} 渠道 返回 {n}"),
    ("ERROR", 0.01, "connection refused upstream=10.0.{n}.7:8080"),
]
#: The incident: ten times the errors on one service for twenty minutes.
INCIDENT = ("svc-03", START + timedelta(hours=10), START + timedelta(hours=10, minutes=20))
KEYWORDS = ["timeout", "refused", "HikariPool", "支付 超时", "t_stock"]
#: Variants of each shape (different services, hours, words), each timed ``repeats`` times.
VARIANTS = 8


def shaped_rows(lines: int, seed: int = 18) -> Iterator[LogRow]:
    """``lines`` lines over one day, in time order."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(SERVICES))]
    shares = [share for _level, share, _text in TEMPLATES]
    errors = [index for index, (level, _share, _text) in enumerate(TEMPLATES) if level == "ERROR"]
    step = 86_400_000 / lines
    for index in range(lines):
        moment = START + timedelta(milliseconds=index * step)
        service = rng.choices(SERVICES, weights)[0]
        chosen = rng.choices(range(len(TEMPLATES)), shares)[0]
        if service == INCIDENT[0] and INCIDENT[1] <= moment < INCIDENT[2] and rng.random() < 0.4:
            chosen = rng.choice(errors)
        level, _share, text = TEMPLATES[chosen]
        message = text.format(id=rng.randint(100000, 999999), n=rng.randint(1, 9000))
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
        yield LogRow(moment, service, level, f"{stamp} {level} [{service}] {message}", message)


def _built(record: Path) -> StoreBuild | None:
    return StoreBuild.model_validate_json(record.read_text()) if record.exists() else None


def sqlite_store(lines: int, folder: Path) -> tuple[EmbeddedEnvironment, StoreBuild]:
    path = folder / f"shaped-g{GENERATOR_VERSION}-s{_schema.VERSION}-{lines}.db"
    record = path.with_suffix(".json")
    build = _built(record) if path.exists() else None
    if build is None:
        for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            stale.unlink(missing_ok=True)
    env = EmbeddedEnvironment(path, load_demo=False)
    if build is None:
        started = time.perf_counter()
        written = env.add_logs(shaped_rows(lines))
        build = StoreBuild(lines=written.added, import_seconds=round(time.perf_counter() - started, 2))
        record.write_text(build.model_dump_json())
    return env, build


def clickhouse_store(lines: int, folder: Path, clock: Callable[[], datetime]) -> tuple[ClickHouseLogs, StoreBuild]:
    table = f"shaped_g{GENERATOR_VERSION}_{lines}"
    record = folder / f"clickhouse-{table}.json"
    logs = ClickHouseLogs(ClickHouseSettings(table=table), folder / "clickhouse", clock=clock)
    build = _built(record)
    if build is not None:
        logs.create_tables()  # a store cached by an earlier veridiag gets today's indexes
    else:
        logs.client().command(f"DROP TABLE IF EXISTS `{table}`")
        started = time.perf_counter()
        written = logs.add_logs(shaped_rows(lines))
        logs.client().command(f"OPTIMIZE TABLE `{table}` FINAL")  # merged parts, as a day-old table is
        build = StoreBuild(lines=written.added, import_seconds=round(time.perf_counter() - started, 2))
        record.write_text(build.model_dump_json())
    return logs, build


def shapes(seed: int = 7) -> dict[str, list[QueryLogsArgs]]:
    """The issue's shapes, ``VARIANTS`` of each (a varied service, hour and word)."""
    rng = random.Random(seed)
    day = {"start": "2026-07-07T00:00:00Z", "end": "2026-07-08T00:00:00Z"}

    def hour() -> dict[str, str]:
        at = START + timedelta(hours=rng.randint(0, 23))
        return {"start": at.isoformat(), "end": (at + timedelta(hours=1)).isoformat()}

    def service() -> str:
        return rng.choice(SERVICES[:10])

    return {
        "service_1h_errors": [QueryLogsArgs(service=service(), level="ERROR", **hour()) for _ in range(VARIANTS)],
        "service_24h_counts": [QueryLogsArgs(service=service(), **day) for _ in range(VARIANTS)],
        "keyword_service_24h": [
            QueryLogsArgs(service=service(), query=rng.choice(KEYWORDS), **day) for _ in range(VARIANTS)
        ],
        "keyword_all_24h": [QueryLogsArgs(query=rng.choice(KEYWORDS), **day) for _ in range(VARIANTS)],
    }


def sqlite_error_minutes(conn: sqlite3.Connection, start: datetime, end: datetime) -> list[tuple[str, int, int]]:
    """The embedded store's errors per service per minute (its ``log_minute`` counts)."""
    first, last = int(start.timestamp()) // 60, int(end.timestamp()) // 60
    return conn.execute(
        "SELECT service, minute, SUM(lines) FROM log_minute WHERE level = 'ERROR' AND minute >= ? AND minute < ? "
        "GROUP BY 1, 2 ORDER BY 2, 1",
        (first, last),
    ).fetchall()


class ShapeTimes(BaseModel):
    sqlite_p50_ms: float
    sqlite_p99_ms: float
    clickhouse_p50_ms: float
    clickhouse_p99_ms: float
    #: Every variant gave the same matched count on both stores (error_minutes: the same counts).
    same_counts: bool


class ClickHouseBench(BaseModel):
    """Each shape's p50/p99 on both stores at ``lines`` (and ``lines_10m`` when run), the worst
    ClickHouse p99 end to end through ``query_logs``, and what each store took to build."""

    lines: int
    shapes: dict[str, ShapeTimes]
    query_logs_p99_ms: float
    sqlite_import_seconds: float
    clickhouse_import_seconds: float
    lines_10m: int | None = None
    shapes_10m: dict[str, ShapeTimes] | None = None
    query_logs_10m_p99_ms: float | None = None
    sqlite_import_10m_seconds: float | None = None
    clickhouse_import_10m_seconds: float | None = None
    runs_per_shape: int


def _measure(lines: int, folder: Path, repeats: int) -> tuple[dict[str, ShapeTimes], StoreBuild, StoreBuild]:
    env, sqlite_build = sqlite_store(lines, folder)
    logs, clickhouse_build = clickhouse_store(lines, folder, env.now)
    logs.query_logs(QueryLogsArgs(start=START.isoformat(), end=(START + timedelta(minutes=1)).isoformat()))
    # Both stores open and the engine loaded: frozen as a server freezes what it built before it
    # serves (``cli/common.started_once``), so no timed call pays a full collection of it.
    gc.collect()
    gc.freeze()
    times: dict[str, ShapeTimes] = {}
    try:
        for name, variants in shapes().items():
            ours: list[float] = []
            theirs: list[float] = []
            same = True
            for args in variants:  # interleaved: both stores see the same load
                theirs += time_runs(partial(env.query_logs, args), repeats, warmup=1)
                ours += time_runs(partial(logs.query_logs, args), repeats, warmup=1)
                a, b = env.query_logs(args).evidence, logs.query_logs(args).evidence
                same &= [getattr(x, "matched", None) for x in a] == [getattr(x, "matched", None) for x in b]
            times[name] = _times(theirs, ours, same)
        hours = [START + timedelta(hours=h) for h in random.Random(3).sample(range(24), VARIANTS)]
        ours, theirs, same = [], [], True
        for at in hours:
            window = (at, at + timedelta(hours=1))
            theirs += time_runs(partial(sqlite_error_minutes, env._connection(), *window), repeats, warmup=1)
            ours += time_runs(partial(logs.error_minutes, *window), repeats, warmup=1)
            counted = logs.error_minutes(*window)
            flat = sorted((s, int(t.timestamp()) // 60, n) for s, rows in counted.items() for t, n in rows)
            same &= flat == sorted(sqlite_error_minutes(env._connection(), *window))
        times["errors_per_service_minute_1h"] = _times(theirs, ours, same)
    finally:
        gc.unfreeze()
        logs.close()
        env.close()
    return times, sqlite_build, clickhouse_build


def _times(sqlite: list[float], clickhouse: list[float], same: bool) -> ShapeTimes:
    a, b = summary(sqlite), summary(clickhouse)
    return ShapeTimes(
        sqlite_p50_ms=a["p50_ms"],
        sqlite_p99_ms=a["p99_ms"],
        clickhouse_p50_ms=b["p50_ms"],
        clickhouse_p99_ms=b["p99_ms"],
        same_counts=same,
    )


def _worst(times: dict[str, ShapeTimes]) -> float:
    return max(t.clickhouse_p99_ms for name, t in times.items() if not name.startswith("errors_"))


def run(
    lines: int = 1_000_000, large_lines: int | None = None, repeats: int = 5, cache: Path | None = None
) -> ClickHouseBench:
    folder = cache or cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    times, sqlite_build, clickhouse_build = _measure(lines, folder, repeats)
    large, large_sqlite, large_clickhouse = (
        _measure(large_lines, folder, repeats) if large_lines else (None, None, None)
    )
    return ClickHouseBench(
        lines=clickhouse_build.lines,
        shapes=times,
        query_logs_p99_ms=_worst(times),
        sqlite_import_seconds=sqlite_build.import_seconds,
        clickhouse_import_seconds=clickhouse_build.import_seconds,
        lines_10m=large_lines,
        shapes_10m=large,
        query_logs_10m_p99_ms=_worst(large) if large else None,
        sqlite_import_10m_seconds=large_sqlite.import_seconds if large_sqlite else None,
        clickhouse_import_10m_seconds=large_clickhouse.import_seconds if large_clickhouse else None,
        runs_per_shape=VARIANTS * repeats,
    )
