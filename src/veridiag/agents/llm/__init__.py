"""The ``llm`` engine: the four roles on configured models (pydantic-ai), each with the offline
engine as its fallback."""

from __future__ import annotations

from typing import get_args

from veridiag.agents.composer import ComposerRole
from veridiag.agents.llm.model_call import ModelFactory, RoleModel
from veridiag.agents.llm.providers import PRESETS, LLMConfigError, build_model
from veridiag.agents.llm.roles import LLMComposer, LLMExecutor, LLMPlanner, LLMVerifier
from veridiag.agents.offline.planner import Environment
from veridiag.agents.roles import Roles
from veridiag.config import LLMRole, LLMSettings

__all__ = ["PRESETS", "LLMConfigError", "RoleModel", "build_model", "llm_roles"]


def llm_roles(
    settings: LLMSettings,
    offline: Roles,
    environment: Environment,
    *,
    model_factory: ModelFactory = build_model,
    backoff_seconds: float = 1.0,
) -> Roles:
    """Roles with a configured model run on it; the others stay offline."""

    def model(role: LLMRole) -> RoleModel:
        return RoleModel(
            role,
            settings.for_role(role),
            model_factory=model_factory,
            retry_transient=role != "executor",
            backoff_seconds=backoff_seconds,
        )

    roles = Roles(
        planner=offline.planner,
        executor=offline.executor,
        verifier=offline.verifier,
        composer=offline.composer,
        names=dict(offline.names),
    )
    for role in get_args(LLMRole):
        if not settings.configured(role):
            continue
        roles.names[role] = model(role).label
    if settings.configured("planner"):
        roles.planner = LLMPlanner(model("planner"), offline.planner, environment)
    if settings.configured("executor"):
        roles.executor = LLMExecutor(model("executor"), offline.executor, settings.tool_call_budget)
    if settings.configured("verifier") and offline.verifier is not None:
        roles.verifier = LLMVerifier(model("verifier"), offline.verifier)
    if settings.configured("composer") and offline.composer is not None:
        composer: ComposerRole = offline.composer
        roles.composer = LLMComposer(model("composer"), composer)
    return roles
