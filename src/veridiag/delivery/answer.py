"""What a chat message says first, read from what the session already holds (issue 28).

- ``first_line``: the one-line answer after the verdict badge. Today the first sentence of the
  pipeline's headline (``pipeline/headline.py``, kept in the composer input and the answer
  document), within ``FIRST_LINE_CHARS``; the one place to switch to the pipeline's own first
  line once the answer carries one.
- ``rank_facts``: the facts a chat message lists, at most ``MAX_KEY_FACTS``, ranked by what the
  question asked: what answers it, then the culprit's facts (the service the answer names
  first), causes and changes before symptoms, larger symptoms first; never what the first line
  already states, a series that stayed normal or a quiet service (``words.yaml`` ``quiet``)
  unless it answers; one series' recurrences once.
- ``confirming_needs``: what would confirm each hypothesis — a need stated once, under the
  hypothesis it speaks of most, and never a request to check what a confirmed fact shows.
- ``culprit_trend``: the culprit's metric series, for the sparkline.

Everything here reads texts the Verifier allowed and records the tools stored; it words nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from veridiag.contracts.answer import AnswerDocument
from veridiag.contracts.composer import AllowedClaim, ComposerInput
from veridiag.contracts.delivery import ReportFact, ReportTrend
from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.json import json_object
from veridiag.pipeline.composer_input import composer_wording
from veridiag.text.entities import extract_entities
from veridiag.text.tokens import keywords
from veridiag.tools.render import stored_points

#: At most this many facts follow the first line in a chat message.
MAX_KEY_FACTS = 5
#: A first line longer than this is cut with "…" (a chat header, read on a phone).
FIRST_LINE_CHARS = 280
#: A trend keeps at most this many points (the sparkline draws ~24 characters of them).
TREND_POINTS = 240

_SENTENCE_END = re.compile(r"(?<=[。！？])|(?<=[.!?])\s+(?=\S)")
_FACTOR = re.compile(r"×\s*(\d+(?:\.\d+)?)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_TYPE_ORDER = {"root_cause": 0, "change": 1, "symptom": 2, "observation": 3}
#: What a need asks to check: a quoted term, or a name joined by - _ . (``maximum-pool-size``).
_SUBJECT = re.compile(r"`([^`]+)`|\b[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+\b")


def first_line(document: AnswerDocument, composer_input: ComposerInput | None = None) -> str:
    """The one-line answer: the headline's first sentence (the composer input's when there is
    one, else the answer document's), "" when nothing was confirmed."""
    headline = (composer_input.headline if composer_input is not None else "") or document.headline
    headline = " ".join(headline.split())
    if not headline:
        return ""
    sentence = _SENTENCE_END.split(headline, maxsplit=1)[0].strip()
    line = sentence or headline
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True)
class Ranking:
    """What the key facts are ranked by: the allowed claims as the composer input typed them
    (by id), the first line, and the words of a quiet fact."""

    claims: Mapping[str, AllowedClaim]
    first_line: str
    quiet: re.Pattern[str]


def culprit(facts: Sequence[ReportFact], claims: Mapping[str, AllowedClaim]) -> str | None:
    """The service the answer is about: the first one named by a claim that answers the
    question, else by a root cause, else by the first fact."""
    typed = [claims.get(f.claim_id) for f in facts]
    leading = [c.claim_text for c in typed if c is not None and c.answers]
    leading += [c.claim_text for c in typed if c is not None and c.claim_type == "root_cause"]
    leading += [f.text for f in facts[:1]]
    for text in leading:
        named = [e.text for e in extract_entities(text, ()) if e.kind == "service"]
        if named:
            return named[0]
    return None


def ranked(facts: Sequence[ReportFact], ranking: Ranking) -> list[ReportFact]:
    """All ``facts``, best first (``rank_facts`` without its cuts)."""
    service = culprit(facts, ranking.claims)

    def key(item: tuple[int, ReportFact]) -> tuple[int, int, int, Decimal, int]:
        index, fact = item
        claim = ranking.claims.get(fact.claim_id)
        answers = claim is not None and claim.answers
        kind = claim.claim_type if claim is not None else "observation"
        return (
            0 if answers else 1,
            0 if service is not None and _names(fact.text, service) else 1,
            _TYPE_ORDER.get(kind, len(_TYPE_ORDER)),
            -(_factor(fact.text) or Decimal(0)),
            index,
        )

    return [fact for _, fact in sorted(enumerate(facts), key=key)]


def rank_facts(facts: Sequence[ReportFact], ranking: Ranking) -> list[str]:
    """The claim ids of at most ``MAX_KEY_FACTS`` facts a chat message lists, best first."""
    stated = _plain(ranking.first_line)
    chosen: dict[str, ReportFact] = {}
    for fact in ranked(facts, ranking):
        claim = ranking.claims.get(fact.claim_id)
        if _plain(fact.text) and _plain(fact.text) in stated:
            continue
        if ranking.quiet.search(fact.text) and not (claim is not None and claim.answers):
            continue
        chosen.setdefault(_NUMBER.sub("#", fact.text), fact)
    return [fact.claim_id for fact in list(chosen.values())[:MAX_KEY_FACTS]]


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


def trend_invocation(facts: Sequence[ReportFact], ranking: Ranking) -> int | None:
    """The metrics invocation of the culprit's series: the one the best-ranked fact cites, of
    the facts naming the culprit (all facts when none does)."""
    service = culprit(facts, ranking.claims)
    order = ranked(facts, ranking)
    naming = [f for f in order if service is not None and _names(f.text, service)] or order
    for fact in naming:
        for evidence in fact.evidence:
            if evidence.tool_name == "query_metrics" and evidence.invocation_id is not None:
                return evidence.invocation_id
    return None


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


def _names(text: str, service: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(service)}(?![A-Za-z0-9_])", text) is not None


def _plain(text: str) -> str:
    return " ".join(text.split()).rstrip("。.;；").strip()


def _factor(text: str) -> Decimal | None:
    found = [Decimal(m.group(1)) for m in _FACTOR.finditer(text)]
    return max(found) if found else None
