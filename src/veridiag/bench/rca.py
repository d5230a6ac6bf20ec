"""``veridiag bench --only rca`` (issue 26, item 7): does veridiag name the injected culprit?

On the labelled Nezha fault injections (``shared/samples/nezha/``: ``bench/nezha.py``), each
fault is one case. In the same run, for every shared day:

- the published baseline — RCAEval's BARO and n-sigma in their own Python 3.12 environment
  (``bench/rcaeval.py``) — ranks the pod metrics around the injection;
- veridiag builds a home from the day folder with its importers and answers one neutral
  question per fault through the real pipeline, offline engine, in process
  (``bench/rca_answers.py``).

Both are scored the same way (``bench/rca_score.py``): top-1 (the first service named is the
culprit), top-3, seconds per case (median), and for veridiag the confirmed claims naming a
wrong origin — overall, where the fault shows in the data, per system and per fault type. A
side that cannot run (no Python 3.12, the package index unreachable, a day veridiag cannot
import) is reported with why, and its numbers are absent ("not measured"), never zero.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from veridiag.bench.nezha import Fault, NezhaDay, NezhaFormatError, read_days
from veridiag.bench.rca_score import Breakdown, CaseScore, Tally, breakdown, score
from veridiag.bench.rcaeval import METHODS, BaselineDay, BaselineUnavailableError, Venv, ensure_venv, run_day

Progress = Callable[[str], None]
#: veridiag's side: one day and the faults to ask about → one scored case per fault.
Answerer = Callable[[NezhaDay, list[Fault], Progress], list[CaseScore]]

SAMPLES_VARIABLE = "VERIDIAG_NEZHA_SAMPLES"
#: ``baseline_top1`` and ``baseline_top3`` are this method's (the issue's reference figure).
BASELINE = "baro"
#: ``--quick``: this many faults a day (a smoke run of the whole path, not a measurement).
QUICK_FAULTS = 3


class RcaSlice(BaseModel):
    """Some cases: veridiag's scores beside the baselines' on the same cases. veridiag's
    numbers are None when it did not run; a baseline's when it did not."""

    cases: int
    top1: float | None
    top3: float | None
    wrong_origin_confirmed: int | None
    seconds_per_case: float | None
    #: Cases veridiag answered nothing for because it failed (a failed session or a crash).
    errors: int | None
    #: Cases whose answer says one service stands out as the origin, and of those the culprit
    #: (a decided answer on the wrong service is the costliest mistake).
    decided: int | None = None
    decided_right: int | None = None
    baseline_top1: float | None
    baseline_top3: float | None
    baseline_seconds_per_case: float | None
    #: Every baseline method's tally on these cases.
    baselines: dict[str, Tally]


class CaseRow(BaseModel):
    """One fault: what was injected and what each answerer named first."""

    id: str
    fault_type: str
    shows_in: str
    culprit: str
    question: str | None = None
    veridiag: list[str] | None = None
    veridiag_wrong_origin_confirmed: int | None = None
    veridiag_error: str | None = None
    #: The service veridiag's answer says stands out, if any.
    veridiag_decided: str | None = None
    baselines: dict[str, list[str]]


class RcaBench(RcaSlice):
    """The whole run (``rca.top1`` …) with the same keys where the fault shows in the data,
    per system and per fault type (``rca.by_system.trainticket.top1``)."""

    days: list[str]
    #: What ``baseline_top1`` / ``baseline_top3`` / ``baseline_seconds_per_case`` are.
    baseline: str
    shown: RcaSlice
    by_system: dict[str, RcaSlice]
    by_fault_type: dict[str, RcaSlice]
    #: Why a side did not run (None: it ran).
    veridiag_error: str | None
    baseline_error: str | None
    #: The baseline's environment: where, which Python, and what building it took.
    venv: Venv | None
    baseline_versions: dict[str, str]
    #: Wall seconds of each day's baseline process (start-up, reading the files, every case).
    baseline_process_seconds: dict[str, float]
    #: Wall seconds of each day on veridiag's side (building its home, then every question).
    veridiag_day_seconds: dict[str, float]
    quick: bool
    cases_detail: list[CaseRow]


def samples_folder() -> Path:
    """``VERIDIAG_NEZHA_SAMPLES``, else the first ``shared/samples/nezha`` beside the working
    directory or this checkout, or one of their parents (where the project keeps it)."""
    configured = os.environ.get(SAMPLES_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    starts = [Path.cwd().resolve(), Path(__file__).resolve().parent]
    for start in starts:
        for folder in (start, *start.parents):
            candidate = folder / "shared" / "samples" / "nezha"
            if candidate.is_dir():
                return candidate
    raise NezhaFormatError(
        f"no shared/samples/nezha beside the working directory or the checkout; set {SAMPLES_VARIABLE}"
    )


def _silent(_text: str) -> None:
    return None


def run(
    samples: Path | None = None,
    *,
    quick: bool = False,
    progress: Progress | None = None,
    answerer: Answerer | None = None,
    venv: Path | None = None,
) -> RcaBench:
    """Every shared day through the baseline and through veridiag (``answerer``; default the
    real pipeline, ``rca_answers.veridiag_answers``)."""
    say = progress or _silent
    days = read_days(samples or samples_folder())
    if quick:
        days = [day.model_copy(update={"faults": day.faults[:QUICK_FAULTS]}) for day in days]
    faults = [fault for day in days for fault in day.faults]

    baseline_days, environment, baseline_error = _baseline(days, venv, say)
    baseline_scores = _baseline_scores(days, baseline_days)

    if answerer is None:
        from veridiag.bench.rca_answers import veridiag_answers  # the pipeline: only for this side

        answerer = veridiag_answers
    veridiag_scores: list[CaseScore] | None = None
    veridiag_error = None
    day_seconds: dict[str, float] = {}
    try:
        answered: list[CaseScore] = []
        for day in days:
            say(f"veridiag on {day.name}")
            started = time.perf_counter()
            answered += answerer(day, day.faults, say)
            day_seconds[day.name] = round(time.perf_counter() - started, 2)
        veridiag_scores = answered
    except Exception as exc:  # the side that failed is reported, the other one still counts
        veridiag_error = f"{exc.__class__.__name__}: {exc}"

    ours = breakdown(veridiag_scores) if veridiag_scores is not None else None
    theirs = {name: breakdown(cases) for name, cases in baseline_scores.items()}

    def sliced(pick: Callable[[Breakdown], Tally | None], keep: Callable[[Fault], bool]) -> RcaSlice:
        return _slice(ours, theirs, pick, sum(1 for fault in faults if keep(fault)))

    systems = sorted({fault.system for fault in faults})
    types = sorted({fault.fault_type for fault in faults})
    overall = sliced(lambda whole: whole.overall, lambda _fault: True)
    return RcaBench(
        **overall.model_dump(),
        days=[day.name for day in days],
        baseline=BASELINE,
        shown=sliced(lambda whole: whole.shown, lambda fault: fault.shows_in != "nowhere"),
        by_system={name: sliced(*_system(name)) for name in systems},
        by_fault_type={name: sliced(*_fault_type(name)) for name in types},
        veridiag_error=veridiag_error,
        baseline_error=baseline_error,
        venv=environment,
        baseline_versions=baseline_days[0].versions if baseline_days else {},
        baseline_process_seconds={found.day: found.process_seconds for found in baseline_days},
        veridiag_day_seconds=day_seconds,
        quick=quick,
        cases_detail=_rows(faults, veridiag_scores, baseline_scores),
    )


Pick = tuple[Callable[[Breakdown], Tally | None], Callable[[Fault], bool]]


def _system(name: str) -> Pick:
    return (lambda whole: whole.by_system.get(name)), (lambda fault: fault.system == name)


def _fault_type(name: str) -> Pick:
    return (lambda whole: whole.by_fault_type.get(name)), (lambda fault: fault.fault_type == name)


def _slice(
    ours: Breakdown | None, theirs: dict[str, Breakdown], pick: Callable[[Breakdown], Tally | None], cases: int
) -> RcaSlice:
    mine = pick(ours) if ours is not None else None
    others = {name: found for name, whole in theirs.items() if (found := pick(whole)) is not None}
    reference = others.get(BASELINE)
    return RcaSlice(
        cases=cases,
        top1=mine.top1 if mine else None,
        top3=mine.top3 if mine else None,
        wrong_origin_confirmed=mine.wrong_origin_confirmed if mine else None,
        seconds_per_case=mine.seconds_per_case if mine else None,
        errors=mine.errors if mine else None,
        decided=mine.decided if mine else None,
        decided_right=mine.decided_right if mine else None,
        baseline_top1=reference.top1 if reference else None,
        baseline_top3=reference.top3 if reference else None,
        baseline_seconds_per_case=reference.seconds_per_case if reference else None,
        baselines=others,
    )


def _baseline(
    days: list[NezhaDay], venv: Path | None, say: Progress
) -> tuple[list[BaselineDay], Venv | None, str | None]:
    try:
        environment = ensure_venv(venv, progress=say)
    except BaselineUnavailableError as exc:
        return [], None, str(exc)
    found = []
    try:
        for day in days:
            say(f"baseline (RCAEval {', '.join(METHODS)}) on {day.name}")
            found.append(run_day(environment, day))
    except BaselineUnavailableError as exc:
        return [], environment, str(exc)
    return found, environment, None


def _baseline_scores(days: list[NezhaDay], found: list[BaselineDay]) -> dict[str, list[CaseScore]]:
    if not found:
        return {}  # the baseline did not run: nothing to score, not a miss on every case
    scores: dict[str, list[CaseScore]] = {name: [] for name in METHODS}
    for day, result in zip(days, found, strict=True):
        by_id = {case.id: case for case in result.cases}
        for fault in day.faults:
            case = by_id.get(fault.id)
            for name, scored in scores.items():
                ranking = case.methods.get(name) if case else None
                if ranking is None:
                    scored.append(score(fault, [], error="the baseline returned no ranking for this case"))
                else:
                    scored.append(score(fault, ranking.services, seconds=ranking.seconds, error=ranking.error))
    return scores


def _rows(faults: list[Fault], ours: list[CaseScore] | None, theirs: dict[str, list[CaseScore]]) -> list[CaseRow]:
    mine = {case.fault_id: case for case in ours or []}
    others = {name: {case.fault_id: case for case in cases} for name, cases in theirs.items()}
    rows = []
    for fault in faults:
        answered = mine.get(fault.id)
        rows.append(
            CaseRow(
                id=fault.id,
                fault_type=fault.fault_type,
                shows_in=fault.shows_in,
                culprit=fault.culprit,
                question=answered.question if answered else None,
                veridiag=answered.named[:3] if answered else None,
                veridiag_wrong_origin_confirmed=answered.wrong_origin_confirmed if answered else None,
                veridiag_error=answered.error if answered else None,
                veridiag_decided=answered.decided if answered else None,
                baselines={name: cases[fault.id].named[:3] for name, cases in others.items() if fault.id in cases},
            )
        )
    return rows
