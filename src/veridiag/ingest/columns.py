"""What a column of an imported file holds, by its name: the rows' time, whose rows they are
(a service, a Kubernetes pod, a container), a call graph's caller and callee. The names are
data (``columns.yaml``); this module compares a header with them."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import model_validator

from veridiag.text.wordfiles import Word, WordModel, bundled_words

Role = Literal["service", "pod", "container"]
DurationUnit = Literal["ns", "us", "ms", "s"]
_BRACKETED = re.compile(r"\(.*?\)|\[.*?\]")
_SEPARATORS = re.compile(r"[\s\-_.]+")


def column_key(name: str) -> str:
    """A header as the name lists compare it: lower case, without a bracketed unit, spaces,
    ``-``, ``_`` and ``.`` (``Pod_Name``, ``pod name`` and ``PodName`` are one name)."""
    return _SEPARATORS.sub("", _BRACKETED.sub("", name).lower())


class ColumnWords(WordModel):
    """``columns.yaml``: the column names of times, services, pods, containers and call graphs."""

    time: list[Word]
    epoch_suffixes: list[Word]
    service: list[Word]
    pod: list[Word]
    container: list[Word]
    log: list[Word]
    trace: list[Word]
    span: list[Word]
    parent_span: list[Word]
    caller: list[Word]
    callee: list[Word]
    weight: list[Word]
    span_start: list[Word]
    span_end: list[Word]
    duration: list[Word]
    duration_units: dict[DurationUnit, list[Word]]
    operation: list[Word]
    status: list[Word]
    error_values: list[Word]
    ok_values: list[Word]

    @model_validator(mode="after")
    def _one_role_each(self) -> ColumnWords:
        seen: dict[str, str] = {}
        for role in (
            "time",
            "service",
            "pod",
            "container",
            "log",
            "trace",
            "span",
            "parent_span",
            "caller",
            "callee",
            "weight",
            "span_start",
            "span_end",
            "duration",
            "operation",
            "status",
        ):
            for word in getattr(self, role):
                key = column_key(word)
                if not key:
                    raise ValueError(f"{role}: {word!r} is only separators")
                if seen.setdefault(key, role) != role:
                    raise ValueError(f"{role}: {word!r} is already a {seen[key]} name")
        return self


@lru_cache(maxsize=1)
def column_words() -> ColumnWords:
    """The bundled ``ingest/columns.yaml``, read once."""
    return bundled_words("veridiag.ingest", "columns.yaml", ColumnWords)


@lru_cache(maxsize=1)
def _keys() -> tuple[frozenset[str], tuple[str, ...], dict[str, Role]]:
    words = column_words()
    suffixes = tuple(sorted({column_key(w) for w in words.epoch_suffixes}, key=len, reverse=True))
    roles: dict[str, Role] = {}
    for role in ("service", "pod", "container"):
        for word in getattr(words, role):
            roles.setdefault(column_key(word), role)
    return frozenset(column_key(w) for w in words.time), suffixes, roles


def is_time_name(name: str) -> bool:
    """A header that names the rows' time: a time name, or one followed by an epoch unit
    (``TimeUnixNano``, ``timestamp_ms``, ``epoch_s``)."""
    names, suffixes, _roles = _keys()
    key = column_key(name)
    if key in names:
        return True
    return any(key.endswith(suffix) and key[: -len(suffix)] in names for suffix in suffixes)


def role_of(name: str) -> Role | None:
    """Whose rows a column names: ``service``, ``pod``, ``container``, or None."""
    return _keys()[2].get(column_key(name))


EdgeRole = Literal["caller", "callee", "weight"]


@lru_cache(maxsize=1)
def _edge_keys() -> dict[str, EdgeRole]:
    words = column_words()
    found: dict[str, EdgeRole] = {column_key(w): "weight" for w in words.weight}
    found.update({column_key(w): "callee" for w in words.callee})
    found.update({column_key(w): "caller" for w in words.caller})
    return found


RecordRole = Literal["log", "trace", "span", "parent_span"]


@lru_cache(maxsize=1)
def _record_keys() -> dict[str, RecordRole]:
    words = column_words()
    found: dict[str, RecordRole] = {column_key(w): "log" for w in words.log}
    found.update({column_key(w): "trace" for w in words.trace})
    found.update({column_key(w): "span" for w in words.span})
    found.update({column_key(w): "parent_span" for w in words.parent_span})
    return found


def record_role(name: str) -> RecordRole | None:
    """A log-record or span CSV's column: the ``log`` line, the ``trace``, ``span`` or
    ``parent_span`` id, or None."""
    return _record_keys().get(column_key(name))


def edge_role(name: str) -> EdgeRole | None:
    """A call graph's column: ``caller``, ``callee``, ``weight``, or None."""
    return _edge_keys().get(column_key(name))


SpanRole = Literal["span_start", "span_end", "duration", "operation", "status"]
_NS_PER: dict[DurationUnit, int] = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
#: A bare duration's unit (nezha's, Jaeger's and Zipkin's).
_DURATION_DEFAULT: DurationUnit = "us"


@lru_cache(maxsize=1)
def _span_keys() -> tuple[dict[str, SpanRole], dict[str, DurationUnit]]:
    words = column_words()
    roles: dict[str, SpanRole] = {}
    for role in ("span_start", "span_end", "duration", "operation", "status"):
        for word in getattr(words, role):
            roles.setdefault(column_key(word), role)
    units = {column_key(word): unit for unit, listed in words.duration_units.items() for word in listed}
    return roles, units


def span_role(name: str) -> SpanRole | None:
    """A span CSV's column: when the span started or ended (an epoch unit may follow the name:
    ``StartTimeUnixNano``), its ``duration`` (a unit may follow), its ``operation``, its
    ``status``; or None."""
    roles, units = _span_keys()
    key = column_key(name)
    if key in roles:
        return roles[key]
    _names, suffixes, _roles = _keys()
    for suffix in suffixes:
        stem = key.removesuffix(suffix)
        if stem != key and roles.get(stem) in ("span_start", "span_end"):
            return roles[stem]
    for unit in units:
        stem = key.removesuffix(unit)
        if stem != key and roles.get(stem) == "duration":
            return "duration"
    return None


def duration_ns(name: str) -> int:
    """Nanoseconds per unit of a duration column, from the unit in brackets or after the name
    (``Duration(ms)``, ``duration_ms``, ``DurationNano``); a bare duration's is microseconds."""
    _roles, units = _span_keys()
    for bracketed in _BRACKETED.findall(name):
        unit = units.get(column_key(bracketed[1:-1]))
        if unit is not None:
            return _NS_PER[unit]
    key = column_key(name)
    for spelt, unit in sorted(units.items(), key=lambda item: -len(item[0])):
        if key.endswith(spelt) and _span_keys()[0].get(key.removesuffix(spelt)) == "duration":
            return _NS_PER[unit]
    return _NS_PER[_DURATION_DEFAULT]


#: The lowest HTTP status that is an error, and the OpenTelemetry status codes.
_HTTP_ERROR = 500
_OTEL_CODES = {0: False, 1: False, 2: True}


def failed(value: str) -> bool | None:
    """Whether a status cell says the span failed (an empty cell: no, OpenTelemetry's unset);
    None when it states no status this reads."""
    text = value.strip()
    if not text:
        return False
    try:
        number = int(float(text))
    except (ValueError, OverflowError):
        words = column_words()
        key = column_key(text)
        if key in {column_key(w) for w in words.error_values}:
            return True
        if key in {column_key(w) for w in words.ok_values}:
            return False
        return None
    if number in _OTEL_CODES:
        return _OTEL_CODES[number]
    return number >= _HTTP_ERROR if 100 <= number < 600 else None
