"""Evidence-layer benchmark (issue #3): import 1 M log lines, query them, search 1 000 runbooks.

The log file is generated (seeded) in realistic shapes — several services, INFO chatter,
rarer WARN/ERROR patterns with ids and latencies — then imported through the same
streaming importer ``veridiag data import-logs`` uses, and queried through the same
backend method the ``query_logs`` tool calls.
"""

from __future__ import annotations

import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from veridiag.bench.stats import summary, time_runs
from veridiag.tools import LookupKnowledgeArgs, QueryLogsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.importers import import_logs
from veridiag.tools.knowledge import Runbook, bundled_runbooks, index_runbooks

START = datetime(2026, 7, 7, 0, 0, tzinfo=UTC)
SERVICES = ["gateway", "order-service", "payment-service", "inventory-service", "user-service", "search-service"]


def write_log_file(path: Path, lines: int, seed: int = 3) -> None:
    """``lines`` log lines over one day, ~1 % errors and ~3 % warnings."""
    rng = random.Random(seed)
    step = 86_400_000 / lines
    with path.open("w", encoding="utf-8") as handle:
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
            handle.write(f"{stamp} {text}\n")


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


def run(lines: int = 1_000_000, runbooks: int = 1000, repeats: int = 15) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="veridiag-bench-") as tmp:
        folder = Path(tmp)
        log_file = folder / "app.log"
        write_log_file(log_file, lines)
        env = EmbeddedEnvironment(folder / "env.db", load_demo=False)
        started = time.perf_counter()
        report = import_logs(env, log_file, service="shop")
        import_seconds = time.perf_counter() - started

        queries = [
            QueryLogsArgs(query="ERR_TIMEOUT", start="2026-07-07T10:00:00Z", end="2026-07-07T10:30:00Z"),
            QueryLogsArgs(service="shop", level="ERROR", start="2026-07-07T09:00:00Z", end="2026-07-07T10:00:00Z"),
            QueryLogsArgs(query="HikariPool waiting", start="2026-07-07T00:00:00Z", end="2026-07-08T00:00:00Z"),
            QueryLogsArgs(query="订单 超时", start="2026-07-07T12:00:00Z", end="2026-07-07T13:00:00Z"),
            QueryLogsArgs(service="shop", start="2026-07-07T15:00:00Z", end="2026-07-07T15:10:00Z"),
        ]
        outcomes = [env.query_logs(q).status for q in queries]
        samples: list[float] = []
        for query in queries:
            samples += time_runs(partial(env.query_logs, query), repeats, warmup=1)

        conn = env._connection()
        index_runbooks(conn, synthetic_runbooks(runbooks))
        kb_queries = ["连接池 超时", "内存 泄漏 重启", "queue backlog", "证书 过期", "payment timeout pool"]
        kb_samples: list[float] = []
        for text in kb_queries:
            kb_samples += time_runs(partial(env.lookup_knowledge, LookupKnowledgeArgs(query=text)), repeats * 2)

    logs = summary(samples)
    kb = summary(kb_samples)
    return {
        "log_lines": report.imported,
        "import_seconds": round(import_seconds, 2),
        "import_lines_per_s": round(report.imported / import_seconds),
        "query_logs_p50_ms": logs["p50_ms"],
        "query_logs_p99_ms": logs["p99_ms"],
        "query_logs_outcomes": outcomes,
        "runbooks": runbooks,
        "lookup_knowledge_p50_ms": kb["p50_ms"],
        "lookup_knowledge_p99_ms": kb["p99_ms"],
        "runs": len(samples),
    }
