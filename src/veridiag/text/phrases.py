"""Phrase lists compiled once: a cheap substring pre-check, then a word-boundary regex.

Shared by the Gatekeeper rules that look for wording (hedging in claims, instructions in
evidence); the phrases themselves are data (``gatekeeper/rules.yaml``).

Text and phrases are read as a reader sees them (``reader_text``: full width, zero-width and
bidi characters, Latin look-alikes), a hyphen or underscore read as a blank, blanks between
two CJK characters dropped: a line planted to say "Root-cause is", "ｒｏｏｔ cause is",
"r\u043eot cause is" or "根本 原因 是" says to a reader what the listed phrase says, and is
found as it."""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from veridiag.text.memo import remembered
from veridiag.text.normalize import reader_text

_WORDISH = re.compile(r"\w")
#: What ends a clause: a cause word joins what its own clause says.
_CLAUSE_MARKS = ("，", ",", "；", ";", "。", ". ", "\n")


def _folded(text: str, *, read: bool = False) -> str:
    """``text`` as the phrases are matched against: read (unless ``read`` says it already is),
    lower case, blanks collapsed (the same for every list: ``remembered`` for the call)."""
    return remembered("phrases_read" if read else "phrases", text, _fold_read if read else _fold)


def _fold(text: str) -> str:
    return _fold_read(reader_text(text))


def _fold_read(text: str) -> str:
    # Hyphens and underscores read as blanks ("root-cause", "root_cause"): two replaces, not a
    # regex (1.5–2.9 ms per 64 KB of log, measured) nor a translate table (~4× the replaces).
    folded = text.lower().replace("-", " ").replace("_", " ")
    words = folded.split()
    if folded.isascii():
        return " ".join(words)
    # a blank between two characters outside ASCII dropped (Chinese is written without them), word
    # by word: a pattern's look-behind tried at every character was a third of folding a Chinese
    # claim (measured)
    joined = words[:1]
    for before, word in pairwise(words):
        if before[-1].isascii() or word[0].isascii():
            joined.append(" ")
        joined.append(word)
    return "".join(joined)


def _pattern(phrase: str) -> str:
    """A Latin phrase matches whole words (a boundary at an end that is a word character:
    "root cause:" ends in punctuation); any other phrase matches as written."""
    if not phrase.isascii():
        return re.escape(phrase)
    start = r"\b" if _WORDISH.match(phrase[0]) else ""
    end = r"\b" if _WORDISH.match(phrase[-1]) else ""
    return start + r"\s".join(map(re.escape, phrase.split())) + end


class PhraseList:
    """Finds listed phrases in text: whole words for Latin phrases, any blanks between their words."""

    def __init__(self, phrases: tuple[str, ...]) -> None:
        cleaned = sorted({_folded(p) for p in phrases if p.strip()}, key=len, reverse=True)
        self.probes = tuple(cleaned)
        #: The probes an ASCII text can hold: the others have a character outside ASCII.
        self._ascii_probes = tuple(probe for probe in cleaned if probe.isascii())
        self.pattern = re.compile("|".join(map(_pattern, cleaned))) if cleaned else None

    def hits(self, text: str, *, read: bool = False) -> list[str]:
        """The phrases ``text`` states; ``read``: it is already ``reader_text``'s copy (an
        evidence index holds one of each output: reading 64 KB of Chinese again costs ~4 ms)."""
        if self.pattern is None:
            return []
        folded = _folded(text, read=read)
        probes = self._ascii_probes if folded.isascii() else self.probes
        if not any(map(folded.__contains__, probes)):  # no generator frame per probe: ~2× faster
            return []
        return sorted({m.group() for m in self.pattern.finditer(folded)})

    def split(self, text: str) -> list[tuple[str, str, str]]:
        """Each phrase of ``text`` with the folded text before and after it in its clause:
        what the phrase joins ("X 导致 Y" → ``("x ", "导致", " y")``)."""
        if self.pattern is None:
            return []
        folded = _folded(text)
        found = []
        for match in self.pattern.finditer(folded):
            start = max(folded.rfind(mark, 0, match.start()) for mark in _CLAUSE_MARKS) + 1
            ends = [at for mark in _CLAUSE_MARKS if (at := folded.find(mark, match.end())) >= 0]
            end = min(ends, default=len(folded))
            found.append((folded[start : match.start()], match.group(), folded[match.end() : end]))
        return found


@lru_cache(maxsize=32)
def phrase_list(phrases: tuple[str, ...]) -> PhraseList:
    """One compiled list per distinct phrase tuple (rules ask for theirs on every run)."""
    return PhraseList(phrases)
