"""Content words of a Chinese/English sentence, segmented with rjieba.

Used by ``claim.evidence_utilization`` (docs/spec §11.5). Deliberately simple: keywords are
the segmenter's tokens minus punctuation, single CJK characters and stop words.
"""

from __future__ import annotations

from functools import lru_cache

import rjieba

_STOP = frozenset(
    """
    的 了 在 是 和 与 及 或 也 都 就 而 但 并 被 把 对 从 到 为 于 中 有 无 没有 这 那 其 该 此 等 个 次
    出现 存在 发生 导致 显示 表明 当前 目前 已经 以及 进行 相关 情况 问题 期间 之后 之前 以后 以前
    a an the and or of to in on at by for with from is are was were be been being has have had this that
    these those it its as into than then there their which who whom what when where while not no
    """.split()
)


@lru_cache(maxsize=4096)
def keywords(text: str) -> frozenset[str]:
    """Lower-cased content tokens of ``text``."""
    found = set()
    for token in rjieba.cut(text):
        word = token.strip().lower()
        if not word or word in _STOP:
            continue
        if not any(ch.isalnum() for ch in word):
            continue
        if len(word) == 1 and not word.isdigit():
            continue
        found.add(word)
    return frozenset(found)
