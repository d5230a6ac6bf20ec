"""Spans from Grafana Tempo's HTTP API (the query frontend, port 3200).

Followed (Tempo's docs, "Tempo HTTP API"):

* ``GET /api/search?q=&start=&end=&limit=&spss=`` — ``q`` a TraceQL query,
  ``{ resource.service.name = "…" }`` (``&& name = "…"`` for an operation), ``start`` and
  ``end`` in unix epoch seconds (given, so the backend's blocks are searched, not only recent
  data), ``limit`` traces at most, ``spss`` spans per span set (1: the spans are read from the
  traces themselves) → ``{"traces": [{"traceID", "rootServiceName", "startTimeUnixNano",
  "durationMs", …}], "metrics": {…}}``;
* ``GET /api/traces/<traceID>?start=&end=`` with ``Accept: application/json`` — the trace as
  OTLP/JSON under ``batches`` (``tempopb.Trace``; ``/api/v2/traces`` wraps it as ``trace``, both
  read), ids in base64 (``tools/spanjson.py`` ``hex_id``); a span's service its resource's
  ``service.name``, a failed span ``status.code`` 2. ``start``/``end`` are the window widened by
  ``TRACE_MARGIN`` each side, so only blocks near it are read and a trace is still whole;
* ``GET /api/v2/search/tag/resource.service.name/values?start=&end=`` → ``{"tagValues":
  [{"type", "value"}]}`` for the services, else (an older Tempo) ``/api/search/tag/service.name/values``
  → ``{"tagValues": ["…"]}``; a service's operations (span names) from
  ``/api/v2/search/tag/name/values?q={ resource.service.name = "…" }`` ("filtered tag values").

A search returns trace ids, so each trace is then read by id (``FETCHERS`` at a time; a trace
read once is kept, ``KEPT_TRACES``). Every figure is over the traces the search returned
(``_sampled.py``), at most ``max_traces`` for a window.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, ConfigDict, ValidationError

from veridiag.contracts.json import JsonObject, json_object
from veridiag.tools.backends._http import QueryError, UnavailableError
from veridiag.tools.backends._sampled import ReadSpan, SampledTraces, Searched
from veridiag.tools.promql import PromQLError, label_literal
from veridiag.tools.spanjson import NO_PARENT, OtlpSpan, TracesData, hex_id

#: Traces read by id at once.
FETCHERS = 8
#: Traces kept once read (a window's, its baseline's and its callees' share many).
KEPT_TRACES = 5000
#: How far either side of the window a trace read by id is looked for.
TRACE_MARGIN = timedelta(hours=1)


class _Found(BaseModel):
    """One search result; only its id is read."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    traceID: str  # noqa: N815  (the API's key)


class TempoBackend(SampledTraces):
    name = "tempo"
    default_max_traces = 100

    def _service_names(self) -> list[str]:
        end = datetime.now(UTC)
        period: dict[str, str | int | float] = {
            "start": _seconds(end - self.lookback),
            "end": math.ceil(end.timestamp()),
        }
        try:
            values = self._get("/api/v2/search/tag/resource.service.name/values", period).get("tagValues")
        except QueryError:  # an older Tempo: tag values by their unscoped name
            values = self._get("/api/search/tag/service.name/values", period).get("tagValues")
        listed = values if isinstance(values, list) else []
        found = [v.get("value") if isinstance(v, dict) else v for v in listed]
        return [name for name in found if isinstance(name, str) and name]

    def _operation_names(self, service: str) -> list[str]:
        end = datetime.now(UTC)
        params: dict[str, str | int | float] = {
            "q": self.traceql(service, None),
            "start": _seconds(end - self.lookback),
            "end": math.ceil(end.timestamp()),
        }
        values = self._get("/api/v2/search/tag/name/values", params).get("tagValues")
        listed = values if isinstance(values, list) else []
        found = [v.get("value") if isinstance(v, dict) else v for v in listed]
        return [name for name in found if isinstance(name, str) and name]

    def traceql(self, service: str, operation: str | None) -> str:
        """The search's TraceQL: the service's spans (of the operation)."""
        try:
            query = f"resource.service.name = {label_literal(service)}"
            if operation is not None:
                query += f" && name = {label_literal(operation)}"
        except PromQLError as exc:
            raise QueryError(str(exc)) from None
        return "{ " + query + " }"

    def _search(self, service: str, operation: str | None, start: datetime, end: datetime, limit: int) -> Searched:
        body = self._get(
            "/api/search",
            {
                "q": self.traceql(service, operation),
                "start": _seconds(start),
                "end": math.ceil(end.timestamp()),
                "limit": limit,
                "spss": 1,
            },
        )
        listed = body.get("traces") or []
        if not isinstance(listed, list):
            raise UnavailableError("/api/search: traces is not a list")
        ids: list[str] = []
        for item in listed:
            try:
                ids.append(hex_id(_Found.model_validate(item).traceID))
            except ValidationError:
                continue
        ids = list(dict.fromkeys(ids))[:limit]
        margin: dict[str, str | int | float] = {
            "start": _seconds(start - TRACE_MARGIN),
            "end": math.ceil((end + TRACE_MARGIN).timestamp()),
        }
        with ThreadPoolExecutor(max_workers=max(1, min(FETCHERS, len(ids)))) as pool:
            traces = list(pool.map(lambda trace_id: self._trace(trace_id, margin), ids))
        found = [trace for trace in traces if trace]
        if ids and not found:
            raise UnavailableError(f"the search found {len(ids)} traces but none could be read by id (/api/traces)")
        return Searched(found, returned=len(listed))

    def _by_id(self, trace_id: str) -> list[ReadSpan]:
        return self._trace(trace_id, {})

    def _trace(self, trace_id: str, period: dict[str, str | int | float]) -> list[ReadSpan]:
        """One trace by id, read once; a trace the search found but the read does not (404) is none."""
        with self._traces_lock:
            kept = self._traces.get(trace_id)
            if kept is not None:
                self._traces.move_to_end(trace_id)
                return kept
        try:
            body = self._get(f"/api/traces/{trace_id}", period)
        except QueryError as exc:
            if str(exc).startswith("HTTP 404"):
                return []
            raise
        found = trace_spans(json_object(body.get("trace")) if "trace" in body else body, trace_id)
        with self._traces_lock:
            self._traces[trace_id] = found
            while len(self._traces) > KEPT_TRACES:
                self._traces.popitem(last=False)
        return found


def trace_spans(body: JsonObject, trace_id: str = "") -> list[ReadSpan]:
    """A trace's spans from OTLP/JSON (``batches`` or ``resourceSpans``); a malformed span is left
    out, a body of neither shape is ``UnavailableError``."""
    try:
        data = TracesData.model_validate(body)
    except ValidationError:
        raise UnavailableError(f"/api/traces/{trace_id}: the answer is not an OTLP trace (batches)") from None
    found = []
    for resource in data.resource_spans:
        service = resource.resource.said().get("service.name", "")
        for scope in resource.scopes:
            for raw in scope.spans:
                try:
                    span = OtlpSpan.model_validate(raw)
                except ValidationError:
                    continue
                if span.end_time_unix_nano < span.start_time_unix_nano:
                    continue
                parent = hex_id(span.parent_span_id)
                found.append(
                    ReadSpan(
                        trace_id=hex_id(span.trace_id),
                        span_id=hex_id(span.span_id),
                        parent_id="" if parent.lower() in NO_PARENT else parent,
                        service=service,
                        operation=span.name,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        error=span.failed,
                    )
                )
    return found


def _seconds(moment: datetime) -> int:
    return math.floor(moment.timestamp())
