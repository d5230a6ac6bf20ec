"""A latency histogram for CI's real Prometheus, which holds the demo's metrics (gauges and one
counter, no buckets): ``.ci/prometheus.sh`` appends it to the demo's OpenMetrics export before
backfilling, so ``histogram_quantile`` is tested on a real server.

Usage: ``python -m tests.prometheus_histogram FILE.om`` (rewrites FILE's ``# EOF`` after it).

Each minute the buckets grow by ``NORMAL``; during ``INCIDENT`` by ``SLOW``. The p99 of a
5-minute rate is then exact: 0.875 s normally (rank 990 of 1000 lies ¾ of the way through the
0.5–1 s bucket), 0.5 + 0.5 · 90/95 s when every increment in the range is from the incident.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

FAMILY = "checkout_request_duration_seconds"
SERVICE = "payment-service"
BOUNDS = ("0.1", "0.25", "0.5", "1.0", "+Inf")
#: Requests per minute at or under each bound (cumulative, as buckets are).
NORMAL = (600, 900, 960, 1000, 1000)
SLOW = (300, 600, 900, 995, 1000)
START = datetime(2026, 7, 7, 8, 0, tzinfo=UTC)
END = datetime(2026, 7, 7, 11, 0, tzinfo=UTC)
#: Minutes whose increments are slow: ``(start, end]``.
INCIDENT = (datetime(2026, 7, 7, 10, 0, tzinfo=UTC), datetime(2026, 7, 7, 10, 30, tzinfo=UTC))
P99_NORMAL = 0.875
P99_SLOW = 0.5 + 0.5 * 90 / 95


def lines() -> list[str]:
    out = [f"# TYPE {FAMILY} histogram", f"# UNIT {FAMILY} seconds"]
    totals = [0] * len(BOUNDS)
    moment = START
    while moment <= END:
        if moment > START:
            slow = INCIDENT[0] < moment <= INCIDENT[1]
            totals = [t + d for t, d in zip(totals, SLOW if slow else NORMAL, strict=True)]
        stamp = f"{moment.timestamp():.3f}"
        for bound, total in zip(BOUNDS, totals, strict=True):
            out.append(f'{FAMILY}_bucket{{service="{SERVICE}",le="{bound}"}} {total} {stamp}')
        out.append(f'{FAMILY}_count{{service="{SERVICE}"}} {totals[-1]} {stamp}')
        out.append(f'{FAMILY}_sum{{service="{SERVICE}"}} {totals[-1] * 0.2:.1f} {stamp}')
        moment += timedelta(minutes=1)
    return out


def append_to(path: Path) -> None:
    body = path.read_text().rstrip("\n").removesuffix("# EOF").rstrip("\n")
    path.write_text("\n".join([body, *lines(), "# EOF"]) + "\n")


if __name__ == "__main__":
    append_to(Path(sys.argv[1]))
