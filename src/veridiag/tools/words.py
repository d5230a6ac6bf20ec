"""A count with its noun as tool outputs and CLI messages write it: "1 line", "2 lines".

The nouns whose plural is not the singular with "s" are data (``plurals.yaml``)."""

from __future__ import annotations

from functools import cache

from veridiag.text.wordfiles import WordModel, bundled_words


class Plurals(WordModel):
    """``plurals.yaml``: singular → plural, for the nouns that do not just take "s"."""

    irregular: dict[str, str]


@cache
def _plurals() -> Plurals:
    return bundled_words("veridiag.tools", "plurals.yaml", Plurals)


def plural(count: float, noun: str) -> str:
    """``noun`` as it agrees with ``count``: singular for exactly one, else its plural."""
    if count == 1:
        return noun
    return _plurals().irregular.get(noun, f"{noun}s")


def quantity(count: int, noun: str) -> str:
    """``count`` and its noun: "1 line", "3 lines", "0 lines"."""
    return f"{count} {plural(count, noun)}"
