"""Times and periods as a person reads them, in one place: the offline engine's claims, the
charts and the timeline write a period alike.

A period within one day (in the zone it is shown in) is compact, ``07:15–09:30``; one whose
ends fall on different days carries both dates, ``2026-02-25 07:15 – 2026-02-27 02:45``
(``2026-02-25 07:15 至 2026-02-27 02:45``), so "rose abnormally 07:15–02:45" can no longer
hide the day and a half between its ends. Dates are written as ISO dates, the form the tools'
outputs (``2026-02-25T07:15:00Z``) and the fact lexer (``text/entities.py``) read as a date:
a claim's dated time is grounded by its date as well as its clock. The joining words are data
(``periods.yaml``)."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from typing import Annotated

from pydantic import StringConstraints

from veridiag.text.wordfiles import Bilingual, WordModel, bundled_words

MINUTES = "%H:%M"
SECONDS = "%H:%M:%S"


#: A joining word kept as written, spaces included (`Word` would strip them).
Joiner = Annotated[str, StringConstraints(min_length=1)]


class PeriodWords(WordModel):
    """How one language joins a period's ends: within one day, and across days."""

    same_day: Joiner
    across_days: Joiner


@lru_cache(maxsize=1)
def _words() -> Bilingual[PeriodWords]:
    return bundled_words("veridiag.text", "periods.yaml", Bilingual[PeriodWords])


def _local(moment: datetime, zone: tzinfo) -> datetime:
    """``moment`` in ``zone``; a naive time is taken as UTC."""
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).astimezone(zone)


def moment_text(moment: datetime, *, dated: bool = False, seconds: bool = False, zone: tzinfo = UTC) -> str:
    """``07:15`` (``07:15:30`` with ``seconds``), ``2026-02-25 07:15`` when ``dated``."""
    local = _local(moment, zone)
    clock = local.strftime(SECONDS if seconds else MINUTES)
    return f"{local.date().isoformat()} {clock}" if dated else clock


def across_days(start: datetime, end: datetime, zone: tzinfo = UTC) -> bool:
    """Whether the two ends fall on different days in ``zone``."""
    return _local(start, zone).date() != _local(end, zone).date()


def period_text(
    start: datetime,
    end: datetime,
    lang: str = "en",
    *,
    dated: bool = False,
    seconds: bool = False,
    zone: tzinfo = UTC,
) -> str:
    """A period as a person reads it: ``07:15–09:30`` within one day (``2026-02-25
    07:15–09:30`` when ``dated``: an answer that spans days dates every period), both ends dated
    when they fall on different days; one instant (``start == end``) as that instant."""
    if start == end:
        return moment_text(start, dated=dated, seconds=seconds, zone=zone)
    words = _words()[lang]
    if across_days(start, end, zone):
        first = moment_text(start, dated=True, seconds=seconds, zone=zone)
        return first + words.across_days + moment_text(end, dated=True, seconds=seconds, zone=zone)
    first = moment_text(start, dated=dated, seconds=seconds, zone=zone)
    return first + words.same_day + moment_text(end, seconds=seconds, zone=zone)
