"""Rule implementations registered by id (docs/spec §10.3).

A new *kind* of check is a small class here; tuning an existing one is data in
``rules.yaml``. ``@register`` keeps the id → class table that the rule set is checked
against, so an index entry without code (or code without an index entry) is caught.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from veridiag.gatekeeper.context import RuleResult, ValidationContext
from veridiag.gatekeeper.ruleset import RuleMetadata

_REGISTRY: dict[str, type[GatekeeperRule]] = {}


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GatekeeperRule(ABC):
    """``validate(context, metadata) -> RuleResult``; stateless, deterministic."""

    id: ClassVar[str]
    Params: ClassVar[type[BaseModel]] = NoParams

    @abstractmethod
    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        """Check the context; report one ``CheckRecord`` per target examined."""


R = TypeVar("R", bound=type[GatekeeperRule])


def register(cls: R) -> R:
    """Class decorator: make ``cls`` available under ``cls.id``."""
    if cls.id in _REGISTRY and _REGISTRY[cls.id] is not cls:
        raise ValueError(f"rule id {cls.id!r} registered twice")
    _REGISTRY[cls.id] = cls
    return cls


def _load_builtin_rules() -> None:
    import veridiag.gatekeeper.rules  # noqa: F401  (importing registers the built-in rules)


def registered_rule_ids() -> set[str]:
    _load_builtin_rules()
    return set(_REGISTRY)


def rule_class(rule_id: str) -> type[GatekeeperRule]:
    _load_builtin_rules()
    try:
        return _REGISTRY[rule_id]
    except KeyError:
        raise KeyError(f"no rule implementation registered for {rule_id!r}") from None
