"""``rca.yaml``: the questions the RCA benchmark asks, its definition of a confirmed wrong
origin, and the columns the baseline reads — data, checked when read."""

from __future__ import annotations

import string
from functools import cache

from pydantic import Field, field_validator

from veridiag.text.wordfiles import AnyOf, Word, WordModel, bundled_words

#: The placeholders a question may (and must) use.
QUESTION_FIELDS = frozenset({"day", "time"})


class Origin(WordModel):
    #: Claim types that present a service as where the trouble started.
    claim_types: list[Word] = Field(min_length=1)
    #: Words that make a claim of another type present its first service as the origin.
    words: AnyOf


class RcaWords(WordModel):
    questions: list[Word] = Field(min_length=1)
    origin: Origin
    baseline_columns: list[Word] = Field(min_length=1)

    @field_validator("questions")
    @classmethod
    def _placeholders(cls, questions: list[str]) -> list[str]:
        for index, question in enumerate(questions):
            fields = {name for _text, name, _spec, _conv in string.Formatter().parse(question) if name is not None}
            if fields != QUESTION_FIELDS:
                raise ValueError(f"item {index}: {question!r} must use exactly {{day}} and {{time}}, uses {fields}")
        return questions


@cache
def rca_words() -> RcaWords:
    return bundled_words("veridiag.bench", "rca.yaml", RcaWords)
