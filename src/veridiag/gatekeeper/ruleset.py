"""Rule index + metadata (docs/spec §10.1–§10.2), loaded from YAML and merged by rule id.

The bundled ``rules.yaml`` is the default; a user override file with the same two
sections changes thresholds, word lists, ``enabled`` or ``severity`` without code.
Params are validated against each rule's own model at load time, so a typo in an
override fails loudly when the file is read, not silently during a diagnosis.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from veridiag.contracts.gatekeeper import Severity, VerdictImpact
from veridiag.contracts.json import JsonObject, json_object
from veridiag.text.yaml_files import load_yaml

P = TypeVar("P", bound=BaseModel)


class RulesetError(ValueError):
    """A rules file that cannot be used, with the file and rule named."""


class RuleMetadata(BaseModel):
    """One rule's effective index entry and metadata."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    id: str
    name: str
    description: str
    description_en: str = ""
    enabled: bool = True
    severity: Severity = "error"
    verdict_impact: VerdictImpact = Field(default="low_confid_on_fail", alias="verdictImpact")
    #: As written in the rules files; read through ``typed_params`` with the rule's model.
    params: JsonObject = Field(default_factory=dict)
    _typed: BaseModel | None = PrivateAttr(default=None)

    def typed_params(self, model: type[P]) -> P:
        """Params parsed into the rule's own model (validated once, then cached)."""
        if not isinstance(self._typed, model):
            self._typed = model.model_validate(self.params)
        return self._typed

    def public_dict(self) -> JsonObject:
        return self.model_dump(by_alias=True)


class _IndexEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    name: str | None = None
    description: str | None = None
    description_en: str | None = None
    enabled: bool | None = None


class _MetadataEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    severity: Severity | None = None
    verdict_impact: VerdictImpact | None = Field(default=None, alias="verdictImpact")
    params: JsonObject | None = None


class _RulesFile(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    rules: list[_IndexEntry] = Field(default_factory=list)
    rule_metadata: dict[str, _MetadataEntry] = Field(default_factory=dict, alias="ruleMetadata")


class RuleSet:
    """The effective, ordered rule set; iteration order is the index order."""

    def __init__(self, rules: list[RuleMetadata]) -> None:
        self._rules = {rule.id: rule for rule in rules}

    def __iter__(self) -> Iterator[RuleMetadata]:
        return iter(self._rules.values())

    def __len__(self) -> int:
        return len(self._rules)

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._rules

    def __getitem__(self, rule_id: str) -> RuleMetadata:
        return self._rules[rule_id]

    def get(self, rule_id: str) -> RuleMetadata | None:
        return self._rules.get(rule_id)

    def enabled(self) -> list[RuleMetadata]:
        return [rule for rule in self._rules.values() if rule.enabled]

    def verdict_impacts(self) -> dict[str, VerdictImpact]:
        return {rule.id: rule.verdict_impact for rule in self._rules.values()}

    def with_overrides(self, overrides: Mapping[str, object], origin: str = "overrides") -> RuleSet:
        """A new rule set with ``overrides`` (same format as rules.yaml) merged by id."""
        parsed = _parse_file(overrides, origin)
        return _merge(self, parsed, origin)


def _parse_file(raw: object, origin: str) -> _RulesFile:
    if raw is None:
        return _RulesFile()
    if not isinstance(raw, Mapping):
        raise RulesetError(f"{origin}: expected a mapping with 'rules' and/or 'ruleMetadata'")
    try:
        return _RulesFile.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(part) for part in err['loc'])}: {err['msg']}" for err in exc.errors())
        raise RulesetError(f"{origin}: {problems}") from None


def _merge(base: RuleSet, update: _RulesFile, origin: str) -> RuleSet:
    from veridiag.gatekeeper.registry import registered_rule_ids, rule_class

    known = registered_rule_ids()
    merged: dict[str, JsonObject] = {rule.id: rule.model_dump(by_alias=True) for rule in base}
    for entry in update.rules:
        if entry.id not in known:
            raise RulesetError(f"{origin}: unknown rule id {entry.id!r}; known: {', '.join(sorted(known))}")
        target = merged.setdefault(entry.id, {"id": entry.id, "name": entry.id, "description": ""})
        target.update(entry.model_dump(exclude_none=True, exclude={"id"}))
    for rule_id, meta in update.rule_metadata.items():
        if rule_id not in merged:
            raise RulesetError(f"{origin}: ruleMetadata for unknown rule id {rule_id!r}")
        target = merged[rule_id]
        if meta.severity is not None:
            target["severity"] = meta.severity
        if meta.verdict_impact is not None:
            target["verdictImpact"] = meta.verdict_impact
        if meta.params is not None:
            target["params"] = {**json_object(target.get("params")), **meta.params}

    rules: list[RuleMetadata] = []
    for rule_id, data in merged.items():
        rule = RuleMetadata.model_validate(data)
        try:
            rule.typed_params(rule_class(rule_id).Params)
        except ValidationError as exc:
            problems = "; ".join(f"params.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors())
            raise RulesetError(f"{origin}: rule {rule_id!r}: {problems}") from None
        rules.append(rule)
    return RuleSet(rules)


def _read_yaml(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RulesetError(f"{path}: rules file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesetError(f"{path}: cannot read rules file ({exc})") from None
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise RulesetError(f"{path}: invalid YAML ({exc})") from None


@lru_cache(maxsize=1)
def _bundled_file() -> _RulesFile:
    text = resources.files("veridiag.gatekeeper").joinpath("rules.yaml").read_text(encoding="utf-8")
    return _parse_file(load_yaml(text), "bundled rules.yaml")


def bundled_ruleset() -> RuleSet:
    """The rules shipped with veridiag (``gatekeeper/rules.yaml``; the file is read once)."""
    return _merge(RuleSet([]), _bundled_file(), "bundled rules.yaml")


def load_ruleset(override_file: Path | None = None) -> RuleSet:
    """Bundled rules, with ``override_file`` merged on top when given."""
    ruleset = bundled_ruleset()
    if override_file is None:
        return ruleset
    return _merge(ruleset, _parse_file(_read_yaml(override_file), str(override_file)), str(override_file))
