"""What kind of question it is (``intents.yaml``), so the answer's first sentence answers that.

A closed vocabulary of intents — why, what is wrong, which (ranked, by a measure or as
suspects), is X to blame, when did it start, what changed, how many — each asked by patterns in
Chinese and English. Patterns that need a service are filled with the services the question
names exactly, so "是不是 mysql 的问题" asks about mysql only where mysql is a service.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Literal

from veridiag.contracts.plan import Intent, IntentId
from veridiag.text.cjk import HAN
from veridiag.text.normalize import reader_text
from veridiag.text.wordfiles import AnyOf, Word, WordModel, bundled_words

_SERVICE = "{service}"
_MIXED = re.compile(rf"(?<=[{HAN}])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[{HAN}])")


class IntentWords(WordModel):
    id: IntentId
    patterns: list[Word]


class KindsAsked(WordModel):
    #: A family of analysis/signatures.yaml → the words people write for it.
    words: dict[str, list[Word]]
    #: How a kind is asked about yes or no, with ``{kind}`` where its words stand.
    patterns: list[Word]


class IntentBook(WordModel):
    intents: list[IntentWords]
    rank_by: dict[str, list[Word]]
    recent: AnyOf
    still: AnyOf
    symptoms: AnyOf
    alternatives: AnyOf
    levels: dict[Literal["ERROR", "WARN"], AnyOf]
    metric_parts_ignored: list[Word]
    metric_words: dict[str, list[Word]]
    kinds_asked: KindsAsked


@lru_cache(maxsize=1)
def intent_book() -> IntentBook:
    return bundled_words("veridiag.agents.offline", "intents.yaml", IntentBook)


@lru_cache(maxsize=1)
def _compiled() -> list[tuple[IntentId, list[tuple[str, re.Pattern[str] | None]]]]:
    """Each intent's patterns; those without ``{service}`` compiled once (those with it are
    compiled with the question's names). A pattern that does not compile fails, naming itself."""
    return [
        (entry.id, [(p, None if _SERVICE in p else _compile(p)) for p in entry.patterns])
        for entry in intent_book().intents
    ]


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"intents.yaml: pattern {pattern!r} does not compile: {exc}") from None


def read_intent(
    question: str,
    services: list[str],
    spellings: Mapping[str, str] | None = None,
    without_data: Sequence[str] = (),
) -> Intent:
    """The intent of ``question``; ``services`` are those it names exactly, in order,
    ``spellings`` the words it writes for a service it misspells (word → service), and
    ``without_data`` the names it asks about that no data holds (asked about all the same:
    "is it kafka or payment-service?" asks about both)."""
    spellings = {word: service for word, service in (spellings or {}).items() if service in services}
    services = [*services, *(s for s in without_data if s not in services)]
    text = intent_text(question)
    book = intent_book()
    still = book.still.search(text)
    recent = still is not None or book.recent.search(text) is not None
    names = "|".join(re.escape(s) for s in sorted([*services, *spellings], key=len, reverse=True))
    for asked, patterns in _compiled():
        for written, compiled in patterns:
            if compiled is None and not names:
                continue
            found = (compiled or _compile(written.replace(_SERVICE, f"(?P<service>{names})"))).search(text)
            if found is None:
                continue
            about = found.groupdict().get("service")
            suspects = []
            if about:
                before = _alternatives_before(text, found.start("service"), names)
                suspects = [*before, about, *_alternatives(text, found.end("service"), names)]
            canonical = list(dict.fromkeys(_canonical(s, services, spellings) for s in suspects))
            return Intent(
                kind=asked,
                rank_by=_rank_by(text) if asked == "rank" else None,
                level=_level(text) if asked == "count" else None,
                about=canonical[0] if canonical else None,
                suspects=canonical if asked == "blame" else [],
                recent=recent,
                still=still.group(0) if still else None,
                phrase=found.group(0)[:200],
                kind_asked=kind_asked(text),
            )
    kind: IntentId = "cause" if book.symptoms.search(text) else "abnormal"
    return Intent(kind=kind, recent=recent, still=still.group(0) if still else None, kind_asked=kind_asked(text))


def kind_asked(text: str) -> str | None:
    """The kind of fault ``text`` asks about yes or no ("is it the network?": network), if any."""
    for family, pattern in _kind_patterns():
        if pattern.search(text):
            return family
    return None


@lru_cache(maxsize=1)
def _kind_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """One pattern a family: its words in every way a kind is asked about (compiled once)."""
    kinds = intent_book().kinds_asked
    found = []
    for family, words in kinds.words.items():
        either = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
        joined = "|".join(f"(?:{p.replace('{kind}', f'(?:{either})')})" for p in kinds.patterns)
        found.append((family, _compile(joined)))
    return found


def intent_text(question: str) -> str:
    """The question as intents are read in it: as a reader reads it, with English words written
    against Chinese ones ("左右was it") spaced, so \b holds there."""
    return _MIXED.sub(" ", reader_text(question))


def blame_patterns() -> list[str]:
    """The patterns of "is X to blame?", each with ``{service}`` where the suspect stands."""
    return next([p for p, _c in patterns] for asked, patterns in _compiled() if asked == "blame")


def _alternatives(text: str, end: int, names: str) -> list[str]:
    """The services asked about after the first, each joined to the one before by an "or"
    (``intents.yaml`` ``alternatives``: 还是, 或者, or, a comma): "frontend 还是 cartservice"."""
    found: list[str] = []
    joined = re.compile(
        rf"\s*(?:{intent_book().alternatives.pattern})\s*(?:(?:is|was)\s+it\s+|是\s*)?(?:the\s+)?"
        rf"(?P<service>{names})(?![A-Za-z0-9_-])",
        re.IGNORECASE,
    )
    while (more := joined.match(text, end)) is not None:
        found.append(more.group("service"))
        end = more.end()
    return found


def _alternatives_before(text: str, start: int, names: str) -> list[str]:
    """The services joined by an "or" to the one asked about, written before it ("is frontend or
    cartservice the culprit?")."""
    found: list[str] = []
    joined = re.compile(
        rf"(?<![A-Za-z0-9_-])(?P<service>{names})\s*(?:{intent_book().alternatives.pattern})\s*"
        rf"(?:(?:is|was)\s+it\s+|是\s*)?(?:the\s+)?$",
        re.IGNORECASE,
    )
    while (more := joined.search(text[:start])) is not None:
        found.insert(0, more.group("service"))
        start = more.start()
    return found


def _level(text: str) -> Literal["ERROR", "WARN"] | None:
    """The level of the lines a question asks for (``intents.yaml`` ``levels``): the first named."""
    found = [(m.start(), level) for level, words in intent_book().levels.items() if (m := words.search(text))]
    return min(found)[1] if found else None


def _rank_by(text: str) -> str | None:
    lowered = text.lower()
    found = [
        (lowered.find(word.lower()), family)
        for family, words in intent_book().rank_by.items()
        for word in words
        if _has_word(lowered, word.lower())
    ]
    return min(found)[1] if found else None


def _has_word(text: str, word: str) -> bool:
    """``word`` in ``text``: an English word as a word, with an inflection after it ("restarted",
    "crashes", "errored" ask what "restart", "crash", "error" ask)."""
    if word.isascii():
        return re.search(rf"(?<![a-z]){re.escape(word)}(?:e?s|e?d|ing)?(?![a-z])", text) is not None
    return word in text


def _canonical(found: str, services: list[str], spellings: Mapping[str, str]) -> str:
    written = {word.lower(): service for word, service in spellings.items()}
    return next((s for s in services if s.lower() == found.lower()), written.get(found.lower(), found))
