"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def percentile(samples: list[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in [0, 1]) of non-empty ``samples``."""
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[rank]


def time_runs(run: Callable[[], object], repeats: int, warmup: int = 2) -> list[float]:
    """Wall-clock milliseconds of ``repeats`` calls, after ``warmup`` untimed ones."""
    for _ in range(warmup):
        run()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


def summary(samples: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(samples), 4),
        "p99_ms": round(percentile(samples, 0.99), 4),
    }
