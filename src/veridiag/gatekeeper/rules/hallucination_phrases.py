"""``claim.hallucination_phrases`` (spec §11.4): confirmed claims may not hedge or
lean on experience; hypotheses may (they are not in ``targetFields``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from veridiag.gatekeeper.context import RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata

_FIELD_PATH = re.compile(r"^([a-z_]+)\[\]\.([a-z_]+)$")


class PhraseParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    target_fields: list[str] = Field(default=["claims[].claim_text"], alias="targetFields")
    blacklist: list[str] = Field(default_factory=list)
    allow_in_fields: list[str] = Field(default_factory=list, alias="allowInFields")

    @field_validator("target_fields", "allow_in_fields")
    @classmethod
    def _paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if not _FIELD_PATH.match(path):
                raise ValueError(f"field path {path!r} must look like 'claims[].claim_text'")
        return paths


@lru_cache(maxsize=32)
def _pattern(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for the list; ASCII phrases match whole words, Chinese ones anywhere."""
    parts = []
    for phrase in sorted({p.strip() for p in phrases if p.strip()}, key=len, reverse=True):
        escaped = r"\s+".join(re.escape(word) for word in phrase.split())
        parts.append(rf"\b{escaped}\b" if phrase.isascii() else escaped)
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def _targets(output: dict[str, Any] | None, path: str) -> Iterator[tuple[str, str]]:
    match = _FIELD_PATH.match(path)
    if not output or not match:
        return
    array, field = match.groups()
    items = output.get(array)
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get(field), str):
            yield f"{array}[{index}].{field}", item[field]


@register
class HallucinationPhrases(GatekeeperRule):
    id = "claim.hallucination_phrases"
    Params = PhraseParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(PhraseParams)
        pattern = _pattern(tuple(params.blacklist))
        result = RuleResult(self.id)
        for path in params.target_fields:
            for target, text in _targets(context.normalized, path):
                hits = sorted({m.group().lower() for m in pattern.finditer(text)}) if pattern else []
                if hits:
                    result.add(target, "fail", f"speculative wording in a confirmed claim: {', '.join(hits)}")
                else:
                    result.add(target, "pass")
        return result
