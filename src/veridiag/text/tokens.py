"""Words of Chinese and English text, segmented with rjieba.

SQLite FTS5's ``unicode61`` tokenizer splits on spaces and punctuation, which leaves a Chinese
sentence as one token, and the trigram tokenizer cannot find 2-character words (measured): so
Chinese text is segmented before it is indexed or searched (``segment``). ``keywords`` are the
content words the composer guard and ``claim.evidence_utilization`` (spec §11.5) compare:
deliberately simple, the segmenter's tokens minus punctuation, single CJK characters and the
stop words of ``tokens.yaml``. rjieba is imported on the first call: it loads its dictionary
on import (~150 ms), which commands that never segment text do not need.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from veridiag.text.cjk import has_cjk
from veridiag.text.wordfiles import Bilingual, Word, WordModel, bundled_words

if TYPE_CHECKING:
    from collections.abc import Callable


@lru_cache(maxsize=1)
def _cut() -> Callable[[str], list[str]]:
    import rjieba

    return rjieba.cut


@lru_cache(maxsize=1)
def _tag() -> Callable[[str], list[tuple[str, str]]]:
    import rjieba

    return rjieba.tag


def tagged(text: str) -> list[tuple[str, str]]:
    """rjieba's words of ``text`` (all of it, in order) with jieba's part-of-speech tags
    (n noun, vn verbal noun, v verb, r pronoun, f direction, m numeral, a adjective, eng …)."""
    return _tag()(text)


class TokenWords(WordModel):
    """``tokens.yaml``."""

    stopwords: Bilingual[list[Word]]


@lru_cache(maxsize=1)
def _token_words() -> TokenWords:
    return bundled_words("veridiag.text", "tokens.yaml", TokenWords)


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    words = _token_words().stopwords
    return frozenset(word.lower() for word in (*words.zh, *words.en))


@lru_cache(maxsize=1)
def english_stopwords() -> frozenset[str]:
    """The English stop words of ``tokens.yaml``, lower case."""
    return frozenset(word.lower() for word in _token_words().stopwords.en)


def segment(text: str) -> str:
    """Space-separated words for FTS5; text without Chinese passes through untouched (fast path:
    an ASCII test first, ~10x cheaper than the Han search on an imported log line)."""
    if text.isascii() or not has_cjk(text):
        return text
    return " ".join(token for token in _cut()(text) if token.strip())


@lru_cache(maxsize=4096)
def keywords(text: str) -> frozenset[str]:
    """Lower-cased content tokens of ``text``."""
    stop = _stopwords()
    found = set()
    for token in _cut()(text):
        word = token.strip().lower()
        if not word or word in stop:
            continue
        if not any(ch.isalnum() for ch in word):
            continue
        if len(word) == 1 and not word.isdigit():
            continue
        found.add(word)
    return frozenset(found)
