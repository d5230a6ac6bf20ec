"""Request and response bodies of the HTTP API (the OpenAPI schema is generated from these)."""

from __future__ import annotations

import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from veridiag.contracts.answer import AnswerDocument
from veridiag.contracts.json import JsonObject

MAX_QUERY_CHARS = 4000
#: The deepest page offset a listing takes: the stores' OFFSET is a signed 64-bit integer (SQLite
#: raises on a larger one, PostgreSQL's is a bigint), so a larger one is a 422, never a 500.
MAX_OFFSET = 2**63 - 1
BLANK_QUERY = "the question is blank (only whitespace or invisible characters)"
#: Letters that render as nothing though Unicode does not file them as spaces or format marks.
_FILLERS = frozenset("\u115f\u1160\u2800\u3164\uffa0")


def is_blank(text: str) -> bool:
    """True when nothing in ``text`` would show: whitespace, control and format characters
    (zero-width spaces, BOM, direction marks), lone combining marks, and blank fillers."""
    return all(
        c.isspace() or c in _FILLERS or unicodedata.category(c)[0] in "CZ" or unicodedata.category(c) == "Mn"
        for c in text
    )


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="The question, 中文 or English.")
    lang: Literal["zh", "en"] | None = Field(default=None, description="Answer language; default: the question's.")

    @field_validator("query", mode="before")
    @classmethod
    def _not_blank(cls, query: object) -> object:
        """Before the length check: a question of direction marks alone reads as "" once its
        body is sanitised (``api/bodies.py``), and is still a blank question."""
        if isinstance(query, str) and is_blank(query):
            raise ValueError(BLANK_QUERY)
        return query


class ChatResponse(AnswerDocument):
    """The same document as ``veridiag ask --json``."""


class SessionSummary(BaseModel):
    id: str
    created_at: str
    query: str
    lang: str | None
    status: str
    verdict: str | None
    rounds: int
    source: str | None = Field(default=None, description="cli, api, web, alert, mcp, eval or bench; null before 0010.")
    answer_line: str | None = Field(default=None, description="The answer's line that answers the question.")
    service: str | None = Field(default=None, description="The service that line is about, when it names one.")


class SessionPage(BaseModel):
    items: list[SessionSummary]
    total: int
    limit: int
    offset: int
    next_cursor: str | None = Field(
        default=None, description="Pass as `cursor` for the next page (keyset); absent on the last page."
    )


class ErrorDetail(BaseModel):
    code: str
    message: str
    #: One ``{field, problem}`` per invalid field of a 422.
    details: list[dict[str, str]] = Field(default_factory=list)
    request_id: str = Field(description="Also in the X-Request-ID header; the server log names it.")


class ErrorBody(BaseModel):
    error: ErrorDetail


class RuleSetDocument(BaseModel):
    """The Gatekeeper rules in force, each as ``veridiag rules --json`` lists it."""

    enabled: bool = Field(description="False when the Gatekeeper is switched off (gatekeeper.enabled).")
    rules: list[JsonObject]


class Health(BaseModel):
    status: Literal["ok"]
    #: The engine of each role (``offline``, ``llm:<model>``).
    engine: dict[str, str]
