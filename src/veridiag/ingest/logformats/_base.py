"""The records, the report, the format base class and registry, and the helpers every format shares.

Formats return a small tuple (``Parsed``) instead of a ``LogEntry``: the reader owns line numbers,
continuation lines and the report, and a tuple per line is cheaper than an object in the format
followed by another in the reader.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from typing import ClassVar, Literal, TypeVar

from pydantic import model_validator

from veridiag.ingest.times import go_time
from veridiag.text.wordfiles import Word, WordModel, bundled_words

Level = Literal["ERROR", "WARN", "INFO", "DEBUG"]

MONTHS: dict[str, int] = {
    m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)
}
MONTH_RE = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"


class FormatWords(WordModel):
    """``words.yaml``: level and change words, upper-case and lower-case spellings respectively."""

    levels: dict[Level, list[Word]]
    level_position: list[Word]
    change_kinds: dict[Word, list[Word]]

    @model_validator(mode="after")
    def _consistent(self) -> FormatWords:
        spelled = [word for words in self.levels.values() for word in words]
        if any(word != word.upper() for word in spelled) or len(spelled) != len(set(spelled)):
            raise ValueError("levels: each spelling upper case, under one level only")
        unknown = [word for word in self.level_position if word not in spelled]
        if unknown:
            raise ValueError(f"level_position: not a spelling under levels: {unknown}")
        kinds = [word for words in self.change_kinds.values() for word in words]
        if any(word != word.lower() for word in kinds) or len(kinds) != len(set(kinds)):
            raise ValueError("change_kinds: each spelling lower case, under one kind only")
        return self


@lru_cache(maxsize=1)
def format_words() -> FormatWords:
    """The bundled ``ingest/logformats/words.yaml``, read once."""
    return bundled_words("veridiag.ingest.logformats", "words.yaml", FormatWords)


# Every level spelling the supported formats write, upper-cased, to the four levels veridiag keeps.
LEVELS: dict[str, Level] = {word: level for level, words in format_words().levels.items() for word in words}
# The level tokens a line format accepts in its level position (case-insensitive where the format is);
# a longer spelling before the shorter one it starts with (WARNING before WARN).
LEVEL_WORD_RE = "|".join(sorted(format_words().level_position, key=len, reverse=True))

# Syslog severity (PRI & 7): 0 emerg … 3 err → ERROR, 4 warning → WARN, 5 notice, 6 info → INFO, 7 debug.
SYSLOG_SEVERITY: tuple[Level, ...] = ("ERROR", "ERROR", "ERROR", "ERROR", "WARN", "INFO", "INFO", "DEBUG")

# Auth failures and kernel OOM kills are what an on-call engineer looks for, yet syslog writes them at
# info/notice (or with no level at all): they are ERROR whatever the format says. Only raising, never lowering.
_SEVERE = re.compile(
    r"Failed password|authentication failure|Invalid user|Out of memory: Kill|oom-killer|Killed process \d+"
)


def severe(message: str) -> bool:
    """True for an auth failure or a kernel OOM kill (ERROR even where the format says less).

    Substring tests first: they reject a typical line in ~0.1 µs, the regex alone takes ~2 µs.
    """
    if "ail" in message or "nvalid" in message or "emory" in message or "oom" in message or "illed" in message:
        return _SEVERE.search(message) is not None
    return False


def level_of(word: str, default: Level = "INFO") -> Level:
    """A level word from a format's level position; unknown words give ``default``."""
    return LEVELS.get(word.upper(), default)


@dataclass(frozen=True, slots=True)
class ChangeInfo:
    """The record itself says it is a change (a structured field), never a keyword guess."""

    kind: str  # deploy | config | restart | scale | rollback | release | change
    description: str
    version: str | None = None


@dataclass(slots=True)
class LogEntry:
    """One log entry: its first line and continuation lines, placed in time (aware UTC)."""

    ts: datetime
    level: Level
    component: str
    message: str
    text: str
    service: str | None
    change: ChangeInfo | None
    line_number: int
    parsed: bool
    #: False when the line wrote no level of its own (``level`` is then INFO, or ERROR by ``severe``).
    leveled: bool = True
    #: The service read from a container record's pod (its workload) or container: a reading
    #: of names, which the importer's ``service`` overrides (``service`` above is a field's own).
    workload: str | None = None
    #: The trace and span a container record says the line was written in.
    trace_id: str | None = None
    span_id: str | None = None


@dataclass
class LogFileReport:
    """What reading one file did; filled as the entries are consumed."""

    format: str = ""
    year: int | None = None
    year_source: str | None = None  # "--year", "file dates", "file mtime"; None when the format has years
    entries: int = 0
    parsed: int = 0
    unparsed: int = 0
    continuation_lines: int = 0
    no_timestamp: int = 0
    first_no_timestamp: list[int] = field(default_factory=list)
    replaced_bytes_lines: int = 0
    #: Entries that wrote no level (read as INFO).
    unleveled: int = 0
    #: Container records: the format of the application lines inside them, the records joined
    #: to the line before (CRI ``P`` partials, Docker's split long lines), the partial lines
    #: whose end is not in the file (kept as far as they go), and the records whose JSON had
    #: text after it (read, the text after it dropped).
    inner_format: str = ""
    partials_joined: int = 0
    partial_unfinished: int = 0
    trailing_text: int = 0


class LogFormatError(ValueError):
    """A format id that does not exist, or an unusable option (time zone, year)."""


# ts (aware UTC, or None: a record of the format that carries no time), level (None: the line writes
# none — read as INFO, and counted, so no one is told "no ERROR lines" of logs that cannot have them),
# component, message, service, change
Parsed = tuple[datetime | None, Level | None, str, str, str | None, ChangeInfo | None]


class YearClock:
    """The year of timestamps written without one (syslog 3164, Proxifier), rolling over Dec → Jan.

    A month more than half a year before the previous entry's is the next year; smaller steps
    back are out-of-order lines, not a new year.
    """

    __slots__ = ("_month", "year")

    def __init__(self, year: int) -> None:
        self.year = year
        self._month = 0

    def naive(self, month: int, day: int, hour: int, minute: int, second: int, *, micro: int = 0) -> datetime:
        year = self.year + 1 if month + 6 <= self._month else self.year
        moment = datetime(year, month, day, hour, minute, second, micro)  # may raise: then nothing changes
        self.year, self._month = year, month
        return moment


# A leap year: Feb 29 parses while a format is only being tried (detection) or the year is not known yet.
PLACEHOLDER_YEAR = 2000


class LogFormat:
    """One line format: ``parse`` returns ``Parsed`` for a line it understands, else None.

    Instances carry the per-file state (time zone, year clock), so the reader makes a fresh one per file.
    """

    id: ClassVar[str] = ""
    title: ClassVar[str] = ""
    has_year: ClassVar[bool] = True

    def __init__(self, *, tz: tzinfo = UTC, year: int = PLACEHOLDER_YEAR) -> None:
        self.tz = tz
        self.clock = YearClock(year)
        self._utc = tz is UTC

    def parse(self, line: str) -> Parsed | None:
        raise NotImplementedError

    def aware(self, naive: datetime) -> datetime:
        """A naive timestamp read in the file's time zone, as aware UTC."""
        if self._utc:
            return naive.replace(tzinfo=UTC)
        return naive.replace(tzinfo=self.tz).astimezone(UTC)

    def iso(self, text: str) -> datetime:
        """An ISO-8601 timestamp (``,`` or ``.`` fraction, ``Z`` or offset optional) as aware UTC."""
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            return self.aware(moment)
        return moment if moment.tzinfo is UTC else moment.astimezone(UTC)


FORMATS: dict[str, type[LogFormat]] = {}
"""Registered formats by id, in detection priority order (earlier wins a tie)."""

_F = TypeVar("_F", bound=type[LogFormat])


def register(cls: _F) -> _F:
    """Class decorator: add a format to ``FORMATS`` under its ``id``."""
    if not cls.id or cls.id in FORMATS:
        raise ValueError(f"format id {cls.id!r} is empty or taken")
    FORMATS[cls.id] = cls
    return cls


def epoch(value: float) -> datetime:
    """Epoch seconds, milliseconds, microseconds or nanoseconds (told apart by size) as aware UTC."""
    if value > 1e17:
        value /= 1e9
    elif value > 1e14:
        value /= 1e6
    elif value > 1e11:
        value /= 1e3
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=value)


_OFFSETS: dict[str, timedelta] = {}


def offset(text: str) -> timedelta:
    """``+0800`` / ``-07:00`` as a timedelta (memoised: a file has one or two)."""
    known = _OFFSETS.get(text)
    if known is None:
        sign = -1 if text[0] == "-" else 1
        digits = text[1:].replace(":", "")
        known = _OFFSETS[text] = sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4]))
    return known


# A URL path segment that is an id, not a route: numbers, hex ids, uuids, long tokens with digits.
_PATH_ID = re.compile(r"(?<=/)(?:\d+|[0-9a-fA-F]{8,}|[0-9a-fA-F-]{32,36}|(?=[^/]*\d)[\w.~-]{16,})(?=/|$)")


def route_of(path: str) -> str:
    """``/orders/123/items?x=1`` → ``/orders/{id}/items``: a request path as a low-cardinality route."""
    path = path.partition("?")[0].partition("#")[0]
    return _PATH_ID.sub("{id}", path)


# --- structured records (JSON, logfmt): the field rules both share -----------------------------------

TIME_KEYS = ("ts", "time", "timestamp", "@timestamp", "datetime", "t")
LEVEL_KEYS = ("level", "severity", "levelname", "log.level", "lvl", "loglevel")
MESSAGE_KEYS = ("msg", "message", "log")
SERVICE_KEYS = ("service", "service.name", "app")
COMPONENT_KEYS = ("logger", "component", "module", "logger_name", "log.logger")
CHANGE_KEYS = ("event", "kind", "type")
VERSION_KEYS = ("version", "service.version", "to_version", "new_version", "image")
#: A record's event/kind/type value (lower case, "-" as "_") → the change it is.
CHANGE_KINDS: dict[str, str] = {word: kind for kind, words in format_words().change_kinds.items() for word in words}

# key → (field, rank): one pass over a record's keys finds every field, the lowest rank winning.
# (Looking each field's keys up in turn cost twice as much: logfmt lines are short and have few keys.)
_ROLES: dict[str, tuple[str, int]] = {
    key: (role, rank)
    for role, keys in (
        ("time", TIME_KEYS),
        ("level", LEVEL_KEYS),
        ("message", MESSAGE_KEYS),
        ("service", SERVICE_KEYS),
        ("component", COMPONENT_KEYS),
        ("change", CHANGE_KEYS),
        ("version", VERSION_KEYS),
    )
    for rank, key in enumerate(keys)
}


def _fields(record: Mapping[str, object]) -> dict[str, tuple[int, object]]:
    """(rank, value) of each field; dotted keys also match one level of nesting (ECS ``service.name``).

    Exact class checks, not ``isinstance(…, Mapping)``: the ABC check was a third of the time.
    """
    found: dict[str, tuple[int, object]] = {}
    for key, raw in record.items():
        hit = _ROLES.get(key)
        value = raw
        cls = raw.__class__
        if cls is dict:
            if hit is not None and hit[0] == "change":  # ECS: "event": {"action": "deploy"}
                value = raw.get("action") or raw.get("type")  # type: ignore[attr-defined]
            else:
                for inner, inner_value in raw.items():  # type: ignore[attr-defined]
                    inner_hit = _ROLES.get(f"{key}.{inner}")
                    if inner_hit is not None and inner_value.__class__ in _SCALARS:
                        role, rank = inner_hit
                        if role not in found or rank < found[role][0]:
                            found[role] = (rank, inner_value)
                continue
        elif hit is None or cls not in _SCALARS or value == "":
            continue
        if hit is None:
            continue
        role, rank = hit
        if role not in found or rank < found[role][0]:
            found[role] = (rank, value)
    return found


_SCALARS = frozenset((str, int, float))


def _text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    return None


def field_time(value: object, fmt: LogFormat) -> datetime | None:
    """ISO text, Go's ``time.Time.String()``, or epoch s/ms/µs/ns as a number or digits."""
    try:
        if isinstance(value, int | float):
            return epoch(float(value))
        if isinstance(value, str):
            if value.replace(".", "", 1).isdigit():
                return epoch(float(value))
            return fmt.iso(value.strip())
    except (ValueError, OverflowError):
        pass
    return go_time(value) if isinstance(value, str) else None


def _level(value: object) -> Level:
    """A level word, a syslog severity (0–7) or a bunyan/pino number (10–60)."""
    if isinstance(value, str):
        if not value.isdigit():
            return LEVELS.get(value.upper(), "INFO")
        value = int(value)
    if isinstance(value, int):
        if 0 <= value < 8:
            return SYSLOG_SEVERITY[value]
        return "ERROR" if value >= 50 else "WARN" if value >= 40 else "INFO" if value >= 30 else "DEBUG"
    return "INFO"


def structured(record: Mapping[str, object], fmt: LogFormat) -> Parsed:
    """One JSON object or logfmt record → ``Parsed`` by the shared field rules.

    A change only when an ``event``/``kind``/``type`` field names one (deploy, config, restart, …).
    """
    fields = _fields(record)
    message = _text(fields["message"][1]) if "message" in fields else ""
    change = None
    if "change" in fields and isinstance(kind_value := fields["change"][1], str):
        kind = CHANGE_KINDS.get(kind_value.strip().lower().replace("-", "_"))
        if kind is not None:
            version = _text(fields["version"][1]) if "version" in fields else None
            change = ChangeInfo(kind=kind, description=message or kind_value, version=version)
    return (
        field_time(fields["time"][1], fmt) if "time" in fields else None,
        _level(fields["level"][1]) if "level" in fields else None,
        (_text(fields["component"][1]) or "") if "component" in fields else "",
        message or "",
        _text(fields["service"][1]) if "service" in fields else None,
        change,
    )
