"""One call's readings of texts, remembered for the rest of the call (``readings``).

Five rules of one Gatekeeper check read the same claim text as a reader sees it (``reader_text``,
``fact_text``) and fold it for their phrase lists: each reading is a pure function of the text,
worked out again by every rule (~2.5 µs for a short Chinese claim, ~0.3 ms of a 20-claim check,
measured). Inside ``readings()`` each is worked out once. The memo is the call's own — a
``ContextVar`` set and reset around the call, so concurrent checks never share one and nothing
outlives the check — and outside a ``readings()`` every reading is computed as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_READINGS: ContextVar[dict[tuple[str, str], str] | None] = ContextVar("veridiag_text_readings", default=None)


@contextmanager
def readings() -> Iterator[None]:
    """Remember ``remembered`` readings until the block ends."""
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
    return found
