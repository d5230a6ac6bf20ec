"""The four roles on a configured model. A model that cannot answer (timeout, 429/5xx after
retries, refusal, truncation, an unusable plan) raises ``EngineFailedError``; ``llm_roles`` wraps
each in a ``FallbackRole`` with its offline twin, which answers instead and says why."""

from __future__ import annotations

import json
from datetime import datetime
from typing import NotRequired, TypedDict, Unpack, get_args

from veridiag.agents.fallback import EngineFailedError
from veridiag.agents.llm.evidence_tools import EvidenceTools
from veridiag.agents.llm.model_call import CallOutcome, RoleModel
from veridiag.agents.llm.prompts import as_data, prompt
from veridiag.agents.offline.planner import Environment
from veridiag.agents.offline.skills import catalog
from veridiag.agents.reply import RoleReply
from veridiag.agents.roles import ExecuteRequest, PlannerRole, PlanRequest
from veridiag.contracts.audit import EngineUsage, EngineUse
from veridiag.contracts.composer import ComposerInput
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.contracts.parsing import parse_executor_output
from veridiag.contracts.plan import IntentId
from veridiag.contracts.verifier import VerifierPayload
from veridiag.text.cjk import detect_lang


class SkillRef(TypedDict):
    id: str
    title: str


class PlanningInput(TypedDict):
    """What the model planner is given: the question, the offline draft (without its steps), the
    skills it may pick and the services it may name."""

    question: str
    draft_plan: JsonObject
    skills: list[SkillRef]
    services: list[str]


class ExecutorTask(TypedDict):
    """What the model executor is given; ``previous_round`` only when a round is retried."""

    question: str
    plan: JsonObject
    round: int
    previous_round: NotRequired[JsonObject]


class ModelRole:
    """A role answered by ``model``; named after it (``llm:<model>``)."""

    def __init__(self, model: RoleModel) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return self.model.label

    def answered(self, outcome: CallOutcome, text: str | None = None, **extra: Unpack[EngineUsage]) -> RoleReply:
        """The model's reply (``text`` when the role reworked it), or ``EngineFailedError`` when the
        call failed; either way with the call's usage and ``extra``."""
        usage: EngineUsage = {**outcome.usage, **extra}
        if outcome.error is not None:
            raise EngineFailedError(outcome.error, usage)
        return RoleReply(
            text=outcome.text if text is None else text, answered_by=EngineUse(engine=self.name), usage=usage
        )


class LLMPlanner(ModelRole):
    """Refines the deterministic draft plan; the draft's time window and service stand unless the
    model names a known service, a skill of the catalogue and a parseable window."""

    def __init__(self, model: RoleModel, draft: PlannerRole, environment: Environment) -> None:
        super().__init__(model)
        self.draft = draft
        self.environment = environment

    def plan(self, request: PlanRequest) -> RoleReply:
        draft = parse_executor_output(self.draft.plan(request).text).value or {}
        services = self.environment.services()
        material = PlanningInput(
            question=request.question,
            draft_plan={k: v for k, v in draft.items() if k != "steps"},
            skills=[SkillRef(id=s.id, title=s.title) for s in catalog().skills],
            services=services,
        )
        outcome = self.model.run(prompt("planner", request.lang), as_data("planning_input", _dump(material)))
        parsed = parse_executor_output(self.answered(outcome).text)
        if not parsed.ok or not isinstance(parsed.value, dict):
            raise EngineFailedError("plan is not a JSON object", outcome.usage)
        # A given moment (an alert's start) fixes the window: the model may not move it.
        proposed = parsed.value if request.given_time is None else _without(parsed.value, ("start", "end"))
        plan, overridden = _merge_plan(draft, proposed, services)
        return self.answered(outcome, _dump(plan), kept_from_draft=overridden)


def _without(proposed: JsonObject, keys: tuple[str, ...]) -> JsonObject:
    return {key: value for key, value in proposed.items() if key not in keys}


def _merge_plan(draft: JsonObject, proposed: JsonObject, services: list[str]) -> tuple[JsonObject, list[str]]:
    """Take what the model chose where it is valid; keep the draft elsewhere (and say where).
    Both are replies not yet read; the merged plan is this role's reply, read by ``Plan.read``."""
    plan = dict(draft)
    kept: list[str] = []
    skill_ids = {s.id for s in catalog().skills}
    chosen = proposed.get("skill")
    if not isinstance(chosen, str) or chosen not in skill_ids:
        kept.append("skill")
    elif chosen != draft.get("skill"):
        skill = catalog().get(chosen)
        steps: list[JsonValue] = [s.model_dump(mode="json", exclude_none=True) for s in skill.steps]
        plan.update(skill=skill.id, skill_title=skill.title, steps=steps)
    service = proposed.get("service")
    if isinstance(service, str) and service in services:
        plan["service"] = service
        named = plan.get("services")
        if not isinstance(named, list) or service not in named:
            plan["services"] = [service]
    elif service:
        kept.append("service")
    for bound in ("start", "end"):
        value = proposed.get(bound)
        if isinstance(value, str) and _iso(value):
            plan[bound] = value
        elif value:
            kept.append(bound)
    kind = proposed.get("intent")
    if isinstance(kind, str) and kind in get_args(IntentId):
        known = draft.get("intent")
        plan["intent"] = {**(known if isinstance(known, dict) else {}), "kind": kind}
    elif kind:
        kept.append("intent")
    order_id = proposed.get("order_id")
    if isinstance(order_id, str | int) and str(order_id) in json.dumps(draft):
        plan["order_id"] = str(order_id)
    if isinstance(model_steps := proposed.get("steps"), list):
        plan["model_steps"] = model_steps[:6]
    return plan, kept


def _iso(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


class LLMExecutor(ModelRole):
    def __init__(self, model: RoleModel, budget: int) -> None:
        super().__init__(model)
        self.budget = budget

    def execute(self, request: ExecuteRequest) -> RoleReply:
        if request.tools is None:
            raise EngineFailedError("no tool runner: the model has no evidence tools to call")
        tools = EvidenceTools(request.tools, self.budget)
        material = ExecutorTask(question=request.question, plan=request.plan.stored(), round=request.round)
        if request.retry_context:
            material["previous_round"] = request.retry_context.model_dump(mode="json")
        outcome = self.model.run(
            prompt("executor", request.lang),
            as_data("task", _dump(material)),
            tools=tools.tools(),
            request_limit=self.budget + 4,
        )
        return self.answered(outcome, **tools.summary)


class LLMVerifier(ModelRole):
    def verify(self, payload: VerifierPayload) -> RoleReply:
        lang = detect_lang(payload.original_query)
        material = payload.model_dump(mode="json")
        return self.answered(self.model.run(prompt("verifier", lang), as_data("verifier_payload", _dump(material))))


class LLMComposer(ModelRole):
    def compose(self, composer_input: ComposerInput) -> RoleReply:
        outcome = self.model.run(
            prompt("composer", composer_input.lang), as_data("composer_input", composer_input.model_dump_json())
        )
        return self.answered(outcome)


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
