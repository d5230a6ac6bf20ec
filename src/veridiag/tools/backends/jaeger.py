"""Spans from Jaeger's HTTP query API (jaeger-query, port 16686: the API its UI reads).

Followed (Jaeger's docs, "APIs": the ``/api/*`` JSON endpoints the UI uses, labelled internal;
their parameters as ``cmd/query/app/query_parser.go`` reads them, its answers the
``structuredResponse`` ``{"data", "total", "limit", "offset", "errors": [{"code", "msg"}]}``):

* ``GET /api/services`` → ``{"data": ["service", …]}``; ``GET /api/services/{service}/operations``
  → ``{"data": ["operation", …]}`` (listed when a window holds none of an operation's spans);
* ``GET /api/traces?service=&operation=&start=&end=&limit=`` — ``start`` and ``end`` in µs since
  the epoch (both ends included: ``end`` is asked 1 µs before the window's), ``limit`` traces
  at most (the server's default 100) → ``{"data": [trace…]}``, each trace whole, in the shape
  Jaeger's UI downloads (``tools/spanjson.py`` ``JaegerFile``: times in µs, a span's service
  its process's ``serviceName``, a failed span tagged ``error``).

``/api/traces/{traceID}`` is not needed: a search returns whole traces. Every figure is over the
traces a search returned (``_sampled.py``), at most ``max_traces`` for a window.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import quote

from pydantic import TypeAdapter, ValidationError

from veridiag.contracts.json import JsonObject
from veridiag.tools.backends._http import QueryError, UnavailableError
from veridiag.tools.backends._sampled import ReadSpan, SampledTraces, Searched, ns
from veridiag.tools.spanjson import NO_PARENT, JaegerFile, JaegerSpan, JaegerTrace


class JaegerBackend(SampledTraces):
    name = "jaeger"
    default_max_traces = 200

    def _service_names(self) -> list[str]:
        data = self._get("/api/services", {}).get("data")
        if data is None:
            return []
        if not isinstance(data, list):
            raise UnavailableError("/api/services: data is not a list of services")
        return [name for name in data if isinstance(name, str) and name]

    def _operation_names(self, service: str) -> list[str]:
        data = self._get(f"/api/services/{quote(service, safe='')}/operations", {}).get("data")
        listed = data if isinstance(data, list) else []
        return [name for name in listed if isinstance(name, str) and name]

    def _by_id(self, trace_id: str) -> list[ReadSpan]:
        try:
            body = self._get(f"/api/traces/{quote(trace_id, safe='')}", {})
        except QueryError as exc:
            if str(exc).startswith("HTTP 404"):  # jaeger-query answers an unknown trace id with 404
                return []
            raise
        try:
            traces = JaegerFile.model_validate({"data": body.get("data") or []}).data
        except ValidationError as exc:
            raise UnavailableError(
                f"/api/traces/{trace_id}: the answer is not Jaeger's trace JSON ({_first(exc)})"
            ) from None
        return [span for trace in traces for span in trace_spans(trace)]

    def _search(self, service: str, operation: str | None, start: datetime, end: datetime, limit: int) -> Searched:
        params: dict[str, str | int | float] = {
            "service": service,
            "start": ns(start) // 1000,
            "end": ns(end) // 1000 - 1,
            "limit": limit,
        }
        if operation is not None:
            params["operation"] = operation
        body = self._get("/api/traces", params)
        if not body.get("data") and body.get("errors"):
            raise QueryError("; ".join(_errors(body)))
        try:
            traces = JaegerFile.model_validate({"data": body.get("data") or []}).data
        except ValidationError as exc:
            raise UnavailableError(f"/api/traces: the answer is not Jaeger's trace JSON ({_first(exc)})") from None
        return Searched([spans for trace in traces if (spans := trace_spans(trace))], returned=len(traces))


_SPANS = TypeAdapter(list[JaegerSpan])


def trace_spans(trace: JaegerTrace) -> list[ReadSpan]:
    """A Jaeger trace's spans that read as spans (a malformed one is left out)."""
    try:
        spans = _SPANS.validate_python(trace.spans)
    except ValidationError:  # one by one, to leave out only what is malformed
        spans = [span for raw in trace.spans if (span := _span(raw)) is not None]
    found = []
    for span in spans:
        process = trace.processes.get(span.process_id)
        parent = span.parent_id
        found.append(
            ReadSpan(
                trace_id=(span.trace_id or trace.trace_id).lower(),
                span_id=span.span_id,
                parent_id="" if parent.lower() in NO_PARENT else parent,
                service=process.service_name if process else "",
                operation=span.operation_name,
                start_ns=span.start_ns,
                end_ns=span.end_ns,
                error=span.failed,
            )
        )
    return found


def _span(raw: object) -> JaegerSpan | None:
    try:
        return JaegerSpan.model_validate(raw)
    except ValidationError:
        return None


def _errors(body: JsonObject) -> list[str]:
    errors = body.get("errors")
    listed = errors if isinstance(errors, list) else []
    return [str(e.get("msg") or e) if isinstance(e, dict) else str(e) for e in listed] or ["query failed"]


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
