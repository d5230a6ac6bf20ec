"""Role interfaces (planner, executor, verifier, composer) and their engines."""

from veridiag.agents.composer import ComposerRole, TemplateComposer, template_answer
from veridiag.agents.reply import RoleReply
from veridiag.agents.roles import ExecuteRequest, ExecutorRole, PlannerRole, PlanRequest, Roles, VerifierRole
from veridiag.agents.scripted import scripted_roles

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
