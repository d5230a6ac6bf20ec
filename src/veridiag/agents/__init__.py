"""Role interfaces (planner, executor, verifier, composer) and their engines."""

from veridiag.agents.reply import RoleReply
from veridiag.agents.roles import (
    ComposerRole,
    ExecuteRequest,
    ExecutorRole,
    PlannerRole,
    PlanRequest,
    Roles,
    VerifierRole,
)
from veridiag.agents.scripted import scripted_roles
from veridiag.agents.template import TemplateComposer, template_answer

__all__ = [
    "ComposerRole",
    "ExecuteRequest",
    "ExecutorRole",
    "PlanRequest",
    "PlannerRole",
    "RoleReply",
    "Roles",
    "TemplateComposer",
    "VerifierRole",
    "scripted_roles",
    "template_answer",
]
