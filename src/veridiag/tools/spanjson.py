"""The JSON shapes spans travel in, as pydantic models: OTLP/JSON and Jaeger's JSON (issue 29).

Read by two sides: ``ingest/spanfiles.py`` reads span files (the Collector's file exporter, a
Jaeger UI download) and the HTTP trace backends (``tools/backends/jaeger.py``, ``tempo.py``)
read the same shapes from a server — Jaeger's query API answers ``/api/traces`` with the shape
its UI downloads, Tempo's ``/api/traces/<id>`` answers OTLP/JSON under ``batches``. Here, below
both, so neither imports the other.

Keys are camelCase and unknown keys are ignored (the formats grow); a model validates one
object, so a reader skips and counts a malformed span rather than failing a whole document.

* OTLP/JSON (opentelemetry-proto ``trace/v1``, its JSON mapping): ``resourceSpans`` →
  ``scopeSpans`` (``instrumentationLibrarySpans`` before OTLP 0.15) → ``spans``; times in ns
  (uint64, written as strings); a span failed when ``status.code`` is 2
  (``STATUS_CODE_ERROR``). Tempo's trace by id is ``{"batches": [ResourceSpans…]}`` (its
  ``tempopb.Trace``; ``/api/v2/traces`` wraps it as ``{"trace": …}``), with ids in base64 —
  protobuf's JSON mapping of bytes — where OTLP/JSON writes hex (grafana/tempo issues 3802,
  5437): ``hex_id`` reads both.
* Jaeger JSON (jaeger-query's ``structuredResponse``: ``{"data": [trace…], "total", "limit",
  "offset", "errors"}``; a trace ``{"traceID", "spans", "processes"}``): times in µs, a span's
  parent its first ``CHILD_OF`` reference (else its first reference, else ``parentSpanID``), a
  failed span tagged ``error`` (or ``otel.status_code=ERROR``).
"""

from __future__ import annotations

import base64
import binascii
import string
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

#: Parent ids that mean "no parent" (a root span), as span files write them.
NO_PARENT = frozenset({"", "root", "null", "none", "0", "0000000000000000"})
NS_PER_US = 1_000


class Json(BaseModel):
    """A format's object: camelCase keys, unknown keys ignored (formats grow)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


# -- OTLP/JSON ---------------------------------------------------------------------------------


class OtlpValue(Json):
    string_value: str | None = None


class OtlpAttribute(Json):
    key: str
    value: OtlpValue = OtlpValue()


class OtlpResource(Json):
    attributes: list[OtlpAttribute] = []

    def said(self) -> dict[str, str]:
        """Its string attributes (``service.name``, ``k8s.pod.name`` …)."""
        return {a.key: a.value.string_value for a in self.attributes if a.value.string_value}


class OtlpStatus(Json):
    code: int | str | None = None


#: ``status.code`` values of a failed span: the enum's number or name, as writers spell it.
OTLP_ERROR = frozenset({2, "2", "STATUS_CODE_ERROR", "ERROR"})


class OtlpSpan(Json):
    trace_id: str = Field(min_length=1)
    span_id: str = Field(min_length=1)
    parent_span_id: str = ""
    name: str = ""
    start_time_unix_nano: int
    end_time_unix_nano: int
    status: OtlpStatus = OtlpStatus()

    @property
    def failed(self) -> bool:
        return self.status.code in OTLP_ERROR


class OtlpScope(Json):
    #: Raw: each span is validated on its own (``OtlpSpan``), so one bad span is skipped alone.
    spans: list[dict[str, Any]] = []


class ResourceSpans(Json):
    resource: OtlpResource = OtlpResource()
    scope_spans: list[OtlpScope] = []
    #: The name before OTLP 0.15.
    instrumentation_library_spans: list[OtlpScope] = []

    @property
    def scopes(self) -> list[OtlpScope]:
        return [*self.scope_spans, *self.instrumentation_library_spans]


class TracesData(Json):
    """OTLP/JSON's document; Tempo's ``tempopb.Trace`` names the same list ``batches``."""

    resource_spans: list[ResourceSpans] = Field(validation_alias=AliasChoices("resourceSpans", "batches"))


_HEX = frozenset(string.hexdigits)


def hex_id(value: str) -> str:
    """A trace or span id as lower-case hex: hex as written (OTLP/JSON, Jaeger), or the base64
    protobuf's JSON mapping writes bytes in (Tempo) — 8 or 16 bytes are 16 or 32 hex digits, and
    base64 of them 12 or 24 characters, so the two never read alike. Anything else as it is."""
    if len(value) in (16, 32) and set(value) <= _HEX:
        return value.lower()
    if len(value) in (12, 24):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return value
        if len(raw) in (8, 16):
            return raw.hex()
    return value


# -- Jaeger JSON -------------------------------------------------------------------------------


class JaegerReference(Json):
    ref_type: str = Field(default="", validation_alias=AliasChoices("refType", "ref_type"))
    span_id: str = Field(validation_alias=AliasChoices("spanID", "spanId", "span_id"))


class JaegerTag(Json):
    key: str
    value: Any = None

    @property
    def failed(self) -> bool:
        if self.key == "error":
            return self.value is True or str(self.value).lower() == "true"
        return self.key == "otel.status_code" and str(self.value).upper() == "ERROR"


class JaegerSpan(Json):
    span_id: str = Field(min_length=1, validation_alias=AliasChoices("spanID", "spanId"))
    trace_id: str = Field(default="", validation_alias=AliasChoices("traceID", "traceId"))
    parent_span_id: str = Field(default="", validation_alias=AliasChoices("parentSpanID", "parentSpanId"))
    operation_name: str = ""
    references: list[JaegerReference] = []
    #: Microseconds since the epoch, and long.
    start_time: int
    duration: int = Field(ge=0)
    process_id: str = Field(default="", validation_alias=AliasChoices("processID", "processId"))
    tags: list[JaegerTag] = []

    @property
    def parent_id(self) -> str:
        """Its first ``CHILD_OF`` reference, else its first reference, else ``parentSpanID``."""
        parents = [r.span_id for r in self.references if r.ref_type.upper() == "CHILD_OF"]
        parents += [r.span_id for r in self.references]
        return next(iter(parents), self.parent_span_id)

    @property
    def failed(self) -> bool:
        return any(tag.failed for tag in self.tags)

    @property
    def start_ns(self) -> int:
        return self.start_time * NS_PER_US

    @property
    def end_ns(self) -> int:
        return (self.start_time + self.duration) * NS_PER_US


class JaegerProcess(Json):
    service_name: str = ""


class JaegerTrace(Json):
    trace_id: str = Field(default="", validation_alias=AliasChoices("traceID", "traceId"))
    #: Raw: each span is validated on its own (``JaegerSpan``).
    spans: list[dict[str, Any]] = []
    processes: dict[str, JaegerProcess] = {}


class JaegerFile(Json):
    """A Jaeger UI download, and the body of jaeger-query's ``/api/traces`` answers."""

    data: list[JaegerTrace]
