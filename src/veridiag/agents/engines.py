"""Builds the four roles from the configured engine (``offline`` by default)."""

from __future__ import annotations

from typing import Protocol

from veridiag.agents.composer import TemplateComposer
from veridiag.agents.offline import OfflineExecutor, OfflinePlanner, OfflineVerifier
from veridiag.agents.offline.executor import Catalogue
from veridiag.agents.offline.planner import Environment
from veridiag.agents.roles import Roles
from veridiag.contracts.invocation import InvocationSource


class OfflineEnvironment(Environment, Catalogue, Protocol):
    """What the offline engine reads about the evidence backend (clock, services, metrics)."""


def offline_roles(
    environment: OfflineEnvironment, invocations: InvocationSource, known_services: list[str] | None = None
) -> Roles:
    """Planner, executor and verifier that need no model; the template composer."""
    return Roles(
        planner=OfflinePlanner(environment),
        executor=OfflineExecutor(environment),
        verifier=OfflineVerifier(invocations, known_services),
        composer=TemplateComposer(),
        names={"planner": "offline", "executor": "offline", "verifier": "offline", "composer": "template"},
    )
