"""Logs from Grafana Loki over its HTTP API (``/loki/api/v1/query_range``).

LogQL is passed through when given; otherwise ``{<service_label>="service"} |= "word"``
is built from the arguments. Templates are mined from the returned lines at query time and
rendered by the same code as the embedded backend's, so outputs read the same.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2

from veridiag._retry import Backoff
from veridiag.contracts.json import json_object
from veridiag.text.render import iso
from veridiag.tools.args import QueryLogsArgs, parse_time
from veridiag.tools.backends._http import QueryError, UnavailableError, get_json
from veridiag.tools.promql import PromQLError, label_literal
from veridiag.tools.records import LogSample
from veridiag.tools.render import TemplateRow, group_bursts, logs_output
from veridiag.tools.results import ToolOutput
from veridiag.tools.templates import TemplateMiner

_LEVELS = ("ERROR", "WARN", "INFO", "DEBUG")


class LokiBackend:
    name = "loki"

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 10.0,
        service_label: str = "service",
        headers: dict[str, str] | None = None,
        max_lines: int = 5000,
        transport: httpx2.BaseTransport | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.service_label = service_label
        self.backoff = backoff or Backoff()
        self.max_lines = max_lines
        self._client = httpx2.Client(
            base_url=base_url.rstrip("/"), timeout=timeout, headers=headers or {}, transport=transport
        )

    def logql(self, args: QueryLogsArgs) -> str:
        if args.logql:
            return args.logql
        matcher = f"={label_literal(args.service)}" if args.service else '=~".+"'
        query = "{" + self.service_label + matcher + "}"
        for word in (args.query or "").split():
            query += f" |= {label_literal(word)}"
        if args.level:
            query += f" |~ {label_literal('(?i)' + args.level)}"
        return query

    def query_logs(self, args: QueryLogsArgs) -> ToolOutput:
        now = datetime.now(UTC)
        try:
            query = self.logql(args)
            end = parse_time(args.end, now) if args.end else now
            start = parse_time(args.start, now) if args.start else end - timedelta(hours=1)
            if start >= end:
                raise QueryError(f"start {iso(start)} must be before end {iso(end)}")
            body = get_json(
                self._client,
                "/loki/api/v1/query_range",
                {
                    "query": query,
                    "start": int(start.timestamp() * 1e9),
                    "end": int(end.timestamp() * 1e9),
                    "limit": self.max_lines,
                    "direction": "forward",
                },
                self.backoff,
            )
        except (QueryError, PromQLError) as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_logs error from loki: {exc}")
        except UnavailableError as exc:
            return ToolOutput(
                status="error",
                error=f"loki unavailable: {exc}",
                text=f"query_logs error: loki unavailable: {exc}",
            )
        data = json_object(body.get("data"))
        if data.get("resultType") != "streams":
            message = f"expected log streams, got {data.get('resultType')!r} (metric queries belong to query_metrics)"
            return ToolOutput(status="error", error=message, text=f"query_logs error from loki: {message}")
        rows = sorted(_lines(data.get("result")))
        request = {
            "service": args.service,
            "query": args.query,
            "level": args.level,
            "start": iso(start),
            "end": iso(end),
        }
        notes = [f"logql: {query}"]
        if not rows:
            rendered, evidence = logs_output(request, matched=0, by_level={}, notes=notes)
            return ToolOutput(
                status="no_data",
                text=rendered.text,
                retrieval_details={"logql": query, "matched": 0},
                evidence=[evidence],
            )
        samples = [
            LogSample(
                ts=datetime.fromtimestamp(ns / 1e9, tz=UTC), service=args.service or "", level=_level(line), line=line
            )
            for ns, line in rows
        ]
        by_level: Counter[str] = Counter(sample.level for sample in samples)
        sampled = len(rows) >= self.max_lines
        rendered, evidence = logs_output(
            request,
            matched=len(samples),
            by_level=dict(by_level),
            templates=_templates(samples),
            bursts=group_bursts(ns // 1_000_000 for ns, _line in rows),
            samples=samples[:500],
            limit=args.limit,
            notes=notes,
            sampled=sampled,
        )
        details = {
            "backend": self.name,
            "logql": query,
            "matched": len(rows),
            "by_level": dict(by_level),
            "patterns": [{"template": t.template, "count": t.count, "example": t.example} for t in evidence.templates],
            "limit_reached": sampled,
        }
        return ToolOutput(
            status="ok",
            text=rendered.text,
            model_text=rendered.model_text,
            retrieval_details=details,
            evidence=[evidence],
        )


def _templates(samples: list[LogSample]) -> list[TemplateRow]:
    """Templates mined from the returned lines (Loki keeps none), counted per level."""
    miner = TemplateMiner()
    groups: dict[tuple[int, str], list[LogSample]] = {}
    for sample in samples:
        groups.setdefault((miner.add(sample.line), sample.level), []).append(sample)
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[1][0].ts))[:8]
    return [
        TemplateRow(miner.template(tid), level, len(group), group[0].ts, group[-1].ts, group[0].line)
        for (tid, level), group in ranked
    ]


def _lines(result: Any) -> list[tuple[int, str]]:
    rows = []
    for stream in result if isinstance(result, list) else []:
        for pair in stream.get("values") or [] if isinstance(stream, dict) else []:
            try:
                rows.append((int(pair[0]), str(pair[1])))
            except (TypeError, ValueError, IndexError):
                continue
    return rows


def _level(line: str) -> str:
    head = line[:80].upper()
    return next((level for level in _LEVELS if level in head), "OTHER")
