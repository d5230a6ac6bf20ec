"""Typed arguments of the evidence tools; their JSON Schemas drive LLM tool calling.

Times are ISO-8601 (``2026-07-07T10:00:00Z``) or relative to the backend's clock
(``now``, ``now-30m``, ``now-2h``). Unknown fields are refused, so a model's typo is an
error it can see, not a silently ignored filter.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_RELATIVE = re.compile(r"^now(?:\s*-\s*(\d+)\s*([smhd]))?$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}

LogLevel = Literal["ERROR", "WARN", "INFO", "DEBUG"]


def _check_time(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if _RELATIVE.match(value):
        return value
    try:
        parse_time(value, datetime.now(UTC))
    except ValueError:
        raise ValueError(f"{value!r} is neither ISO-8601 nor relative like 'now-30m'") from None
    return value


def parse_time(value: str, now: datetime) -> datetime:
    """ISO-8601 (naive means UTC) or ``now[-N(s|m|h|d)]`` relative to ``now``."""
    relative = _RELATIVE.match(value.strip())
    if relative:
        amount, unit = relative.groups()
        return now - timedelta(**{_UNITS[unit]: int(amount)}) if amount else now
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    start: str | None = Field(default=None, description="Window start: ISO-8601 or 'now-30m'. Default: end - 1h.")
    end: str | None = Field(default=None, description="Window end: ISO-8601 or 'now'. Default: now.")

    @field_validator("start", "end")
    @classmethod
    def _times(cls, value: str | None) -> str | None:
        return _check_time(value)


class QueryLogsArgs(_Args):
    """Search log lines: counts, recurring patterns with a verbatim example, recent lines."""

    service: str | None = Field(default=None, max_length=100, description="Service name, e.g. payment-service.")
    query: str | None = Field(
        default=None,
        max_length=500,
        description="Words that must all occur (中文 or English), e.g. 'timeout'.",
    )
    level: LogLevel | None = Field(default=None, description="Only this level.")
    limit: int = Field(default=50, ge=1, le=500, description="Lines to return.")
    logql: str | None = Field(default=None, max_length=2000, description="Raw LogQL (loki backend only).")


class QueryMetricsArgs(_Args):
    """A metric series over a window, compared with the baseline window just before it."""

    service: str | None = Field(default=None, max_length=100)
    metric: str | None = Field(
        default=None, max_length=200, description="Metric name, e.g. hikaricp_connections_active."
    )
    step_seconds: int = Field(default=60, ge=1, le=86_400)
    function: Literal["rate", "increase"] | None = Field(
        default=None,
        description=(
            "For a counter: per-second rate over 5m, or increase per step. Default: the increase when "
            "every step adds a few whole events (restarts, OOM kills), else the rate. Never shown raw."
        ),
    )
    quantile: float | None = Field(
        default=None, gt=0, lt=1, description="For a latency histogram or summary: the quantile (default 0.99)."
    )
    promql: str | None = Field(default=None, max_length=2000, description="Raw PromQL (prometheus backend only).")
    at: str | None = Field(
        default=None,
        description=(
            "A moment asked about inside the window (ISO-8601 or 'now-30m'): the output also states the "
            "series' value at the point nearest it, with that point's time."
        ),
    )

    @field_validator("at")
    @classmethod
    def _moment(cls, value: str | None) -> str | None:
        return _check_time(value)


class QueryChangesArgs(_Args):
    """Deploys, configuration changes, restarts and scaling recorded for a service in a window."""

    service: str | None = Field(default=None, max_length=100)
    kind: str | None = Field(default=None, max_length=40, description="Only this kind, e.g. deploy or config.")


class LookupKnowledgeArgs(BaseModel):
    """Search runbooks and known issues; matches are hypotheses to check, not facts."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    query: str = Field(min_length=1, max_length=500, description="Symptoms or question, 中文 or English.")
    service: str | None = Field(default=None, max_length=100)
    limit: int = Field(default=3, ge=1, le=20)


class RankSuspectsArgs(_Args):
    """Which services changed in a window and which most likely started it."""

    at: str | None = Field(
        default=None, description="The moment asked about (ISO-8601), inside the window: changes near it rank first."
    )
    services: list[str] | None = Field(
        default=None,
        max_length=500,
        description="Services to examine. Default: every service with data in the window.",
    )
    asked: list[str] | None = Field(
        default=None,
        max_length=50,
        description="Services the question names: examined too, and said to have no data when they have none.",
    )
    by: str | None = Field(
        default=None,
        max_length=40,
        description="Also rank the services by their level of one measure in the window: latency, errors, cpu, "
        "memory, traffic, saturation, restarts ('which service is slowest').",
    )

    @field_validator("at")
    @classmethod
    def _moment(cls, value: str | None) -> str | None:
        return _check_time(value)


class QueryTracesArgs(_Args):
    """A service's spans in a window against its own spans before it: count, error rate, latency
    and self-time percentiles, its callers and callees, the slowest traces' critical paths."""

    service: str = Field(min_length=1, max_length=100, description="Service name, e.g. ts-travel-service.")
    operation: str | None = Field(default=None, max_length=300, description="Only spans of this operation.")
    limit: int = Field(default=3, ge=1, le=10, description="Slowest traces to show.")
    trace_id: str | None = Field(
        default=None,
        pattern=r"^[0-9A-Fa-f]{8,64}$",
        description="One trace instead (its id as a log line or a span states it): the service's spans in it, "
        "its critical path, the spans that failed.",
    )


TOOL_ARGS: dict[str, type[BaseModel]] = {
    "query_logs": QueryLogsArgs,
    "query_metrics": QueryMetricsArgs,
    "query_changes": QueryChangesArgs,
    "lookup_knowledge": LookupKnowledgeArgs,
    "rank_suspects": RankSuspectsArgs,
    "query_traces": QueryTracesArgs,
}
