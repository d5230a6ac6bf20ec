"""Throughput of ``read_log_file`` per format and of ``TemplateMiner`` on what it reads.

Writes synthetic files (lines in each format with varying numbers, ids and times) to a temp
directory and reports the median of ``--runs`` runs (lines per CPU second): parse and mine per format, then a
``--mixed`` line Java service log (five message shapes, 3 % of entries with a 5-line stack trace) parsed and
mined. Usage: ``.venv/bin/python scripts/logformats_bench.py [--lines 200000] [--mixed 1000000]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from veridiag.ingest.logformats import LogFileReport, read_log_file
from veridiag.tools.templates import TemplateMiner

_START = datetime(2026, 7, 7, 10, 0, tzinfo=UTC)
_LEVELS = ("INFO", "INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG")


def _t(i: int) -> datetime:
    return _START + timedelta(milliseconds=i * 37)


def _iso(i: int) -> str:
    return _t(i).strftime("%Y-%m-%dT%H:%M:%S.") + f"{_t(i).microsecond // 1000:03d}Z"


def _msg(r: random.Random) -> str:
    return r.choice(
        (
            f"order={r.randint(1, 10**6)} created user=u{r.randint(1, 5000)} items={r.randint(1, 9)} "
            f"cost={r.randint(1, 900)}ms",
            f"HikariPool-1 - Connection is not available, request timed out after {r.randint(1000, 30000)}ms "
            f"(total={r.randint(1, 20)}, active={r.randint(1, 20)}, idle=0, waiting={r.randint(0, 50)})",
            f"GET /api/orders/{r.randint(1, 10**6)} status={r.choice((200, 200, 404, 500))} cost={r.randint(1, 900)}ms",
            f"cache miss key=sku:{r.randint(1, 99999)} ttl={r.randint(1, 600)}s",
            f"payment {r.getrandbits(64):016x} settled amount={r.randint(1, 9999)}.{r.randint(0, 99):02d}",
        )
    )


Line = Callable[[int, random.Random], str]
SHAPES: dict[str, Line] = {
    "syslog": lambda i, r: f"{_t(i):%b} {_t(i).day:2d} {_t(i):%H:%M:%S} web01 app[{r.randint(1, 9999)}]: {_msg(r)}",
    "syslog5424": lambda i, r: f'<165>1 {_iso(i)} web01 app {r.randint(1, 9999)} ID47 [m@1 a="1"] {_msg(r)}',
    "syslog_iso": lambda i, r: (
        f"{_t(i):%Y-%m-%dT%H:%M:%S}.{_t(i).microsecond:06d}+02:00 web01 app[{r.randint(1, 9999)}]: {_msg(r)}"
    ),
    "thunderbird": lambda i, r: (
        f"- {int(_t(i).timestamp())} {_t(i):%Y.%m.%d} dn{r.randint(1, 999)} {_t(i):%b} {_t(i).day} {_t(i):%H:%M:%S} "
        f"dn1/dn1 crond[{r.randint(1, 9999)}]: {_msg(r)}"
    ),
    "apache_error": lambda i, r: (
        f"[{_t(i):%a %b %d %H:%M:%S %Y}] [error] [client 10.0.0.{r.randint(1, 254)}] {_msg(r)}"
    ),
    "nginx_error": lambda i, r: f"{_t(i):%Y/%m/%d %H:%M:%S} [error] 31#31: *{r.randint(1, 99999)} {_msg(r)}",
    "access": lambda i, r: (
        f"10.0.{r.randint(0, 255)}.{r.randint(1, 254)} - - [{_t(i):%d/%b/%Y:%H:%M:%S} +0000] "
        f'"GET /api/orders/{r.randint(1, 10**6)} HTTP/1.1" {r.choice((200, 200, 404, 502))} {r.randint(0, 9999)} '
        f'"-" "Mozilla/5.0 (X11; Linux x86_64)"'
    ),
    "json": lambda i, r: (
        f'{{"ts":"{_iso(i)}","level":"{r.choice(_LEVELS).lower()}","msg":"{_msg(r)}",'
        f'"service":"order-service","logger":"c.s.order.OrderService"}}'
    ),
    "logfmt": lambda i, r: f'time={_iso(i)} level={r.choice(_LEVELS).lower()} msg="{_msg(r)}" service=order-service',
    "log4j": lambda i, r: (
        f"{_t(i):%Y-%m-%d %H:%M:%S},{_t(i).microsecond // 1000:03d} {r.choice(_LEVELS)} "
        f"[http-nio-8080-exec-{r.randint(1, 200)}] c.s.order.OrderService - {_msg(r)}"
    ),
    "zookeeper": lambda i, r: (
        f"{_t(i):%Y-%m-%d %H:%M:%S},{_t(i).microsecond // 1000:03d} - {r.choice(_LEVELS)}  "
        f"[QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:FastLeaderElection@774] - {_msg(r)}"
    ),
    "hadoop": lambda i, r: f"{_t(i):%y/%m/%d %H:%M:%S} {r.choice(_LEVELS)} executor.Executor: {_msg(r)}",
    "hdfs": lambda i, r: f"{_t(i):%y%m%d %H%M%S} {r.randint(1, 999)} {r.choice(_LEVELS)} dfs.DataNode: {_msg(r)}",
    "level_component": lambda i, r: (
        f"{_iso(i)} {r.choice(_LEVELS):<5} order-service [http-nio-8080-exec-{r.randint(1, 200)}] "
        f"c.s.order.OrderController - {_msg(r)}"
    ),
    "openstack": lambda i, r: (
        f"{_t(i):%Y-%m-%d %H:%M:%S}.{_t(i).microsecond // 1000:03d} {r.randint(1, 9999)} {r.choice(_LEVELS)} "
        f"nova.compute.manager [req-{r.getrandbits(128):032x} - - -] {_msg(r)}"
    ),
    "hpc": lambda i, r: (
        f"{r.randint(1, 10**6)} node-{r.randint(1, 999)} unix.hw state {int(_t(i).timestamp())} 1 {_msg(r)}"
    ),
    "healthapp": lambda i, r: (
        f"{_t(i):%Y%m%d-%H:%M:%S}:{_t(i).microsecond // 1000}|Step_LSC|{r.randint(1, 10**8)}|{_msg(r)}"
    ),
    "proxifier": lambda i, r: f"[{_t(i):%m.%d %H:%M:%S}] chrome.exe - {_msg(r)}",
}

_TRACE = (
    "java.lang.IllegalStateException: card declined\n"
    "\tat c.s.pay.PaymentClient.charge(PaymentClient.java:88)\n"
    "\tat c.s.pay.PaymentService.pay(PaymentService.java:41)\n"
    "Caused by: java.net.SocketTimeoutException: Read timed out\n"
    "\t... 12 more"
)


def write(path: Path, shape: Line, lines: int, *, traces: bool = False) -> int:
    r = random.Random(7)
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < lines:
            handle.write(shape(written, r) + "\n")
            written += 1
            if traces and r.random() < 0.03:
                handle.write(_TRACE + "\n")
                written += 5
    return written


def _median(runs: int, job: Callable[[], float]) -> float:
    return statistics.median(job() for _ in range(runs))


# CPU time of this process, not wall time: this 2-core machine is shared with other sessions, and
# their load moved wall-clock figures by up to 2x between runs; CPU time moved them by a few %.
_clock = time.process_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--mixed", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    print(f"{'format':<18}{'parse/s':>10}{'mine/s':>10}{'templates':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape in SHAPES.items():
            if args.only and name not in args.only:
                continue
            path = Path(tmp) / f"{name}.log"
            lines = write(path, shape, args.lines)

            def parse(path: Path = path, lines: int = lines, name: str = name) -> float:
                report = LogFileReport()
                start = _clock()
                for _ in read_log_file(path, report=report, year=2026):
                    pass
                elapsed = _clock() - start
                assert report.format == name and report.parsed == lines, report
                return lines / elapsed

            messages = [entry.message for entry in read_log_file(path, year=2026)]
            templates: list[int] = []

            def mine(messages: list[str] = messages, templates: list[int] = templates) -> float:
                miner = TemplateMiner()
                start = _clock()
                for message in messages:
                    miner.add(message)
                elapsed = _clock() - start
                templates.append(len(miner.templates()))
                return len(messages) / elapsed

            parse_rate, mine_rate = _median(args.runs, parse), _median(args.runs, mine)
            print(f"{name:<18}{parse_rate:>10,.0f}{mine_rate:>10,.0f}{templates[-1]:>10}", flush=True)
        if args.mixed:
            path = Path(tmp) / "mixed.log"
            lines = write(path, SHAPES["level_component"], args.mixed, traces=True)

            def parse_only() -> float:
                start = _clock()
                for _ in read_log_file(path):
                    pass
                return lines / (_clock() - start)

            def parse_and_mine() -> float:
                miner = TemplateMiner()
                start, wall = _clock(), time.perf_counter()
                for entry in read_log_file(path):
                    miner.add(entry.message)
                elapsed = _clock() - start
                print(
                    f"    {elapsed:.1f} s CPU ({time.perf_counter() - wall:.1f} s wall), "
                    f"{len(miner.templates())} templates",
                    flush=True,
                )
                return lines / elapsed

            print(f"mixed {lines:,} lines: parse {_median(args.runs, parse_only):,.0f} lines/s", flush=True)
            print(f"mixed {lines:,} lines: parse + mine {_median(args.runs, parse_and_mine):,.0f} lines/s")


if __name__ == "__main__":
    main()
