"""Phrase lists compiled once: a cheap substring pre-check, then a word-boundary regex.

Shared by the Gatekeeper rules that look for wording (hedging in claims, instructions in
evidence); the phrases themselves are data (``gatekeeper/rules.yaml``)."""

from __future__ import annotations

import re
from functools import lru_cache


class PhraseList:
    """Finds listed phrases in text: whole words for Latin phrases, any blanks between their words."""

    def __init__(self, phrases: tuple[str, ...]) -> None:
        cleaned = sorted({" ".join(p.split()).lower() for p in phrases if p.strip()}, key=len, reverse=True)
        self.probes = tuple(cleaned)
        parts = [
            (r"\b" + r"\s+".join(map(re.escape, p.split())) + r"\b") if p.isascii() else re.escape(p) for p in cleaned
        ]
        self.pattern = re.compile("|".join(parts), re.IGNORECASE) if parts else None

    def hits(self, text: str) -> list[str]:
        lowered = " ".join(text.lower().split())
        if self.pattern is None or not any(probe in lowered for probe in self.probes):
            return []
        return sorted({m.group().lower() for m in self.pattern.finditer(" ".join(text.split()))})


@lru_cache(maxsize=32)
def phrase_list(phrases: tuple[str, ...]) -> PhraseList:
    """One compiled list per distinct phrase tuple (rules ask for theirs on every run)."""
    return PhraseList(phrases)
