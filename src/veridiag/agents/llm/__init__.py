"""The ``llm`` engine: the four roles on configured models (pydantic-ai), each with the offline
engine as its fallback."""

from __future__ import annotations

from veridiag.agents.fallback import FallbackRole
from veridiag.agents.llm.model_call import ModelFactory, RoleModel
from veridiag.agents.llm.providers import PRESETS, LLMConfigError, build_model
from veridiag.agents.llm.roles import LLMComposer, LLMExecutor, LLMPlanner, LLMVerifier
from veridiag.agents.offline.planner import Environment
from veridiag.agents.roles import ComposerRole, ExecutorRole, PlannerRole, Roles, VerifierRole
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
        planner=offline.planner, executor=offline.executor, verifier=offline.verifier, composer=offline.composer
    )
    if settings.configured("planner"):
        planner = LLMPlanner(model("planner"), offline.planner, environment)
        roles.planner = FallbackRole[PlannerRole](planner, offline.planner)
    if settings.configured("executor"):
        executor = LLMExecutor(model("executor"), settings.tool_call_budget)
        roles.executor = FallbackRole[ExecutorRole](executor, offline.executor)
    if settings.configured("verifier") and offline.verifier is not None:
        roles.verifier = FallbackRole[VerifierRole](LLMVerifier(model("verifier")), offline.verifier)
    if settings.configured("composer") and offline.composer is not None:
        roles.composer = FallbackRole[ComposerRole](LLMComposer(model("composer")), offline.composer)
    return roles
