"""The Planner's output read once into a ``Plan``; a plan that does not fit gathers nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veridiag.agents.scripted import ScriptedPlanner
from veridiag.config import Settings
from veridiag.contracts.plan import Plan
from veridiag.pipeline.factory import assemble

GOOD = {
    "skill": "generic",
    "service": "payment-service",
    "start": "2026-07-07T09:55:00Z",
    "end": "2026-07-07T10:35:00Z",
    "order_id": None,
    "steps": [{"tool": "query_logs"}, {"tool": "query_logs", "when": "order_id"}],
    "model_steps": ["kept for the audit"],
}


def test_a_plan_keeps_what_a_model_adds_and_runs_only_the_steps_its_slots_allow() -> None:
    plan = Plan.read(GOOD, json.dumps(GOOD), "llm:test")
    assert plan.unparsed is None and plan.examined_services == ["payment-service"]
    assert [s.when for s in plan.runnable_steps()] == [None]
    assert plan.stored()["model_steps"] == ["kept for the audit"] and plan.stored()["_engine"] == "llm:test"
    with_order = Plan.read({**GOOD, "order_id": "123"}, None, "offline")
    assert len(with_order.runnable_steps()) == 2


@pytest.mark.parametrize(
    "broken",
    [
        {**GOOD, "steps": [{"tool": "shell", "args": {"cmd": "rm -rf /"}}]},
        {**GOOD, "start": "yesterday-ish"},
        {**GOOD, "steps": "query_logs"},
        ["not", "an", "object"],
        None,
    ],
)
def test_a_plan_that_does_not_fit_is_kept_as_text_with_no_steps(broken: object) -> None:
    plan = Plan.read(broken, "the planner's text", "scripted")
    assert plan.unparsed and plan.steps == [] and plan.runnable_steps() == []


def test_a_broken_plan_gathers_nothing_and_cannot_pass(tmp_path: Path) -> None:
    assembly = assemble(Settings(home=tmp_path / "home"))
    bad = {**GOOD, "steps": [{"tool": "query_logs"}, {"tool": "drop_tables"}]}
    assembly.pipeline.roles.planner = ScriptedPlanner(json.dumps(bad))
    result = assembly.pipeline.run("payment-service 10:05 超时")
    assert result.verdict != "PASS"
    assert assembly.store.list_invocations(result.session_id) == []
    stored = assembly.store.get_session(result.session_id)
    assert stored is not None and stored.plan is not None and "drop_tables" in str(stored.plan["unparsed"])
