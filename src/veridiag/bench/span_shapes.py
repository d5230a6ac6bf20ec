"""Spans shaped like a microservice system's, for the trace benchmarks (issue 29): a gateway
calling a fixed tree of services (some calls in parallel), skewed volumes, 1 % failed spans,
and an incident — one service's own work ten times longer for twenty minutes — over one day;
and the ``query_traces`` calls timed over them. The embedded file and ClickHouse are timed on
the same spans (``embedded_traces.py``, ``clickhouse_traces.py``)."""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import partial

from veridiag.bench.stats import summary, time_runs
from veridiag.tools.args import QueryTracesArgs
from veridiag.tools.backends import TraceBackend
from veridiag.tools.backends.embedded import SpanRow
from veridiag.tools.spans import TraceQuery

START = datetime(2026, 7, 7, 0, 0, tzinfo=UTC)
#: Bump when ``shaped_spans`` writes other spans: cached tables are named after it.
GENERATOR_VERSION = 1
#: Who calls whom: each service's callees (the gateway is every trace's root).
CALLS = {
    "gateway": ["travel", "order", "user", "route"],
    "travel": ["route", "price", "seat", "train"],
    "order": ["price", "user", "payment", "db-order"],
    "route": ["db-route"],
    "price": ["db-price"],
    "seat": ["db-seat", "config"],
    "train": ["db-train"],
    "payment": ["db-payment", "notify"],
    "user": ["db-user", "auth"],
    "auth": [],
    "config": [],
    "notify": [],
}
#: Own work per service (ms, mean of an exponential).
OWN_MS = {"gateway": 2.0, "travel": 6.0, "order": 8.0, "route": 3.0, "price": 2.0, "seat": 4.0, "payment": 12.0}
INCIDENT = ("seat", START + timedelta(hours=10), START + timedelta(hours=10, minutes=20))
SERVICES = sorted({*CALLS, *(callee for callees in CALLS.values() for callee in callees)})
#: Variants timed (service, window), each ``repeats`` times.
VARIANTS = 8
_MS = 10**6


def shaped_spans(spans: int, seed: int = 29) -> Iterator[SpanRow]:
    """About ``spans`` spans over one day, trace by trace in time order."""
    rng = random.Random(seed)
    per_trace = 9  # about the trees' mean size with the calls below
    traces = max(1, spans // per_trace)
    step = 86_400 * 10**9 // traces
    begin = int(START.timestamp()) * 10**9
    written = 0
    for number in range(traces):
        at = begin + number * step + rng.randrange(step)
        trace_id = f"{rng.getrandbits(128):032x}"
        rows: list[SpanRow] = []
        _span(rng, rows, trace_id, "", service="gateway", at=at, depth=0)
        written += len(rows)
        yield from rows
        if written >= spans:
            return


def _span(
    rng: random.Random, rows: list[SpanRow], trace_id: str, parent: str, *, service: str, at: int, depth: int
) -> int:
    """One span of ``service`` starting at ``at`` and its calls; its end."""
    span_id = f"{rng.getrandbits(64):016x}"
    index = len(rows)
    rows.append(SpanRow(trace_id, span_id, parent, service, "", at, at, None))
    own = rng.expovariate(1 / OWN_MS.get(service, 1.0)) * _MS
    if service == INCIDENT[0] and int(INCIDENT[1].timestamp()) * 10**9 <= at < int(INCIDENT[2].timestamp()) * 10**9:
        own *= 10
    cursor = at + int(own / 2)
    callees = [c for c in CALLS.get(service, []) if rng.random() < 0.6] if depth < 4 else []
    parallel = len(callees) > 1 and rng.random() < 0.3
    ends = [cursor]
    for callee in callees:
        end = _span(rng, rows, trace_id, span_id, service=callee, at=cursor + 50_000, depth=depth + 1)
        ends.append(end)
        if not parallel:
            cursor = end
    end = max(ends) + int(own / 2)
    operation = f"GET /api/{service}" if depth == 0 or rng.random() < 0.7 else f"POST /api/{service}/update"
    rows[index] = SpanRow(trace_id, span_id, parent, service, operation, at, end, rng.random() < 0.01)
    return end


def variants(seed: int = 7) -> list[QueryTracesArgs]:
    """Busy services over a ten-minute window or an hour, the incident's among them."""
    rng = random.Random(seed)
    found = [QueryTracesArgs(service=INCIDENT[0], start=INCIDENT[1].isoformat(), end=INCIDENT[2].isoformat())]
    while len(found) < VARIANTS:
        at = START + timedelta(hours=rng.randint(2, 22), minutes=rng.choice([0, 10, 30]))
        length = rng.choice([timedelta(minutes=10), timedelta(hours=1)])
        service = rng.choice(["gateway", "travel", "order", "route", "seat", "price", "user"])
        found.append(QueryTracesArgs(service=service, start=at.isoformat(), end=(at + length).isoformat()))
    return found


def timed_queries(backend: TraceBackend, repeats: int) -> tuple[dict[str, float], bool]:
    """p50/p99 ms of ``query_traces`` over ``variants`` (each ``repeats`` times, in turn), and
    whether every variant answered ``ok``."""
    query = TraceQuery(backend, now=START + timedelta(days=1))
    ok = all(query.run(args).status == "ok" for args in variants())
    gc.collect()
    gc.freeze()  # as a server freezes what it built before it serves
    samples: list[float] = []
    try:
        for args in variants():
            samples += time_runs(partial(query.run, args), repeats, warmup=1)
    finally:
        gc.unfreeze()
    return summary(samples), ok
