"""Exact facts in text — numbers with units, percentages, ratios, error codes, ids,
service names, timestamps — and whether a tool output contains them.

Fuzzy excerpt scores cannot tell ``200/200`` from ``100/200`` (95.8 similar); these
checks are exact. Numbers compare by value within the precision they were written
with (``92%`` is grounded by ``92.4%``, ``5.3 s`` by ``5300ms`` or ``5312 ms``), never
by closeness of strings. Shared by the Gatekeeper and, later, the composer guard.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

EntityKind = Literal["timestamp", "identifier", "error_code", "ratio", "quantity", "service"]

# unit spelling (lower case) → (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, Decimal]] = {}


def _units(dimension: str, factor: str, *spellings: str) -> None:
    for spelling in spellings:
        _UNITS[spelling] = (dimension, Decimal(factor))


_units("time", "0.001", "ms", "msec", "millisecond", "milliseconds", "毫秒")
_units("time", "1", "s", "sec", "secs", "second", "seconds", "秒")
_units("time", "60", "min", "mins", "minute", "minutes", "分钟")
_units("time", "3600", "h", "hr", "hrs", "hour", "hours", "小时")
_units("size", "1", "b", "byte", "bytes")
_units("size", "1000", "kb")
_units("size", "1024", "kib")
_units("size", "1000000", "mb")
_units("size", "1048576", "mib")
_units("size", "1000000000", "gb")
_units("size", "1073741824", "gib")
_units("percent", "1", "%", "percent")
_units("rate", "1", "qps", "rps", "tps", "req/s", "ops/s")
_units(
    "count", "1", "次", "个", "条", "times", "errors", "requests", "connections", "threads",
    "lines", "restarts", "pods", "instances", "retries",
)
#: Dimensions where an output's bare number ("cpu_usage 92") may ground a claim ("92%").
_BARE_OK = {"percent", "count", "rate"}

_NUMBER_AT = re.compile(r"\d+(?:\.\d+)?")
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_NUM = r"\d+(?:\.\d+)?"
_QUANTITY = re.compile(rf"(?<![A-Za-z0-9_.])({_NUM})\s?({_UNIT_ALT})(?![A-Za-z])", re.IGNORECASE)
_TIMESTAMP = re.compile(
    r"(?<!\d)(\d{4}-\d{2}-\d{2})(?:[T ](\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?(?:Z|[+-]\d{2}:?\d{2})?(?!\d)"
    r"|(?<![\d:])(\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(?![\d:])"
)
_ID_CONTEXT = re.compile(
    r"(?:订单|交易|请求|order|txn|transaction|request|req|trace|span)\s*(?:id|号|编号|_id|-id)?\s*[:=#：]?\s*"
    r"((?=[A-Za-z0-9_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]{2,63})",
    re.IGNORECASE,
)
_LONG_ID = re.compile(
    r"(?<![A-Za-z0-9])(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,64})(?![A-Za-z0-9])"
)
_ERROR_CODE = re.compile(
    r"(?<![A-Za-z0-9_])(?:[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+|[A-Z]{1,6}\d{3,6})(?![A-Za-z0-9_])"
    r"|(?<![\w.])(?:[a-z][a-z0-9]*\.)*[A-Z][A-Za-z0-9]*(?:Exception|Error)(?![A-Za-z0-9])"
)
_HTTP_STATUS = re.compile(r"(?:HTTP|http|status|状态码)\s*(?:code)?\s*[:=]?\s*([1-5]\d\d)(?!\d)")
_RATIO = re.compile(r"(?<![\d./])(\d+)\s*/\s*(\d+)(?![\d./])")
_SERVICE = re.compile(
    r"(?<![A-Za-z0-9_-])[a-z][a-z0-9]*(?:-[a-z0-9]+)*-(?:service|svc|api|gateway|server|worker|db|cache|proxy|job)"
    r"(?![A-Za-z0-9_-])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Entity:
    """One exact fact found in text. ``needles`` are literal forms to look for."""

    kind: EntityKind
    text: str
    needles: tuple[str, ...]
    value: Decimal | None = None
    dimension: str | None = None
    factor: Decimal | None = None
    precision: Decimal | None = None


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _precision(number: str) -> Decimal:
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    return Decimal(1).scaleb(-decimals)


def extract_entities(
    text: str, known_services: Iterable[str] = (), ignore: Iterable[str] = ()
) -> list[Entity]:
    """Every exact fact in ``text``, each once, in a stable order."""
    ignored = {token.lower() for token in ignore}
    found: list[Entity] = []
    work = text

    def take(pattern: re.Pattern[str]) -> list[re.Match[str]]:
        nonlocal work
        matches = list(pattern.finditer(work))
        for match in matches:
            work = _mask(work, match.start(), match.end())
        return matches

    for match in take(_TIMESTAMP):
        parts = tuple(part for part in match.groups() if part)
        found.append(Entity("timestamp", match.group().strip(), parts))
    for match in take(_ID_CONTEXT):
        found.append(Entity("identifier", match.group(1), (match.group(1),)))
    for match in take(_LONG_ID):
        found.append(Entity("identifier", match.group(), (match.group(),)))
    for match in take(_HTTP_STATUS):
        found.append(Entity("error_code", match.group(1), (match.group(1),)))
    for match in take(_ERROR_CODE):
        if match.group().lower() not in ignored:
            found.append(Entity("error_code", match.group(), (match.group(),)))
    for match in take(_SERVICE):
        found.append(Entity("service", match.group(), (match.group().lower(),)))
    for match in take(_RATIO):
        a, b = match.groups()
        found.append(Entity("ratio", f"{a}/{b}", (f"{a}/{b}", f"{a} / {b}")))
    for match in take(_QUANTITY):
        number, unit = match.groups()
        dimension, factor = _UNITS[unit.lower()]
        try:
            value = Decimal(number)
        except InvalidOperation:  # pragma: no cover - the regex only admits decimals
            continue
        needles = (f"{number}{unit}", f"{number} {unit}")
        found.append(
            Entity("quantity", match.group(), needles, value, dimension, factor, _precision(number))
        )
    lowered = work.lower()
    for service in known_services:
        name = service.lower()
        if re.search(rf"(?<![a-z0-9_-]){re.escape(name)}(?![a-z0-9_-])", lowered):
            found.append(Entity("service", service, (name,)))

    unique: dict[tuple[str, str], Entity] = {}
    for entity in found:
        unique.setdefault((entity.kind, entity.text.lower()), entity)
    return list(unique.values())


def _ascii_word(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char == "_")


class Corpus:
    """The searchable text of one invocation (output, preview, details, arguments)."""

    __slots__ = ("_folded", "_quantities", "text")

    def __init__(self, texts: Sequence[str]) -> None:
        self.text = "\n".join(t for t in texts if t)
        self._folded: str | None = None
        self._quantities: dict[str, list[Decimal]] = {}

    @property
    def folded(self) -> str:
        if self._folded is None:
            folded = self.text.lower()
            self._folded = folded if len(folded) == len(self.text) else self.text
        return self._folded

    @staticmethod
    def _has_token(hay: str, needle: str, limit: int = 2000, glued: Callable[[str], bool] = _ascii_word) -> bool:
        """``needle`` occurs in ``hay`` not glued (by default: to ASCII word characters) on either side."""
        if not needle:
            return False
        check_left, check_right = glued(needle[0]), glued(needle[-1])
        position = hay.find(needle)
        while position >= 0 and limit:
            left_ok = not check_left or position == 0 or not glued(hay[position - 1])
            after = position + len(needle)
            right_ok = not check_right or after >= len(hay) or not glued(hay[after])
            if left_ok and right_ok:
                return True
            position = hay.find(needle, position + 1)
            limit -= 1
        return False

    def contains(self, entity: Entity) -> bool:
        if entity.kind == "timestamp":
            return all(
                self._has_token(self.text, n, glued=str.isdigit) or self._has_token(self.text, "0" + n, glued=str.isdigit)
                for n in entity.needles
            )
        if entity.kind == "service":
            return any(self._has_token(self.folded, n.lower()) for n in entity.needles)
        if any(self._has_token(self.text, n) for n in entity.needles):
            return True
        if entity.kind == "error_code":
            return any(self._has_token(self.folded, n.lower()) for n in entity.needles)
        if entity.kind == "quantity":
            return self._has_quantity(entity)
        return False

    def _has_quantity(self, entity: Entity) -> bool:
        assert entity.value is not None and entity.factor is not None and entity.precision is not None
        dimension = entity.dimension or ""
        target = entity.value * entity.factor
        tolerance = entity.precision * entity.factor / 2
        values = self._quantities.get(dimension)
        if values is None:
            values = [
                Decimal(m.group(1)) * _UNITS[m.group(2).lower()][1]
                for m in _QUANTITY.finditer(self.text)
                if _UNITS[m.group(2).lower()][0] == dimension
            ]
            self._quantities[dimension] = values
        if any(abs(v - target) <= tolerance for v in values):
            return True
        return dimension in _BARE_OK and self._has_bare_number(entity.value, entity.precision)

    def _has_bare_number(self, value: Decimal, precision: Decimal) -> bool:
        """A unitless number in the output equal to ``value`` at the claim's precision."""
        whole = str(int(value))
        for prefix in dict.fromkeys((whole, str(int(value - precision / 2)), str(int(value + precision / 2)))):
            position = self.text.find(prefix)
            tries = 2000
            while position >= 0 and tries:
                tries -= 1
                before = self.text[position - 1] if position else " "
                if not (_ascii_word(before) or before in ".-"):
                    match = _NUMBER_AT.match(self.text, position)
                    if match and abs(Decimal(match.group()) - value) <= precision / 2:
                        return True
                position = self.text.find(prefix, position + 1)
        return False
