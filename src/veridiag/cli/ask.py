"""``veridiag ask``: one diagnosis, with each stage shown while it runs."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.text import Text

from veridiag.cli.common import describe, err, fail, out, print_json, settings, started_once

if TYPE_CHECKING:
    from veridiag.config import Settings
    from veridiag.contracts.answer import AnswerDocument
    from veridiag.contracts.json import JsonObject
    from veridiag.delivery import DeliveryResult
    from veridiag.pipeline.factory import Assembly
    from veridiag.pipeline.service import DiagnosisPipeline, DiagnosisResult

_STAGES = {
    "zh": {"plan": "计划", "tool": "工具", "gatekeeper": "Gatekeeper", "verifier": "校验", "composer": "作答"},
    "en": {"plan": "plan", "tool": "tool", "gatekeeper": "gatekeeper", "verifier": "verifier", "composer": "compose"},
}


def _show(document: AnswerDocument, lang: Literal["zh", "en"], *, every_claim: bool = False) -> None:
    """The answer; with ``every_claim`` (``--all``) every claim after it, with its evidence — the
    answer lists only its key facts (the full list is also in ``--json``)."""
    zh = lang == "zh"
    colour = {"PASS": "green", "LOW_CONFID": "yellow", "REJECT": "red"}.get(document.verdict or "", "red")
    out.print(Text(document.verdict or "FAILED", style=f"bold {colour}"), f" session {document.session_id}")
    out.print()
    out.print(document.final_answer)
    allowed = [c for c in document.claims if c.allowed]
    if document.claims and not every_claim:
        out.print()
        hint = (
            f"全部 {len(document.claims)} 条结论及其出处：veridiag ask --all（或 --json）"
            if zh
            else f"All {len(document.claims)} claims and their evidence: veridiag ask --all (or --json)"
        )
        out.print(hint, style="dim")
    elif allowed:
        out.print()
        out.print("已确认的事实与出处" if zh else "Confirmed claims and their evidence", style="bold")
        for claim in allowed:
            out.print(f"  {claim.claim_id} ({claim.verification}): {claim.claim_text or ''}")
            for item in claim.evidence:
                source = f"#{item.invocation_id} {item.tool_name}"
                out.print(f"     {source}: {str(item.excerpt)[:160]}", style="dim")
    blocked = [c for c in document.claims if not c.allowed]
    if blocked and every_claim:
        out.print("未采纳的结论" if zh else "Claims not accepted", style="bold")
        for claim in blocked:
            out.print(f"  {claim.claim_id} ({claim.verification})")
    configured = document.engine_configured
    engines = [
        f"{role} {ran}"
        + (
            f" ({'配置为' if zh else 'configured'} {configured[role]})"
            if configured.get(role) not in (None, ran)
            else ""
        )
        for role, ran in document.engine.items()
    ]
    out.print(("引擎：" if zh else "Engines: ") + "; ".join(engines), style="dim")
    for fallback in document.usage.fallbacks:
        notice = "模型不可用，已改用离线引擎" if zh else "model unavailable, offline engine used"
        out.print(f"{notice} ({fallback.role}): {(fallback.reason or '')[:200]}", style="yellow")
    out.print()
    out.print(("审计链：" if zh else "Audit trail: ") + f"veridiag audit {document.session_id}")


def show_deliveries(results: list[DeliveryResult]) -> bool:
    """One stderr line per destination; True when every one was delivered."""
    for result in results:
        tries = f"{result.attempts} attempt{'s' if result.attempts != 1 else ''}"
        if result.outcome == "delivered":
            err.print(f"posted to {result.destination} ({result.kind}, {tries})", style="green")
        else:
            err.print(f"not posted to {result.destination} ({result.kind}, {tries}): {result.error}", style="red")
    return all(result.outcome == "delivered" for result in results)


def ask(
    question: Annotated[str, typer.Argument(help="The question, 中文 or English.")],
    *,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output (same as --format json).")] = False,
    output: Annotated[
        str, typer.Option("--format", help="text, json, or markdown (what the chat bots are sent).")
    ] = "text",
    lang: Annotated[str | None, typer.Option("--lang", help="zh or en (default: from the question).")] = None,
    deliver: Annotated[
        bool, typer.Option("--deliver", help="Post the answer to every configured destination.")
    ] = False,
    post_to: Annotated[
        list[str] | None, typer.Option("--post-to", help="Post the answer to this destination (repeatable).")
    ] = None,
    every_claim: Annotated[
        bool, typer.Option("--all", help="After the answer, every claim with its evidence (text output).")
    ] = False,
) -> None:
    """Diagnose a question with evidence; exit 1 if the session failed or a post did not go out."""
    if output not in ("text", "json", "markdown"):
        raise fail("--format must be text, json or markdown")
    if not question.strip():
        raise fail("the question is empty")
    if len(question) > 4000:
        raise fail("the question is longer than 4000 characters")
    if lang not in (None, "zh", "en"):
        raise fail("--lang must be zh or en")
    names = list(post_to or [])
    with started_once() as started:  # from the settings on: they too are kept to the end
        config = settings()
        if deliver or names:
            from veridiag.delivery import DeliveryError, choose

            try:
                choose(config.delivery, names)  # an unknown name is an error before any work
            except DeliveryError as exc:
                raise fail(str(exc)) from None
        # Imported here: the pipeline (and a model client) is what ``ask`` needs, not every command.
        from veridiag.pipeline.factory import assemble

        try:
            assembly = assemble(config)
        except Exception as exc:  # store, toolbox, rules or model settings: the common one-line report
            message = describe(exc)
            if message is None:
                raise
            raise fail(message) from None
        started()
        try:
            _answer(
                assembly,
                config,
                question,
                lang,
                output="json" if as_json else output,
                names=names,
                deliver=deliver,
                every_claim=every_claim,
            )
        finally:
            assembly.close()


def _answer(
    assembly: Assembly,
    config: Settings,
    question: str,
    lang: str | None,
    *,
    output: str,
    names: list[str],
    deliver: bool,
    every_claim: bool = False,
) -> None:
    """Runs the diagnosis, prints its answer in ``output`` form and posts it where asked; exit 1
    if the session failed or a post did not go out."""
    from veridiag.pipeline.report import answer_document
    from veridiag.text.cjk import detect_lang

    shown_lang: Literal["zh", "en"] = detect_lang(question) if lang is None else "zh" if lang == "zh" else "en"
    result = _diagnose(assembly.pipeline, question, shown_lang)
    document = answer_document(result, assembly.engine)
    if output == "json":
        print_json(document.model_dump(mode="json"))
    elif output == "markdown":
        from veridiag.delivery import render_markdown, session_report

        sys.stdout.write(render_markdown(session_report(config, document, question, shown_lang)) + "\n")
    else:
        _show(document, shown_lang, every_claim=every_claim)
    if result.status != "completed":
        if deliver or names:
            err.print("not posted: the session did not complete, so it has no verified answer", style="red")
        raise typer.Exit(1)
    if deliver or names:
        from veridiag.delivery import deliver_session

        results = deliver_session(assembly.store, config, document.session_id, names, document=document)
        if not show_deliveries(results):
            raise typer.Exit(1)


def _diagnose(pipeline: DiagnosisPipeline, question: str, lang: Literal["zh", "en"]) -> DiagnosisResult:
    """One run, each stage shown on stderr as it completes."""
    names = _STAGES[lang]
    with err.status("…") as status:

        def progress(stage: str, details: JsonObject) -> None:
            label = names.get(stage, stage)
            if stage == "tool":
                err.print(f"{label} #{details['invocation_id']} {details['tool']} → {details['status']}", style="dim")
            elif stage in ("plan", "gatekeeper", "verifier", "composer"):
                shown = ", ".join(
                    f"{k}={v}" for k, v in details.items() if v not in (None, [], "") and k != "session_id"
                )
                err.print(f"{label}: {shown}", style="dim")
            status.update(label)

        return pipeline.run(question, lang, progress=progress, source="cli")
