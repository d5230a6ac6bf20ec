"""The four roles on a configured model. Each falls back to its offline twin when the model
fails (timeout, 429/5xx after retries, refusal, truncation, unusable plan) and says so in the
reply's usage, which the pipeline records in the session's audit."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from veridiag.agents.composer import ComposerRole
from veridiag.agents.llm.evidence_tools import EvidenceTools
from veridiag.agents.llm.model_call import CallOutcome, RoleModel
from veridiag.agents.llm.prompts import as_data, prompt
from veridiag.agents.offline.planner import Environment
from veridiag.agents.offline.skills import catalog
from veridiag.agents.reply import RoleReply
from veridiag.agents.roles import ExecuteRequest, ExecutorRole, PlannerRole, PlanRequest, VerifierRole
from veridiag.contracts.composer import ComposerInput
from veridiag.contracts.parsing import parse_executor_output
from veridiag.text.cjk import detect_lang


def _reply(outcome: CallOutcome, model: RoleModel, **extra: Any) -> RoleReply:
    return RoleReply(text=outcome.text, engine=model.label, usage={**outcome.usage, **extra})


def _fallback(reply: RoleReply, outcome: CallOutcome, model: RoleModel, **extra: Any) -> RoleReply:
    """The offline reply, carrying why the model was not used."""
    reply.usage = {**outcome.usage, **extra, "fallback": f"{model.label} failed: {outcome.error}"}
    reply.engine = f"{reply.engine} (fallback)"
    return reply


class LLMPlanner:
    """Refines the deterministic draft plan; the draft's time window and service stand unless the
    model names a known service, a skill of the catalogue and a parseable window."""

    def __init__(self, model: RoleModel, fallback: PlannerRole, environment: Environment) -> None:
        self.model = model
        self.fallback = fallback
        self.environment = environment

    def plan(self, request: PlanRequest) -> RoleReply:
        draft_reply = self.fallback.plan(request)
        draft = parse_executor_output(draft_reply.text).value or {}
        services = self.environment.services()
        material = {
            "question": request.question,
            "draft_plan": {k: v for k, v in draft.items() if k != "steps"},
            "skills": [{"id": s.id, "title": s.title} for s in catalog().skills],
            "services": services,
        }
        outcome = self.model.run(prompt("planner", request.lang), as_data("planning_input", _dump(material)))
        if outcome.error is not None:
            return _fallback(draft_reply, outcome, self.model)
        parsed = parse_executor_output(outcome.text)
        if not parsed.ok or not isinstance(parsed.value, dict):
            return _fallback(draft_reply, CallOutcome(None, outcome.usage, "plan is not a JSON object"), self.model)
        plan, overridden = _merge_plan(draft, parsed.value, services)
        return RoleReply(
            text=_dump(plan), engine=self.model.label, usage={**outcome.usage, "kept_from_draft": overridden}
        )


def _merge_plan(
    draft: dict[str, Any], proposed: dict[str, Any], services: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """Take what the model chose where it is valid; keep the draft elsewhere (and say where)."""
    plan = dict(draft)
    kept: list[str] = []
    skill_ids = {s.id for s in catalog().skills}
    if proposed.get("skill") in skill_ids and proposed["skill"] != draft.get("skill"):
        skill = catalog().get(proposed["skill"])
        plan.update(
            skill=skill.id, skill_title=skill.title, steps=[s.model_dump(exclude_none=True) for s in skill.steps]
        )
    elif proposed.get("skill") not in skill_ids:
        kept.append("skill")
    service = proposed.get("service")
    if service in services:
        plan["service"] = service
        if service not in (plan.get("services") or []):
            plan["services"] = [service]
    elif service:
        kept.append("service")
    for bound in ("start", "end"):
        value = proposed.get(bound)
        if isinstance(value, str) and _iso(value):
            plan[bound] = value
        elif value:
            kept.append(bound)
    if isinstance(proposed.get("order_id"), str | int) and str(proposed["order_id"]) in json.dumps(draft):
        plan["order_id"] = str(proposed["order_id"])
    if isinstance(proposed.get("steps"), list):
        plan["model_steps"] = proposed["steps"][:6]
    return plan, kept


def _iso(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


class LLMExecutor:
    def __init__(self, model: RoleModel, fallback: ExecutorRole, budget: int) -> None:
        self.model = model
        self.fallback = fallback
        self.budget = budget

    def execute(self, request: ExecuteRequest) -> RoleReply:
        if request.tools is None:
            return self.fallback.execute(request)
        tools = EvidenceTools(request.tools, self.budget)
        material: dict[str, Any] = {"question": request.question, "plan": request.plan, "round": request.round}
        if request.retry_context:
            material["previous_round"] = request.retry_context
        outcome = self.model.run(
            prompt("executor", request.lang),
            as_data("task", _dump(material)),
            tools=tools.tools(),
            request_limit=self.budget + 4,
        )
        if outcome.error is not None:
            return _fallback(self.fallback.execute(request), outcome, self.model, **tools.summary)
        return _reply(outcome, self.model, **tools.summary)


class LLMVerifier:
    def __init__(self, model: RoleModel, fallback: VerifierRole) -> None:
        self.model = model
        self.fallback = fallback

    def verify(self, payload: dict[str, Any]) -> RoleReply:
        lang = detect_lang(str(payload.get("original_query", "")))
        outcome = self.model.run(prompt("verifier", lang), as_data("verifier_payload", _dump(payload)))
        if outcome.error is not None:
            return _fallback(self.fallback.verify(payload), outcome, self.model)
        return _reply(outcome, self.model)


class LLMComposer:
    def __init__(self, model: RoleModel, fallback: ComposerRole) -> None:
        self.model = model
        self.fallback = fallback

    def compose(self, composer_input: ComposerInput) -> RoleReply:
        outcome = self.model.run(
            prompt("composer", composer_input.lang), as_data("composer_input", composer_input.model_dump_json())
        )
        if outcome.error is not None:
            return _fallback(self.fallback.compose(composer_input), outcome, self.model)
        return _reply(outcome, self.model)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
