"""Text helpers shared by the embedded log search and the knowledge base.

SQLite FTS5's ``unicode61`` tokenizer splits on spaces and punctuation, which leaves a
Chinese sentence as one token; the trigram tokenizer cannot find 2-character words
(measured). So Chinese text is segmented with rjieba before indexing and querying.
"""

from __future__ import annotations

import re

import rjieba

from veridiag.contracts.composer import has_cjk

_WORD = re.compile(r"[\w\u3400-\u9fff]+", re.UNICODE)
_MASKS = (
    (re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z?\s*"), ""),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b[0-9a-f]{12,}\b"), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
)


def segment(text: str) -> str:
    """Space-separated words for FTS5; ASCII text passes through untouched (fast path)."""
    if not has_cjk(text):
        return text
    return " ".join(token for token in rjieba.cut(text) if token.strip())


def fts_query(text: str, mode: str = "and") -> str | None:
    """A safe FTS5 query from free text: each word quoted, joined by AND or OR; text in
    double quotes is one phrase ("order 123" matches ``order=123``, not ``order=9 … exec-123``).

    Quoting makes operators and punctuation in user text inert ("NOT", "*", quotes)."""
    terms: list[str] = []
    for index, part in enumerate(text.split('"')):
        words = [w for w in _WORD.findall(segment(part)) if w.strip("_")]
        if index % 2 and words:
            terms.append(" ".join(words))
        else:
            terms.extend(words)
    if not terms:
        return None
    quoted = ['"' + t.replace('"', '""') + '"' for t in dict.fromkeys(terms)]
    return (" OR " if mode == "or" else " AND ").join(quoted)


#: Chinese words a question uses for what English logs say; only used when a search with
#: the Chinese words themselves finds nothing.
GLOSSARY = {
    "订单": "order",
    "支付": "payment",
    "超时": "timeout",
    "库存": "stock",
    "网关": "gateway",
    "连接池": "pool",
    "错误": "error",
    "失败": "failed",
    "数据库": "mysql",
    "内存": "heap",
    "重启": "restarting",
    "锁": "lock",
    "慢查询": "slow",
    "发布": "deployment",
    "回滚": "rolled",
}


def english_fallback(query: str) -> tuple[str, str] | None:
    """An FTS query (and its readable form) from a Chinese query's glossary words and ASCII
    words; a glossary word followed by a number becomes a phrase ("订单123" → "order 123")."""
    tokens = [t for t in segment(query).split() if t.strip()]
    parts: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        word = GLOSSARY.get(token) if has_cjk(token) else token
        if word and index + 1 < len(tokens) and tokens[index + 1].isdigit() and has_cjk(token):
            parts.append(f"{word} {tokens[index + 1]}")
            index += 2
            continue
        if word and _WORD.fullmatch(word):
            parts.append(word)
        index += 1
    if not parts:
        return None
    return " AND ".join('"' + p.replace('"', '""') + '"' for p in dict.fromkeys(parts)), " ".join(parts)


def log_template(line: str) -> str:
    """A log line with its timestamp, numbers and ids masked: lines of one kind share it."""
    for pattern, replacement in _MASKS:
        line = pattern.sub(replacement, line)
    return line
