"""One fallback wrapper for every role: a model that cannot answer hands the call to the offline
twin, and the reply records — as data — which engine answered, which one failed and why."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.builders import verifier_payload
from tests.llm_scripts import Script
from veridiag.agents import scripted_roles
from veridiag.agents.fallback import EngineFailedError, FallbackRole
from veridiag.agents.llm.model_call import RoleModel
from veridiag.agents.llm.roles import LLMComposer, LLMExecutor
from veridiag.agents.offline import OfflineExecutor
from veridiag.agents.reply import RoleReply
from veridiag.agents.roles import ComposerRole, ExecuteRequest, ExecutorRole, PlanRequest, VerifierRole
from veridiag.agents.template import TemplateComposer, template_answer
from veridiag.config import LLMRoleSettings
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.composer import ComposerInput
from veridiag.contracts.plan import Plan
from veridiag.contracts.verifier import VerifierPayload

COMPOSER_INPUT = ComposerInput(original_query="why is checkout slow?", lang="en", verdict="LOW_CONFID")


def _model(script: Script, name: str = "fn-composer") -> RoleModel:
    def factory(config: LLMRoleSettings) -> Model:
        return FunctionModel(script, model_name=str(config.model))

    return RoleModel("composer", LLMRoleSettings(model=name, max_retries=0), model_factory=factory)


def _composer(script: Script) -> FallbackRole[ComposerRole]:
    return FallbackRole[ComposerRole](LLMComposer(_model(script)), TemplateComposer())


def test_a_failing_model_is_answered_by_the_fallback_which_records_why() -> None:
    def cut_off(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart('{"answer_summary": "'), TextPart("x")], finish_reason="length")

    reply = _composer(cut_off).compose(COMPOSER_INPUT)
    assert reply.answered_by == EngineUse(
        engine="template", fallback_from="llm:fn-composer", reason="truncated output (finish_reason=length)"
    )
    assert reply.text == template_answer(COMPOSER_INPUT).model_dump_json()
    assert reply.usage["finish_reason"] == "length" and reply.usage["model"] == "fn-composer"  # the cost is kept


def test_an_answering_model_is_recorded_as_itself() -> None:
    def answers(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart('{"answer_summary": "ok"}')])

    wrapper = _composer(answers)
    reply = wrapper.compose(COMPOSER_INPUT)
    assert reply.answered_by == EngineUse(engine="llm:fn-composer")
    assert reply.text == '{"answer_summary": "ok"}'
    assert wrapper.name == "llm:fn-composer"  # the configured engine is the one asked first


def test_an_executor_model_without_tools_falls_back_and_says_so() -> None:
    def never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("the model is not asked without tools")

    executor = FallbackRole[ExecutorRole](LLMExecutor(_model(never, "fn-executor"), budget=4), OfflineExecutor())
    request = ExecuteRequest(question="q", lang="en", plan=Plan(), round=1, tools=None)
    used = executor.execute(request).answered_by
    assert (used.engine, used.fallback_from) == ("offline", "llm:fn-executor")
    assert used.reason is not None and "no tool runner" in used.reason


class _Stub:
    """Any role's engine: answers every role method, or fails each with ``error``."""

    def __init__(self, name: str, error: Exception | None = None) -> None:
        self.name = name
        self.error = error

    def _reply(self) -> RoleReply:
        if self.error is not None:
            raise self.error
        return RoleReply(text=self.name, answered_by=EngineUse(engine=self.name), usage={"own": self.name})

    def plan(self, request: PlanRequest) -> RoleReply:
        return self._reply()

    def execute(self, request: ExecuteRequest) -> RoleReply:
        return self._reply()

    def verify(self, payload: VerifierPayload) -> RoleReply:
        return self._reply()

    def compose(self, composer_input: ComposerInput) -> RoleReply:
        return self._reply()


CALLS = {
    "plan": lambda role: role.plan(PlanRequest(question="q", lang="en")),
    "execute": lambda role: role.execute(ExecuteRequest(question="q", lang="en", plan=Plan(), round=1, tools=None)),
    "verify": lambda role: role.verify(verifier_payload()),
    "compose": lambda role: role.compose(COMPOSER_INPUT),
}


@pytest.mark.parametrize("method", sorted(CALLS))
def test_the_same_wrapper_falls_back_for_every_role(method: str) -> None:
    failing = _Stub("llm:m", EngineFailedError("timeout", {"attempts": 3}))
    reply = CALLS[method](FallbackRole(failing, _Stub("offline")))
    assert reply.text == "offline"
    assert reply.answered_by == EngineUse(engine="offline", fallback_from="llm:m", reason="timeout")
    assert reply.usage == {"own": "offline", "attempts": 3}


def test_a_fault_is_not_a_fallback() -> None:
    """Only a failed answer falls back; a bug goes up to the pipeline, which fails closed."""
    wrapper = FallbackRole[VerifierRole](_Stub("llm:m", RuntimeError("bug")), _Stub("offline"))
    with pytest.raises(RuntimeError, match="bug"):
        wrapper.verify(verifier_payload())


def test_the_string_forms_come_from_the_record() -> None:
    fell_back = EngineUse(engine="offline", fallback_from="llm:m", reason="timeout")
    assert (fell_back.label, fell_back.failure) == ("offline (fallback)", "llm:m failed: timeout")
    answered = EngineUse(engine="llm:m")
    assert (answered.label, answered.failure) == ("llm:m", None)


def test_configured_names_are_read_off_the_roles() -> None:
    assert scripted_roles(executor="{}").names == {
        "planner": "scripted",
        "executor": "scripted",
        "verifier": "fallback",  # none: the pipeline fails closed
        "composer": "template",  # none: the pipeline's template
    }
    with_verifier = scripted_roles(executor="{}", verifier="{}", composer="{}", fallback_verifier=None)
    assert with_verifier.names["verifier"] == "scripted" and with_verifier.names["composer"] == "scripted"
