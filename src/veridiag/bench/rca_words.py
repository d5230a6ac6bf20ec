"""``rca.yaml``: the questions the RCA benchmark asks, the claim types that present an origin,
and the columns the baseline reads — data, checked when read."""

from __future__ import annotations

import string
from functools import cache

from pydantic import Field, field_validator

from veridiag.text.wordfiles import Word, WordModel, bundled_words

#: The placeholders a question may (and must) use.
QUESTION_FIELDS = frozenset({"day", "time"})


class RcaWords(WordModel):
    questions: list[Word] = Field(min_length=1)
    #: Claim types that present a service as where the trouble started.
    origin_claim_types: list[Word] = Field(min_length=1)
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
