"""Logs from Grafana Loki over its HTTP API (``/loki/api/v1/query_range``).

LogQL is passed through when given; otherwise ``{<service_label>="service"} |= "word"``
is built from the arguments. Lines are summarised exactly like the embedded backend's.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2

from veridiag.tools.args import QueryLogsArgs, parse_time
from veridiag.tools.backends._http import QueryError, UnavailableError, get_json
from veridiag.tools.render import iso, render_logs
from veridiag.tools.results import ToolOutput
from veridiag.tools.text import log_template

_LEVELS = ("ERROR", "WARN", "INFO", "DEBUG")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


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
    ) -> None:
        self.service_label = service_label
        self.max_lines = max_lines
        self._client = httpx2.Client(
            base_url=base_url.rstrip("/"), timeout=timeout, headers=headers or {}, transport=transport
        )

    def logql(self, args: QueryLogsArgs) -> str:
        if args.logql:
            return args.logql
        selector = f"{self.service_label}={_quote(args.service)}" if args.service else f'{self.service_label}=~".+"'
        query = "{" + selector + "}"
        for word in (args.query or "").split():
            query += f" |= {_quote(word)}"
        if args.level:
            query += f" |~ {_quote('(?i)' + args.level)}"
        return query

    def query_logs(self, args: QueryLogsArgs) -> ToolOutput:
        now = datetime.now(UTC)
        query = self.logql(args)
        try:
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
            )
        except QueryError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_logs error from loki: {exc}")
        except UnavailableError as exc:
            return ToolOutput(
                status="error",
                error=f"loki unavailable: {exc}",
                text=f"query_logs error: loki unavailable: {exc}",
            )
        data = body.get("data") or {}
        if data.get("resultType") != "streams":
            message = f"expected log streams, got {data.get('resultType')!r} (metric queries belong to query_metrics)"
            return ToolOutput(status="error", error=message, text=f"query_logs error from loki: {message}")
        rows = sorted(_lines(data.get("result")))
        request = {"logql": query, "start": iso(start), "end": iso(end)}
        if not rows:
            return ToolOutput(
                status="no_data",
                text=render_logs(request, 0, {}, [], [], limit=0),
                retrieval_details={"logql": query, "matched": 0},
            )
        by_level: Counter[str] = Counter(_level(line) for _ts, line in rows)
        patterns: Counter[str] = Counter()
        examples: dict[str, str] = {}
        for _ts, line in rows:
            template = log_template(line)
            patterns[template] += 1
            examples.setdefault(template, line)
        top = [(t, c, examples[t]) for t, c in patterns.most_common(8)]
        lines = [line for _ts, line in rows[:500]]
        sampled = len(rows) >= self.max_lines
        text = render_logs(request, len(rows), dict(by_level), top, lines, limit=len(lines), sampled=sampled)
        model_text = render_logs(
            request, len(rows), dict(by_level), top, lines[: args.limit], limit=args.limit, sampled=sampled
        )
        details = {
            "backend": self.name,
            "logql": query,
            "matched": len(rows),
            "by_level": dict(by_level),
            "patterns": [{"template": t, "count": c, "example": e} for t, c, e in top],
            "limit_reached": sampled,
        }
        return ToolOutput(status="ok", text=text, model_text=model_text, retrieval_details=details)


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
