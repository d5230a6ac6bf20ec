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
from typing import Any, Literal, TypeGuard

from veridiag.contracts.parsing import parse_executor_output

MARKER = "$ref"
#: The invocation text fields a copy can be found in, in the order the trace summary picks them.
TEXT_FIELDS = ("output", "output_preview", "error")
#: Only these span sources are plain invocation fields (the others are renderings).
_SPAN_SOURCES = ("output", "output_preview")

Slot = Literal["summary", "span", "structured"]
#: (slot, stored value, the dict holding it, the round records its raw outputs are in) → new value
Rewrite = Callable[[Slot, Any, dict[str, Any], list[Any]], Any]


@dataclass(frozen=True, slots=True)
class InvocationTexts:
    """The text fields of one invocation that an audit may reference."""

    output: str
    output_preview: str
    error: str | None

    def field(self, name: object) -> str | None:
        value = getattr(self, name) if isinstance(name, str) and name in TEXT_FIELDS else None
        return value if isinstance(value, str) else None


def compact(audit: dict[str, Any], texts: Mapping[int, InvocationTexts]) -> dict[str, Any]:
    """``audit`` with its exact copies of ``texts`` replaced by references (a new dict; the
    argument is not changed)."""

    def reference(slot: Slot, value: Any, owner: dict[str, Any], rounds: list[Any]) -> Any:
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


def hydrate(stored: dict[str, Any], texts: Mapping[int, InvocationTexts]) -> dict[str, Any]:
    """The audit as it was handed to ``compact`` (with the same ``texts``: the session's)."""

    def resolve(slot: Slot, value: Any, owner: dict[str, Any], rounds: list[Any]) -> Any:
        if not _is_marker(value):
            return value
        marker = value[MARKER]
        if isinstance(marker, dict) and "literal" in marker:
            return marker["literal"]
        if slot == "summary":
            source = texts.get(marker["invocation"])
            text = source.field(marker["field"]) if source else None
            return (text or "")[: marker["chars"]]
        if slot == "span":
            source = texts.get(owner["invocation_id"])
            text = source.field(owner["source"]) if source else None
            return (text or "")[owner["start"] : owner["end"]]
        raw = _raw_output(rounds, marker["raw_of_round"])
        parsed = parse_executor_output(raw) if raw is not None else None
        return parsed.value if parsed is not None and parsed.ok else None

    return _rewrite(stored, resolve)


def compress(stored: Any) -> bytes:
    """The stored audit as zlib-compressed compact JSON (older sessions keep this form)."""
    text = json.dumps(stored, ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8"), 9)


def decompress(blob: bytes) -> Any:
    return json.loads(zlib.decompress(blob).decode("utf-8"))


# -- where the copies are -----------------------------------------------------------------


def _rewrite(audit: dict[str, Any], rewrite: Rewrite) -> dict[str, Any]:
    """A shallow copy of ``audit`` with every slot that can hold a copy passed through
    ``rewrite``: the final round's record (``verifier_evaluation``), each round, and the rounds
    a failed session kept (``partial.rounds``)."""
    if not isinstance(audit, dict):  # not an audit this version wrote: nothing to rewrite
        return audit
    result = dict(audit)
    rounds = audit.get("rounds")
    rounds = rounds if isinstance(rounds, list) else []
    if "rounds" in audit and isinstance(audit["rounds"], list):
        result["rounds"] = [_rewrite_record(record, rounds, rewrite) for record in rounds]
    partial = audit.get("partial")
    if isinstance(partial, dict) and isinstance(partial.get("rounds"), list):
        kept = partial["rounds"]
        result["partial"] = {**partial, "rounds": [_rewrite_record(record, kept, rewrite) for record in kept]}
    if isinstance(audit.get("verifier_evaluation"), dict):
        result["verifier_evaluation"] = _rewrite_record(audit["verifier_evaluation"], rounds, rewrite)
    return result


def _rewrite_record(record: Any, rounds: list[Any], rewrite: Rewrite) -> Any:
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


def _rewrite_claim_trace(trace: Any, rounds: list[Any], rewrite: Rewrite) -> Any:
    if not isinstance(trace, dict) or not isinstance(trace.get("checks"), list):
        return trace
    checks = []
    for check in trace["checks"]:
        span = check.get("matched_span") if isinstance(check, dict) else None
        if isinstance(span, dict) and "text" in span:
            span = {**span, "text": rewrite("span", span["text"], span, rounds)}
            checks.append({**check, "matched_span": span})
        else:
            checks.append(check)
    return {**trace, "checks": checks}


# -- references -----------------------------------------------------------------------------


def _summary_reference(value: Any, entry: dict[str, Any], texts: Mapping[int, InvocationTexts]) -> Any:
    ids = entry.get("invocation_ids")
    if not isinstance(value, str) or not value or not isinstance(ids, list) or not ids or not _is_id(ids[0]):
        return None
    source = texts.get(ids[0])
    for name in TEXT_FIELDS:
        text = source.field(name) if source else None
        if text and text.startswith(value):
            return {"invocation": ids[0], "field": name, "chars": len(value)}
    return None


def _span_reference(value: Any, span: dict[str, Any], texts: Mapping[int, InvocationTexts]) -> Any:
    invocation, start, end = span.get("invocation_id"), span.get("start"), span.get("end")
    if not isinstance(value, str) or not value or span.get("source") not in _SPAN_SOURCES:
        return None
    if not (_is_id(invocation) and _is_id(start, zero=True) and _is_id(end, zero=True)):
        return None
    source = texts.get(invocation)
    text = source.field(span["source"]) if source else None
    return "span" if text is not None and text[start:end] == value else None


def _structured_reference(value: Any, record: dict[str, Any], rounds: list[Any]) -> Any:
    number = record.get("round")
    raw = _raw_output(rounds, number)
    if not isinstance(value, dict) or raw is None:
        return None
    parsed = parse_executor_output(raw)
    if not parsed.ok or _json(parsed.value) != _json(value):
        return None
    return {"raw_of_round": number}


def _raw_output(rounds: list[Any], number: Any) -> str | None:
    for record in rounds:
        if isinstance(record, dict) and record.get("round") == number:
            raw = record.get("executor_raw_output")
            return raw if isinstance(raw, str) else None
    return None


def _is_marker(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and MARKER in value


def _is_id(value: object, *, zero: bool = False) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= (0 if zero else 1)


def _json(value: Any) -> str:
    """Order-sensitive: the stored JSON keeps the parsed object's key order."""
    return json.dumps(value, ensure_ascii=False, sort_keys=False)
