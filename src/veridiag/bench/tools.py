"""Evidence-layer benchmark (issues #3, #15): query 1 M and 10 M imported log lines, search
1 000 runbooks.

The log file is generated (seeded) in realistic shapes — several services, INFO chatter,
rarer WARN/ERROR patterns with ids and latencies — then imported through the same
streaming importer ``veridiag data import-logs`` uses, and queried through the same
backend method the ``query_logs`` tool calls. A store takes minutes to build at 10 M lines, so
each is built once into a cache folder (``$VERIDIAG_BENCH_CACHE``, else
``~/.cache/veridiag/bench``) under a name that changes with the generator and the store's
schema; its import time is kept beside it and reported with every later run.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from pydantic import BaseModel

from veridiag.bench.stats import summary, time_runs
from veridiag.ingest.importers import import_logs
from veridiag.tools import LookupKnowledgeArgs, QueryLogsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment, _schema
from veridiag.tools.knowledge import Runbook, bundled_runbooks, index_runbooks

START = datetime(2026, 7, 7, 0, 0, tzinfo=UTC)
SERVICES = ["gateway", "order-service", "payment-service", "inventory-service", "user-service", "search-service"]
#: Bump when ``log_lines`` writes other lines: cached stores are named after it.
GENERATOR_VERSION = 1
#: Lines per imported file when building a store: one transaction each, bounded memory.
IMPORT_CHUNK = 1_000_000
#: The query mix, timed on every store (one service holds all lines, ``shop``).
QUERIES = [
    QueryLogsArgs(query="ERR_TIMEOUT", start="2026-07-07T10:00:00Z", end="2026-07-07T10:30:00Z"),
    QueryLogsArgs(service="shop", level="ERROR", start="2026-07-07T09:00:00Z", end="2026-07-07T10:00:00Z"),
    QueryLogsArgs(query="HikariPool waiting", start="2026-07-07T00:00:00Z", end="2026-07-08T00:00:00Z"),
    QueryLogsArgs(query="订单 超时", start="2026-07-07T12:00:00Z", end="2026-07-07T13:00:00Z"),
    QueryLogsArgs(service="shop", start="2026-07-07T15:00:00Z", end="2026-07-07T15:10:00Z"),
    QueryLogsArgs(service="shop", start="2026-07-07T00:00:00Z", end="2026-07-08T00:00:00Z"),
]


def log_lines(lines: int, seed: int = 3) -> Iterator[str]:
    """``lines`` log lines over one day, ~1 % errors and ~3 % warnings."""
    rng = random.Random(seed)
    step = 86_400_000 / lines
    for index in range(lines):
        moment = START + timedelta(milliseconds=index * step)
        stamp = moment.strftime("%Y-%m-%d %H:%M:%S,") + f"{moment.microsecond // 1000:03d}"
        svc = SERVICES[index % len(SERVICES)]
        roll = rng.random()
        if roll < 0.01:
            text = (
                f"ERROR [{svc}] c.s.pay.PaymentClient - order={rng.randint(100000, 999999)} ERR_TIMEOUT "
                f"request timeout cost={rng.randint(3000, 9000)}ms"
            )
        elif roll < 0.04:
            text = (
                f"WARN  [{svc}] c.z.h.pool.HikariPool - HikariPool-1 - Connection is not available, "
                f"waiting={rng.randint(1, 40)}"
            )
        else:
            text = (
                f"INFO  [{svc}] c.s.web.Controller - GET /api/orders/{rng.randint(100000, 999999)} "
                f"status=200 cost={rng.randint(5, 300)}ms"
            )
        yield f"{stamp} {text}\n"


class StoreBuild(BaseModel):
    """Written beside a cached store once it is complete; a store without it is rebuilt."""

    lines: int
    import_seconds: float


def cache_folder() -> Path:
    configured = os.environ.get("VERIDIAG_BENCH_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "veridiag" / "bench"


def log_store(lines: int, folder: Path) -> tuple[EmbeddedEnvironment, StoreBuild, bool]:
    """The store of ``lines`` generated lines, its build record, and whether this call built it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"logs-g{GENERATOR_VERSION}-s{_schema.VERSION}-{lines}.db"
    record = path.with_suffix(".json")
    if record.exists() and path.exists():
        return EmbeddedEnvironment(path, load_demo=False), StoreBuild.model_validate_json(record.read_text()), False
    for stale in (path, record, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    env = EmbeddedEnvironment(path, load_demo=False)
    generated = log_lines(lines)
    imported, seconds = 0, 0.0
    with tempfile.TemporaryDirectory(prefix="veridiag-bench-", dir=folder) as tmp:
        chunk = Path(tmp) / "app.log"
        for first in range(0, lines, IMPORT_CHUNK):
            with chunk.open("w", encoding="utf-8") as handle:
                handle.writelines(next(generated) for _ in range(min(IMPORT_CHUNK, lines - first)))
            started = time.perf_counter()
            imported += import_logs(env, chunk, service="shop").imported
            seconds += time.perf_counter() - started
    build = StoreBuild(lines=imported, import_seconds=round(seconds, 2))
    record.write_text(build.model_dump_json())
    return env, build, True


def _time_queries(env: EmbeddedEnvironment, repeats: int) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """p50/p99 over the whole mix, each query's p50, and each query's outcome."""
    outcomes: list[str] = [env.query_logs(query).status for query in QUERIES]
    samples: list[float] = []
    per_query: dict[str, float] = {}
    for query in QUERIES:
        runs = time_runs(partial(env.query_logs, query), repeats, warmup=1)
        samples += runs
        per_query[_label(query)] = summary(runs)["p50_ms"]
    return summary(samples), per_query, outcomes


def _label(query: QueryLogsArgs) -> str:
    said = [f"{name}={value}" for name, value in (("service", query.service), ("level", query.level)) if value]
    if query.query:
        said.append(repr(query.query))
    return f"{' '.join(said)} {(query.start or '')[11:16]}–{(query.end or '')[11:16]}"


def synthetic_runbooks(count: int, seed: int = 5) -> list[Runbook]:
    rng = random.Random(seed)
    topics = [
        ("连接池", "connection pool"),
        ("超时", "timeout"),
        ("内存", "memory"),
        ("磁盘", "disk"),
        ("证书", "certificate"),
        ("限流", "rate limit"),
        ("死锁", "deadlock"),
        ("缓存", "cache"),
        ("队列积压", "queue backlog"),
        ("网络抖动", "network jitter"),
        ("配置错误", "misconfiguration"),
    ]
    books = list(bundled_runbooks())
    for index in range(count - len(books)):
        (zh1, en1), (zh2, en2) = rng.sample(topics, 2)
        service = rng.choice(SERVICES)
        body = (
            f"## 现象\n{service} 出现{zh1}相关告警，伴随{zh2}。\n## 排查步骤\n1. 检查{zh1}指标。\n"
            f"2. 对比{zh2}日志。\n3. Check {en1} and {en2} dashboards for {service}.\n"
        )
        books.append(
            Runbook(
                f"rb-synth-{index}",
                f"{zh1}与{zh2}排查 {index} / {en1} with {en2}",
                (service,),
                (zh1, zh2, en1, en2),
                body,
                "synthetic",
            )
        )
    return books


class ToolsBench(BaseModel):
    """The query mix over the ``lines`` store (p50/p99 ms over all its runs, each query's p50)
    and over the ``large_lines`` one (None: not run), and ``lookup_knowledge`` over ``runbooks``."""

    log_lines: int
    #: The store's own build (kept beside it when cached), not this run's.
    import_seconds: float
    import_lines_per_s: int
    log_store_built_this_run: bool
    query_logs_p50_ms: float
    query_logs_p99_ms: float
    #: Each query's status, in ``QUERIES`` order.
    query_logs_outcomes: list[str]
    query_logs_p50_by_query: dict[str, float]
    query_logs_10m_p50_ms: float | None = None
    query_logs_10m_p99_ms: float | None = None
    log_lines_10m: int | None = None
    query_logs_10m_p50_by_query: dict[str, float] | None = None
    runbooks: int
    lookup_knowledge_p50_ms: float
    lookup_knowledge_p99_ms: float
    runs: int


def run(
    lines: int = 1_000_000,
    runbooks: int = 1000,
    repeats: int = 15,
    large_lines: int | None = 10_000_000,
    cache: Path | None = None,
) -> ToolsBench:
    """Time the query mix on a store of ``lines`` lines and one of ``large_lines`` (None: skip)."""
    folder = cache or cache_folder()
    env, build, built = log_store(lines, folder)
    logs, per_query, outcomes = _time_queries(env, repeats)
    large_logs: dict[str, float] = {}
    large_per_query: dict[str, float] | None = None
    large_count: int | None = None
    if large_lines:
        large_env, large_build, _built = log_store(large_lines, folder)
        large_logs, large_per_query, _outcomes = _time_queries(large_env, repeats)
        large_count = large_build.lines

    with tempfile.TemporaryDirectory(prefix="veridiag-bench-") as tmp:
        kb_env = EmbeddedEnvironment(Path(tmp) / "kb.db", load_demo=False)
        index_runbooks(kb_env._connection(), synthetic_runbooks(runbooks))
        kb_queries = ["连接池 超时", "内存 泄漏 重启", "queue backlog", "证书 过期", "payment timeout pool"]
        kb_samples: list[float] = []
        for text in kb_queries:
            kb_samples += time_runs(partial(kb_env.lookup_knowledge, LookupKnowledgeArgs(query=text)), repeats * 2)

    kb = summary(kb_samples)
    return ToolsBench(
        log_lines=build.lines,
        import_seconds=build.import_seconds,
        import_lines_per_s=round(build.lines / build.import_seconds),
        log_store_built_this_run=built,
        query_logs_p50_ms=logs["p50_ms"],
        query_logs_p99_ms=logs["p99_ms"],
        query_logs_outcomes=outcomes,
        query_logs_p50_by_query=per_query,
        query_logs_10m_p50_ms=large_logs.get("p50_ms"),
        query_logs_10m_p99_ms=large_logs.get("p99_ms"),
        log_lines_10m=large_count,
        query_logs_10m_p50_by_query=large_per_query,
        runbooks=runbooks,
        lookup_knowledge_p50_ms=kb["p50_ms"],
        lookup_knowledge_p99_ms=kb["p99_ms"],
        runs=len(QUERIES) * repeats,
    )
