"""The bundled demo environment: a small shop (gateway, order-, payment-, inventory-service,
MySQL, Redis) on one day, 2026-07-07 08:00–16:00 UTC, with five incidents.

Everything is generated from a fixed seed, so every install diagnoses the same day and
evals can name exact lines. Scenario definitions are data: a window, metric shapes and
log patterns; the generator below turns them into log lines and per-minute points.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache

DAY_START = datetime(2026, 7, 7, 8, 0, tzinfo=UTC)
DAY_END = datetime(2026, 7, 7, 16, 0, tzinfo=UTC)
SEED = 20260707
APP_SERVICES = ("gateway", "order-service", "payment-service", "inventory-service")
SERVICES = (*APP_SERVICES, "mysql", "redis")


def at(hhmm: str) -> datetime:
    hours, minutes = hhmm.split(":")
    return DAY_START.replace(hour=int(hours), minute=int(minutes))


@dataclass(frozen=True)
class Metric:
    """A series: ``baseline`` (low, high) all day, ``incident`` shape inside the window."""

    service: str
    name: str
    unit: str
    baseline: tuple[float, float]
    incident: Callable[[float, random.Random], float] | None = None  # progress 0..1 → value
    window: tuple[str, str] | None = None
    decimals: int = 1


@dataclass(frozen=True)
class LogPattern:
    """Lines ``template`` at ``per_minute`` inside ``window`` (all day when None)."""

    service: str
    level: str
    template: str
    per_minute: float
    window: tuple[str, str] | None = None


@dataclass(frozen=True)
class FixedLine:
    time: str  # HH:MM:SS
    service: str
    level: str
    text: str
    #: This line records a change of this kind; it is also loaded as a structured change event.
    change: str | None = None


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    title_zh: str
    window: tuple[str, str]
    questions: tuple[str, ...]
    root_cause: str
    metrics: tuple[Metric, ...] = ()
    logs: tuple[LogPattern, ...] = ()
    fixed: tuple[FixedLine, ...] = field(default_factory=tuple)


def ramp(low: float, high: float) -> Callable[[float, random.Random], float]:
    """Rise to ``high`` in the first fifth of the window, hold with noise, fall at the end."""

    def shape(progress: float, rng: random.Random) -> float:
        level = min(1.0, progress * 5) if progress < 0.9 else max(0.0, (1 - progress) * 10)
        return low + (high - low) * level * rng.uniform(0.9, 1.0)

    return shape


def sawtooth(low: float, high: float, teeth: int) -> Callable[[float, random.Random], float]:
    def shape(progress: float, rng: random.Random) -> float:
        phase = (progress * teeth) % 1.0
        return low + (high - low) * phase + rng.uniform(-15, 15)

    return shape


def counter(window: tuple[str, str], *events: str) -> Callable[[float, random.Random], float]:
    """How many of ``events`` (HH:MM) have happened at this point of ``window``."""
    start, end = at(window[0]), at(window[1])
    moments = [at(event) for event in events]

    def shape(progress: float, _rng: random.Random) -> float:
        now = start + (end - start) * progress
        return float(sum(moment <= now for moment in moments))

    return shape


def steps(*levels: float) -> Callable[[float, random.Random], float]:
    def shape(progress: float, _rng: random.Random) -> float:
        return levels[min(len(levels) - 1, int(progress * len(levels)))]

    return shape


# Baseline series, per service.
_APP_METRICS: tuple[Metric, ...] = tuple(
    m
    for service in APP_SERVICES
    for m in (
        Metric(service, "http_requests_per_second", "req/s", (80, 120)),
        Metric(service, "http_request_p99_ms", "ms", (120, 260), decimals=0),
        Metric(service, "http_error_percent", "%", (0.1, 0.4), decimals=2),
        Metric(service, "cpu_percent", "%", (25, 45)),
        Metric(service, "jvm_heap_used_mb", "MB", (600, 800), decimals=0),
    )
)
BASE_METRICS: tuple[Metric, ...] = (
    *_APP_METRICS,
    Metric("payment-service", "hikaricp_connections_active", "connections", (8, 16), decimals=0),
    Metric("payment-service", "hikaricp_connections_pending", "connections", (0, 0), decimals=0),
    Metric("payment-service", "hikaricp_connections_max", "connections", (50, 50), decimals=0),
    Metric("order-service", "hikaricp_connections_active", "connections", (10, 20), decimals=0),
    Metric("order-service", "hikaricp_connections_pending", "connections", (0, 0), decimals=0),
    Metric("inventory-service", "pod_restarts_total", "restarts", (0, 0), decimals=0),
    Metric("gateway", "upstream_timeouts_per_minute", "times", (0, 1), decimals=0),
    Metric("mysql", "mysql_slow_queries_per_minute", "times", (0, 3), decimals=0),
    Metric("mysql", "mysql_lock_wait_p99_seconds", "s", (0.01, 0.08), decimals=2),
    Metric("mysql", "mysql_threads_running", "threads", (4, 12), decimals=0),
    Metric("redis", "redis_ops_per_second", "ops/s", (900, 1400), decimals=0),
    Metric("redis", "redis_latency_p99_ms", "ms", (0.4, 1.2), decimals=2),
)

BASE_LOGS: tuple[LogPattern, ...] = (
    LogPattern(
        "gateway",
        "INFO",
        "[reactor-http-epoll-{n4}] RouteHandler - {method} {route} status=200 "
        "upstream={upstream} cost={cost_ms}ms traceId={trace}",
        24,
    ),
    LogPattern(
        "order-service",
        "INFO",
        "[http-nio-8080-exec-{n200}] c.s.order.OrderController - "
        "order={order} created user={user} items={n4} cost={cost_ms}ms",
        14,
    ),
    LogPattern(
        "payment-service",
        "INFO",
        "[http-nio-8080-exec-{n200}] c.s.pay.PaymentClient - order={order} paid channel={channel} cost={cost_ms}ms",
        12,
    ),
    LogPattern(
        "inventory-service",
        "INFO",
        "[http-nio-8080-exec-{n200}] c.s.inv.StockService - sku={sku} reserved qty={n4} cost={cost_ms}ms",
        14,
    ),
    LogPattern("mysql", "INFO", "[Note] InnoDB: page_cleaner: 1000ms intended loop took {n200}ms", 0.2),
    LogPattern("redis", "INFO", "DB saved on disk, {n4} keys changed in the last 300 seconds", 0.1),
)

_OOM_LINES = (
    ("41", "ERROR", "[http-nio-8080-exec-12] c.s.inv.SkuCache - java.lang.OutOfMemoryError: Java heap space"),
    ("44", "WARN", "[kubelet] container inventory-service killed: OOMKilled (exit code 137), restarting"),
)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        id="gateway-timeout-too-low",
        title="Cart requests fail with 504 after the gateway timeout was cut to 2000ms",
        title_zh="网关超时阈值被调低到 2000ms，购物车请求大量 504",
        window=("08:10", "08:40"),
        questions=("为什么 8 点以后购物车接口大量 504？", "Why does /api/cart return 504 since 08:10?"),
        root_cause="gateway route /api/cart timeout lowered from 5000ms to 2000ms; inventory-service p99 is ~2300ms",
        metrics=(
            Metric("gateway", "upstream_timeouts_per_minute", "times", (0, 1), ramp(0, 42), ("08:10", "08:40"), 0),
            Metric("gateway", "http_error_percent", "%", (0.1, 0.4), ramp(0.2, 12.5), ("08:10", "08:40"), 2),
            Metric(
                "inventory-service",
                "http_request_p99_ms",
                "ms",
                (120, 260),
                ramp(1800, 2350),
                ("08:05", "08:45"),
                0,
            ),
        ),
        logs=(
            LogPattern(
                "gateway",
                "WARN",
                "[reactor-http-epoll-{n4}] RouteHandler - GET /api/cart upstream="
                "inventory-service timed out after 2000ms ERR_GATEWAY_TIMEOUT status=504 traceId={trace}",
                10,
                ("08:10", "08:40"),
            ),
        ),
        fixed=(
            FixedLine(
                "08:05:12",
                "gateway",
                "INFO",
                "[main] RouteConfig - route /api/cart timeout set to 2000ms (was 5000ms) by deploy gw-2026.07.07-1",
                change="config",
            ),
        ),
    ),
    Scenario(
        id="payment-pool-exhaustion",
        title="Payments time out: payment-service connection pool exhausted after its size was halved",
        title_zh="支付超时：payment-service 连接池上限被减半后耗尽",
        window=("10:00", "10:30"),
        questions=("订单123支付失败，帮我看看是什么原因", "Why is checkout slow since 10:00?"),
        root_cause="maximum-pool-size lowered from 100 to 50 at 09:58; at peak traffic all 50 connections busy",
        metrics=(
            Metric(
                "payment-service",
                "hikaricp_connections_active",
                "connections",
                (8, 16),
                steps(50),
                ("10:00", "10:30"),
                0,
            ),
            Metric(
                "payment-service",
                "hikaricp_connections_pending",
                "connections",
                (0, 0),
                ramp(0, 37),
                ("10:00", "10:30"),
                0,
            ),
            Metric(
                "payment-service",
                "http_request_p99_ms",
                "ms",
                (120, 260),
                ramp(300, 5300),
                ("10:00", "10:30"),
                0,
            ),
            Metric(
                "payment-service",
                "http_error_percent",
                "%",
                (0.1, 0.4),
                ramp(0.3, 23.0),
                ("10:00", "10:30"),
                2,
            ),
            Metric("gateway", "http_request_p99_ms", "ms", (120, 260), ramp(400, 5600), ("10:00", "10:30"), 0),
        ),
        logs=(
            LogPattern(
                "payment-service",
                "ERROR",
                "[http-nio-8080-exec-{n200}] c.s.pay.PaymentClient - "
                "order={order} ERR_TIMEOUT request timeout cost={slow_ms}ms",
                15,
                ("10:00", "10:30"),
            ),
            LogPattern(
                "payment-service",
                "WARN",
                "[http-nio-8080-exec-{n200}] com.zaxxer.hikari.pool.HikariPool - "
                "HikariPool-1 - Connection is not available, request timed out after 5000ms "
                "(total=50, active=50, idle=0, waiting={waiting})",
                6,
                ("10:00", "10:30"),
            ),
            LogPattern(
                "order-service",
                "ERROR",
                "[http-nio-8080-exec-{n200}] c.s.order.CheckoutService - "
                "payment failed for order={order}: ERR_PAYMENT_TIMEOUT upstream=payment-service",
                12,
                ("10:00", "10:30"),
            ),
        ),
        fixed=(
            FixedLine(
                "09:58:03",
                "payment-service",
                "INFO",
                "[config-watcher] c.s.config.ConfigWatcher - applied "
                "config v42: spring.datasource.hikari.maximum-pool-size=50 (was 100)",
                change="config",
            ),
            FixedLine(
                "10:01:02",
                "payment-service",
                "ERROR",
                "[http-nio-8080-exec-7] c.s.pay.PaymentClient - order=123 ERR_TIMEOUT request timeout cost=5300ms",
            ),
            FixedLine(
                "10:01:03",
                "order-service",
                "ERROR",
                "[http-nio-8080-exec-31] c.s.order.CheckoutService - "
                "payment failed for order=123: ERR_PAYMENT_TIMEOUT upstream=payment-service",
            ),
        ),
    ),
    Scenario(
        id="inventory-memory-leak",
        title="inventory-service leaks heap and is OOM-killed three times",
        title_zh="inventory-service 内存泄漏，三次 OOM 重启",
        window=("11:30", "13:00"),
        questions=("inventory-service 为什么一直重启？", "Why does inventory-service keep restarting?"),
        root_cause="heap grows ~1.2 GB per 30 min after the sku-cache change until the 2048 MB limit; OOMKilled",
        metrics=(
            Metric(
                "inventory-service",
                "jvm_heap_used_mb",
                "MB",
                (600, 800),
                sawtooth(700, 1950, 3),
                ("11:30", "13:00"),
                0,
            ),
            Metric(
                "inventory-service",
                "pod_restarts_total",
                "restarts",
                (0, 0),
                counter(("11:30", "13:00"), "12:01", "12:31", "13:00"),
                ("11:30", "13:00"),
                0,
            ),
        ),
        logs=(
            LogPattern(
                "inventory-service",
                "WARN",
                "[GC] Full GC (Allocation Failure) {heap_before}M->{heap_after}M(2048M), 2.31 secs",
                2,
                ("11:45", "13:00"),
            ),
        ),
        fixed=(
            *(
                FixedLine(f"{stamp}:{second}", "inventory-service", level, text)
                for stamp in ("12:00", "12:30", "12:59")
                for second, level, text in _OOM_LINES
            ),
            FixedLine(
                "11:28:30",
                "inventory-service",
                "INFO",
                "[main] c.s.inv.SkuCache - sku cache enabled (maxEntries=unbounded) by release inv-1.14.0",
                change="release",
            ),
        ),
    ),
    Scenario(
        id="order-bad-deploy",
        title="order-service v2.3.1 throws ERR_ORDER_VALIDATION until rolled back",
        title_zh="order-service 发布 v2.3.1 后 ERR_ORDER_VALIDATION 激增，回滚后恢复",
        window=("14:00", "14:30"),
        questions=("14点以后下单报错变多了，怎么回事？", "Why did order errors spike at 14:00?"),
        root_cause="release v2.3.1 dereferences a null coupon in OrderValidator; rollback to v2.3.0 at 14:28 fixed it",
        metrics=(
            Metric("order-service", "http_error_percent", "%", (0.1, 0.4), ramp(0.3, 18.0), ("14:00", "14:30"), 2),
        ),
        logs=(
            LogPattern(
                "order-service",
                "ERROR",
                "[http-nio-8080-exec-{n200}] c.s.order.OrderValidator - "
                "ERR_ORDER_VALIDATION java.lang.NullPointerException: coupon is null order={order}",
                30,
                ("14:00", "14:28"),
            ),
        ),
        fixed=(
            FixedLine(
                "14:00:05",
                "order-service",
                "INFO",
                "[deployer] Deployment order-service v2.3.1 rolled out (previous v2.3.0)",
                change="deploy",
            ),
            FixedLine(
                "14:28:10",
                "order-service",
                "INFO",
                "[deployer] Deployment order-service rolled back to v2.3.0",
                change="rollback",
            ),
        ),
    ),
    Scenario(
        id="mysql-lock-waits",
        title="Stock updates wait on row locks held by a reconcile batch without an index",
        title_zh="库存更新被无索引的对账批任务锁住，出现大量锁等待",
        window=("15:00", "15:45"),
        questions=("15点后下单很慢，数据库有问题吗？", "Is the database why orders are slow after 15:00?"),
        root_cause="StockReconcileJob updates t_stock by sku without an index (full scans) and holds row locks",
        metrics=(
            Metric("mysql", "mysql_slow_queries_per_minute", "times", (0, 3), ramp(2, 40), ("15:00", "15:45"), 0),
            Metric(
                "mysql",
                "mysql_lock_wait_p99_seconds",
                "s",
                (0.01, 0.08),
                ramp(0.5, 48.0),
                ("15:00", "15:45"),
                2,
            ),
            Metric("mysql", "mysql_threads_running", "threads", (4, 12), ramp(12, 96), ("15:00", "15:45"), 0),
            Metric(
                "order-service",
                "http_request_p99_ms",
                "ms",
                (120, 260),
                ramp(400, 9800),
                ("15:00", "15:45"),
                0,
            ),
        ),
        logs=(
            LogPattern(
                "order-service",
                "ERROR",
                "[http-nio-8080-exec-{n200}] c.s.order.StockClient - order={order} "
                "ERR_DB_LOCK_TIMEOUT Lock wait timeout exceeded; try restarting transaction (table=t_stock)",
                8,
                ("15:05", "15:45"),
            ),
            LogPattern(
                "mysql",
                "WARN",
                "[Slow query] Query_time: {query_s} Lock_time: {lock_s} Rows_examined: 184302 "
                "UPDATE t_stock SET qty=qty-1 WHERE sku_code='{sku}'",
                4,
                ("15:00", "15:45"),
            ),
        ),
        fixed=(
            FixedLine(
                "14:58:30",
                "inventory-service",
                "INFO",
                "[scheduler] c.s.inv.StockReconcileJob - started (batch=50000 rows, table=t_stock)",
                change="job",
            ),
        ),
    ),
)


@dataclass(frozen=True)
class LogLine:
    ts: datetime
    service: str
    level: str
    line: str
    #: The logger and the message after it ("[thread] Logger - message"): what templates are mined from.
    component: str = ""
    message: str = ""


@dataclass(frozen=True)
class ChangeEvent:
    ts: datetime
    service: str
    kind: str
    description: str


_DEMO_LINE = re.compile(r"^\[[^\]]*\]\s+(?:(\S+)\s+-\s+)?(.*)$")


def _parts(text: str) -> tuple[str, str]:
    """(component, message) of a demo line's text; the demo writes "[thread] Logger - message"
    or "[thread] message"."""
    match = _DEMO_LINE.match(text)
    return (match.group(1) or "", match.group(2)) if match else ("", text)


#: Placeholder → its random value; filled in this order (the demo's data depends on it).
_VALUES: dict[str, Callable[[random.Random], str]] = {
    "n4": lambda rng: str(rng.randint(1, 4)),
    "n200": lambda rng: str(rng.randint(1, 200)),
    "order": lambda rng: str(rng.randint(100_000, 999_999)),
    "user": lambda rng: f"u{rng.randint(1000, 9999)}",
    "sku": lambda rng: f"SKU-{rng.randint(10000, 99999)}",
    "trace": lambda rng: f"{rng.getrandbits(64):016x}",
    "cost_ms": lambda rng: str(rng.randint(8, 240)),
    "slow_ms": lambda rng: str(rng.randint(5000, 5600)),
    "waiting": lambda rng: str(rng.randint(10, 37)),
    "method": lambda rng: rng.choice(["GET", "GET", "POST"]),
    "route": lambda rng: rng.choice(["/api/cart", "/api/orders", "/api/checkout", "/api/sku"]),
    "upstream": lambda rng: rng.choice(["order-service", "payment-service", "inventory-service"]),
    "channel": lambda rng: rng.choice(["alipay", "wechat", "card"]),
    "heap_before": lambda rng: str(rng.randint(1900, 2040)),
    "heap_after": lambda rng: str(rng.randint(1850, 1990)),
    "query_s": lambda rng: f"{rng.uniform(8, 48):.1f}",
    "lock_s": lambda rng: f"{rng.uniform(7, 47):.1f}",
}


@lru_cache(maxsize=256)
def _placeholders(template: str) -> tuple[tuple[str, int], ...]:
    """The placeholders a template uses and how often, in filling order."""
    return tuple(("{" + key + "}", template.count("{" + key + "}")) for key in _VALUES if "{" + key + "}" in template)


def _fill(template: str, rng: random.Random) -> str:
    out = template
    for token, count in _placeholders(template):
        make = _VALUES[token[1:-1]]
        for _ in range(count):
            out = out.replace(token, make(rng), 1)
    return out


def _minutes(window: tuple[str, str] | None) -> Iterator[datetime]:
    start, end = (at(window[0]), at(window[1])) if window else (DAY_START, DAY_END)
    minute = start
    while minute < end:
        yield minute
        minute += timedelta(minutes=1)


def _format(ts: datetime, service: str, level: str, text: str) -> str:
    return f"{ts.strftime('%Y-%m-%dT%H:%M:%S')}.{ts.microsecond // 1000:03d}Z {level:<5} {service} {text}"


def generate_logs(seed: int = SEED) -> list[LogLine]:
    """Every demo log line, sorted by time."""
    rng = random.Random(seed)
    lines: list[LogLine] = []
    patterns = [*BASE_LOGS, *(p for s in SCENARIOS for p in s.logs)]
    for pattern in patterns:
        for minute in _minutes(pattern.window):
            count = int(pattern.per_minute) + (1 if rng.random() < pattern.per_minute % 1 else 0)
            for _ in range(count):
                ts = minute + timedelta(milliseconds=rng.randint(0, 59_999))
                text = _fill(pattern.template, rng)
                line = _format(ts, pattern.service, pattern.level, text)
                lines.append(LogLine(ts, pattern.service, pattern.level, line, *_parts(text)))
    for scenario in SCENARIOS:
        for fixed in scenario.fixed:
            hours, minutes, seconds = (int(part) for part in fixed.time.split(":"))
            ts = DAY_START.replace(hour=hours, minute=minutes, second=seconds)
            line = _format(ts, fixed.service, fixed.level, fixed.text)
            lines.append(LogLine(ts, fixed.service, fixed.level, line, *_parts(fixed.text)))
    lines.sort(key=lambda line: (line.ts, line.service, line.line))
    return lines


def generate_changes() -> list[ChangeEvent]:
    """The day's deploys, configuration changes and jobs, as a change feed would record them."""
    events = []
    for scenario in SCENARIOS:
        for fixed in scenario.fixed:
            if fixed.change:
                hours, minutes, seconds = (int(part) for part in fixed.time.split(":"))
                ts = DAY_START.replace(hour=hours, minute=minutes, second=seconds)
                events.append(ChangeEvent(ts, fixed.service, fixed.change, _parts(fixed.text)[1]))
    return sorted(events, key=lambda event: event.ts)


@dataclass(frozen=True)
class MetricPoint:
    service: str
    metric: str
    unit: str
    ts: datetime
    value: float


def generate_metrics(seed: int = SEED) -> list[MetricPoint]:
    """Per-minute points for every series; scenario shapes replace the baseline in their window."""
    rng = random.Random(seed + 1)
    overrides: dict[tuple[str, str], list[Metric]] = {}
    for scenario in SCENARIOS:
        for metric in scenario.metrics:
            overrides.setdefault((metric.service, metric.name), []).append(metric)
    points: list[MetricPoint] = []
    for base in BASE_METRICS:
        for minute in _minutes(None):
            value = rng.uniform(*base.baseline)
            for shaped in overrides.get((base.service, base.name), []):
                assert shaped.window is not None and shaped.incident is not None
                start, end = at(shaped.window[0]), at(shaped.window[1])
                if start <= minute < end:
                    value = shaped.incident((minute - start) / (end - start), rng)
            value = max(0.0, value)
            rounded = round(value, base.decimals) if base.decimals else float(math.floor(value + 0.5))
            points.append(MetricPoint(base.service, base.name, base.unit, minute, rounded))
    return points
