"""Local fakes of Jaeger's query API and Tempo's HTTP API, written from their API documents
(``httpx2.MockTransport`` handlers), serving a set of spans as those servers would.

* ``FakeJaeger`` — jaeger-query's ``/api/*`` (Jaeger docs "APIs"; ``cmd/query/app/query_parser.go``
  and ``http_handler.go``): ``/api/services``, ``/api/services/{service}/operations``,
  ``/api/traces?service=&operation=&start=&end=&limit=`` (µs, both ends included, ``service``
  required, limit 100 by default, most recent traces first) and ``/api/traces/{traceID}``; every
  answer a ``structuredResponse`` ``{"data", "total", "limit", "offset", "errors"}``, a trace as
  the UI downloads it (µs times, ``processes``, ``CHILD_OF`` references, an ``error`` tag).
* ``FakeTempo`` — Tempo's query frontend (Tempo docs "Tempo HTTP API"): ``/api/search`` with a
  TraceQL ``q`` (the ``resource.service.name`` / ``name`` equalities veridiag sends), ``start`` /
  ``end`` in seconds, ``limit`` (20 by default), ``spss``, answering ``{"traces": [{"traceID",
  "rootServiceName", "rootTraceName", "startTimeUnixNano", "durationMs", "spanSets"}], "metrics"}``;
  ``/api/traces/<id>`` as ``{"batches": [ResourceSpans]}`` with base64 ids and uint64s as strings
  (protobuf's JSON mapping, as Tempo marshals it), 404 for a trace it does not hold;
  ``/api/v2/search/tag/resource.service.name/values`` → ``{"tagValues": [{"type", "value"}]}``, and
  ``/api/v2/search/tag/name/values`` filtered by a ``q`` naming a service (its span names);
  ``v2_traces``: trace by id wrapped as ``/api/v2/traces`` answers, ``{"trace": {"batches": …}}``.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

from veridiag.analysis.traces import TraceSpan


def _traces(spans: Iterable[TraceSpan]) -> dict[str, list[TraceSpan]]:
    found: dict[str, list[TraceSpan]] = defaultdict(list)
    for span in spans:
        found[span.trace_id].append(span)
    return dict(found)


class _Fake:
    """A handler that records the requests it answers."""

    def __init__(self, spans: Iterable[TraceSpan]) -> None:
        self.traces = _traces(spans)
        self.requests: list[httpx2.Request] = []
        self.services = sorted({s.service for trace in self.traces.values() for s in trace})
        #: Answers already given, by path and parameters (the spans never change).
        self._answered: dict[tuple[str, str], tuple[int, bytes, dict[str, str]]] = {}

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        key = (request.url.path, str(sorted(request.url.params.multi_items())))
        kept = self._answered.get(key)
        if kept is None:
            answer = self.answer(request)
            kept = self._answered[key] = (answer.status_code, answer.read(), dict(answer.headers))
        status, content, headers = kept
        return httpx2.Response(status, content=content, headers=headers)

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        raise NotImplementedError

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)

    def paths(self) -> list[str]:
        return [r.url.path for r in self.requests]

    def _matching(
        self, service: str, operation: str | None, start_ns: int, end_ns: int
    ) -> list[tuple[str, list[TraceSpan]]]:
        """Traces with a span of the service (operation) starting in [start_ns, end_ns], most recent first."""
        found = [
            (trace_id, spans)
            for trace_id, spans in self.traces.items()
            if any(
                s.service == service
                and (operation is None or s.operation == operation)
                and start_ns <= s.start_ns <= end_ns
                for s in spans
            )
        ]
        found.sort(key=lambda item: (-min(s.start_ns for s in item[1]), item[0]))
        return found


def _structured(data: Any, status: int = 200, errors: list[dict[str, Any]] | None = None) -> httpx2.Response:
    total = len(data) if isinstance(data, list) else 0
    body = {"data": data, "total": total, "limit": 0, "offset": 0, "errors": errors}
    return httpx2.Response(status, json=body)


def _refused(status: int, message: str) -> httpx2.Response:
    return _structured(None, status, [{"code": status, "msg": message}])


def jaeger_trace(trace_id: str, spans: list[TraceSpan]) -> dict[str, Any]:
    """One trace as jaeger-query writes it (``model/json``)."""
    services = sorted({s.service for s in spans})
    processes = {
        f"p{i + 1}": {"serviceName": name, "tags": [{"key": "hostname", "type": "string", "value": f"{name}-0"}]}
        for i, name in enumerate(services)
    }
    process_of = {p["serviceName"]: key for key, p in processes.items()}
    return {
        "traceID": trace_id,
        "spans": [
            {
                "traceID": trace_id,
                "spanID": s.span_id,
                "flags": 1,
                "operationName": s.operation,
                "references": []
                if not s.parent_id
                else [{"refType": "CHILD_OF", "traceID": trace_id, "spanID": s.parent_id}],
                "startTime": s.start_ns // 1000,
                "duration": s.end_ns // 1000 - s.start_ns // 1000,
                "tags": [
                    {"key": "span.kind", "type": "string", "value": "server"},
                    *([{"key": "error", "type": "bool", "value": True}] if s.error else []),
                ],
                "logs": [],
                "processID": process_of[s.service],
                "warnings": None,
            }
            for s in spans
        ],
        "processes": processes,
        "warnings": None,
    }


class FakeJaeger(_Fake):
    def answer(self, request: httpx2.Request) -> httpx2.Response:
        path, params = request.url.path, request.url.params
        if path == "/api/services":
            return _structured(self.services)
        if found := re.fullmatch(r"/api/services/([^/]+)/operations", path):
            service = found.group(1)
            names = sorted({s.operation for t in self.traces.values() for s in t if s.service == service})
            return _structured(names)
        if found := re.fullmatch(r"/api/traces/([^/]+)", path):
            trace = self.traces.get(found.group(1))
            if trace is None:
                return _refused(404, "trace not found")
            return _structured([jaeger_trace(found.group(1), trace)])
        if path != "/api/traces":
            return httpx2.Response(404, text="404 page not found\n")
        service = params.get("service", "")
        if not service:
            return _refused(400, "parameter 'service' is required")
        try:
            start_us, end_us = int(params["start"]), int(params["end"])
            limit = int(params.get("limit", "100"))
        except (KeyError, ValueError) as exc:
            return _refused(400, f"unable to parse param: {exc}")
        matched = self._matching(service, params.get("operation"), start_us * 1000, end_us * 1000 + 999)
        return _structured([jaeger_trace(trace_id, spans) for trace_id, spans in matched[:limit]])


def b64(hex_id: str) -> str:
    """An id as Tempo's JSON writes it: its bytes in base64."""
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def otlp_batches(spans: list[TraceSpan]) -> list[dict[str, Any]]:
    """A trace as Tempo's ``tempopb.Trace`` marshals it to JSON: one batch per service."""
    by_service: dict[str, list[TraceSpan]] = defaultdict(list)
    for span in spans:
        by_service[span.service].append(span)
    return [
        {
            "resource": {
                "attributes": [
                    {"key": "service.name", "value": {"stringValue": service}},
                    {"key": "telemetry.sdk.language", "value": {"stringValue": "java"}},
                ]
            },
            "scopeSpans": [
                {
                    "scope": {"name": "io.opentelemetry.spring-webmvc-6.0", "version": "2.1.0"},
                    "spans": [
                        {
                            "traceId": b64(s.trace_id),
                            "spanId": b64(s.span_id),
                            **({"parentSpanId": b64(s.parent_id)} if s.parent_id else {}),
                            "name": s.operation,
                            "kind": "SPAN_KIND_SERVER",
                            "startTimeUnixNano": str(s.start_ns),
                            "endTimeUnixNano": str(s.end_ns),
                            "attributes": [{"key": "http.method", "value": {"stringValue": "GET"}}],
                            "status": {"code": "STATUS_CODE_ERROR", "message": "boom"} if s.error else {},
                        }
                        for s in owned
                    ],
                }
            ],
        }
        for service, owned in sorted(by_service.items())
    ]


_TRACEQL = re.compile(
    r'^\{\s*resource\.service\.name\s*=\s*("(?:[^"\\]|\\.)*")(?:\s*&&\s*name\s*=\s*("(?:[^"\\]|\\.)*"))?\s*\}$'
)


class FakeTempo(_Fake):
    def __init__(self, spans: Iterable[TraceSpan], *, v1_tags_only: bool = False, v2_traces: bool = False) -> None:
        super().__init__(spans)
        #: An older Tempo: no ``/api/v2/search/tag/…`` (404), only ``/api/search/tag/…``.
        self.v1_tags_only = v1_tags_only
        self.v2_traces = v2_traces

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        path, params = request.url.path, request.url.params
        if path == "/api/v2/search/tag/resource.service.name/values" and not self.v1_tags_only:
            values = [{"type": "string", "value": s} for s in self.services]
            return httpx2.Response(200, json={"tagValues": values, "metrics": {"inspectedBytes": "1024"}})
        if path == "/api/v2/search/tag/name/values":
            query = _TRACEQL.match(params.get("q", "").strip())
            wanted = json.loads(query.group(1)) if query else None
            names = sorted(
                {s.operation for t in self.traces.values() for s in t if wanted is None or s.service == wanted}
            )
            return httpx2.Response(200, json={"tagValues": [{"type": "string", "value": n} for n in names]})
        if path == "/api/search/tag/service.name/values":
            return httpx2.Response(200, json={"tagValues": self.services, "metrics": {"inspectedBytes": "1024"}})
        if found := re.fullmatch(r"/api/traces/([0-9a-fA-F]+)", path):
            trace = self.traces.get(found.group(1).lower())
            if trace is None:
                return httpx2.Response(404, text="trace not found")
            batches = {"batches": otlp_batches(trace)}
            if self.v2_traces:
                return httpx2.Response(200, json={"trace": batches, "metrics": {"inspectedBytes": "512"}})
            return httpx2.Response(200, json=batches)
        if path != "/api/search":
            return httpx2.Response(404, text="404 page not found\n")
        query = _TRACEQL.match(params.get("q", "").strip())
        if query is None:
            return httpx2.Response(400, text=f"invalid TraceQL query: parse error at line 1: {params.get('q')}")
        service = json.loads(query.group(1))
        operation = json.loads(query.group(2)) if query.group(2) else None
        start_s, end_s = int(params.get("start", "0")), int(params.get("end", str(2**40)))
        limit, spss = int(params.get("limit", "20")), int(params.get("spss", "3"))
        matched = self._matching(service, operation, start_s * 10**9, end_s * 10**9)
        traces = []
        for trace_id, spans in matched[:limit]:
            root = min(spans, key=lambda s: (s.start_ns, -s.end_ns))
            first, last = min(s.start_ns for s in spans), max(s.end_ns for s in spans)
            hits = [s for s in spans if s.service == service and (operation is None or s.operation == operation)]
            shown = [
                {"spanID": s.span_id, "startTimeUnixNano": str(s.start_ns), "durationNanos": str(s.duration_ns)}
                for s in hits[:spss]
            ]
            span_set = {"spans": shown, "matched": len(hits)}
            traces.append(
                {
                    "traceID": trace_id,
                    "rootServiceName": root.service,
                    "rootTraceName": root.operation,
                    "startTimeUnixNano": str(first),
                    "durationMs": (last - first) // 10**6,
                    "spanSet": span_set,
                    "spanSets": [span_set],
                }
            )
        metrics = {"inspectedTraces": len(self.traces), "inspectedBytes": "4096", "totalBlocks": 1}
        return httpx2.Response(200, json={"traces": traces, "metrics": metrics})


@contextmanager
def serving(fake: _Fake) -> Iterator[str]:
    """The fake on a loopback port, over real HTTP (a thread of this process); its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            answer = fake(httpx2.Request("GET", f"http://fake{self.path}", headers=dict(self.headers)))
            body = answer.read()
            self.send_response(answer.status_code)
            self.send_header("Content-Type", answer.headers.get("content-type", "application/json"))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
