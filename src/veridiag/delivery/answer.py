"""What a posted answer says first, read from what the session already holds (issue 28): one
reading for the terminal, ``ask --format markdown`` and chat.

- ``first_line``: the one-line answer after the verdict badge — the answer's own first line after
  its scope (``pipeline/shape.py`` ``answer_lines``, what the composer guard bounds and requires a
  label on), within ``FIRST_LINE_CHARS``.
- ``key_fact_ids``: the facts listed after it, in the order the answer lists them — the composer
  input's ranking (``pipeline/shape.py`` ``key_facts``), carried by the answer document; a
  document without one gives its first facts.
- ``confirming_needs``: what would confirm each hypothesis — a need stated once, under the
  hypothesis it speaks of most, and never a request to check what a confirmed fact shows;
  ``fresh_steps``: the next steps that are no such need again.
- ``trend_invocation`` / ``culprit_trend``: the culprit's metric series, for the sparkline.

Everything here reads texts the Verifier allowed and records the tools stored; it words and ranks
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from veridiag.contracts.answer import AnswerDocument
from veridiag.contracts.delivery import ReportFact, ReportTrend
from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.json import json_object
from veridiag.pipeline.composer_input import composer_wording
from veridiag.pipeline.shape import MAX_KEY_FACTS, answer_lines
from veridiag.text.tokens import keywords
from veridiag.tools.render import stored_points

#: A first line longer than this is cut with "…" (a chat header, read on a phone).
FIRST_LINE_CHARS = 280
#: A trend keeps at most this many points (the sparkline draws ~24 characters of them).
TREND_POINTS = 240

#: What a need asks to check: a quoted term, or a name joined by - _ . (``maximum-pool-size``).
_SUBJECT = re.compile(r"`([^`]+)`|\b[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+\b")


def first_line(document: AnswerDocument) -> str:
    """The one-line answer: the answer's first line after its scope line, "" when it has none. A
    document that does not carry its scope (built by an older version) gives its headline, the
    line the template opens with."""
    if document.scope:
        lines = answer_lines(document.final_answer, document.scope)
        line = lines[0] if lines else ""
    else:
        line = " ".join(document.headline.split())
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1].rstrip() + "…"


def key_fact_ids(document: AnswerDocument, facts: Sequence[ReportFact]) -> list[str]:
    """The claim ids of the key facts, in the answer's order, at most ``MAX_KEY_FACTS``, each one
    of ``facts``: the document's ranking (``AnswerDocument.key_facts``), or its first facts when
    it has none."""
    ids = document.key_facts if document.key_facts is not None else [f.claim_id for f in facts]
    shown = {fact.claim_id for fact in facts}
    return [claim_id for claim_id in dict.fromkeys(ids) if claim_id in shown][:MAX_KEY_FACTS]


def shown_by_fact(need: str, confirmed: Sequence[str]) -> bool:
    """A need that asks to check something a confirmed fact already states verbatim ("was
    `maximum-pool-size` changed?" beside the recorded change) is no need."""
    if not composer_wording().patterns.check_request.search(need):
        return False
    subjects = [m.group(1) or m.group(0) for m in _SUBJECT.finditer(need)]
    folded = [text.casefold() for text in confirmed]
    return any(subject.casefold() in text for subject in subjects for text in folded)


def confirming_needs(hypotheses: Sequence[tuple[str, Sequence[str]]], confirmed: Sequence[str]) -> list[list[str]]:
    """For each (hypothesis, needs listed for it): the needs shown under it. A need a confirmed
    fact already shows is dropped; every other need is shown once — each hypothesis first gets
    the one of its needs it shares most words with (so each keeps something that would confirm
    it while there are enough), then each need left goes to the hypothesis listing it that it
    shares most words with (the first on a tie)."""
    listed = [list(dict.fromkeys(n.strip() for n in needs if n.strip())) for _, needs in hypotheses]
    words = [keywords(text) for text, _ in hypotheses]
    open_needs = list(dict.fromkeys(n for needs in listed for n in needs if not shown_by_fact(n, confirmed)))
    need_words = {n: keywords(n) for n in open_needs}
    shown: list[list[str]] = [[] for _ in hypotheses]
    taken: set[str] = set()
    for index, needs in enumerate(listed):
        candidates = [n for n in needs if n in need_words and n not in taken]
        if candidates:
            best = max(candidates, key=lambda n: (len(words[index] & need_words[n]), -candidates.index(n)))
            shown[index].append(best)
            taken.add(best)
    for need in open_needs:
        if need in taken:
            continue
        owners = [i for i, needs in enumerate(listed) if need in needs]
        owner = max(owners, key=lambda i: (len(words[i] & need_words[need]), -i))
        shown[owner].append(need)
        taken.add(need)
    # in the order each hypothesis listed them
    return [[n for n in listed[i] if n in shown[i]] for i in range(len(hypotheses))]


def trend_invocation(facts: Sequence[ReportFact], key_facts: Sequence[str]) -> int | None:
    """The metrics invocation of the culprit's series: the first one the key facts cite, in their
    order (the culprit's facts lead them), else the first one any fact cites."""
    by_id = {fact.claim_id: fact for fact in facts}
    ranked = [by_id[claim_id] for claim_id in key_facts if claim_id in by_id]
    for fact in [*ranked, *(f for f in facts if f not in ranked)]:
        for evidence in fact.evidence:
            if evidence.tool_name == "query_metrics" and evidence.invocation_id is not None:
                return evidence.invocation_id
    return None


def fresh_steps(steps: Iterable[str], needs: Iterable[str]) -> list[str]:
    """The next steps that are not one of ``needs`` (what the hypotheses shown say would confirm
    them): a need is said once, under its hypothesis."""
    said = set(needs)
    return [step for step in steps if step not in said]


def culprit_trend(invocation: InvocationRecord | None) -> ReportTrend | None:
    """The series a metrics invocation stored, as a trend; None for another tool's, a failed
    call or one without points."""
    if invocation is None or invocation.tool_name != "query_metrics" or invocation.status != "ok":
        return None
    details = json_object(invocation.retrieval_details)
    unit = details.get("unit")
    unit = unit if isinstance(unit, str) else ""
    values = [value for _moment, value in stored_points(invocation.output, unit)]
    if not values:
        return None
    if len(values) > TREND_POINTS:  # the largest of each run: a spike stays in
        step = -(-len(values) // TREND_POINTS)
        values = [max(values[i : i + step]) for i in range(0, len(values), step)]
    arguments = invocation.arguments
    service, metric = arguments.get("service"), arguments.get("metric") or arguments.get("promql")
    return ReportTrend(
        invocation_id=invocation.id,
        service=service if isinstance(service, str) else "",
        metric=metric if isinstance(metric, str) else "",
        unit=unit,
        values=values,
    )
