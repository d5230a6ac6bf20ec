"""Things a claim names together belong together in its evidence: "status code 403 那条是 QQ.exe
连 tcpconn4.tencent.com 时报的" of a log where QQ.exe's lines say "Proxy closed the connection"
and the one line with status code 403 is FlashPlayerPlugin's names three true facts, each of
another line: a swapped id, host, code or program.

Read here: for two things of different kinds the claim names, the output records (a line with
what is indented under it) holding the first. The pair is broken when none of them names the
second, and the part holding the first — its clause, else its line — names a thing of the
second's kind the claim names nowhere (a competitor). A line naming both pairs them as the
claim does, whichever of its clauses each is in; a line naming only other things the claim
also names breaks nothing (a claim telling a chain: "CHG-4471 left ecb-backup without weight").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from veridiag.text.entities import Corpus, Entity, TextFacts
from veridiag.text.records import record_span
from veridiag.text.wordfiles import Word, WordModel, bundled_words


class _PairWords(WordModel):
    links: list[Word]


#: What pairs: which thing — an id, a host, a code, a program. A service and a date are on every
#: line of a call's output: they tie nothing; an amount is read by its role on its line (an
#: average over a window is on no line of its clocks); a clock in a claim telling several events
#: is often another event's (the rollout's time beside the first error's code).
PAIRING_KINDS = ("identifier", "error_code", "name")
#: Where a line's clauses part ("…, merchant m-40281, retry 1/3"): a clause naming the first thing
#: and another of the second's kind decides before its line does.
CLAUSE = re.compile(r"[;,；，]")
#: What links two events in a claim rather than naming one thing's facts (``pairs.yaml``).
_LINKS = re.compile(
    "|".join(
        re.escape(w) if not w.isascii() else rf"\b{re.escape(w)}\b"
        for w in sorted(bundled_words("veridiag.text", "pairs.yaml", _PairWords).links, key=len, reverse=True)
    )
    + r"|[;；。]",
    re.IGNORECASE,
)
#: A thing on more records than this is a kind of thing (a code every timeout line writes), not one
#: whose line tells its partner: its pairs are not judged (and its search stops there).
_MAX_RECORDS = 12


@dataclass(frozen=True, slots=True)
class Broken:
    """``fact`` is stated with ``partner`` by the claim, but its records pair it with ``instead``."""

    fact: Entity
    partner: Entity
    instead: str


def _kind(entity: Entity) -> tuple[str, str | None]:
    return entity.kind, entity.dimension


def broken_pairs(
    claim: str,
    outputs: Sequence[str],
    stated: Callable[[Entity, Corpus], bool],
    read: Callable[[str], TextFacts],
) -> list[Broken]:
    """The things ``claim`` names together whose records in ``outputs`` pair them with a
    competitor instead of the partner the claim gives. ``stated``: does a text state one of the
    claim's facts; ``read``: a text's facts, lexed once per check. Two things the claim's words
    link as two events ("订单123超时是因为数据库密码过期（E-9999）": a cause and its effect, each of its
    own line) are no pair."""
    facts = read(claim)
    pairing = [f for f in facts.entities() if f.kind in PAIRING_KINDS]
    if len({_kind(f) for f in pairing}) < 2:
        return []
    reading = _Reading(pairing, stated, read)
    broken: list[Broken] = []
    for fact in pairing:
        holding = [r for r in records_holding(outputs, fact) if Corpus([r]).contains(fact)]
        together = (p for p in pairing if holding and _kind(p) != _kind(fact) and not _linked(facts.text, fact, p))
        for partner in together:
            instead = reading.competitor(fact, partner, holding)
            if instead is not None:
                broken.append(Broken(fact, partner, instead))
                break
    return broken


def records_holding(outputs: Sequence[str], fact: Entity) -> list[str]:
    """The records of ``outputs`` (a line with the lines indented deeper under it: a log pattern
    and its example) where one of ``fact``'s needles occurs; none past ``_MAX_RECORDS``.
    Found by searching the needles, not by splitting every output into records: a 64 KB log
    has thousands, a thing is on a few (splitting them cost twice the rest of a check)."""
    needles = {n for reading in (fact, *fact.alternatives) for n in reading.needles if n}
    found: dict[tuple[int, int], str] = {}
    for index, output in enumerate(outputs):
        for needle in needles:
            at = output.find(needle)
            while at >= 0:
                start, end = record_span(output, at)
                found.setdefault((index, start), output[start:end])
                if len(found) > _MAX_RECORDS:
                    return []
                at = output.find(needle, end)
    return list(found.values())


@dataclass(frozen=True, slots=True)
class _Reading:
    """One claim's facts and how one check reads texts."""

    facts: list[Entity]
    stated: Callable[[Entity, Corpus], bool]
    read: Callable[[str], TextFacts]

    def competitor(self, fact: Entity, partner: Entity, holding: list[str]) -> str | None:
        """The first fact of ``partner``'s kind that a part of ``holding`` pairs ``fact`` with and
        the claim states nowhere — None when a line of them pairs it with ``partner`` itself."""
        if any(self.stated(partner, Corpus([line])) for line in holding):
            return None  # a line pairs them as the claim does
        kin = [f for f in self.facts if _kind(f) == _kind(partner)]
        for line in holding:
            for other in self.part(line, fact, partner):
                if not any(self.stated(own, Corpus([other.text])) for own in kin):
                    return other.text
        return None

    def part(self, line: str, fact: Entity, partner: Entity) -> list[Entity]:
        """The facts of ``partner``'s kind in the clause of ``line`` holding ``fact``, else in the line."""
        for text in (*(c for c in CLAUSE.split(line) if Corpus([c]).contains(fact)), line):
            others = [e for e in self.read(text).entities() if _kind(e) == _kind(partner) and not _same(e, fact)]
            if others:
                return others
        return []


def _linked(text: str, one: Entity, other: Entity) -> bool:
    """Do words between ``one`` and ``other`` in ``text`` make them two events (``pairs.yaml``
    links: "because", "after", 导致, 之后 …, or a clause's end)? Not found as written: linked."""
    first, second = text.find(one.text), text.find(other.text)
    if first < 0 or second < 0:
        return True
    start, end = sorted((first, second))
    return _LINKS.search(text, start, end) is not None


def _same(entity: Entity, fact: Entity) -> bool:
    return entity.kind == fact.kind and entity.needles == fact.needles
