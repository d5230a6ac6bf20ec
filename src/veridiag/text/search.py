"""Full-text search queries from people's words (the embedded log search and the knowledge base).

Free text becomes a safe SQLite FTS5 query over ``segment``-ed words; a Chinese question over
English logs falls back to the English words of ``search.yaml``'s glossary.
"""

from __future__ import annotations

import re
from functools import lru_cache

from veridiag.text.cjk import HAN, has_cjk
from veridiag.text.tokens import segment
from veridiag.text.wordfiles import Word, WordModel, bundled_words

_WORD = re.compile(rf"[\w{HAN}]+", re.UNICODE)


class SearchWords(WordModel):
    """``search.yaml``."""

    glossary: dict[Word, Word]


@lru_cache(maxsize=1)
def _glossary() -> dict[str, str]:
    return bundled_words("veridiag.text", "search.yaml", SearchWords).glossary


def search_terms(text: str) -> list[list[str]]:
    """The terms of free text, each a word or a double-quoted phrase's words, in order, once each:
    what every log search (FTS5 here, ClickHouse's token functions) must all find."""
    terms: list[list[str]] = []
    for index, part in enumerate(text.split('"')):
        words = [w for w in _WORD.findall(segment(part)) if w.strip("_")]
        if index % 2 and words:
            terms.append(words)
        else:
            terms.extend([w] for w in words)
    return [list(t.split(" ")) for t in dict.fromkeys(" ".join(t) for t in terms)]


def fts_query(text: str, mode: str = "and") -> str | None:
    """A safe FTS5 query from free text: each word quoted, joined by AND or OR; text in
    double quotes is one phrase ("order 123" matches ``order=123``, not ``order=9 … exec-123``).

    Quoting makes operators and punctuation in user text inert ("NOT", "*", quotes)."""
    terms = [" ".join(t) for t in search_terms(text)]
    if not terms:
        return None
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
    return (" OR " if mode == "or" else " AND ").join(quoted)


def fallback_terms(query: str) -> list[str] | None:
    """A Chinese query's glossary words and ASCII words, in English; a glossary word followed by a
    number becomes a phrase ("订单123" → "order 123")."""
    glossary = _glossary()
    tokens = [t for t in segment(query).split() if t.strip()]
    parts: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        word = glossary.get(token) if has_cjk(token) else token
        if word and index + 1 < len(tokens) and tokens[index + 1].isdigit() and has_cjk(token):
            parts.append(f"{word} {tokens[index + 1]}")
            index += 2
            continue
        if word and _WORD.fullmatch(word):
            parts.append(word)
        index += 1
    return list(dict.fromkeys(parts)) or None


def english_fallback(query: str) -> tuple[str, str] | None:
    """An FTS query (and its readable form) from ``fallback_terms``."""
    parts = fallback_terms(query)
    if parts is None:
        return None
    return " AND ".join('"' + p.replace('"', '""') + '"' for p in parts), " ".join(parts)
