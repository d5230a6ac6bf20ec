"""What a claim says beyond its exact facts: overgeneralisation, an interpretation of what
happened, a direction, an evaluation, a hedge — each a *concept* with zh and en words
(``concepts.yaml``). A claim's concept is stated by evidence holding a word of the same
concept, in either language: "所有请求都超时" states ``all`` and ``timeout``; a log line
"ERR_TIMEOUT request timeout" states ``timeout`` but not ``all``.

Concepts instead of phrases: a checker that chased each wording ("所有…都", "every Full GC")
missed the next one; a closed vocabulary per concept, compared across the claim and its
evidence, holds for wordings nobody listed as long as one of their words is a concept word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pydantic import Field

from veridiag.text.normalize import reader_text
from veridiag.text.wordfiles import Word, WordModel, bundled_words

ConceptKind = Literal["absolute", "state", "direction", "evaluative", "usual", "calm"]


class ConceptWords(WordModel):
    kind: ConceptKind
    words: list[Word] = Field(default_factory=list)
    #: Words that state the concept in evidence only (``up`` in "anomaly 1: … up").
    evidence: list[Word] = Field(default_factory=list)


class ConceptFile(WordModel):
    negations: list[Word] = Field(default_factory=list)
    concepts: dict[Word, ConceptWords] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class ConceptHit:
    """One concept word in a text, and where."""

    concept: str
    kind: ConceptKind
    word: str
    start: int
    end: int


def _alternation(words: Iterable[str]) -> str:
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        body = r"\s+".join(map(re.escape, word.split()))
        head = r"(?<![A-Za-z0-9_])" if word[0].isascii() and word[0].isalnum() else ""
        tail = r"(?![A-Za-z0-9_])" if word[-1].isascii() and word[-1].isalnum() else ""
        parts.append(head + body + tail)
    return "|".join(parts)


class Concepts:
    """The concept vocabulary compiled: one pattern for claims, one per concept for evidence."""

    def __init__(self, file: ConceptFile) -> None:
        self.kinds = {name: entry.kind for name, entry in file.concepts.items()}
        groups = [(name, entry.words) for name, entry in file.concepts.items() if entry.words]
        self._names = [name for name, _words in groups]
        self._claim = re.compile(
            "|".join(f"(?P<c{i}>{_alternation(words)})" for i, (_name, words) in enumerate(groups)), re.IGNORECASE
        )
        #: A negation ending right before a hit, up to two words or four characters back.
        self._denied = re.compile(
            rf"(?:{_alternation(file.negations)})(?:\s*[\w-]+){{0,2}}?\s*$|(?:{_alternation(file.negations)}).{{0,3}}$",
            re.IGNORECASE,
        )
        self._evidence = {
            name: re.compile(_alternation([*entry.words, *entry.evidence]), re.IGNORECASE)
            for name, entry in file.concepts.items()
            if entry.words or entry.evidence
        }

    def in_claim(self, text: str) -> list[ConceptHit]:
        """The concept words ``text`` (read as a reader sees it) claims, in order: a word right
        after a negation ("no ERROR lines", "没有超时") is denied, not claimed."""
        read = reader_text(text)
        hits = []
        for match in self._claim.finditer(read):
            if self._denied.search(read, max(0, match.start() - 24), match.start()):
                continue
            name = self._names[int((match.lastgroup or "c0")[1:])]
            hits.append(ConceptHit(name, self.kinds[name], match.group(), match.start(), match.end()))
        return hits

    def states(self, concept: str, evidence: str) -> bool:
        """Does ``evidence`` hold a word of ``concept``?"""
        pattern = self._evidence.get(concept)
        return pattern is not None and pattern.search(reader_text(evidence)) is not None


@lru_cache(maxsize=1)
def concepts() -> Concepts:
    """The bundled ``text/concepts.yaml``, compiled once."""
    return Concepts(bundled_words("veridiag.text", "concepts.yaml", ConceptFile))
