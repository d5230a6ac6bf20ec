"""Word lists as one regular expression: each word whole where it begins or ends with a Latin
letter (or digit), its spaces any run of blanks — the one writing of ``concepts``, ``units`` and
``when``.

Speed. A word that needs a boundary used to carry its own (``(?<![A-Za-z])went\\s*down\\s*to(?![A-Za-z])``),
and a case-insensitive class costs ~0.1 ms to compile (CPython's ``re`` builds a 64 K-entry
map for it: the long s and the Kelvin sign fold to ASCII letters): a list of 35 words took
~7 ms, and a demo ``ask`` compiled a few hundred such boundaries. Here one check before the
words and one after serve them all: whether a boundary is needed at a position follows from the
character there (a word can begin there with a Latin letter only if that character is one), so
the pattern finds the same matches, the same word first, as with a boundary on each word. That
holds unless a word begins or ends with a character that matches a Latin letter
case-insensitively without being one (the long s ``ſ``, the Kelvin sign ``K``, dotted and
dotless i): such a list, and a short one where four shared checks cost more than its own, is
written word by word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

#: Words needing a boundary from which a shared check is cheaper than one on each word.
_SHARED_FROM = 4


#: Where a camel-case name's part begins or ends ("loginFailed", "OnFailureEvent"), whatever
#: the pattern's flags.
_CAMEL_HEAD = r"(?-i:(?<=[a-z0-9])(?=[A-Z]))"
_CAMEL_TAIL = r"(?-i:(?=[A-Z]))"


@cache
def _class(members: str) -> re.Pattern[str]:
    return re.compile(f"[{members}]", re.IGNORECASE)


def whole_words(words: Sequence[str], *, edge: str, boundary: str, blanks: str, camel: bool = False) -> str:
    """``words``, in the order given, as alternatives (no group around them). A word beginning
    (ending) with a character of the class ``edge`` (``A-Za-z``) must not follow (precede) one
    of ``boundary`` (``A-Za-z0-9_``); ``blanks`` (``\\s+``) stands for the spaces inside a word;
    ``camel``: a camel-case name's parts are words too. Words are given stripped."""
    edge_class = _class(edge)
    heads = [bool(edge_class.fullmatch(w[0])) and w[0].isascii() for w in words]
    tails = [bool(edge_class.fullmatch(w[-1])) and w[-1].isascii() for w in words]
    bodies = [blanks.join(map(re.escape, w.split())) for w in words]
    folding = any(
        edge_class.fullmatch(c) and not c.isascii() for w in words for c in (w[0], w[-1])
    )  # a character folding to a Latin letter: the shared check could not tell it
    before = f"(?<![{boundary}])" if not camel else f"(?:(?<![{boundary}])|{_CAMEL_HEAD})"
    after = f"(?![{boundary}])" if not camel else f"(?:(?![{boundary}])|{_CAMEL_TAIL})"
    if folding or sum(heads) + sum(tails) < _SHARED_FROM:
        return "|".join(
            (before if head else "") + body + (after if tail else "")
            for head, body, tail in zip(heads, bodies, tails, strict=True)
        )
    head = f"(?:(?=[{edge}]){before}|(?![{edge}]))" if any(heads) else ""
    tail = f"(?:(?<=[{edge}]){after}|(?<![{edge}]))" if any(tails) else ""
    return f"{head}(?:{'|'.join(bodies)}){tail}"
