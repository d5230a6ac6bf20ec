"""``veridiag`` command line.

Stable, script-facing commands print JSON with ``--json``; exit status is non-zero on
failure (``gatekeeper check``: 1 when the output fails the Gatekeeper, 2 for bad input).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, TypedDict

import typer
from rich.table import Table
from typer.main import get_command_name

from veridiag.cli.ask import ask
from veridiag.cli.common import (
    COLLECTOR_PAUSED,
    PROCESS_ENDS,
    GuardedGroup,
    err,
    fail,
    out,
    print_json,
    settings,
    started_once,
)
from veridiag.cli.data import data_app, db_app, kb_app, tools_app
from veridiag.cli.llm import llm_app
from veridiag.cli.mcp import mcp
from veridiag.cli.serve import serve
from veridiag.cli.worker import worker
from veridiag.contracts.schemas import SCHEMA_FILES

if TYPE_CHECKING:
    from collections.abc import Callable

    from veridiag.bench.goals import GoalCheck
    from veridiag.contracts.gatekeeper import VerdictImpact
    from veridiag.contracts.invocation import InvocationRecord
    from veridiag.contracts.json import JsonObject, JsonValue
    from veridiag.evals import CaseResult, TruthRates
    from veridiag.gatekeeper import RuleSet

app = typer.Typer(
    cls=GuardedGroup,
    help="veridiag — diagnosis answers that only say what the evidence supports.",
    no_args_is_help=True,
    add_completion=False,
)
gatekeeper_app = typer.Typer(help="Run the deterministic Gatekeeper on files.", no_args_is_help=True)
app.add_typer(gatekeeper_app, name="gatekeeper")
app.add_typer(db_app, name="db")
app.add_typer(data_app, name="data")
app.add_typer(kb_app, name="kb")
app.add_typer(tools_app, name="tools")
app.add_typer(llm_app, name="llm")
app.command()(ask)
app.command()(serve)
app.command()(mcp)
app.command()(worker)

RulesOption = Annotated[
    Path | None,
    typer.Option("--rules-file", help="Rules override YAML (default: config gatekeeper.rules_file)."),
]


class InputError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


def _ruleset(rules_file: Path | None) -> RuleSet:
    # Commands import what they run: ``veridiag --help`` loads no Gatekeeper, store or model client.
    from veridiag.gatekeeper import RulesetError, load_ruleset

    path = rules_file or settings().gatekeeper.rules_file
    try:
        return load_ruleset(path)
    except RulesetError as exc:
        raise fail(str(exc)) from None


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        from veridiag import __version__

        out.print(__version__)
        raise typer.Exit()


@app.command()
def schema(
    name: Annotated[str, typer.Argument(help=f"One of: {', '.join(SCHEMA_FILES)}.")] = "executor-v2",
) -> None:
    """Print the JSON Schema of a contract (the files under schemas/ are these)."""
    from veridiag.contracts.schemas import schema_text

    try:
        sys.stdout.write(schema_text(name))
    except KeyError as exc:
        raise fail(str(exc.args[0])) from None


@app.command()
def rules(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    rules_file: RulesOption = None,
) -> None:
    """List the effective Gatekeeper rule set (bundled rules plus overrides)."""
    ruleset = _ruleset(rules_file)
    if as_json:
        print_json({"rules": [rule.public_dict() for rule in ruleset]})
        return
    table = Table(title="Gatekeeper rules", show_lines=False)
    for column in ("id", "enabled", "severity", "verdictImpact", "description"):
        table.add_column(column, overflow="fold")
    for rule in ruleset:
        table.add_row(
            rule.id,
            "yes" if rule.enabled else "no",
            rule.severity,
            rule.verdict_impact,
            rule.description_en or rule.description,
        )
    out.print(table)


def _read_invocations(path: Path) -> list[InvocationRecord]:
    from pydantic import ValidationError

    from veridiag.contracts.invocation import InvocationRecord
    from veridiag.contracts.parsing import read_json

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 (byte {exc.start})") from None
    stripped = text.strip()
    try:  # as strictly as a role's document: NaN, a duplicate key or nesting too deep is invalid
        if stripped.startswith("["):
            raw = read_json(stripped)
        else:
            raw = [read_json(line) for line in stripped.splitlines() if line.strip()]
    except ValueError as exc:
        raise InputError(f"{path}: invalid JSON: {exc}") from None
    if isinstance(raw, dict) and isinstance(raw.get("invocations"), list):
        raw = raw["invocations"]
    if not isinstance(raw, list):
        raise InputError(f"{path}: expected a JSON array of invocations (or JSON lines)")
    records = []
    for index, item in enumerate(raw):
        try:
            records.append(InvocationRecord.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InputError(f"{path}: invocation [{index}] {where}: {first['msg']}") from None
    return records


class GatekeeperCheck(TypedDict):
    """What ``gatekeeper check`` prints; the traces only with ``--trace``."""

    session_id: str
    executor_output_parse_status: JsonObject
    gatekeeper_result: JsonObject
    failed_rule_impacts: dict[str, VerdictImpact]
    claim_traces: NotRequired[JsonValue]
    other_checks: NotRequired[JsonValue]


@gatekeeper_app.command("check")
def gatekeeper_check(
    output: Annotated[Path, typer.Option("--output", help="Raw Executor output (any text).")],
    invocations: Annotated[Path, typer.Option("--invocations", help="Tool invocations: a JSON array or JSON lines.")],
    session: Annotated[
        str | None, typer.Option("--session", help="Session id (default: the invocations' only session).")
    ] = None,
    trace: Annotated[bool, typer.Option("--trace", help="Include per-claim checks and matched spans.")] = False,
    rules_file: RulesOption = None,
) -> None:
    """Parse an Executor output and run the Gatekeeper; prints the result JSON.

    Exit status: 0 pass or warn, 1 fail, 2 unusable input.
    """
    try:
        raw = output.read_bytes()
    except OSError as exc:
        raise fail(f"{output}: {exc.strerror or exc}") from None
    from veridiag.contracts.invocation import InMemoryInvocations

    try:
        records = _read_invocations(invocations)
        store = InMemoryInvocations(records)
    except (InputError, ValueError) as exc:
        raise fail(str(exc)) from None
    if session is None:
        sessions = sorted({record.session_id for record in records})
        if len(sessions) != 1:
            raise fail(f"--session is required: the invocations belong to {len(sessions)} sessions")
        session = sessions[0]

    from veridiag.gatekeeper import Gatekeeper

    gatekeeper = Gatekeeper(_ruleset(rules_file))
    parsed, report = gatekeeper.check_raw(raw, session_id=session, invocations=store)
    document: GatekeeperCheck = {
        "session_id": session,
        "executor_output_parse_status": parsed.status.model_dump(),
        "gatekeeper_result": report.result.model_dump(),
        "failed_rule_impacts": report.failed_rule_impacts,
    }
    if trace:
        full = report.model_dump(mode="json")
        document["claim_traces"] = full["claim_traces"]
        document["other_checks"] = full["other_checks"]
    print_json(document)
    raise typer.Exit(1 if report.result.status == "fail" else 0)


@app.command()
def bench(
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    only: Annotated[list[str] | None, typer.Option("--only", help="Run only this benchmark (repeatable).")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Few repetitions: a smoke run, not a measurement.")] = False,
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            help="Store the api benchmark's sessions here (e.g. a PostgreSQL test database) "
            "instead of a fresh SQLite file. Never your production store: it adds hundreds of sessions.",
        ),
    ] = None,
) -> None:
    """Run the benchmarks (repeated runs, medians, baselines in the same process)."""
    # Started as ``serve`` starts (``started_once``: the imports frozen), so the latencies timed
    # here are the ones a server sees, without a full pass over start-up objects in them.
    with started_once(collect=True) as started:
        from veridiag.bench import run_benchmarks
        from veridiag.bench.goals import GoalCheck
        from veridiag.contracts.json import json_object, json_objects
        from veridiag.store import StoreError

        started()
        try:
            with err.status("benchmarking…") as status:
                results = run_benchmarks(
                    only,
                    quick=quick,
                    progress=lambda name: status.update(f"benchmark {name}…"),
                    database_url=database_url,
                )
        except KeyError as exc:
            raise fail(str(exc.args[0])) from None
        except StoreError as exc:
            raise fail(str(exc)) from None
    if as_json:
        print_json(results)
        return
    goals = [GoalCheck.model_validate(goal) for goal in json_objects(results.pop("goals"))]
    for name, values in results.items():
        table = Table(title=name)
        table.add_column("metric")
        table.add_column("value", justify="right")
        for key, value in json_object(values).items():
            table.add_row(key, json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else str(value))
        out.print(table)
    table = _goals_table(goals)
    if quick:
        table.caption = "--quick: a smoke run with small sizes, not a measurement of these goals"
    out.print(table)


_GOAL_STYLE = {"met": "green", "missed": "bold red", "not measured": "dim"}


def _goals_table(goals: list[GoalCheck]) -> Table:
    """The issue-15 table: every goal, the value this run measured, met or not."""
    from rich.text import Text

    table = Table(title="goals")
    for column in ("what", "goal", "measured", "status"):
        table.add_column(column, justify="right" if column == "measured" else "left")
    for goal in goals:
        value = "—" if goal.value is None else f"{goal.value:g}"
        table.add_row(goal.what, goal.target, value, Text(goal.status, style=_GOAL_STYLE[goal.status]))
    return table


@app.command()
def audit(
    session_id: Annotated[str, typer.Argument(help="A session id (see `veridiag sessions`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """The audit chain of a session: final answer → composer → verifier → gatekeeper → invocations."""
    from veridiag.contracts.json import json_object, json_objects
    from veridiag.pipeline import audit_chain
    from veridiag.store import StoreError, open_store

    try:
        config = settings()
        chain = audit_chain(open_store(config.store_url, stale_after=config.session_timeout_seconds), session_id)
    except StoreError as exc:
        raise fail(str(exc)) from None
    if chain is None:
        raise fail(f"no session {session_id!r}", code=1)
    if as_json:
        print_json(chain.model_dump(mode="json"))
        return
    session = chain.session
    out.print(f"{session.id} {session.status} verdict={session.verdict} — {session.query}")
    if session.error:
        out.print(f"  {session.error}")
    out.print(f"answer ({chain.answer_source}):\n{chain.final_answer or '—'}")
    for check in json_objects(chain.verifier.claim_checks):
        out.print(f"  {check.get('claim_id')}: {check.get('verification')} — {check.get('detail')}")
    for correction in json_objects(chain.verifier.corrections):
        out.print(f"  corrected by {correction.get('guard')}: {correction.get('reason')}")
    gatekeeper = json_object(chain.gatekeeper.result)
    failed_rules = gatekeeper.get("failed_rules")
    failed = ", ".join(str(rule) for rule in failed_rules) if isinstance(failed_rules, list) else ""
    out.print(f"gatekeeper: {gatekeeper.get('status', 'off')} {failed}")
    out.print(f"invocations: {', '.join(f'{i.id}:{i.tool_name}' for i in chain.invocations)}")
    from veridiag.contracts.delivery import read_attempts

    attempts, unreadable = read_attempts(session.deliveries or [])
    if unreadable:
        out.print(f"deliveries: {unreadable} stored attempt(s) could not be read")
    for attempt in attempts:
        problem = f" — {attempt.error}" if attempt.error else ""
        out.print(
            f"delivery {attempt.destination} ({attempt.kind}) attempt {attempt.attempt}: {attempt.outcome}"
            f" HTTP {attempt.status_code or '—'} at {attempt.at.isoformat(timespec='seconds')}{problem}"
        )


@app.command()
def deliver(
    session_id: Annotated[str, typer.Argument(help="A completed session (see `veridiag sessions`).")],
    to: Annotated[
        list[str] | None, typer.Option("--to", help="A configured destination's name (repeatable; default: all).")
    ] = None,
) -> None:
    """Post a stored session's verified answer to chat; each attempt is recorded on the session."""
    from veridiag.cli.ask import show_deliveries
    from veridiag.delivery import DeliveryError, deliver_session
    from veridiag.store import StoreError, open_store

    config = settings()
    try:
        store = open_store(config.store_url, stale_after=config.session_timeout_seconds)
        results = deliver_session(store, config, session_id, list(to or []))
    except (StoreError, DeliveryError) as exc:
        raise fail(str(exc)) from None
    if not show_deliveries(results):
        raise typer.Exit(1)


@app.command("eval")
def eval_cases(
    paths: Annotated[list[Path], typer.Argument(help="Case files or suite directories (YAML, one case per file).")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    filter_id: Annotated[str | None, typer.Option("--filter", help="Only cases whose id contains this text.")] = None,
) -> None:
    """Run regression cases through the real pipeline. Exit 1 if any fails, 2 on an invalid fixture."""
    from rich.progress import Progress
    from rich.text import Text

    from veridiag.evals import EvalRunner, FixtureError, load_suite, truth_rates

    try:
        cases = load_suite(paths)
    except FixtureError as exc:
        raise fail(str(exc)) from None
    if filter_id:
        cases = [case for case in cases if filter_id in case.id]
    results = []
    with EvalRunner() as runner, Progress(console=err, transient=True) as progress:
        task = progress.add_task("evaluating", total=len(cases))
        for case in cases:
            results.append(runner.run(case))
            progress.advance(task)
    passed = sum(result.passed for result in results)
    labelled = any(case.claim_truth for case in cases)
    rates = truth_rates([(r.verdict, r.claims) for r in results])
    if as_json:
        summary: dict[str, object] = {"total": len(results), "passed": passed, "failed": len(results) - passed}
        if labelled:
            summary["truth"] = rates.public()
        print_json({"cases": [r.public() for r in results], "summary": summary})
    else:
        table = Table()
        table.add_column("case", no_wrap=True)
        for column in ("verdict", "gatekeeper", "answer", "result", "first failure"):
            table.add_column(column)
        for result in results:
            mark = Text("pass", style="green") if result.passed else Text("FAIL", style="red")
            table.add_row(
                result.id,
                result.verdict or "—",
                result.gatekeeper_status or "off",
                result.answer_source or "—",
                mark,
                result.failures[0] if result.failures else "",
            )
        out.print(table)
        out.print(f"{passed} passed, {len(results) - passed} failed", highlight=False)
        if labelled:
            show_truth(rates, results)
    if passed != len(results):
        raise typer.Exit(1)


def show_truth(rates: TruthRates, results: list[CaseResult]) -> None:
    """The truth rates of labelled cases, then each true claim withheld and each mistake let through."""

    def rate(value: float | None) -> str:
        return "—" if value is None else f"{value:.1%}"

    out.print(
        f"faithful kept: {rates.true_kept}/{rates.true_claims} true claims reach the user "
        f"({rate(rates.faithful_kept)})\n"
        f"mistakes caught: {rates.false_caught}/{rates.false_claims} false claims not shown as confirmed "
        f"({rate(rates.mistakes_caught)})\n"
        f"REJECT without a false claim: {rates.reject_without_false_claims}/{rates.sessions_without_false_claims} "
        f"sessions (REJECT in all: {rates.reject_sessions}/{rates.labelled_sessions})",
        highlight=False,
    )
    for title, wanted in (("true claims withheld", True), ("mistakes shown as confirmed", False)):
        missed = [
            (r.id, c)
            for r in results
            for c in r.claims
            if c.truth == wanted and (c.kept if wanted else c.caught) is False
        ]
        if not missed:
            continue
        out.print(f"{title}:", highlight=False)
        for case_id, claim in missed:
            kind = "" if claim.mistake is None else f" [{claim.mistake}]"
            out.print(
                f"  {case_id} {claim.claim_id}{kind} ({claim.verification or 'unjudged'}): {claim.claim_text}",
                highlight=False,
                markup=False,
            )
            for reason in claim.reasons:
                out.print(f"      {reason}", highlight=False, markup=False)


@app.command()
def sessions(
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000)] = 20,
    verdict: Annotated[str | None, typer.Option("--verdict", help="PASS, LOW_CONFID or REJECT.")] = None,
    search: Annotated[str | None, typer.Option("--search", "-q", help="Text in the question or answer.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Recent diagnosis sessions, newest first."""
    from rich.text import Text

    from veridiag.store import StoreError, open_store

    try:
        config = settings()
        store = open_store(config.store_url, stale_after=config.session_timeout_seconds)
        records = store.list_sessions(limit=limit, verdict=verdict, search=search, details=as_json)
    except StoreError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print_json([r.model_dump(mode="json", exclude={"self_evaluation"}) for r in records])
        return
    table = Table("id", "created", "from", "verdict", "service", "question · answer")
    table.columns[5].min_width = 30
    for record in records:
        asked = record.query[:60] + (f"\n{record.answer_line[:100]}" if record.answer_line else "")
        table.add_row(
            record.id,
            record.created_at.strftime("%Y-%m-%d %H:%M"),
            record.source or "—",
            record.verdict or record.status,  # a session without a verdict says why (running, failed…)
            record.service or "—",
            Text(asked),
        )
    out.print(table)


def main(*, collector_paused: bool = False) -> None:
    """The process entry point: the command it runs is the process's last work (``PROCESS_ENDS``).
    ``collector_paused``: the caller paused the collector (``veridiag.__main__``); the command
    resumes it when it starts (``COLLECTOR_PAUSED``)."""
    PROCESS_ENDS.set(True)
    COLLECTOR_PAUSED.set(collector_paused)
    if len(sys.argv) > 1:
        _only(sys.argv[1])
    app()


def _only(name: str) -> None:
    """Keeps only the command or group ``name`` (when it is one) beside the root's options: typer
    builds every registered command from its signature on each start (~10⁸ instructions, ~15 ms,
    measured with callgrind) though a process runs one. Anything else — an option, a misspelt
    name — keeps them all, so ``--help`` and the "No such command" suggestions list every one."""
    commands = [c for c in app.registered_commands if _name(c.name, c.callback) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if commands or groups:
        app.registered_commands[:] = commands
        app.registered_groups[:] = groups


def _name(given: str | None, callback: Callable[..., Any] | None) -> str | None:
    """A registered command's name as typer gives it."""
    return given or (get_command_name(callback.__name__) if callback is not None else None)
