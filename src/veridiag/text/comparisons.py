"""Two fields of one line a claim compares: "在每一条慢查询里 Lock_time 都小于 Query_time",
"Rows_sent was below Rows_examined on the quoted line".

A log line writes ``Query_time: 20.1 Lock_time: 22.5``; a claim that one field stays under the
other names both fields and no number, so no fact of it is looked up and nothing checks it. It
is read here as a bound whose other side is a field of the same line — its words are the bound
words of ``bounds.yaml`` — and checked on each line that writes both: a line against it
contradicts it (every listed line when the claim says all of them, its quoted lines otherwise).

The same fields tell which one a number is of: "光等锁就等了 47.1 s" gives the line's Query_time (47.1)
by the words of its Lock_time (24.5) — a part of a field's name, or its Chinese word
(``comparisons.yaml``), names that field (``another_fields_value``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from itertools import pairwise

from pydantic import Field

from veridiag.text.alternation import whole_words
from veridiag.text.bounds import bound_words, has_bound_word
from veridiag.text.wordfiles import Word, WordModel, bundled_words

#: A field and its number on a line: ``Lock_time: 9.0``, ``rows=12``, ``"rt": 35``.
_FIELD = re.compile(
    r"(?<![\w.])(?P<key>[A-Za-z][A-Za-z0-9_.]*)[\"']?\s*[:=]\s*[\"']?(?P<value>-?\d+(?:\.\d+)?)(?![\d.])"
)
#: How far apart the two fields a comparison word joins may stand ("Lock_time 都小于 Query_time").
_REACH = 32
#: A digit between the fields: a number is compared, not the other field.
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class FieldComparison:
    """``left`` above (or below) ``right`` on a line; ``inclusive``: equal keeps it."""

    left: str
    right: str
    above: bool
    inclusive: bool

    def broken_by(self, fields: dict[str, Decimal]) -> bool:
        """Does a line with these fields go against it? A line without both says nothing."""
        left, right = fields.get(self.left), fields.get(self.right)
        if left is None or right is None:
            return False
        if left == right:
            return not self.inclusive
        return (left > right) != self.above


@lru_cache(maxsize=1)
def _words() -> tuple[re.Pattern[str], frozenset[str], frozenset[str], re.Pattern[str]]:
    """The comparison words (above, below), those that let equal keep it, and negations."""
    words = bound_words()
    above = {w.lower() for w in words.above_before}
    below = {w.lower() for w in words.below_before}
    pattern = whole_words(sorted(above | below, key=len, reverse=True), edge="A-Za-z", boundary="A-Za-z", blanks=r"\s+")
    turned = whole_words(
        sorted(words.turned_by, key=len, reverse=True), edge="A-Za-z", boundary="A-Za-z", blanks=r"\s+"
    )
    return (
        re.compile(pattern, re.IGNORECASE),
        frozenset(above),
        frozenset(w.lower() for w in words.inclusive),
        re.compile(turned or "(?!)", re.IGNORECASE),
    )


def may_compare(own: str) -> bool:
    """Does ``own`` hold a comparison word at all (most claims hold none: nothing else is read)? A
    case-blind substring test first (``bounds.has_bound_word``), the whole-word pattern after it."""
    return has_bound_word(own) and _words()[0].search(own) is not None


def fields(line: str) -> dict[str, Decimal]:
    """The numbered fields of ``line``, by lower-case name (the first of each)."""
    found: dict[str, Decimal] = {}
    for match in _FIELD.finditer(line):
        found.setdefault(match.group("key").lower(), Decimal(match.group("value")))
    return found


def claimed_comparisons(own: str, keys: Iterable[str]) -> list[FieldComparison]:
    """The comparisons ``own`` (a claim's own words) states between two of ``keys`` (the fields its
    lines write): a field, at most ``_REACH`` characters of words with one comparison word and no
    digit nor negation, then another field."""
    comparison, above, inclusive, turned = _words()
    if not may_compare(own):
        return []
    named = sorted(
        (m.start(), m.end(), key)
        for key in set(keys)
        for m in re.finditer(rf"(?<![\w.]){re.escape(key)}(?!\w|\.\w)", own, re.IGNORECASE)
    )
    found: list[FieldComparison] = []
    for (_start, end, left), (start, _end, right) in pairwise(named):
        between = own[end:start]
        words = list(comparison.finditer(between))
        if left == right or len(between) > _REACH or len(words) != 1 or _DIGIT.search(between):
            continue
        if turned.search(between):
            continue  # "Lock_time 从未超过 Query_time": its side turned, left unread
        word = " ".join(words[0].group().lower().split())
        found.append(FieldComparison(left, right, word in above, word in inclusive))
    return found


def first_against(comparisons: Sequence[FieldComparison], rows: Iterable[str]) -> tuple[FieldComparison, str] | None:
    """The first comparison a row goes against, with that row."""
    for row in rows:
        written = fields(row)
        for compared in comparisons:
            if compared.broken_by(written):
                return compared, row
    return None


class FieldWords(WordModel):
    """``comparisons.yaml``: the parts of a field's name that name none, and Chinese words for parts."""

    generic_parts: list[Word] = Field(default_factory=list)
    parts: dict[Word, list[Word]] = Field(default_factory=dict)


@lru_cache(maxsize=1)
def _field_words() -> FieldWords:
    return bundled_words("veridiag.text", "comparisons.yaml", FieldWords)


#: Where a field's name divides into parts: "_", ".", "-" and a capital after a small letter.
_PART_EDGE = re.compile(r"[_.\-]+|(?<=[a-z])(?=[A-Z])")


def _parts(name: str, *, generic: bool = False) -> frozenset[str]:
    """The parts of a field's name that may name it ("Lock_time" → lock; "rows_examined" → rows,
    examined); ``generic``: those every field may share too ("avg" of "avg=100")."""
    shared = set() if generic else {w.lower() for w in _field_words().generic_parts}
    return frozenset(p.lower() for p in _PART_EDGE.split(name) if p and p.lower() not in shared)


def _named_parts(words: str) -> frozenset[str]:
    """The field-name parts ``words`` (a claim's, near a number) name, in English or Chinese."""
    lowered = words.lower()
    latin = {w for w in re.findall(r"[a-z]+", lowered)}
    named = {part for part, chinese in _field_words().parts.items() if any(w.lower() in lowered for w in chinese)}
    return frozenset(latin | named)


def another_fields_value(
    before: str, value: Decimal, tolerance: Decimal, line: str, after: str = ""
) -> tuple[str, str] | None:
    """The claim gives ``value`` by the words ``before`` it, which name a field of its quoted ``line``
    (by a part of its name no other field shares, "等锁" of Lock_time) that is not the field holding
    the value ("Query_time: 47.1"), and no word of its clause (``after`` it too: "19 threads
    waiting") names the holder: (the holder, the named field), else None."""
    written: dict[str, Decimal] = {}
    for match in _FIELD.finditer(line):
        written.setdefault(match.group("key"), Decimal(match.group("value")))
    if len(written) < 2:
        return None
    holders = [name for name, number in written.items() if abs(number - value) <= tolerance]
    if len(holders) != 1:
        return None
    (holder,) = holders
    parts = {name: _parts(name) for name in written}
    own = {name: ps - frozenset().union(*(q for n, q in parts.items() if n != name)) for name, ps in parts.items()}
    named = _named_parts(before)
    if _parts(holder, generic=True) & (named | _named_parts(after)):
        return None  # the claim names the field that holds it ("memory avg 100 MB" of "avg=100")
    others = [name for name in written if name != holder and own[name] & named]
    return (holder, others[0]) if len(others) == 1 else None
