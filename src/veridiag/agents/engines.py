"""Builds the four roles from the configured engine (``offline`` by default)."""

from __future__ import annotations

from typing import Protocol

from veridiag.agents.offline import OfflineExecutor, OfflinePlanner, OfflineVerifier
from veridiag.agents.offline.executor import Catalogue
from veridiag.agents.offline.planner import Environment
from veridiag.agents.roles import Roles
from veridiag.agents.template import TemplateComposer
from veridiag.config import Settings
from veridiag.contracts.invocation import InvocationSource


class OfflineEnvironment(Environment, Catalogue, Protocol):
    """What the offline engine reads about the evidence backend (clock, services, metrics)."""


def offline_roles(
    environment: OfflineEnvironment,
    invocations: InvocationSource,
    known_services: list[str] | None = None,
    *,
    timezone: str = "UTC",
    live: bool = False,
) -> Roles:
    """Planner, executor and verifier that need no model; the template composer."""
    return Roles(
        planner=OfflinePlanner(environment, timezone=timezone, live=live),
        executor=OfflineExecutor(environment),
        verifier=OfflineVerifier(invocations, known_services),
        composer=TemplateComposer(),
    )


def build_roles(
    settings: Settings,
    environment: OfflineEnvironment,
    invocations: InvocationSource,
    known_services: list[str] | None = None,
) -> Roles:
    """The configured engine: offline, or a model per role with offline fallbacks."""
    offline = offline_roles(
        environment, invocations, known_services, timezone=settings.timezone, live=settings.live_backends
    )
    if settings.engine == "offline" or not any(
        settings.llm.configured(role) for role in ("planner", "executor", "verifier", "composer")
    ):
        if settings.engine == "llm":
            from veridiag.agents.llm import LLMConfigError

            raise LLMConfigError("engine=llm but no model is configured (VERIDIAG_LLM__DEFAULT__MODEL)")
        return offline
    from veridiag.agents.llm import llm_roles

    return llm_roles(settings.llm, offline, environment)
