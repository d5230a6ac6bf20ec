"""Scoring a culprit search (issue 26, item 7): pure functions over typed records.

An answerer — veridiag, or a published baseline — names services in order for each fault. A
case is a top-1 hit when the first service named is the culprit, a top-3 hit when the culprit
is among the first three; a case naming none is a miss (for ``network_delay``, where the data
cannot tell, that is the honest answer, and the tallies per fault type keep it apart).
Tallies are per system, per fault type, overall, and over the faults that show in the data;
seconds per case are a median over the cases that have a time.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Iterable

from pydantic import BaseModel, ConfigDict

from veridiag.bench.nezha import Fault


def ranked_services(names: Iterable[str], services: Collection[str]) -> list[str]:
    """The services ``names`` names, in order of first occurrence, only those in ``services``.
    A baseline ranks ``<service>_<metric>`` columns: each column stands for the service before
    its first ``_`` (Kubernetes names have no ``_``)."""
    seen: list[str] = []
    for name in names:
        service = name.split("_", 1)[0]
        if service in services and service not in seen:
            seen.append(service)
    return seen


class CaseScore(BaseModel):
    """One fault, one answerer: the services it named, in order, and how they score."""

    model_config = ConfigDict(frozen=True)

    fault_id: str
    system: str
    fault_type: str
    shows_in: str
    culprit: str
    named: list[str]
    top1: bool
    top3: bool
    #: Wall seconds the answer took; None when it was not timed (the answerer failed first).
    seconds: float | None = None
    #: Confirmed claims presenting another service as the origin (veridiag only; 0 for a baseline).
    wrong_origin_confirmed: int = 0
    #: Why the answerer gave nothing for this case (it raised, or the pipeline failed).
    error: str | None = None
    #: What veridiag was asked (None for a baseline, which is given the inject time instead).
    question: str | None = None
    #: The one service the answer says stands out as the origin (veridiag's culprit search
    #: verdict); None when it says the evidence cannot tell. ``decided_right`` when that is the
    #: culprit: a decided answer on the wrong service is the costliest mistake an on-call makes.
    decided: str | None = None
    decided_right: bool = False


def score(
    fault: Fault,
    named: list[str],
    *,
    seconds: float | None = None,
    wrong_origin_confirmed: int = 0,
    error: str | None = None,
    question: str | None = None,
    decided: str | None = None,
) -> CaseScore:
    return CaseScore(
        fault_id=fault.id,
        system=fault.system,
        fault_type=fault.fault_type,
        shows_in=fault.shows_in,
        culprit=fault.culprit,
        named=named,
        top1=named[:1] == [fault.culprit],
        top3=fault.culprit in named[:3],
        seconds=seconds,
        wrong_origin_confirmed=wrong_origin_confirmed,
        error=error,
        question=question,
        decided=decided,
        decided_right=decided is not None and decided == fault.culprit,
    )


class Tally(BaseModel):
    """Some cases of one answerer: hit rates (0–1; None over no case), counts, median seconds."""

    cases: int
    top1: float | None
    top3: float | None
    top1_hits: int
    top3_hits: int
    #: Cases the answerer gave nothing for because it failed (not the same as naming no service).
    errors: int
    wrong_origin_confirmed: int
    seconds_per_case: float | None
    #: Cases whose answer names one service as standing out, and of those the culprit.
    decided: int = 0
    decided_right: int = 0


def tally(cases: Collection[CaseScore]) -> Tally:
    top1 = sum(case.top1 for case in cases)
    top3 = sum(case.top3 for case in cases)
    times = [case.seconds for case in cases if case.seconds is not None]
    return Tally(
        cases=len(cases),
        top1=round(top1 / len(cases), 3) if cases else None,
        top3=round(top3 / len(cases), 3) if cases else None,
        top1_hits=top1,
        top3_hits=top3,
        errors=sum(case.error is not None for case in cases),
        wrong_origin_confirmed=sum(case.wrong_origin_confirmed for case in cases),
        seconds_per_case=round(statistics.median(times), 4) if times else None,
        decided=sum(case.decided is not None for case in cases),
        decided_right=sum(case.decided_right for case in cases),
    )


class Breakdown(BaseModel):
    """One answerer's tallies: overall, where the fault shows in the data, per system, per type."""

    overall: Tally
    shown: Tally
    by_system: dict[str, Tally]
    by_fault_type: dict[str, Tally]


def breakdown(cases: list[CaseScore]) -> Breakdown:
    systems = sorted({case.system for case in cases})
    types = sorted({case.fault_type for case in cases})
    return Breakdown(
        overall=tally(cases),
        shown=tally([case for case in cases if case.shows_in != "nowhere"]),
        by_system={name: tally([case for case in cases if case.system == name]) for name in systems},
        by_fault_type={name: tally([case for case in cases if case.fault_type == name]) for name in types},
    )
