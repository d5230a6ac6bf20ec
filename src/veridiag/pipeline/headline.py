"""The answer's headline (issue 17): what is wrong, where, since when, how bad, and the most
likely cause with its label — at most two sentences, built by code from the allowed claims.

When the Executor marked claims as answering what the question asked (``answers``: the culprit,
that none stands out, the ranking, the onset, a count), the headline is those claims — for "is X
to blame?" opened with yes, no or cannot tell, read from which service the allowed root cause
names — so the first sentence answers the question, not the largest anomaly.

It quotes allowed claims verbatim, so every number in it is one the Verifier allowed and the
composer guard finds in the input; its own words are the template's (``template.yaml``). A
hypothesis is named only under LOW_CONFID (PASS states claims only, REJECT no cause), only
when the allowed claims hold all its facts, and always with the hypothesis label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from functools import lru_cache

from veridiag.agents.template import template_phrases
from veridiag.contracts.composer import AllowedClaim, AllowedHypothesis
from veridiag.contracts.plan import Intent
from veridiag.contracts.verifier import Verdict
from veridiag.pipeline.shape import fit_sentences, fits
from veridiag.text.entities import Corpus, extract_entities

#: A symptom's size as the offline engine writes it, "(×18.81)". Read with a pattern because the
#: entity lexer reads "×" only as a count unit after a number, never as a factor before one.
_FACTOR = re.compile(r"×\s*(\d+(?:\.\d+)?)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_END = "。.;；!！"
#: At most this many symptoms are named; the detailed list follows the headline.
MAX_SYMPTOMS = 2
#: At most this many claims answering the question open it.
MAX_ANSWERING = 2


def build_headline(
    lang: str,
    verdict: Verdict,
    claims: Sequence[AllowedClaim],
    hypotheses: Sequence[AllowedHypothesis] = (),
    known_services: Sequence[str] = (),
    *,
    intent: Intent | None = None,
    without_data: Sequence[str] = (),
    quoted_only: Sequence[str] = (),
) -> str:
    """The headline, or "" when nothing is allowed (the answer then says what is missing).
    ``without_data``: the services asked about that hold no data in the period examined.
    ``quoted_only``: facts the evidence holds only in lines that assert or order — a claim or
    hypothesis naming one is a quotation, listed below the headline, never its cause or
    symptom (issue 27 D4)."""
    if quoted_only:
        claims = [c for c in claims if not _names_any(c.claim_text, quoted_only)]
        hypotheses = [h for h in hypotheses if not _names_any(h.hypothesis_text, quoted_only)]
    if not claims:
        return ""
    text = template_phrases()[lang]
    answering = [c for c in claims if c.answers and not (c.claim_type == "root_cause" and verdict == "REJECT")]
    if answering:
        # what the data lacks first (a named service without any), then a root cause — what "why"
        # asks — then what else answers (that none stood out)
        order = {"observation": 0, "root_cause": 1}
        ranked = sorted(answering, key=lambda c: order.get(c.claim_type, 2))
        answer, leading = _answer(
            text, lang, ranked[:MAX_ANSWERING], intent, known_services, others=claims, without_data=without_data
        )
        # a yes or no is followed by the cause it is read from; otherwise the answer's own order
        return _first_line(text, lang, answer, leading=leading, cause_first=leading > 0)
    causes = [c for c in claims if c.claim_type == "root_cause" and verdict != "REJECT"]
    cause = min(causes, key=lambda c: _first_time(c, known_services)) if causes else None
    symptoms = _main_symptoms([c for c in claims if c is not cause])
    parts: list[tuple[str, str]] = []
    if cause is not None:
        parts.append((_cause(text, "cause", cause.claim_text), _label(cause)))
    elif verdict == "LOW_CONFID":
        grounded = Corpus([c.claim_text for c in claims])
        hypothesis = next(
            (
                h.hypothesis_text
                for h in hypotheses
                # a claim that said more than its evidence (every request failed, ×100) is no cause
                if h.origin != "overstated"
                and all(grounded.contains(e) for e in extract_entities(h.hypothesis_text, known_services))
            ),
            None,
        )
        if hypothesis:
            parts.append((_cause(text, "hypothesis", hypothesis), "unknown"))
    if symptoms:
        stated = [_bare(c.claim_text) + _suffix(text, c) for c in symptoms]
        inferred = any(c.verification == "reasonable_inference" for c in symptoms)
        # what is wrong opens the line, the cause follows; a symptom that does not fit goes to the
        # key facts below it
        parts.insert(
            0, (text["headline_sep"].join(stated) + text["headline_end"], "inferred" if inferred else "confirmed")
        )
    return _first_line(text, lang, parts)


def _label(claim: AllowedClaim) -> str:
    return "inferred" if claim.verification == "reasonable_inference" else "confirmed"


def _first_line(
    text: dict[str, str], lang: str, parts: Sequence[tuple[str, str]], *, leading: int = 0, cause_first: bool = True
) -> str:
    """The label, then the sentences (each with its own label) that fit the first line's bound
    (``pipeline/shape.py``). When not all do and ``cause_first``, the ``leading`` ones (yes or
    no) stay first, then what cannot be told (a service without data), then the cause — the rest
    are key facts. The
    line's label is its answer's: the yes or no, else the cause, else what it states."""
    if not parts:
        return ""
    joiner = "" if lang == "zh" else " "
    if cause_first and len(parts) > 1 and not fits(text["answer_inferred"] + joiner.join(s for s, _ in parts), lang):
        first, rest = list(parts[:leading]), list(parts[leading:])
        unknown = [p for p in rest if p[1] == "unknown" and not _is_cause(text, p[0])]
        causes = [p for p in rest if _is_cause(text, p[0]) and p not in unknown]
        parts = first + unknown + causes + [p for p in rest if p not in unknown and p not in causes]
    label = _line_label(text, parts, leading)
    for _ in range(3):  # the label's length decides what fits, what fits decides the label
        prefix = text[f"answer_{label}"]
        sentences = [s.replace(text["inference"], "") if label == "inferred" else s for s, _ in parts]
        line, kept = fit_sentences(prefix, sentences, lang, keep=_labels())
        shown = _line_label(text, parts[:kept], min(leading, kept))
        if shown == label:
            break
        label = shown
    return line


def _line_label(text: dict[str, str], parts: Sequence[tuple[str, str]], leading: int) -> str:
    verdicts = [label for _, label in parts[:leading]]
    if verdicts:
        return _overall(verdicts)
    causes = [label for sentence, label in parts if _is_cause(text, sentence)]
    return causes[0] if causes else _overall([label for _, label in parts])


@lru_cache(maxsize=1)
def _labels() -> re.Pattern[str]:
    """The template's label words (an aside holding one stays in a shortened first line)."""
    words = [p[key] for p in template_phrases().values() for key in p if key.startswith("label_")]
    return re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))


def _is_cause(text: dict[str, str], sentence: str) -> bool:
    plain = text["headline_cause_plain"].split("{", 1)[0]
    labelled = text["headline_cause"].split("{", 1)[0]
    return sentence.startswith((plain, labelled))


def _answer(
    text: dict[str, str],
    lang: str,
    answering: Sequence[AllowedClaim],
    intent: Intent | None,
    known_services: Sequence[str],
    *,
    others: Sequence[AllowedClaim] = (),
    without_data: Sequence[str] = (),
) -> tuple[list[tuple[str, str]], int]:
    """The claims that answer the question, as sentences — a root cause first ("most likely
    cause: …"); "is X to blame?" opened with yes (an allowed root cause names X), no (it names
    another service) or cannot tell (none does), once for each service asked about ("is it X or
    Y?"), and never yes or no about one without data — then how bad it was: the largest symptom
    the answering claims do not already state. Each with its label (confirmed, inferred, unknown:
    cannot tell); and how many, from the first, are a yes or no (they stay first on a line too
    short for all)."""
    sentences = [
        _cause(text, "cause", c.claim_text)
        if c.claim_type == "root_cause"
        else _bare(c.claim_text) + _suffix(text, c) + text["headline_end"]
        for c in answering
    ]
    labels = [
        "unknown" if c.claim_type == "observation" and any(_names(c.claim_text, s) for s in without_data) else _label(c)
        for c in answering
    ]
    parts = list(zip(sentences, labels, strict=True))
    cleared: set[str] = set()
    leading = 0
    if intent is not None and intent.kind == "blame" and intent.about:
        roots = [c for c in answering if c.claim_type == "root_cause"]
        cause = _named(roots[0].claim_text, known_services) if roots else None
        verdicts = [
            (
                suspect,
                _blame(suspect, cause, without_data, affected=bool(roots) and _names(roots[0].claim_text, suspect)),
            )
            for suspect in intent.suspects or [intent.about]
        ]
        # the verdict on a service without data already says it has none: not said twice
        silent = {suspect for suspect, key in verdicts if key == "blame_no_data"}
        parts = [
            part
            for c, part in zip(answering, parts, strict=True)
            if not (c.claim_type == "observation" and any(_names(c.claim_text, s) for s in silent))
        ]
        # yes or no is as sure as the cause it is read from; cannot tell is cannot tell
        sure = _label(roots[0]) if roots else "confirmed"
        parts[0:0] = [
            (text[key].format(service=suspect), "unknown" if key in ("blame_unknown", "blame_no_data") else sure)
            for suspect, key in verdicts
        ]
        leading = len(verdicts)
        cleared |= {suspect for suspect, key in verdicts if key.startswith("blame_no") and key != "blame_no_data"}
    # how bad, of the one service the answer names first (another's symptom would read as the same
    # incident) — never of a service it has just said is not to blame
    first = _named(answering[0].claim_text, known_services) if answering else None
    named = [first] if first is not None and first not in cleared else []
    worst = _main_symptoms([c for c in others if not c.answers and any(_names(c.claim_text, s) for s in named)])[:1]
    if worst and any(c.claim_type == "root_cause" for c in answering) and _factor(worst[0].claim_text):
        parts.append((_bare(worst[0].claim_text) + _suffix(text, worst[0]) + text["headline_end"], _label(worst[0])))
    return parts, leading


def _overall(labels: Sequence[str]) -> str:
    if labels and all(label == "unknown" for label in labels):
        return "unknown"
    return "inferred" if any(label in ("inferred", "unknown") for label in labels) else "confirmed"


def _blame(suspect: str, cause: str | None, without_data: Sequence[str], *, affected: bool = False) -> str:
    """The template key: yes (the allowed root cause names ``suspect`` first), no (it names
    another — and, when it names ``suspect`` after it, as what the cause acted on: not the origin,
    where it shows), cannot tell (there is none, or ``suspect`` has no data: what has none is
    never cleared or blamed)."""
    if suspect in without_data:
        return "blame_no_data"
    if cause is None:
        return "blame_unknown"
    if cause == suspect:
        return "blame_yes"
    return "blame_no_affected" if affected else "blame_no"


def _names_any(text: str, facts: Sequence[str]) -> bool:
    folded = text.casefold()
    return any(fact.casefold() in folded for fact in facts)


def _named(claim_text: str, known_services: Sequence[str]) -> str | None:
    """The first service a claim names (as a whole name: ``svc-04`` is not named in ``svc-045``;
    at one place the longest name wins)."""
    # only the names the text holds are tried: a pattern for each of 200 services cost ~0.05 s
    found = [
        (match.start(), -len(s), s)
        for s in known_services
        if s in claim_text and (match := _name_pattern(s).search(claim_text)) is not None
    ]
    return min(found)[2] if found else None


def _names(claim_text: str, service: str) -> bool:
    return service in claim_text and _name_pattern(service).search(claim_text) is not None


@lru_cache(maxsize=512)
def _name_pattern(service: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(service)}(?![A-Za-z0-9_])")


def _cause(text: dict[str, str], label: str, cause: str) -> str:
    """The most likely cause; the first line's label says whether it is confirmed or inferred, a
    hypothesis (``label`` "hypothesis") says so itself."""
    if label == "hypothesis":
        return text["headline_cause"].format(label=text["label_hypothesis"], cause=_bare(cause)) + text["headline_end"]
    return text["headline_cause_plain"].format(cause=_bare(cause)) + text["headline_end"]


def _suffix(text: dict[str, str], claim: AllowedClaim) -> str:
    """An inferred symptom says so, as in the list below the headline."""
    return text["inference"] if claim.verification == "reasonable_inference" else ""


def _bare(claim_text: str) -> str:
    """A claim without its closing punctuation, to be joined into a sentence."""
    return claim_text.strip().rstrip(_END)


def _first_time(claim: AllowedClaim, known_services: Sequence[str]) -> tuple[int, str]:
    """Claims with a time first, earliest first (one clock format per answer); then the rest."""
    times = [e.text for e in extract_entities(claim.claim_text, known_services) if e.kind == "timestamp"]
    return (0, times[0]) if times else (1, "")


def _main_symptoms(claims: Sequence[AllowedClaim]) -> list[AllowedClaim]:
    """The symptoms with the largest factor against their own history; without any factor, the
    first symptom (the executor's order), else the first other claim."""
    symptoms = [c for c in claims if c.claim_type == "symptom"]
    sized = [(factor, c) for c in symptoms if (factor := _factor(c.claim_text)) is not None]
    if sized:
        ranked = sorted(sized, key=lambda item: item[0], reverse=True)
        # one series' recurrences are worded alike but for their numbers: name the series once
        chosen: dict[str, AllowedClaim] = {}
        for _, claim in ranked:
            chosen.setdefault(_NUMBER.sub("#", claim.claim_text), claim)
        return list(chosen.values())[:MAX_SYMPTOMS]
    return (symptoms or list(claims))[:1]


def _factor(claim_text: str) -> Decimal | None:
    found = [Decimal(m.group(1)) for m in _FACTOR.finditer(claim_text)]
    return max(found) if found else None
