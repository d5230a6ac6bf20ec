"""The claim's own words: what it says itself, apart from what it quotes of its evidence.

A claim reporting that a log said "Connection is not available" does not deny anything, and
one quoting "… causing retries" names no cause of its own: a negation, a cause word or a
concept inside a quotation is the evidence's. Two readings, for two kinds of check:

- ``quoted=True``: only what stands in quote marks, or after a colon, and occurs in the
  evidence — the reading for *cause* words: a planted "payment failed because …" copied bare
  into a claim is the claim's own cause, not a quotation.
- ``quoted=False``: also any run of three or more words copied verbatim from the evidence —
  the reading for *negations* ("日志显示 Connection is not available" quotes a line bare).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from veridiag.text.normalize import reader_text

#: Quote marks that open and close a quotation.
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|「([^」]+)」|『([^』]+)』|'([^']{3,})'|‘([^’]+)’|`([^`]+)`")
#: What follows a colon up to the end of its sentence or clause — from every colon, the ones
#: inside a clock (14:00) included, so a time before the quoting colon hides no quotation.
_AFTER_COLON = re.compile(r"[:：](?=\s*([^。；;\n]+))")
_TOKEN = re.compile(r"\S+")
#: Copied runs shorter than this many words are the claim's own (a word or two recur anyway).
_MIN_RUN = 3


def _folded(text: str) -> str:
    return " ".join(reader_text(text).lower().split())


def _folded_token(token: str) -> str:
    """``_folded`` of one whitespace token: an ASCII one without a backslash or a comma is its
    own reading (``reader_text`` leaves it as it is), so only lower-cased."""
    if token.isascii() and "\\" not in token and "," not in token:
        return token.lower()
    return _folded(token)


def own_words(claim: str, evidence: Iterable[str], *, quoted: bool = True) -> str:
    """``claim`` (read as a reader sees it) with what it quotes from ``evidence`` blanked."""
    text = reader_text(claim)
    if quoted and not _QUOTED.search(text) and not _AFTER_COLON.search(text):
        return text  # nothing quoted: the evidence need not be read (it may be 64 KB)
    hay = _folded("\n".join(evidence))
    if not hay:
        return text
    spans: list[tuple[int, int]] = []
    for match in _QUOTED.finditer(text):
        inner = next(g for g in match.groups() if g is not None)
        if _folded(inner) in hay:
            spans.append(match.span())
    for match in _AFTER_COLON.finditer(text):
        inner = match.group(1).strip()
        if len(inner) >= 4 and _folded(inner) in hay:
            spans.append(match.span(1))
    if not quoted:
        spans += _copied_runs(text, hay)
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


#: Quote marks a claim quotes its evidence in (not ' , an apostrophe as often as a quote mark).
_QUOTATION = re.compile(r"\"([^\"]+)\"|“([^”]+)”|「([^」]+)」|『([^』]+)』|‘([^’]+)’|`([^`]+)`")
#: A quotation long enough to be a phrase of the evidence: two words, or three characters of a
#: script without spaces ("Unknown base file", "连接超时"), not a term put in quotes ("spike").
_PHRASE = re.compile(r"\S+\s+\S+|[^\x00-\x7f]{3}")


def quoted_nowhere(claim: str, folded_evidence: Iterable[str]) -> list[str]:
    """The phrases ``claim`` puts in quote marks that no text of ``folded_evidence`` (each as
    ``fold`` reads it) holds: words the claim says its evidence wrote, which the evidence it cites
    does not ("the last \"Unknown base file\" warning" citing a search for another message)."""
    phrases = [
        inner
        for match in _QUOTATION.finditer(claim)
        if (inner := next(g for g in match.groups() if g is not None).strip()) and _PHRASE.search(inner)
    ]
    if not phrases:
        return []
    hay = list(folded_evidence)

    def held(phrase: str) -> bool:
        # its words, each part an ellipsis leaves ("ServerFileSystem domain … is full"), in one text
        parts = [f" {part} " for piece in _ELISION.split(phrase) if (part := fold(piece).strip())]
        return any(all(part in text for part in parts) for text in hay)

    return [phrase for phrase in phrases if not held(phrase)]


#: Where a quotation leaves words out.
_ELISION = re.compile(r"…|\.\.\.|⋯")
#: What is no word: quotations are compared by their words ("x509 - certificate" of "x509: certificate").
_NO_WORD = re.compile(r"[^\w]+")


def fold(text: str) -> str:
    """``text`` as quotations are looked for in it: read as a reader sees it, lower case, its words
    between single blanks (and one at each end)."""
    return f" {_NO_WORD.sub(' ', _folded(text)).strip()} "


def _copied_runs(text: str, hay: str) -> list[tuple[int, int]]:
    """Runs of at least ``_MIN_RUN`` whitespace tokens of ``text`` found together in ``hay``.
    Each token is folded once and a run is its tokens' folds joined (what ``_folded`` makes of
    the run's text: the reading works within tokens); folding every candidate run's text anew
    cost a fifth of a Gatekeeper check (measured, 2026-12-06)."""
    tokens = list(_TOKEN.finditer(text))
    folded = [_folded_token(token.group()) for token in tokens]
    runs, i = [], 0
    while i < len(tokens):
        j = i + 1
        while j <= len(tokens) and " ".join(folded[i:j]) in hay:
            j += 1
        if j - 1 - i >= _MIN_RUN:
            runs.append((tokens[i].start(), tokens[j - 2].end()))
            i = j - 1
        else:
            i += 1
    return runs
