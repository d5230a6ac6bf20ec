"""Which statistic a number is: a summary line labels its numbers ("memory_mb: min 812 avg 1303
max 1740", ``p99=870ms``, "最大值 1740", a table's header row), a claim names the statistic its
number stands for ("memory peaked at 1303 MB", 平均). A claim's number found on such a line under
another statistic's label is not what the claim says it is (1303 is the average, not the peak).
The words are data (``statistics.yaml``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from pydantic import Field

from veridiag.text.alternation import whole_words
from veridiag.text.normalize import ignorecase_key
from veridiag.text.units import decimal_or_none
from veridiag.text.wordfiles import Word, WordModel, bundled_words


class StatisticWords(WordModel):
    """``statistics.yaml``: each statistic's words, zh and en."""

    statistics: dict[Word, list[Word]] = Field(min_length=1)
    series: list[Word] = Field(default_factory=list)
    ranks: list[Word] = Field(default_factory=list)
    units: list[Word] = Field(default_factory=list)
    differences: list[Word] = Field(default_factory=list)


_NUMBER = re.compile(r"\d")
#: A number right before a word (its unit, when the word is one of ``units``).
_NUMBER_BEFORE = re.compile(r"\d[ \t]?$")


@dataclass(frozen=True, slots=True)
class Labelled:
    """A number of a line and the statistic labelling it."""

    statistic: str
    value: Decimal


class Statistics:
    """The vocabulary compiled: one pattern for any statistic word, one for a label and its number."""

    def __init__(self, words: StatisticWords) -> None:
        self._by_word = {w.lower(): name for name, spelled in words.statistics.items() for w in spelled}
        #: Statistics a series may be (``series``).
        self.series = frozenset(words.series)
        ordered = sorted(self._by_word, key=len, reverse=True)
        self._longest = len(ordered[0]) if ordered else 0
        # each word's first part, no edges, lower case, over the lower-cased text: a pattern of
        # literals lets the engine skip to their first letters (~10× faster than IGNORECASE on a
        # claim, measured); the whole-word pattern only after it
        self._hint = re.compile("|".join(re.escape(w.split()[0]) for w in ordered))
        alternatives = whole_words(ordered, edge="A-Za-z0-9", boundary="A-Za-z0-9", blanks=r"\s+")
        self._word = re.compile(f"(?:{alternatives})", re.IGNORECASE)
        ranks = whole_words(
            sorted(words.ranks, key=len, reverse=True), edge="A-Za-z0-9", boundary="A-Za-z0-9", blanks=r"\s+"
        )
        differences = whole_words(
            sorted(words.differences, key=len, reverse=True), edge="A-Za-z0-9", boundary="A-Za-z0-9", blanks=r"\s+"
        )
        self._difference = re.compile(f"(?:{differences})", re.IGNORECASE) if words.differences else None
        self._rank = re.compile(rf"(?:{ranks})[\s-]*$", re.IGNORECASE) if words.ranks else None
        self._units = frozenset(w.lower() for w in words.units)
        # a label alone or ending a field's name ("memory_max"), then ":" / "=" / blanks, then a number
        self._label = re.compile(
            rf"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.\-])*(?P<label>{alternatives})[\"']?\s*[:=：]?\s*"
            r"(?P<number>-?\d+(?:\.\d+)?)(?![\d.])",
            re.IGNORECASE,
        )

    def named(self, text: str) -> frozenset[str]:
        """The statistics ``text`` names. Most claims name none: a plain search for the words
        first spares the whole-word pattern (~18 µs a claim, measured)."""
        if not self._hint.search(ignorecase_key(text)):
            return frozenset()
        return frozenset(
            self._name(m.group()) for m in self._word.finditer(text) if not self._not_named(text, m.start(), m.group())
        )

    def _not_named(self, text: str, at: int, word: str = "") -> bool:
        """Does a rank ("second-", "次") stand right before the statistic's word at ``at``, or a number
        before a word that is then its unit ("5 min")? Either way the word names no statistic."""
        if word.lower() in self._units and _NUMBER_BEFORE.search(text, max(0, at - 2), at) is not None:
            return True
        return self._rank is not None and self._rank.search(text, max(0, at - 12), at) is not None

    def _name(self, spelled: str) -> str:
        """The statistic a spelling the case-blind pattern matched names ("MAX", "mİn": İ matches i)."""
        return self._by_word[" ".join(ignorecase_key(spelled).split())]

    def near(self, text: str, start: int, end: int, before: int, after: int) -> frozenset[str]:
        """The statistics named by words ending at most ``before`` characters before ``start``
        or starting at most ``after`` characters after ``end``: those a number there stands for."""
        found = set()
        # only words that may end or start within reach: a bare number of a 64 KB text looked at
        # the whole text for each of its numbers
        window = self._longest + 8
        low, high = max(0, start - before - window), min(len(text), end + after + window)
        if not self._hint.search(ignorecase_key(text[low:high])):
            return frozenset()  # no statistic's word there: most numbers
        for m in self._word.finditer(text, low, high):
            if self._not_named(text, m.start(), m.group()):
                continue  # "the second-highest reading, 4 ms": no max
            if start - before <= m.end() <= start and not _NUMBER.search(text, m.end(), start):
                found.add(self._name(m.group()))
            elif (
                end <= m.start() <= end + after
                and not _NUMBER.search(text, m.end(), m.end() + 6)
                and (self._difference is None or self._difference.search(text, end, m.start()) is None)
            ):
                # "1303 MB on average"; not "from 0.2% to a peak of 12.49%" (the peak is the number
                # after it), nor "0.81 ms below the peak" (a difference from it)
                found.add(self._name(m.group()))
        return frozenset(found)

    def labelled(self, lines: list[str]) -> list[Labelled]:
        """The labelled numbers of ``lines`` (each may hold several): after a label, or under a
        header row of labels."""
        found: list[Labelled] = []
        header: list[str | None] | None = None
        for line in (row for text in lines for row in text.splitlines()):
            labels = [
                Labelled(self._name(m.group("label")), value)
                for m in self._label.finditer(line)
                if (value := decimal_or_none(m.group("number"))) is not None
            ]
            found += labels
            cells = [cell for cell in re.split(r"[\s|,]+", line.strip()) if cell]
            names = [self._by_word.get(ignorecase_key(cell)) for cell in cells]
            if sum(name is not None for name in names) >= 2 and not labels:
                header = names
                continue
            if header is not None and len(cells) == len(header):
                found += [
                    Labelled(name, value)
                    for name, cell in zip(header, cells, strict=True)
                    if name is not None and (value := decimal_or_none(cell.rstrip("%"))) is not None
                ]
            else:
                header = None
        return found


@lru_cache(maxsize=1)
def statistics() -> Statistics:
    """The bundled ``statistics.yaml``, compiled once."""
    return Statistics(bundled_words("veridiag.text", "statistics.yaml", StatisticWords))
