"""Runs eval cases through the real pipeline, each on a fresh throw-away store, and checks
their expectations plus the audit invariant: every allowed claim traces to a checked
binding and an existing invocation of the same session."""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from veridiag.agents import scripted_roles
from veridiag.agents.engines import offline_roles
from veridiag.agents.offline import OfflineVerifier
from veridiag.agents.roles import Roles
from veridiag.contracts.audit import RoundRecord, VerifierEvaluationRecord
from veridiag.contracts.composer import ComposerInput
from veridiag.contracts.material import ExecutorMaterial
from veridiag.evals.fixtures import Case
from veridiag.evals.truth import ClaimOutcome, ClaimOutcomeSummary, claim_outcomes
from veridiag.ingest.importers import import_changes, import_logs, import_metrics
from veridiag.pipeline import DiagnosisPipeline, PipelineOptions
from veridiag.redaction import default_redactor
from veridiag.store import SessionStore
from veridiag.text.entities import Corpus, extract_entities
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.results import ToolOutput
from veridiag.tools.runner import Toolbox, redact_call

KNOWN_SERVICES = ["gateway", "api-gateway", "nginx", "mysql", "postgresql", "redis", "kafka"]


class CaseSummary(TypedDict):
    """One case as ``veridiag eval --json`` reports it."""

    id: str
    passed: bool
    failures: list[str]
    verdict: str | None
    parse_status: str | None
    gatekeeper_status: str | None
    failed_rules: list[str]
    allowed_claims: list[str]
    answer_source: str | None
    final_answer: str | None
    #: A labelled case (``claim_truth``): each labelled claim, true or false, and how it reached the user.
    claims: NotRequired[list[ClaimOutcomeSummary]]


@dataclass
class CaseResult:
    id: str
    passed: bool
    failures: list[str] = field(default_factory=list)
    verdict: str | None = None
    parse_status: str | None = None
    gatekeeper_status: str | None = None
    failed_rules: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    allowed_claims: list[str] = field(default_factory=list)
    answer_source: str | None = None
    final_answer: str | None = None
    rounds: int = 0
    seconds: float = 0.0
    claims: list[ClaimOutcome] = field(default_factory=list)

    def public(self) -> CaseSummary:
        summary = CaseSummary(
            id=self.id,
            passed=self.passed,
            failures=self.failures,
            verdict=self.verdict,
            parse_status=self.parse_status,
            gatekeeper_status=self.gatekeeper_status,
            failed_rules=self.failed_rules,
            allowed_claims=self.allowed_claims,
            answer_source=self.answer_source,
            final_answer=self.final_answer,
        )
        if self.claims:
            summary["claims"] = [claim.public() for claim in self.claims]
        return summary


class EvalRunner:
    """One migrated empty SQLite file, copied for every case (migrations run once)."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="veridiag-eval-"))
        self._template = self._dir / "template.db"
        SessionStore(f"sqlite:///{self._template}").close()

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> EvalRunner:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def run(self, case: Case) -> CaseResult:
        started = time.perf_counter()
        path = self._dir / f"{case.id}.db"
        shutil.copyfile(self._template, path)
        store = SessionStore(f"sqlite:///{path}")
        try:
            result = self._run(case, store)
        except Exception as exc:  # a harness or pipeline crash is a failed case, never a pass
            result = CaseResult(case.id, False, [f"crashed: {exc.__class__.__name__}: {exc}"])
            result.claims = claim_outcomes(case, None, None)[0]  # nothing reached the user
        finally:
            store.close()
            path.unlink(missing_ok=True)
        result.seconds = round(time.perf_counter() - started, 4)
        return result

    def _run(self, case: Case, store: SessionStore) -> CaseResult:
        rounds = case.rounds
        toolbox = None
        roles: Roles
        if case.engine == "offline":
            environment = self._environment(case)
            roles = offline_roles(environment, store, KNOWN_SERVICES, timezone=case.timezone)
            toolbox = Toolbox(environment, environment, environment, environment)
        else:
            # A case without a verifier output is judged by the offline verifier (deterministic).
            roles = scripted_roles(
                executor=rounds,
                verifier=case.verifier_output,
                composer=case.composer_output,
                fallback_verifier=OfflineVerifier(store, KNOWN_SERVICES),
            )
        max_rounds = case.config.retry.max_rounds if case.config.retry else len(rounds)
        options = PipelineOptions(
            gatekeeper=case.config.gatekeeper.enabled,
            composer=case.config.composer.enabled,
            structured_output_v2=case.config.structured_output_v2.enabled,
            max_rounds=max_rounds,
        )

        def record(session_id: str) -> None:
            for invocation in case.invocations:
                owner = session_id
                if invocation.session != "this":
                    owner = f"fixture-{invocation.session}"
                    if store.get_session(owner) is None:
                        store.create_session(f"another session ({invocation.session})", session_id=owner)
                # A recorded output is what a backend returned: it passes the live tool boundary.
                arguments, output = redact_call(
                    toolbox.redactor if toolbox is not None else default_redactor(),
                    invocation.arguments,
                    ToolOutput(
                        status=invocation.status,
                        text=invocation.output,
                        error=invocation.error,
                        retrieval_details=invocation.retrieval_details or {},
                    ),
                )
                details = output.retrieval_details
                store.record_invocation(
                    session_id=owner,
                    tool_name=invocation.tool_name,
                    arguments=arguments,
                    status=invocation.status,
                    output=output.text,
                    error=output.error,
                    retrieval_details=details if details or invocation.retrieval_details is not None else None,
                    invocation_id=invocation.id,
                )

        pipeline = DiagnosisPipeline(store, roles, toolbox=toolbox, options=options)
        outcome = pipeline.run(case.query, case.lang, on_session=record, source="eval")
        evaluation = outcome.record.verifier_evaluation if outcome.record else None  # None: the run failed
        gatekeeper = evaluation.gatekeeper_result if evaluation else None
        composer_input = evaluation.composer_input if evaluation else None
        result = CaseResult(
            id=case.id,
            passed=False,
            verdict=outcome.verdict,
            parse_status=evaluation.executor_output_parse_status.status if evaluation else None,
            gatekeeper_status=gatekeeper.status if gatekeeper else None,
            failed_rules=list(gatekeeper.failed_rules) if gatekeeper else [],
            warnings=list(gatekeeper.warnings) if gatekeeper else [],
            allowed_claims=[c.claim_id for c in composer_input.allowed_claims] if composer_input else [],
            answer_source=outcome.answer_source,
            final_answer=outcome.answer,
            rounds=outcome.rounds,
        )
        if outcome.status == "failed":
            result.failures.append(f"pipeline failed: {outcome.error}")
        labels = {c.claim_id: c.verification for c in evaluation.claim_checks} if evaluation else {}
        result.failures += check_expectations(case, result, labels)
        if evaluation is not None and outcome.record is not None:
            result.failures += check_audit(store, outcome.session_id, evaluation, outcome.record.rounds[-1])
        result.failures += check_claims(case, evaluation)
        if case.claim_truth:
            result.claims, mislabelled = claim_outcomes(
                case, evaluation, outcome.record.rounds[-1] if outcome.record and outcome.record.rounds else None
            )
            result.failures += mislabelled
        if case.expect.numbers_grounded:
            result.failures += check_grounded(store, outcome.session_id, outcome.answer, composer_input)
        result.passed = not result.failures
        return result

    def _environment(self, case: Case) -> EmbeddedEnvironment:
        """A fresh embedded store holding the case's data files, imported as a user would."""
        environment = EmbeddedEnvironment(self._dir / f"{case.id}-data.db", load_demo=False)
        base = case.path.parent if case.path else Path.cwd()
        data = case.data
        for log in data.logs if data else []:
            import_logs(
                environment,
                base / log.file,
                service=log.service,
                fmt=log.format,
                year=log.year,
                tz=log.tz or case.timezone,
            )
        for metric in data.metrics if data else []:
            import_metrics(
                environment,
                base / metric.file,
                service=metric.service,
                metric=metric.metric,
                unit=metric.unit,
                fmt=metric.format,
                tz=metric.tz or case.timezone,
            )
        for change in data.changes if data else []:
            import_changes(environment, base / change.file, service=change.service, tz=change.tz or case.timezone)
        return environment


def check_expectations(case: Case, result: CaseResult, labels: Mapping[str, str]) -> list[str]:
    expect, failures = case.expect, []
    answer = result.final_answer or ""

    def require(ok: bool, message: str) -> None:
        if not ok:
            failures.append(message)

    if expect.verdict is not None:
        require(result.verdict == expect.verdict, f"verdict {result.verdict}, expected {expect.verdict}")
    if expect.verdict_in is not None:
        require(result.verdict in expect.verdict_in, f"verdict {result.verdict}, expected one of {expect.verdict_in}")
    if expect.not_verdict is not None:
        require(result.verdict != expect.not_verdict, f"verdict must not be {expect.not_verdict}")
    if expect.parse_status is not None:
        require(
            result.parse_status == expect.parse_status,
            f"parse_status {result.parse_status}, expected {expect.parse_status}",
        )
    if expect.gatekeeper_status is not None:
        require(
            result.gatekeeper_status == expect.gatekeeper_status,
            f"gatekeeper_status {result.gatekeeper_status}, expected {expect.gatekeeper_status}",
        )
    for rule in expect.failed_rules_include:
        require(rule in result.failed_rules, f"rule {rule} did not fail (failed: {result.failed_rules})")
    for rule in expect.failed_rules_exclude:
        require(rule not in result.failed_rules, f"rule {rule} failed but must not")
    for rule in expect.warnings_include:
        require(rule in result.warnings, f"rule {rule} did not warn (warnings: {result.warnings})")
    for claim_id, label in expect.claim_verification.items():
        require(labels.get(claim_id) == label, f"{claim_id} is {labels.get(claim_id)}, expected {label}")
    if expect.allowed_claims is not None:
        require(
            sorted(result.allowed_claims) == sorted(expect.allowed_claims),
            f"allowed claims {result.allowed_claims}, expected {expect.allowed_claims}",
        )
    for claim_id in expect.blocked_claims:
        require(claim_id not in result.allowed_claims, f"{claim_id} was allowed but must be blocked")
    for text in expect.answer_contains:
        require(text in answer, f"answer lacks {text!r}")
    for text in expect.answer_not_contains:
        require(text not in answer, f"answer contains {text!r}")
    for pattern in expect.answer_matches:
        require(re.search(pattern, answer) is not None, f"answer does not match {pattern!r}")
    if expect.answer_source is not None:
        require(
            result.answer_source == expect.answer_source,
            f"answer_source {result.answer_source}, expected {expect.answer_source}",
        )
    if expect.rounds is not None:
        require(result.rounds == expect.rounds, f"rounds {result.rounds}, expected {expect.rounds}")
    return failures


def check_claims(case: Case, evaluation: VerifierEvaluationRecord | None) -> list[str]:
    allowed = evaluation.composer_input.allowed_claims if evaluation and evaluation.composer_input else []
    failures = []
    if case.expect.min_allowed_claims is not None and len(allowed) < case.expect.min_allowed_claims:
        failures.append(f"{len(allowed)} allowed claims, expected at least {case.expect.min_allowed_claims}")
    for claim in allowed:
        if claim.claim_type in case.expect.no_claim_types:
            failures.append(f"{claim.claim_id} is an allowed {claim.claim_type} claim: {claim.claim_text}")
    return failures


def check_grounded(
    store: SessionStore, session_id: str, answer: str, composer_input: ComposerInput | None
) -> list[str]:
    """Every exact fact of the answer (its first line, the window read from the question, aside)
    occurs in the output of an invocation of this session."""
    corpus = Corpus([invocation.output for invocation in store.list_invocations(session_id)])
    scope = composer_input.scope if composer_input else ""
    body = answer[len(scope) :] if scope and answer.startswith(scope) else answer
    missing = [e.text for e in extract_entities(body) if not corpus.contains(e)]
    return [f"answer states {', '.join(missing)} found in no tool output of the session"] if missing else []


def check_audit(
    store: SessionStore, session_id: str, evaluation: VerifierEvaluationRecord, final_round: RoundRecord
) -> list[str]:
    """Every allowed claim traces to a binding whose invocations exist in this session and,
    where the Gatekeeper ran, passed its invocation check. Claims are matched by the id the
    pipeline gives them (``ExecutorMaterial``), exactly."""
    own = {invocation.id for invocation in store.list_invocations(session_id)}
    claims = {claim.claim_id: claim for claim in ExecutorMaterial.read(evaluation.executor_structured_output).claims}
    traces = {trace.claim_id: trace for trace in final_round.gatekeeper_trace or []}
    failures = []
    for allowed in evaluation.composer_input.allowed_claims if evaluation.composer_input else []:
        claim_id = allowed.claim_id
        claim = claims.get(claim_id)
        if claim is None or not claim.cites_only(own):
            failures.append(f"audit: allowed {claim_id} cites no invocation of this session")
        if evaluation.gatekeeper_result is not None:
            trace = traces.get(claim_id)
            checks = trace.checks if trace else []
            if not any(c.rule_id == "evidence.invocation_ref" and c.outcome == "pass" for c in checks):
                failures.append(f"audit: allowed {claim_id} has no passed Gatekeeper invocation check")
    return failures


def run_suite(cases: list[Case]) -> list[CaseResult]:
    with EvalRunner() as runner:
        return [runner.run(case) for case in cases]
