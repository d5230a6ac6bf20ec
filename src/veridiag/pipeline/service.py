"""The diagnosis pipeline (the spec's ChatService), top to bottom like its data flow:

question → Planner → [Executor → VerifierInputHook → Verifier → guardrails] × rounds →
Composer input → Composer → composer guard → final answer.

Every stage is persisted as it completes. An exception anywhere leaves a ``failed``
session holding what was known — never a half-written answer — and the user gets a
fixed message, never raw JSON.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from veridiag.agents.reply import TEMPLATE, RoleReply
from veridiag.agents.roles import ExecuteRequest, PlanRequest, Roles
from veridiag.agents.template import template_answer, with_gaps
from veridiag.config import Settings
from veridiag.contracts.audit import EngineUsage, FailedEvaluation, PartialRun, RoleCall, SelfEvaluation
from veridiag.contracts.composer import AnswerSource, ComposerInput, ComposerOutput, GuardResult
from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.json import JsonObject
from veridiag.contracts.material import ExecutorScope
from veridiag.contracts.parsing import parse_executor_output
from veridiag.contracts.plan import GivenTime, Plan
from veridiag.contracts.sanitize import clean_text
from veridiag.contracts.session import SessionSource
from veridiag.contracts.verifier import RetryContext, VerifierEvaluation
from veridiag.gatekeeper import Gatekeeper
from veridiag.gatekeeper.rules.entity_grounding import known_services
from veridiag.pipeline.audit import round_record, self_evaluation
from veridiag.pipeline.composer_guard import guard_composed, parse_composer_output
from veridiag.pipeline.composer_input import assemble_composer_input
from veridiag.pipeline.gaps import known_gaps
from veridiag.pipeline.guardrails import evaluate
from veridiag.pipeline.hook import HookResult, verifier_input
from veridiag.pipeline.progress import (
    AnswerComposed,
    DiagnosisDone,
    DiagnosisFailed,
    GatekeeperChecked,
    PlanMade,
    Progress,
    SessionStarted,
    StageProgress,
    ToolCalled,
    VerifierJudged,
)
from veridiag.pipeline.scope import scope_line
from veridiag.pipeline.shape import answer_line, first_service
from veridiag.pipeline.verifier_reply import ParsedVerifier, parse_verifier_output
from veridiag.redaction import Redactor, default_redactor
from veridiag.store import ProgressItem, SessionStore, new_session_id
from veridiag.text.cjk import detect_lang
from veridiag.text.memo import readings
from veridiag.text.render import invocation_json
from veridiag.tools.runner import Toolbox, ToolRunner

log = logging.getLogger("veridiag.pipeline")

FAILURE_ANSWER = {
    "zh": "诊断过程中出现内部错误，未能生成可靠结论。本次会话已记录，可在审计中查看已完成的步骤。",
    "en": "The diagnosis stopped on an internal error and produced no reliable conclusion. "
    "The session is recorded; its audit shows the steps that completed.",
}


class PipelineOptions(BaseModel):
    """Switches (docs/spec §22.2) and the retry budget. No switch brings back an Executor-written answer."""

    structured_output_v2: bool = True
    gatekeeper: bool = True
    composer: bool = True
    max_rounds: int = 2

    @classmethod
    def from_settings(cls, settings: Settings) -> PipelineOptions:
        return cls(
            structured_output_v2=settings.structured_output_v2.enabled,
            gatekeeper=settings.gatekeeper.enabled,
            composer=settings.composer.enabled,
            max_rounds=settings.retry.max_rounds,
        )


@dataclass
class RoundState:
    round: int
    raw_output: str | None
    hook: HookResult
    parsed_verifier: ParsedVerifier
    evaluation: VerifierEvaluation
    latency_ms: dict[str, float] = field(default_factory=dict)


@dataclass
class DiagnosisRun:
    """One diagnosis's own state. The pipeline is shared by every concurrent request (the HTTP
    service runs many in worker threads), so nothing that belongs to one question may live on
    it: each ``run()`` makes one of these and hands it down the chain."""

    session_id: str
    question: str
    lang: Literal["zh", "en"]
    sink: _Recorded
    timings: dict[str, float] = field(default_factory=dict)
    rounds: list[RoundState] = field(default_factory=list)
    #: What a failure report keeps: the stage reached, the role calls and the plan so far.
    stage: str = "plan"
    role_calls: list[RoleCall] = field(default_factory=list)
    plan: Plan | None = None
    #: A moment given with the question (an alert's start) that anchors the window.
    given_time: GivenTime | None = None
    #: The tool boundary's redactor for this run (``Redactor.for_session``): tool outputs and
    #: what the roles write.
    redactor: Redactor = field(default_factory=default_redactor)
    #: Events heard but not yet stored (``hold``): the next session write stores them.
    held: list[ProgressItem] = field(default_factory=list)

    def emit(self, progress: StageProgress) -> None:
        """Progress for this run only; every event names its session, so a listener can check
        that what it hears is its own. Any held event is stored first."""
        self.release()
        self.sink(progress.stage, progress.event(self.session_id))

    def hold(self, progress: StageProgress) -> None:
        """An event a session write follows (``written``): heard now, stored in that write's
        transaction rather than in one of its own. An ``emit`` before it (a failure's) stores it
        first; so does a write that fails."""
        item = (progress.stage, progress.event(self.session_id))
        self.held.append(item)
        self.sink.listener(*item)

    def written(self, write: Callable[[Sequence[ProgressItem]], None], after: Sequence[StageProgress] = ()) -> None:
        """``write(events)``: a session write that appends ``events`` — the held ones, then
        ``after`` — in its own transaction; ``after`` is heard once it is done. A write that
        raises stores the held events on their own, as when each had its own transaction
        (``after`` is not stored nor heard: it follows the write)."""
        before, self.held = self.held, []
        later = [(p.stage, p.event(self.session_id)) for p in after]
        try:
            write([*before, *later])
        except Exception:
            for item in before:
                self.sink.store(*item)
            raise
        for item in later:
            self.sink.listener(*item)

    def release(self) -> None:
        """Store the held events on their own (a failure's path, before its own writes)."""
        held, self.held = self.held, []
        for item in held:
            self.sink.store(*item)

    def record(self, role: str, reply: RoleReply, round_number: int | None = None) -> RoleReply:
        """Which engine answered each role, its usage and any fallback: the audit's ``role_calls``.
        ``engine_use`` is the record; ``engine`` its string form, kept for existing readers.
        Returns the reply as the run keeps it: a model's text enters here, so it is redacted
        here once (``Redactor.redact_written``), before it is parsed, stored or shown — a
        secret a model copies into a claim, an answer or a step reaches no reader."""
        if reply.text:
            written = self.redactor.redact_written(reply.text)
            if written != reply.text:
                reply = reply.model_copy(update={"text": written})
        self.role_calls.append(
            RoleCall(
                role=role,
                engine=reply.answered_by.label,
                engine_use=reply.answered_by,
                usage=_jsonable(reply.usage),
                round=round_number,
            )
        )
        return reply

    def partial(self) -> PartialRun:
        """What a failed run keeps: the stage it reached and everything recorded before it."""
        return PartialRun(
            stage=self.stage,
            role_calls=self.role_calls,
            plan=self.plan.stored() if self.plan else None,
            rounds=[round_record(state) for state in self.rounds],
        )


@dataclass
class DiagnosisResult:
    session_id: str
    status: Literal["completed", "failed"]
    verdict: str | None
    answer: str
    answer_source: AnswerSource | Literal["failure"]
    rounds: int
    #: As stored (JSON); a failed run's holds ``failed_at`` and ``partial`` instead of a record.
    self_evaluation: JsonObject
    error: str | None = None
    #: The typed record ``self_evaluation`` was stored from (completed runs only).
    record: SelfEvaluation | None = None


class DiagnosisPipeline:
    """Configuration and collaborators only (store, roles, Gatekeeper, toolbox, options, known
    services): shared by concurrent runs and never changed by one. Per-run state is a
    ``DiagnosisRun``."""

    def __init__(
        self,
        store: SessionStore,
        roles: Roles,
        *,
        gatekeeper: Gatekeeper | None = None,
        toolbox: Toolbox | None = None,
        options: PipelineOptions | None = None,
    ) -> None:
        self.store = store
        self.roles = roles
        self.options = options or PipelineOptions()
        gatekeeper = gatekeeper or Gatekeeper()
        self.gatekeeper = gatekeeper if self.options.gatekeeper else None
        self.toolbox = toolbox
        self.known_services: list[str] = known_services(gatekeeper.ruleset)

    @property
    def redactor(self) -> Redactor:
        """The tool boundary's redactor (the configured one), for every text that enters
        besides tool outputs: questions, role replies, a client's claims."""
        return self.toolbox.redactor if self.toolbox is not None else default_redactor()

    def run(
        self,
        question: str,
        lang: Literal["zh", "en"] | None = None,
        *,
        session_id: str | None = None,
        on_session: Callable[[str], None] | None = None,
        progress: Progress | None = None,
        given_time: GivenTime | None = None,
        source: SessionSource | None = None,
    ) -> DiagnosisResult:
        """Diagnose ``question``. ``on_session`` runs once the session exists (eval fixtures
        record their invocations there); ``progress(stage, details)`` hears each stage;
        ``given_time`` anchors the window at a moment passed in, not read from the words;
        ``source`` says where the question came from (the session list shows it).
        The question is sanitised first (``contracts/sanitize.py``): every role, the store and
        the answer read the text as it displays."""
        # The question is stored and shown (session, audit, answer): redacted before either.
        question = clean_text(question)
        redactor = self.redactor.for_session()  # this diagnosis's: it remembers what it found
        question = redactor.redact(question)
        lang = lang or detect_lang(question)
        session_id = session_id or new_session_id()
        started = SessionStarted(lang=lang)
        # the first event is stored with the session, in its transaction
        first = (started.stage, started.event(session_id))
        session = self.store.create_session(question, lang=lang, session_id=session_id, source=source, progress=[first])
        sink = _Recorded(self.store, session.id, progress or _silent)
        run = DiagnosisRun(session.id, question, lang, sink, given_time=given_time, redactor=redactor)
        sink.listener(*first)
        try:
            if on_session is not None:
                run.stage = "setup"
                on_session(session.id)
                run.stage = "plan"
            with readings():  # the stages read the same claims: each reading and lexing once per run
                return self._run(run)
        except Exception as exc:  # any role, parser or store failure: fail closed, keep what is known
            error = f"{run.stage}: {exc.__class__.__name__}: {exc}"
            run.release()  # what was heard is stored before the failure, as it happened
            evaluation = FailedEvaluation(failed_at=run.stage, partial=run.partial()).model_dump(mode="json")
            with contextlib.suppress(Exception):  # the store itself is down: the user still gets the answer
                self.store.fail_session(session.id, error=error, self_evaluation=evaluation)
            run.emit(DiagnosisFailed(error=error))
            return DiagnosisResult(session.id, "failed", None, FAILURE_ANSWER[lang], "failure", 0, evaluation, error)

    # --- the chain, in spec order -----------------------------------------------------

    def _run(self, run: DiagnosisRun) -> DiagnosisResult:
        session_id, question, lang, rounds = run.session_id, run.question, run.lang, run.rounds
        plan = self._plan(run)
        run.plan = plan
        run.hold(PlanMade(skill=plan.skill, service=plan.service, start=plan.start, end=plan.end))
        stored_plan = plan.stored()
        run.written(lambda events: self.store.update_session(session_id, plan=stored_plan, progress=events))

        retry_context: RetryContext | None = None
        for round_number in range(1, max(1, self.options.max_rounds) + 1):
            run.stage = f"round {round_number}: executor"
            state = self._round(run, plan=plan, round_number=round_number, retry_context=retry_context)
            rounds.append(state)
            # Progress only: the verdict is written with the answer, never before it.
            run.written(functools.partial(self._count_round, session_id, round_number))
            if not self._should_retry(state, round_number):
                break
            retry_context = RetryContext(
                previous_round=round_number,
                verdict=state.evaluation.verdict,
                claim_checks=state.evaluation.claim_checks,
                missing_info=list(state.hook.material.missing_info),
            )

        final = rounds[-1]
        run.stage = "composer"
        records = final.hook.invocations  # read by the last round's hook; no tool has run since
        material = final.hook.material
        found = known_gaps(
            lang,
            [r for r in records if r.round == final.round],
            named=[*plan.examined_services, *plan.unknown_services],
            scope=material.scope,
        )
        scope = material.scope or ExecutorScope()
        if found.without_data != scope.without_data:  # the scope line names them too
            scope = scope.model_copy(update={"without_data": found.without_data})
        assembled = assemble_composer_input(
            question,
            lang,
            evaluation=final.evaluation,
            material=final.hook.material,
            report=final.hook.report,
            evidence=self._evidence_texts(records),
            known_services=self.known_services,
            scope=scope_line(plan, scope, lang),
            intent=plan.intent,
            known_gaps=found.gaps,
            without_data=found.without_data,
        )
        composer_input = assembled.composer_input
        output, source, guard, reason = self._compose(run, composer_input, final)
        if composer_input.scope and not output.user_facing_answer.startswith(composer_input.scope):
            output.user_facing_answer = f"{composer_input.scope}\n\n{output.user_facing_answer}"
        run.hold(AnswerComposed(answer_source=source, reason=reason))
        audited = self_evaluation(
            rounds,
            composer_input=composer_input,
            output=output,
            source=source,
            guard=guard,
            reason=reason,
            options=self.options,
            timings=run.timings,
            role_calls=run.role_calls,
            withheld=assembled.withheld,
        )
        evaluation = audited.stored()
        line = answer_line(output.user_facing_answer, composer_input.scope)
        services = [*scope.examined, *plan.examined_services, *self.known_services]
        usage = audited.usage.model_dump(mode="json")
        service = first_service(line, services) or plan.service
        # The verdict and the answer land together, in one transaction (the store refuses one
        # without the other), with the answer's event before them and the end's after.
        run.written(
            lambda events: self.store.complete_session(
                session_id,
                verdict=final.evaluation.verdict,
                final_answer=output.user_facing_answer,
                self_evaluation=evaluation,
                rounds=len(rounds),
                llm_usage=usage,
                answer_line=line,
                service=service,
                progress=events,
            ),
            after=[DiagnosisDone(verdict=final.evaluation.verdict, rounds=len(rounds))],
        )
        return DiagnosisResult(
            session_id,
            "completed",
            final.evaluation.verdict,
            output.user_facing_answer,
            source,
            len(rounds),
            evaluation,
            record=audited,
        )

    def _count_round(self, session_id: str, round_number: int, events: Sequence[ProgressItem]) -> None:
        """The rounds run so far, with the round's events (``DiagnosisRun.written``)."""
        self.store.update_session(session_id, rounds=round_number, progress=events)

    def _plan(self, run: DiagnosisRun) -> Plan:
        started = time.perf_counter()
        reply = self.roles.planner.plan(PlanRequest(question=run.question, lang=run.lang, given_time=run.given_time))
        run.timings["planner_ms"] = _ms(started)
        reply = run.record("planner", reply)
        parsed = parse_executor_output(reply.text)
        return Plan.read(parsed.value if parsed.ok else None, reply.text, reply.answered_by.label)

    def _round(
        self,
        run: DiagnosisRun,
        *,
        plan: Plan,
        round_number: int,
        retry_context: RetryContext | None,
    ) -> RoundState:
        session_id, question, lang = run.session_id, run.question, run.lang
        latency: dict[str, float] = {}
        runner = None
        if self.toolbox:
            runner = ToolRunner(
                self.store,
                self.toolbox,
                session_id,
                round=round_number,
                on_call=lambda r: run.emit(
                    ToolCalled(invocation_id=r.invocation_id, tool=r.tool_name, status=r.status, round=round_number)
                ),
                redactor=run.redactor,
            )
        contract: Literal["executor_evidence_v2", "executor_evidence_v1"] = (
            "executor_evidence_v2" if self.options.structured_output_v2 else "executor_evidence_v1"
        )
        started = time.perf_counter()
        reply = self.roles.executor.execute(
            ExecuteRequest(
                question=question,
                lang=lang,
                plan=plan,
                round=round_number,
                tools=runner,
                retry_context=retry_context,
                contract=contract,
            )
        )
        latency["executor_ms"] = _ms(started)
        reply = run.record("executor", reply, round_number)
        run.stage = f"round {round_number}: gatekeeper"
        started = time.perf_counter()
        hook = verifier_input(
            question,
            reply.text,
            session_id=session_id,
            round=round_number,
            invocations=self.store,
            gatekeeper=self.gatekeeper,
            retry_context=retry_context,
        )
        latency["hook_ms"] = _ms(started)
        run.emit(
            GatekeeperChecked(
                round=round_number,
                parse_status=hook.parsed.status.status,
                status=hook.report.result.status if hook.report else "off",
                failed_rules=hook.report.result.failed_rules if hook.report else [],
            )
        )
        run.stage = f"round {round_number}: verifier"
        started = time.perf_counter()
        parsed = self._verify(run, hook, round_number)
        latency["verifier_ms"] = _ms(started)
        evaluation = evaluate(parsed, hook)
        run.hold(  # stored with the round's count (``_run``)
            VerifierJudged(
                round=round_number,
                verdict=evaluation.verdict,
                verifier_status=parsed.status,
                corrections=len(evaluation.corrections),
            )
        )
        return RoundState(round_number, reply.text, hook, parsed, evaluation, latency)

    def _verify(self, run: DiagnosisRun, hook: HookResult, round_number: int) -> ParsedVerifier:
        if not hook.parsed.ok:
            return ParsedVerifier("skipped", "executor output unusable: the verifier was not asked")
        if self.roles.verifier is None:
            return ParsedVerifier("unavailable", "no verifier configured")
        try:
            reply = self.roles.verifier.verify(hook.payload)
        except Exception as exc:  # a verifier failure fails closed, it does not end the session
            return ParsedVerifier("unavailable", f"verifier failed: {exc.__class__.__name__}: {exc}")
        reply = run.record("verifier", reply, round_number)
        return parse_verifier_output(reply.text)

    def _should_retry(self, state: RoundState, round_number: int) -> bool:
        """LOW_CONFID may earn one more round; a Gatekeeper failure does not (docs/spec §0.7)."""
        if round_number >= self.options.max_rounds or state.evaluation.verdict != "LOW_CONFID":
            return False
        report = state.hook.report
        return state.hook.parsed.ok and not (report is not None and report.result.status == "fail")

    @staticmethod
    def _evidence_texts(records: Sequence[InvocationRecord]) -> list[str]:
        """What this session's tools said — outputs, errors and the arguments they were called with
        (a window the executor names is one it queried) — for checking the Composer's free text."""
        return [
            text
            for record in records
            for text in (record.output, record.error or "", invocation_json(record.arguments))
        ]

    def _compose(
        self, run: DiagnosisRun, composer_input: ComposerInput, final: RoundState
    ) -> tuple[ComposerOutput, AnswerSource, GuardResult | None, str]:
        fallback = template_answer(composer_input)
        if not self.options.composer:
            return fallback, "template", None, "composer switched off"
        if not final.hook.parsed.ok:
            return fallback, "template", None, "executor output unusable: fixed LOW_CONFID template (docs/spec §19.2.1)"
        if self.roles.composer is None:
            return fallback, "template", None, "no composer configured"
        started = time.perf_counter()
        try:
            reply = self.roles.composer.compose(composer_input)
        except Exception as exc:
            return fallback, "template", None, f"composer failed: {exc.__class__.__name__}: {exc}"
        finally:
            run.timings["composer_ms"] = _ms(started)
        reply = run.record("composer", reply)
        output, problem = parse_composer_output(reply.text)
        if output is None:
            return fallback, "template", None, problem
        guard = guard_composed(output, composer_input, self.known_services)
        if not guard.passed:
            return fallback, "template", guard, "composer guard: " + "; ".join(guard.violations)
        if reply.answered_by.engine == TEMPLATE:
            return output, "template", guard, "the template composer (offline engine)"
        return with_gaps(output, composer_input), "composer", guard, "ok"


def _silent(_stage: str, _details: JsonObject) -> None:
    """The progress sink of a run nobody listens to."""


class _Recorded:
    """``listener``, each event first stored on the session (``record_progress``), so a process
    other than this one can follow the run (``GET /api/v1/sessions/{id}/events``). An event the
    store refuses is only logged: it is a progress report, not evidence, and the session's
    status — what a follower ends on — is written by the run's own writes. An event a session
    write carries (``DiagnosisRun.hold``, ``written``) is stored by that write instead."""

    def __init__(self, store: SessionStore, session_id: str, listener: Progress) -> None:
        self.sessions, self.session_id, self.listener = store, session_id, listener

    def __call__(self, stage: str, details: JsonObject) -> None:
        self.store(stage, details)
        self.listener(stage, details)

    def store(self, stage: str, details: JsonObject) -> None:
        """The event stored on its own (``record_progress``), not heard."""
        try:
            self.sessions.record_progress(self.session_id, stage, details)
        except Exception:
            log.warning("session %s: progress event %r not stored", self.session_id, stage, exc_info=True)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _jsonable(usage: EngineUsage) -> EngineUsage:
    """The usage as JSON keeps it (an engine may report a value JSON has no type for)."""
    stored: EngineUsage = json.loads(json.dumps(usage, ensure_ascii=False, default=str))
    return stored
