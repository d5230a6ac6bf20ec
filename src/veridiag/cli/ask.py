"""``veridiag ask``: one diagnosis, with each stage shown while it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.text import Text

from veridiag.cli.common import describe, err, fail, out, print_json, settings, started_once

if TYPE_CHECKING:
    from veridiag.contracts.answer import AnswerDocument
    from veridiag.contracts.json import JsonObject
    from veridiag.pipeline.factory import Assembly

_STAGES = {
    "zh": {"plan": "计划", "tool": "工具", "gatekeeper": "Gatekeeper", "verifier": "校验", "composer": "作答"},
    "en": {"plan": "plan", "tool": "tool", "gatekeeper": "gatekeeper", "verifier": "verifier", "composer": "compose"},
}


def _show(document: AnswerDocument, lang: Literal["zh", "en"]) -> None:
    zh = lang == "zh"
    colour = {"PASS": "green", "LOW_CONFID": "yellow", "REJECT": "red"}.get(document.verdict or "", "red")
    out.print(Text(document.verdict or "FAILED", style=f"bold {colour}"), f" session {document.session_id}")
    out.print()
    out.print(document.final_answer)
    allowed = [c for c in document.claims if c.allowed]
    if allowed:
        out.print()
        out.print("已确认的事实与出处" if zh else "Confirmed claims and their evidence", style="bold")
        for claim in allowed:
            out.print(f"  {claim.claim_id} ({claim.verification}): {claim.claim_text or ''}")
            for item in claim.evidence:
                source = f"#{item.invocation_id} {item.tool_name}"
                out.print(f"     {source}: {str(item.excerpt)[:160]}", style="dim")
    blocked = [c for c in document.claims if not c.allowed]
    if blocked:
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


def ask(
    question: Annotated[str, typer.Argument(help="The question, 中文 or English.")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    lang: Annotated[str | None, typer.Option("--lang", help="zh or en (default: from the question).")] = None,
) -> None:
    """Diagnose a question with evidence; exit 1 if the session failed."""
    if not question.strip():
        raise fail("the question is empty")
    if len(question) > 4000:
        raise fail("the question is longer than 4000 characters")
    if lang not in (None, "zh", "en"):
        raise fail("--lang must be zh or en")
    with started_once() as started:
        # Imported here: the pipeline (and a model client) is what ``ask`` needs, not every command.
        from veridiag.pipeline.factory import assemble

        try:
            assembly = assemble(settings())
        except Exception as exc:  # store, toolbox, rules or model settings: the common one-line report
            message = describe(exc)
            if message is None:
                raise
            raise fail(message) from None
        started()
        try:
            _diagnose(assembly, question, lang, as_json=as_json)
        finally:
            assembly.close()


def _diagnose(assembly: Assembly, question: str, lang: str | None, *, as_json: bool) -> None:
    """Runs the diagnosis with progress on stderr and prints its answer; exit 1 if it failed."""
    from veridiag.pipeline.report import answer_document
    from veridiag.text.cjk import detect_lang

    shown_lang: Literal["zh", "en"] = detect_lang(question) if lang is None else "zh" if lang == "zh" else "en"
    names = _STAGES[shown_lang]

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

        result = assembly.pipeline.run(question, shown_lang, progress=progress)
    document = answer_document(result, assembly.engine)
    if as_json:
        print_json(document.model_dump(mode="json"))
    else:
        _show(document, shown_lang)
    if result.status != "completed":
        raise typer.Exit(1)
