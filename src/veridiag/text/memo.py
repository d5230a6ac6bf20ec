"""One call's readings of texts, remembered for the rest of the call (``readings``).

Five rules of one Gatekeeper check read the same claim text as a reader sees it (``reader_text``,
``fact_text``) and fold it for their phrase lists: each reading is a pure function of the text,
worked out again by every rule (~2.5 µs for a short Chinese claim, ~0.3 ms of a 20-claim check,
measured). Inside ``readings()`` each is worked out once. The memo is the call's own — a
``ContextVar`` set and reset around the call, so concurrent checks never share one and nothing
outlives the call — and outside a ``readings()`` every reading is computed as before.

A block opened inside another one is part of it: a diagnosis opens one for its whole run, so its
Gatekeeper check, the Composer input and the composer guard read each claim once between them
(the Composer input lexed every allowed claim again: ~4 M instructions of a 20-claim session).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

T = TypeVar("T")

_READINGS: ContextVar[dict[tuple[str, Hashable], Any] | None] = ContextVar("veridiag_text_readings", default=None)


@contextmanager
def readings() -> Iterator[None]:
    """Remember ``remembered`` readings until the outermost block ends."""
    if _READINGS.get() is not None:
        yield  # inside a block already: its memo goes on
        return
    token = _READINGS.set({})
    try:
        yield
    finally:
        _READINGS.reset(token)


def remembered(kind: str, text: str, read: Callable[[str], str]) -> str:
    """``read(text)`` — once per ``readings()`` block for each ``kind`` of reading; outside
    one, every time."""
    memo = _READINGS.get()
    if memo is None:
        return read(text)
    key = (kind, text)
    found = memo.get(key)
    if found is None:
        found = memo[key] = read(text)
    return cast(str, found)


def kept(kind: str, key: Hashable, work: Callable[[], T]) -> T:
    """``work()``, a pure function of ``key`` whose answer nobody changes — once per
    ``readings()`` block for each ``kind``; outside one, every time."""
    memo = _READINGS.get()
    if memo is None:
        return work()
    at = (kind, key)
    if at in memo:
        return cast(T, memo[at])
    found = memo[at] = work()
    return found
