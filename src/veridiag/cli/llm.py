"""``veridiag llm check``: is each role's model reachable with the configured key, and how fast?"""

from __future__ import annotations

import time
from typing import Annotated, NotRequired, TypedDict, get_args

import typer
from rich.table import Table
from rich.text import Text

from veridiag.cli.common import fail, out, print_json, settings

llm_app = typer.Typer(help="The configured models (engine llm).", no_args_is_help=True)

_PROBE = "Reply with the single word OK. 只回复 OK。"


class ModelCheck(TypedDict):
    """One role's row of ``llm check --json``; a role with no model has no probe fields."""

    role: str
    model: str | None
    provider: NotRequired[str]
    base_url: NotRequired[str | None]
    #: None: not configured (the offline engine answers).
    ok: bool | None
    latency_ms: NotRequired[float]
    tokens: NotRequired[int]
    detail: str


@llm_app.command("check")
def check(as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False) -> None:
    """Send one tiny request to each configured role's model; exit 2, with one line on stderr
    naming the roles whose model failed, when any does."""
    from veridiag.agents.llm import RoleModel
    from veridiag.agents.llm.providers import resolve_base_url
    from veridiag.config import LLMRole

    config = settings()
    rows: list[ModelCheck] = []
    for role in get_args(LLMRole):
        role_config = config.llm.for_role(role)
        if not role_config.model:
            rows.append({"role": role, "model": None, "ok": None, "detail": "not configured: the offline engine"})
            continue
        started = time.perf_counter()
        outcome = RoleModel(role, role_config.model_copy(update={"max_retries": 0})).run(_PROBE, "OK?")
        rows.append(
            {
                "role": role,
                "model": role_config.model,
                "provider": role_config.provider or "openai",
                "base_url": resolve_base_url(role_config.base_url),
                "ok": outcome.error is None,
                "latency_ms": round((time.perf_counter() - started) * 1000, 1),
                "tokens": (outcome.usage.get("input_tokens") or 0) + (outcome.usage.get("output_tokens") or 0),
                "detail": outcome.error or (outcome.text or "").strip()[:40],
            }
        )
    if as_json:
        print_json({"roles": rows})
    else:
        table = Table("role", "model", "ok", "ms", "detail")
        for row in rows:
            ok = row["ok"]
            mark = Text("—") if ok is None else Text("yes" if ok else "no", "green" if ok else "red")
            table.add_row(row["role"], row["model"] or "—", mark, str(row.get("latency_ms", "")), row["detail"])
        out.print(table)
    failed = [row for row in rows if row["ok"] is False]
    if failed:
        raise fail(
            "model check failed: "
            + "; ".join(
                f"{row['role']} ({row['model']} at {row['base_url'] or 'default'}): {row['detail']}" for row in failed
            )
        )
