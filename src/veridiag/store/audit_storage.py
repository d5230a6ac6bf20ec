"""How a session's audit (``self_evaluation``) is stored: compact, and for older sessions
compressed. ``hydrate(compact(audit, texts), texts)`` gives back exactly ``audit``.

The audit repeats text the session's own invocations already hold: every tool-trace entry's
``output_summary`` is a prefix of its invocation's text, every Gatekeeper
``matched_span.text`` is a slice of it, and an ``executor_structured_output`` is the parse of
its round's ``executor_raw_output``. Those copies are stored as ``{"$ref": …}`` markers — and
only where the copy is checked to be exact when it is written, so reading restores it to the
character. A value that merely looks like a marker is stored escaped (``{"$ref": {"literal":
…}}``), so no audit can be misread.

Invocations are never updated and go only with their session, so a reference stays valid;
should one be missing anyway (a row deleted by hand), its text reads as ``""`` (its structured
output as ``null``) rather than failing the whole session.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Literal, TypeGuard

from pydantic import Field, StrictInt, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.contracts.parsing import parse_executor_output

MARKER = "$ref"
#: The invocation text fields a copy can be found in, in the order the trace summary picks them.
TEXT_FIELDS = ("output", "output_preview", "error")
#: Only these span sources are plain invocation fields (the others are renderings).
_SPAN_SOURCES = ("output", "output_preview")

Slot = Literal["summary", "span", "structured"]
#: (slot, stored value, the object holding it, the round records its raw outputs are in) → new value.
#: The audit stays JSON here: this walk must give back any audit — an older version's, a failed
#: run's — to the character, so it reads only the few members a copy can sit in.
Rewrite = Callable[[Slot, JsonValue, JsonObject, list[JsonValue]], JsonValue]


# The shapes a reference is read by. TypedDicts validated by pydantic rather than models: every
# audit read resolves each of its references (dozens), and a model instance per reference cost
# ~9 % more instructions per ``get_session``; validating into a dict costs a third of that.


class SummaryRef(TypedDict):
    """A trace summary stored as the first ``chars`` characters of one invocation text field."""

    invocation: int
    field: str
    chars: int


class StructuredRef(TypedDict):
    """An ``executor_structured_output`` stored as the parse of that round's raw output."""

    raw_of_round: StrictInt


class SpanPlace(TypedDict):
    """Where a Gatekeeper ``matched_span`` says its text is: a plain invocation field, so the
    span (marker ``"span"``) reads back as ``text[start:end]`` of it."""

    invocation_id: Annotated[StrictInt, Field(ge=1)]
    source: Literal["output", "output_preview"]
    start: Annotated[StrictInt, Field(ge=0)]
    end: Annotated[StrictInt, Field(ge=0)]


_SUMMARY = TypeAdapter(SummaryRef)
_STRUCTURED = TypeAdapter(StructuredRef)
_PLACE = TypeAdapter(SpanPlace)


@dataclass(frozen=True, slots=True)
class InvocationTexts:
    """The text fields of one invocation that an audit may reference."""

    output: str
    output_preview: str
    error: str | None

    def field(self, name: object) -> str | None:
        value = getattr(self, name) if isinstance(name, str) and name in TEXT_FIELDS else None
        return value if isinstance(value, str) else None


def compact(audit: JsonObject, texts: Mapping[int, InvocationTexts]) -> JsonObject:
    """``audit`` with its exact copies of ``texts`` replaced by references (a new dict; the
    argument is not changed)."""

    def reference(slot: Slot, value: JsonValue, owner: JsonObject, rounds: list[JsonValue]) -> JsonValue:
        marker: JsonValue
        if slot == "summary":
            marker = _summary_reference(value, owner, texts)
        elif slot == "span":
            marker = _span_reference(value, owner, texts)
        else:
            marker = _structured_reference(value, owner, rounds)
        if marker is not None:
            return {MARKER: marker}
        return {MARKER: {"literal": value}} if _is_marker(value) else value

    return _rewrite(audit, reference)


def hydrate(stored: JsonValue, texts: Mapping[int, InvocationTexts]) -> JsonValue:
    """The audit as it was handed to ``compact`` (with the same ``texts``: the session's). JSON
    that is no object is no audit this version wrote: it comes back as it is."""

    def resolve(slot: Slot, value: JsonValue, owner: JsonObject, rounds: list[JsonValue]) -> JsonValue:
        if not _is_marker(value):
            return value
        marker = value[MARKER]
        if isinstance(marker, dict) and "literal" in marker:
            return marker["literal"]
        if slot == "summary":
            summary = _SUMMARY.validate_python(marker)
            source = texts.get(summary["invocation"])
            text = source.field(summary["field"]) if source else None
            return (text or "")[: summary["chars"]]
        if slot == "span":
            place = _PLACE.validate_python(owner)
            source = texts.get(place["invocation_id"])
            text = source.field(place["source"]) if source else None
            return (text or "")[place["start"] : place["end"]]
        raw = _raw_output(rounds, _STRUCTURED.validate_python(marker)["raw_of_round"])
        parsed = parse_executor_output(raw) if raw is not None else None
        return parsed.value if parsed is not None and parsed.ok else None

    return _rewrite(stored, resolve) if isinstance(stored, dict) else stored


def compress(stored: JsonObject) -> bytes:
    """The stored audit as zlib-compressed compact JSON (older sessions keep this form)."""
    text = json.dumps(stored, ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8"), 9)


def decompress(blob: bytes) -> JsonValue:
    """What ``compress`` was given — or, for a row not written by it, whatever JSON it holds."""
    value: JsonValue = json.loads(zlib.decompress(blob).decode("utf-8"))
    return value


# -- where the copies are -----------------------------------------------------------------


def _rewrite(audit: JsonObject, rewrite: Rewrite) -> JsonObject:
    """A shallow copy of ``audit`` with every slot that can hold a copy passed through
    ``rewrite``: the final round's record (``verifier_evaluation``), each round, and the rounds
    a failed session kept (``partial.rounds``)."""
    result = dict(audit)
    stored_rounds = audit.get("rounds")
    rounds = stored_rounds if isinstance(stored_rounds, list) else []
    if isinstance(stored_rounds, list):
        result["rounds"] = [_rewrite_record(record, rounds, rewrite) for record in rounds]
    partial = audit.get("partial")
    if isinstance(partial, dict) and isinstance(kept := partial.get("rounds"), list):
        result["partial"] = {**partial, "rounds": [_rewrite_record(record, kept, rewrite) for record in kept]}
    final = audit.get("verifier_evaluation")
    if isinstance(final, dict):
        result["verifier_evaluation"] = _rewrite_record(final, rounds, rewrite)
    return result


def _rewrite_record(record: JsonValue, rounds: list[JsonValue], rewrite: Rewrite) -> JsonValue:
    if not isinstance(record, dict):
        return record
    result = dict(record)
    if "executor_structured_output" in record:
        result["executor_structured_output"] = rewrite(
            "structured", record["executor_structured_output"], record, rounds
        )
    entries = record.get("tool_trace_summary")
    if isinstance(entries, list):
        result["tool_trace_summary"] = [
            {**entry, "output_summary": rewrite("summary", entry["output_summary"], entry, rounds)}
            if isinstance(entry, dict) and "output_summary" in entry
            else entry
            for entry in entries
        ]
    traces = record.get("gatekeeper_trace")
    if isinstance(traces, list):
        result["gatekeeper_trace"] = [_rewrite_claim_trace(trace, rounds, rewrite) for trace in traces]
    return result


def _rewrite_claim_trace(trace: JsonValue, rounds: list[JsonValue], rewrite: Rewrite) -> JsonValue:
    if not isinstance(trace, dict) or not isinstance(checks := trace.get("checks"), list):
        return trace
    rewritten: list[JsonValue] = []
    for check in checks:
        span = check.get("matched_span") if isinstance(check, dict) else None
        if isinstance(check, dict) and isinstance(span, dict) and "text" in span:
            span = {**span, "text": rewrite("span", span["text"], span, rounds)}
            rewritten.append({**check, "matched_span": span})
        else:
            rewritten.append(check)
    return {**trace, "checks": rewritten}


# -- references -----------------------------------------------------------------------------


def _summary_reference(value: JsonValue, entry: JsonObject, texts: Mapping[int, InvocationTexts]) -> JsonObject | None:
    ids = entry.get("invocation_ids")
    if not isinstance(value, str) or not value or not isinstance(ids, list) or not ids or not _is_id(ids[0]):
        return None
    source = texts.get(ids[0])
    for name in TEXT_FIELDS:
        text = source.field(name) if source else None
        if text and text.startswith(value):
            summary: JsonObject = _SUMMARY.dump_python(SummaryRef(invocation=ids[0], field=name, chars=len(value)))
            return summary
    return None


def _span_reference(value: JsonValue, span: JsonObject, texts: Mapping[int, InvocationTexts]) -> str | None:
    if not isinstance(value, str) or not value or span.get("source") not in _SPAN_SOURCES:
        return None
    try:
        place = _PLACE.validate_python(span)
    except ValidationError:  # ids or offsets that are no places: the copy stays
        return None
    source = texts.get(place["invocation_id"])
    text = source.field(place["source"]) if source else None
    return "span" if text is not None and text[place["start"] : place["end"]] == value else None


def _structured_reference(value: JsonValue, record: JsonObject, rounds: list[JsonValue]) -> JsonObject | None:
    number = record.get("round")
    if not isinstance(value, dict) or not _is_id(number):
        return None
    raw = _raw_output(rounds, number)
    if raw is None or not _may_parse_to(raw, value):
        return None
    parsed = parse_executor_output(raw)
    if not parsed.ok or _json(parsed.value) != _json(value):
        return None
    marker: JsonObject = _STRUCTURED.dump_python(StructuredRef(raw_of_round=number))
    return marker


def _may_parse_to(raw: str, value: JsonObject) -> bool:
    """False when ``raw`` never writes a member name ``value`` has (quoted as JSON writes a plain
    one), so its parse cannot be ``value``: the structured output the pipeline keeps has the
    optional arrays a model left out filled in, and parsing and dumping the reply to find that
    out cost ~3 % of a session (measured). A name written with escapes only reads as absent:
    the copy is then kept, which hydrates as exactly."""
    return all(f'"{name}"' in raw for name in value)


def _raw_output(rounds: list[JsonValue], number: int) -> str | None:
    for record in rounds:
        if isinstance(record, dict) and record.get("round") == number:
            raw = record.get("executor_raw_output")
            return raw if isinstance(raw, str) else None
    return None


def _is_marker(value: JsonValue) -> TypeGuard[JsonObject]:
    return isinstance(value, dict) and len(value) == 1 and MARKER in value


def _is_id(value: object, *, zero: bool = False) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= (0 if zero else 1)


def _json(value: JsonValue) -> str:
    """Order-sensitive: the stored JSON keeps the parsed object's key order."""
    return json.dumps(value, ensure_ascii=False, sort_keys=False)
