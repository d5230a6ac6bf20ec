"""What a metric measures, from the words of its name (``signatures.yaml``): its family, whether a
change of it points at a fault in the service itself or shows a fault elsewhere, and how a change
of it is sized.

A closed vocabulary rather than a list of known metric names: a name nobody listed still splits
into words (``PodServerLatencyP90`` → pod, server, latency, p90), and the first family whose words
it holds decides; a name of no family is an effect of weight ``other``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import Field

from veridiag.text.wordfiles import Bilingual, Word, WordModel, bundled_words

Role = Literal["cause", "effect", "context"]
Direction = Literal["up", "down", "either"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+")


class Family(WordModel):
    id: Word
    role: Role
    worse: Direction
    weight: float = Field(ge=0, le=1)
    #: Each entry: words that must all be among the name's words.
    words: list[Word]
    label: Bilingual[str]
    #: What a fault of this kind may do that the family's series do not show ("a network delay
    #: shows in call latency, not in traffic"): with it, no change of the family does not rule
    #: the kind out, and an answer says so instead of "not this".
    blind_to: Bilingual[str] | None = None

    def matches(self, words: frozenset[str]) -> bool:
        return any(all(_has(words, word) for word in entry.split()) for entry in self.words)


class Signatures(WordModel):
    families: list[Family]
    other: Family
    percent_units: list[Word]
    saturated: float = Field(gt=0, le=100)


@lru_cache(maxsize=1)
def signatures() -> Signatures:
    """The bundled ``analysis/signatures.yaml``, read once."""
    return bundled_words("veridiag.analysis", "signatures.yaml", Signatures)


def name_words(name: str) -> frozenset[str]:
    """A metric name's words, lower case: snake, kebab and CamelCase split; digits stay with letters."""
    return frozenset(_WORD.findall(_CAMEL.sub(" ", name).lower()))


@lru_cache(maxsize=4096)
def family_of(metric: str) -> Family:
    """The first family of ``signatures.yaml`` whose words the name holds, else ``other``."""
    words = name_words(metric)
    book = signatures()
    return next((family for family in book.families if family.matches(words)), book.other)


def family_blind_to(family_id: str) -> Bilingual[str] | None:
    """What a fault of the family's kind may do that its series do not show (``blind_to``)."""
    return next((f.blind_to for f in signatures().families if f.id == family_id), None)


def is_percent(unit: str) -> bool:
    """A share of a limit (0–100): its changes are sized in points of it."""
    return unit.strip().lower() in {u.lower() for u in signatures().percent_units}


def _has(words: frozenset[str], word: str) -> bool:
    return word in words or f"{word}s" in words
