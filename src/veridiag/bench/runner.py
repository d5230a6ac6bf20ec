"""Runs the registered benchmarks and collects one JSON document."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from typing import Any

from veridiag.bench import api, gatekeeper, pipeline, tools

#: name → (full run, quick run).
BENCHMARKS: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[], dict[str, Any]]]] = {
    "gatekeeper": (gatekeeper.run, lambda: gatekeeper.run(repeats=10, baseline_repeats=1)),
    "pipeline": (pipeline.run, lambda: pipeline.run(sessions=5)),
    "tools": (tools.run, lambda: tools.run(lines=20_000, runbooks=100, repeats=3)),
    "api": (api.run, lambda: api.run(requests=40, runs=1, baseline_requests=3)),
}


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}


def run_benchmarks(
    only: list[str] | None = None, quick: bool = False, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    names = only or list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        raise KeyError(f"unknown benchmark {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    results: dict[str, Any] = {}
    for name in names:
        if progress:
            progress(name)
        full, fast = BENCHMARKS[name]
        results[name] = fast() if quick else full()
    results["machine"] = machine()
    return results
