"""A date or clock a claim reads from an epoch it copies: checked by converting the epoch.

Logs of HPC, BGL and Thunderbird write seconds since 1970, HealthApp milliseconds; a claim writes
the same instant as a reader does ("1125915213，即马克萨斯时间 9 月 5 日 00:43:33", "2005 年 2 月 26
日中午 12:14（1109420069）"). No line writes that date or clock: looked up, a true one is never
found, and a wrong one ("1513958400000 ms 是 2017-12-23 00:00 UTC", really 22 Dec 16:00) may be
found on some other line. So a date or clock the claim ties to an epoch of its lines is what the
epoch converts to, in UTC or a zone the claim names, or it is wrong.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo

from veridiag.text.entities import Corpus, Entity
from veridiag.text.zones import named_zones

#: Seconds (ten digits) or milliseconds (thirteen) since 1970, 2001 to 2033, as logs write them.
_EPOCH = re.compile(r"(?<![\d.])1\d{9}(?:\d{3})?(?![\d.])")
#: What may stand between an epoch and the date or clock that restates it ("1513958400000 ms 是 ",
#: " (", "） = ", ", i.e. "): no digit, a few characters.
_GLUE = re.compile(r"[^\d]{0,12}")
#: Why a restated epoch fails (the Gatekeeper's reason).
EPOCH_MISREAD = "not the instant of the epoch it restates"
#: The kinds of fact an epoch restates.
_KINDS = frozenset({"timestamp", "date"})


def _instant(written: str) -> datetime:
    number = int(written)
    return datetime.fromtimestamp(number / 1000 if len(written) == 13 else number, UTC)


def _instants(claim_text: str, own: Corpus) -> list[tuple[datetime, tuple[int, int]]]:
    """The instants of the epochs the claim copies from its own lines, each with its span."""
    return [(_instant(m.group()), m.span()) for m in _EPOCH.finditer(claim_text) if m.group() in own.text]


#: More epochs than this on a claim's lines, and one of them is some date by chance.
_MAX_LINE_EPOCHS = 12


def _reads(entity: Entity, instant: datetime, zones: tuple[tzinfo, ...]) -> bool:
    """Is ``entity`` (a date or a clock) ``instant`` in UTC or one of ``zones``? A clock the
    claim read in a zone already names its UTC instant (``Entity.instant``)."""
    for zone in (UTC,) if entity.instant else (UTC, *zones):
        local = instant.astimezone(zone)
        if entity.kind == "date":
            if local.date().isoformat() in entity.needles or f"-{local:%m-%d}" in entity.needles:
                return True
            continue
        faces = {local.date().isoformat(), f"{local:%H:%M}", f"{local:%H:%M:%S}"}
        if all(needle in faces for needle in entity.needles):
            return True
    return False


def epoch_stated(entity: Entity, claim_text: str, own: Corpus | None) -> bool:
    """Is ``entity``, a date or clock of ``claim_text``, the instant of an epoch the claim copies
    from its own lines (``own``), or of one of theirs when it copies none?"""
    if entity.kind not in _KINDS or own is None or not any(c.isdigit() for c in claim_text):
        return False
    instants = [instant for instant, _span in _instants(claim_text, own)]
    if not instants:  # none written: those of its lines ("saveStatData 的 time 是 UTC+8 的 12 月 23 日零点")
        instants = [_instant(m.group()) for m in _EPOCH.finditer(own.text)]
        if len(instants) > _MAX_LINE_EPOCHS:
            return False
    zones = named_zones([claim_text])
    return any(_reads(entity, instant, zones) for instant in instants)


def epoch_misread(claim_text: str, entities: list[Entity], own: Corpus | None) -> list[Entity]:
    """The dates and clocks of ``claim_text`` written right beside an epoch the claim copies, as
    its restatement ("1513958400000 ms 是 2017-12-23 00:00", "2 月 26 日中午 12:14（1109420069）": a run
    of them, glued by a few characters without digits), that are not its instant."""
    if own is None or not any(e.kind in _KINDS for e in entities):
        return []
    placed = sorted(
        ((at, e) for e in entities if e.kind in _KINDS and (at := claim_text.find(e.text)) >= 0), key=lambda p: p[0]
    )
    zones = named_zones([claim_text])
    wrong: list[Entity] = []
    for instant, (start, end) in _instants(claim_text, own):
        run: list[Entity] = []
        reach = end
        for at, entity in placed:  # after the epoch
            if at >= reach and _GLUE.fullmatch(claim_text, reach, at):
                run.append(entity)
                reach = at + len(entity.text)
        reach = start
        for at, entity in reversed(placed):  # before it
            if at + len(entity.text) <= reach and _GLUE.fullmatch(claim_text, at + len(entity.text), reach):
                run.append(entity)
                reach = at
        wrong += [e for e in run if e not in wrong and not _reads(e, instant, zones)]
    return wrong
