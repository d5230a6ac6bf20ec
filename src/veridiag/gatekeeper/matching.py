"""Locating an evidence excerpt inside a tool output.

The question is "where in this (possibly 64 KB) output does the excerpt come from, and
how closely?". Brute-force ``partial_ratio`` answers it at 0.3–1 ms per excerpt, too
slow for dozens of bindings per session, so ``AnchoredMatcher`` works like
seed-and-extend search: exact hit first; otherwise exact *pieces* of the excerpt (a
one-word edit leaves the other pieces intact) or its most distinctive tokens give a few
candidate positions, and ``rapidfuzz.fuzz.partial_ratio_alignment`` scores only a
window around each. Character-level, so Chinese works without segmentation.

Score semantics: the best alignment among those windows, 0–1. An excerpt that shares
no piece and no distinctive token with the output scores 0: it is not from that output.
Outputs up to ``brute_force_chars`` are searched exhaustively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

from rapidfuzz import fuzz


@dataclass(frozen=True)
class Alignment:
    """Best match of an excerpt in a source: ``score`` in [0, 1], span in source characters."""

    score: float
    start: int
    end: int


class ExcerptMatcher(Protocol):
    name: str

    def locate(self, excerpt: str, source: str) -> Alignment | None:
        """Best alignment of ``excerpt`` in ``source``; None when either is empty."""
        ...


_TOKEN = re.compile(r"[A-Za-z0-9_.:/=%-]{4,}|[\u3400-\u9fff]{2,}")


def _score_window(excerpt: str, source: str, lo: int, hi: int, cutoff: float) -> Alignment | None:
    window = source[lo:hi]
    needle, hay = excerpt, window
    lowered = window.lower()
    if len(lowered) == len(window):  # case-insensitive unless lowering changes offsets
        needle, hay = excerpt.lower(), lowered
    result = fuzz.partial_ratio_alignment(needle, hay, score_cutoff=cutoff)
    if result is None:
        return None
    return Alignment(result.score / 100.0, lo + result.dest_start, lo + result.dest_end)


class AnchoredMatcher:
    """Exact match, then fuzzy scoring only around exact pieces or distinctive tokens."""

    name = "anchored"

    def __init__(self, brute_force_chars: int = 4096, max_windows: int = 6) -> None:
        self.brute_force_chars = brute_force_chars
        self.max_windows = max_windows

    def locate(self, excerpt: str, source: str) -> Alignment | None:
        excerpt = excerpt.strip()
        if not excerpt or not source:
            return None
        position = source.find(excerpt)
        if position >= 0:
            return Alignment(1.0, position, position + len(excerpt))
        collapsed = " ".join(excerpt.split())
        if collapsed != excerpt:
            position = source.find(collapsed)
            if position >= 0:
                return Alignment(1.0, position, position + len(collapsed))
        if len(source) <= self.brute_force_chars:
            return _score_window(collapsed, source, 0, len(source), 0.0) or Alignment(0.0, 0, 0)
        return self._anchored(collapsed, source)

    def _anchored(self, excerpt: str, source: str) -> Alignment:
        starts = self._piece_starts(excerpt, source) or self._token_starts(excerpt, source)
        best = Alignment(0.0, 0, 0)
        slack = len(excerpt) // 2 + 8
        for start in list(dict.fromkeys(starts))[: self.max_windows]:
            lo = max(0, start - slack)
            hi = min(len(source), start + len(excerpt) + slack)
            found = _score_window(excerpt, source, lo, hi, best.score * 100.0)
            if found is not None and found.score > best.score:
                best = found
                if best.score >= 1.0:
                    break
        return best

    @staticmethod
    def _piece_starts(excerpt: str, source: str) -> list[int]:
        """Implied excerpt starts from exact hits of its pieces (a single edit spares most)."""
        pieces = 4 if len(excerpt) >= 32 else 2 if len(excerpt) >= 12 else 0
        if not pieces:
            return []
        size = len(excerpt) // pieces
        starts = []
        for index in range(pieces):
            offset = index * size
            piece = excerpt[offset : offset + size] if index < pieces - 1 else excerpt[offset:]
            position = source.find(piece)
            if position >= 0:
                starts.append(position - offset)
        return starts

    @staticmethod
    def _token_starts(excerpt: str, source: str) -> list[int]:
        """Implied starts from the longest tokens' first occurrences (case-insensitive fallback)."""
        tokens = sorted(
            ((m.group(), m.start()) for m in _TOKEN.finditer(excerpt)), key=lambda t: len(t[0]), reverse=True
        )[:6]
        starts = []
        lowered: str | None = None
        for token, offset in tokens:
            position = source.find(token)
            if position < 0:
                if lowered is None:
                    folded = source.lower()
                    lowered = folded if len(folded) == len(source) else source
                position = lowered.find(token.lower())
            if position >= 0:
                starts.append(position - offset)
        return starts


class BruteForceMatcher:
    """Exhaustive ``partial_ratio_alignment`` over the whole source (reference, slow)."""

    name = "brute_force"

    def locate(self, excerpt: str, source: str) -> Alignment | None:
        excerpt = excerpt.strip()
        if not excerpt or not source:
            return None
        position = source.find(excerpt)
        if position >= 0:
            return Alignment(1.0, position, position + len(excerpt))
        return _score_window(excerpt, source, 0, len(source), 0.0) or Alignment(0.0, 0, 0)


class SequenceMatcherBaseline:
    """The naive difflib approach, kept as the benchmark baseline.

    Longest common block anchors the excerpt, ``ratio()`` scores the window there. The
    index of the last source is reused, as a reasonable naive implementation would.
    """

    name = "difflib"

    def __init__(self) -> None:
        self._matcher = SequenceMatcher(None, autojunk=False)
        self._indexed: str | None = None

    def locate(self, excerpt: str, source: str) -> Alignment | None:
        excerpt = excerpt.strip()
        if not excerpt or not source:
            return None
        if self._indexed is not source:
            self._matcher.set_seq2(source)
            self._indexed = source
        self._matcher.set_seq1(excerpt)
        block = self._matcher.find_longest_match(0, len(excerpt), 0, len(source))
        if block.size == 0:
            return Alignment(0.0, 0, 0)
        start = max(0, block.b - block.a)
        end = min(len(source), start + len(excerpt))
        score = SequenceMatcher(None, excerpt, source[start:end], autojunk=False).ratio()
        return Alignment(score, start, end)
