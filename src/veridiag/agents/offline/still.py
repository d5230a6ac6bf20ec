"""Whether it is still happening (``Intent.still``: "payment-service还在报错吗", "is checkout still
failing?"), said first, from the survey of the newest hour of data (the planner's window for such
a question) and the ERROR lines read there.

For each service asked about — or, when none is named, for the service that changed most — one
of: it still changed beyond its own history (the survey's suspect line), it still logs ERROR lines
(the log search's count), or neither (the survey's quiet line, and no ERROR line). A service the
survey did not find quiet and did not rank, or that has no data there, gets no such sentence:
fail closed, never "it stopped" without the evidence that it did.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from veridiag.agents.offline.findings import Findings
from veridiag.text.wordfiles import Bilingual, WordModel, bundled_words
from veridiag.tools.records import LogEvidence, SuspectEvidence
from veridiag.tools.results import ToolCallResult


class StillWords(WordModel):
    changed: str
    errors: str
    quiet: str
    quiet_no_errors: str
    none: str


@lru_cache(maxsize=1)
def still_words() -> Bilingual[StillWords]:
    return bundled_words("veridiag.agents.offline", "still.yaml", Bilingual[StillWords])


def answer_still(
    findings: Findings,
    survey: ToolCallResult,
    evidence: SuspectEvidence,
    named: Sequence[str],
    logs: Sequence[tuple[ToolCallResult, LogEvidence]],
) -> None:
    """One answering claim per service asked about (the one that changed most when none is)."""
    words = still_words()[findings.lang]
    span = findings.during(evidence.start, evidence.end)
    asked = [s for s in named if s not in evidence.without_data]
    if not named:
        if evidence.suspects:
            asked = [evidence.suspects[0].service]
        elif evidence.examined:
            text = words.none.format(**span, count=len(evidence.examined))
            findings.claim(
                "observation", text, [(survey, evidence.line), (survey, evidence.verdict_line)], answers=True
            )
            return
    for service in asked:
        suspect = next((s for s in evidence.suspects if s.service == service), None)
        errors = [(r, e) for r, e in logs if e.service == service and e.level == "ERROR" and e.counted is None]
        # a change recorded before the newest hour (the survey weighs one as a cause ahead of
        # what followed it) is an instant then, not something still going on
        going = [g for g in suspect.signals if g.source != "change" or g.onset >= evidence.start] if suspect else []
        if suspect is not None and going:
            signal = going[0]
            text = words.changed.format(**span, service=service, what=findings.signal(signal))
            quotes = [(survey, suspect.line), (survey, signal.line), (survey, evidence.line)]
        elif (logged := next(((r, e) for r, e in errors if e.matched), None)) is not None:
            result, found = logged
            text = words.errors.format(**span, service=service, matched=found.matched)
            quotes = [(result, found.line)]
        elif service in evidence.quiet and evidence.quiet_line is not None:
            quotes = [(survey, evidence.quiet_line), (survey, evidence.line)]
            phrase = words.quiet_no_errors if errors else words.quiet
            text = phrase.format(**span, service=service)
            quotes += [(r, e.line) for r, e in errors[:1]]
        else:
            continue  # neither found changing nor found quiet: no word on whether it stopped
        findings.claim("observation", text, quotes, answers=True)
