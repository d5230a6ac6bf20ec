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

import heapq
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

from rapidfuzz import fuzz

from veridiag.text.cjk import HAN
from veridiag.text.entities import WordRuns


@dataclass(frozen=True)
class Alignment:
    """Best match of an excerpt in a source: ``score`` in [0, 1], span in source characters."""

    score: float
    start: int
    end: int


class ExcerptMatcher(Protocol):
    name: str

    def locate(
        self, excerpt: str, source: str, tokens: frozenset[str] | None = None, *, runs: WordRuns | None = None
    ) -> Alignment | None:
        """Best alignment of ``excerpt`` in ``source``; None when either is empty. ``tokens``,
        when given, are ``source``'s whitespace tokens (``str.split``), ``runs`` its word runs
        (or those of a text holding it): hints, never needed."""
        ...


_TOKEN = re.compile(rf"[A-Za-z0-9_.:/=%-]{{4,}}|[{HAN}]{{2,}}")


#: Below this share of an excerpt a window could account for, it is not scored at all (the
#: score could not reach any threshold worth setting, and aligning a 100 KB excerpt against a
#: 4 KB text took 28 s).
_MIN_SHARE = 0.25
#: An excerpt longer than this must be verbatim: aligning one fuzzily costs its length times
#: the window's (a 100 KB log line quoted by the offline engine: 6 s a window, 90 s an ask).
MAX_FUZZY_CHARS = 16_384


def _score_window(excerpt: str, source: str, lo: int, hi: int, cutoff: float) -> Alignment | None:
    """The best alignment of ``excerpt`` in ``source[lo:hi]``, if it beats ``cutoff`` (0–100).

    ``partial_ratio`` slides the shorter string along the longer one: given a window shorter
    than the excerpt, it finds the *window* inside the excerpt, and an excerpt made of a whole
    short output plus invented text scored 1.0 ("verbatim"). The score is therefore scaled by
    the share of the excerpt the window can hold at most. An excerpt over ``MAX_FUZZY_CHARS``
    is not aligned at all: found verbatim or not found."""
    window = source[lo:hi]
    share = min(1.0, len(window) / len(excerpt)) if excerpt else 0.0
    if share < _MIN_SHARE or share * 100.0 <= cutoff or len(excerpt) > MAX_FUZZY_CHARS:
        return None
    needle, hay = excerpt, window
    lowered = window.lower()
    if len(lowered) == len(window):  # case-insensitive unless lowering changes offsets
        needle, hay = excerpt.lower(), lowered
    result = fuzz.partial_ratio_alignment(needle, hay, score_cutoff=cutoff / share)
    if result is None:
        return None
    return Alignment(result.score / 100.0 * share, lo + result.dest_start, lo + result.dest_end)


class AnchoredMatcher:
    """Exact match, then fuzzy scoring only around exact pieces or distinctive tokens."""

    name = "anchored"

    def __init__(
        self,
        brute_force_chars: int = 4096,
        max_windows: int = 6,
        max_tokens: int = 1,
        occurrences: int = 3,
        good_enough: float = 0.95,
    ) -> None:
        self.brute_force_chars = brute_force_chars
        self.max_windows = max_windows
        self.max_tokens = max_tokens
        #: Occurrences of each piece examined (look-alike lines share pieces).
        self.occurrences = occurrences
        #: Stop scoring windows once one aligns this well.
        self.good_enough = good_enough

    def locate(
        self, excerpt: str, source: str, tokens: frozenset[str] | None = None, *, runs: WordRuns | None = None
    ) -> Alignment | None:
        excerpt = " ".join(excerpt.split())
        if not excerpt or not source:
            return None
        if len(source) <= self.brute_force_chars:
            position = source.find(excerpt)
            if position >= 0:
                return Alignment(1.0, position, position + len(excerpt))
            return _score_window(excerpt, source, 0, len(source), 0.0) or Alignment(0.0, 0, 0)
        # The first piece is searched first: if it is absent the whole excerpt cannot be
        # present, so a verbatim excerpt costs one scan and an invented one no extra scan.
        cuts = _cuts(excerpt)
        head = excerpt[: cuts[1]].rstrip() if len(cuts) > 1 else excerpt
        head_at = source.find(head) if _may_occur(head, tokens, runs) else -1
        if head_at >= 0:
            position = source.find(excerpt, head_at)
            if position >= 0:
                return Alignment(1.0, position, position + len(excerpt))
        pieces = _pieces(excerpt, cuts)
        best = Alignment(0.0, 0, 0)
        slack = len(excerpt) // 2 + 8
        tried: set[int] = set()
        hints = (tokens, runs)
        for start in self._candidate_starts(excerpt, source, pieces, head_at if head_at >= 0 else None, hints):
            if start in tried:
                continue
            tried.add(start)
            lo, hi = max(0, start - slack), min(len(source), start + len(excerpt) + slack)
            found = _score_window(excerpt, source, lo, hi, best.score * 100.0)
            if found is not None and found.score > best.score:
                best = found
            if best.score >= self.good_enough or len(tried) >= self.max_windows:
                break
        return best

    def _candidate_starts(
        self,
        excerpt: str,
        source: str,
        pieces: list[tuple[str, int]],
        head_start: int | None,
        hints: tuple[frozenset[str] | None, WordRuns | None],
    ) -> list[int]:
        """Implied excerpt starts: the most consistent ones.

        Each occurrence of an exact piece implies a start; only the starts where the most
        pieces sit at their offsets are kept — exact pieces outrank character similarity,
        which would prefer a look-alike line sharing the edited word. Log lines look alike
        ("ERROR gateway order=…"), so a few occurrences of each piece are examined. As the
        whole excerpt is absent, all pieces but one agreeing is the best possible: stop
        there. Only if no piece occurs does a long token serve as an anchor.
        """
        best_possible = len(pieces) - 1
        starts: dict[int, int] = {}
        for index, (piece, offset) in enumerate(pieces):
            if index == 0:
                if head_start is None:
                    continue  # the head was already searched and is absent
                position = head_start + offset
            else:
                position = source.find(piece) if _may_occur(piece, *hints) else -1
            seen = 0
            while position >= 0 and seen < self.occurrences:
                start = position - offset
                if start not in starts:
                    starts[start] = sum([source.startswith(p, start + o) for p, o in pieces])
                    if best_possible and starts[start] >= best_possible:
                        return [start]
                seen += 1
                position = source.find(piece, position + 1)
        if starts:
            most = max(starts.values())
            return [start for start, agreement in starts.items() if agreement == most]
        # Longest first, in order of appearance among equals (``nlargest`` is ``sorted(…,
        # reverse=True)[:n]``, stable, without sorting them all).
        runs = hints[1]
        for anchor in heapq.nlargest(self.max_tokens, _TOKEN.finditer(excerpt), key=_span_length):
            position = source.find(anchor.group()) if runs is None or runs.may_contain(anchor.group()) else -1
            if position >= 0:
                return [position - anchor.start()]
        return []


def _span_length(match: re.Match[str]) -> int:
    return match.end() - match.start()


def _may_occur(piece: str, tokens: frozenset[str] | None, runs: WordRuns | None = None) -> bool:
    """False when ``piece`` cannot occur in a source with whitespace ``tokens``: a word with a
    blank on both sides in the piece has one in the source too, so it is one of its tokens;
    nor in one with word ``runs`` (``WordRuns.may_contain``). Spares a scan of the whole
    source for most pieces of an invented excerpt."""
    if tokens is not None:
        words = piece.split(" ")
        if not all(word in tokens for word in words[1:-1] if word):
            return False
    return runs is None or runs.may_contain(piece)


def _cuts(excerpt: str) -> list[int]:
    """Where to cut the excerpt in up to three pieces (start offsets).

    Cuts fall on the space nearest each third, so one edited word spoils one piece (a
    cut through the word would spoil two, and its new length shifts the rest); text
    without spaces where they are needed (Chinese) is cut by characters.
    """
    size = len(excerpt)
    count = 3 if size >= 24 else 2 if size >= 12 else 1
    cuts = [0]
    shortest = size
    for k in range(1, count):
        ideal, last = k * size // count, cuts[-1]
        # After the space left of the ideal cut, or after the one right of it; the nearer wins, left on a tie.
        left, right = excerpt.rfind(" ", last + 1, ideal + 1) + 1, excerpt.find(" ", ideal) + 1
        left_ok, right_ok = last < left < size, last < right < size
        if left_ok and (not right_ok or ideal - left <= right - ideal):
            cut = left
        elif right_ok:
            cut = right
        else:
            cut = max(ideal, last + 1)
        shortest = min(shortest, cut - last)
        cuts.append(cut)
    if min(shortest, size - cuts[-1]) < size // (2 * count):
        return [k * size // count for k in range(count)]  # lopsided: cut by characters
    return cuts


def _pieces(excerpt: str, cuts: list[int]) -> list[tuple[str, int]]:
    """The excerpt's pieces at ``cuts``, with their offsets."""
    bounds = [*cuts, len(excerpt)]
    return [
        (excerpt[bounds[i] : bounds[i + 1]].rstrip() or excerpt[bounds[i] : bounds[i + 1]], bounds[i])
        for i in range(len(cuts))
    ]


class BruteForceMatcher:
    """Exhaustive ``partial_ratio_alignment`` over the whole source (reference, slow)."""

    name = "brute_force"

    def locate(
        self, excerpt: str, source: str, tokens: frozenset[str] | None = None, *, runs: WordRuns | None = None
    ) -> Alignment | None:
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

    def locate(
        self, excerpt: str, source: str, tokens: frozenset[str] | None = None, *, runs: WordRuns | None = None
    ) -> Alignment | None:
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
