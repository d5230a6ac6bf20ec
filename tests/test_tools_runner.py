"""The runner records every call — including the failures — before the id is handed out."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veridiag.store import SessionStore
from veridiag.tools import Toolbox, ToolOutput, ToolRunner, build_trace_summary, tool_specs
from veridiag.tools.backends.embedded import EmbeddedEnvironment


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(f"sqlite:///{tmp_path / 'store.db'}")


def runner_for(store: SessionStore, toolbox: Toolbox) -> ToolRunner:
    return ToolRunner(store, toolbox, store.create_session("test").id, round=1)


def test_result_cites_a_stored_invocation(store: SessionStore, demo_env: EmbeddedEnvironment) -> None:
    runner = runner_for(store, Toolbox(demo_env, demo_env, demo_env, demo_env))
    result = runner.run(
        "query_metrics",
        {
            "service": "payment-service",
            "metric": "http_request_p99_ms",
            "start": "2026-07-07T10:00:00Z",
            "end": "2026-07-07T10:30:00Z",
        },
    )
    stored = store.get_invocations([result.invocation_id])[result.invocation_id]
    assert stored.session_id == runner.session_id and stored.status == "ok"
    assert stored.output == result.output.text and stored.arguments["metric"] == "http_request_p99_ms"
    assert stored.latency_ms is not None and stored.latency_ms >= 0
    shown = result.for_model()
    assert shown.startswith(f'<tool_output invocation_id="{result.invocation_id}" tool="query_metrics" status="ok">')
    assert shown.endswith("</tool_output>")


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("query_logz", {}, "unknown tool 'query_logz'"),
        ("query_logs", {"limit": 0}, "limit"),
        ("query_logs", {"servcie": "x"}, "servcie: Extra inputs are not permitted"),
        ("query_logs", "{not json", "arguments are not JSON"),
        ("query_logs", "[1, 2]", "arguments must be a JSON object"),
        ("lookup_knowledge", {}, "query: Field required"),
    ],
)
def test_bad_calls_are_recorded_as_errors(
    store: SessionStore, demo_env: EmbeddedEnvironment, tool: str, arguments: Any, message: str
) -> None:
    runner = runner_for(store, Toolbox(demo_env, demo_env, demo_env, demo_env))
    result = runner.run(tool, arguments)
    assert result.status == "error"
    stored = store.get_invocations([result.invocation_id])[result.invocation_id]
    assert stored.status == "error" and message in (stored.error or "")


class Broken:
    name = "broken"

    def __init__(self, delay: float = 0.0, exc: Exception | None = None, text: str = "ok") -> None:
        self.delay, self.exc, self.text = delay, exc, text

    def query_logs(self, args: Any) -> ToolOutput:
        time.sleep(self.delay)
        if self.exc:
            raise self.exc
        return ToolOutput(status="ok", text=self.text, retrieval_details={"bad": self.text})

    query_metrics = lookup_knowledge = query_logs


def test_backend_exception_and_timeout_are_recorded(store: SessionStore) -> None:
    crashing = Broken(exc=RuntimeError("disk on fire"))
    result = runner_for(store, Toolbox(crashing, crashing, crashing, crashing)).run("query_logs", {})  # type: ignore[arg-type]
    assert result.status == "error" and "disk on fire" in (result.output.error or "")
    slow = Broken(delay=1.0)
    started = time.perf_counter()
    timed = runner_for(store, Toolbox(slow, slow, slow, slow, timeout_seconds=0.2)).run("query_logs", {})  # type: ignore[arg-type]
    assert time.perf_counter() - started < 0.9
    assert timed.status == "error" and "timed out after 0.2s" in (timed.output.error or "")
    assert store.get_invocations([timed.invocation_id])[timed.invocation_id].status == "error"


def test_text_a_database_would_refuse_is_cleaned(store: SessionStore) -> None:
    nasty = Broken(text="nul\x00 and lone surrogate \ud800 end")
    runner = runner_for(store, Toolbox(nasty, nasty, nasty, nasty))  # type: ignore[arg-type]
    result = runner.run("query_logs", {"query": "x"})
    stored = store.get_invocations([result.invocation_id])[result.invocation_id]
    assert result.status == "ok"
    assert "\x00" not in stored.output and "\ud800" not in stored.output and stored.output.endswith("end")
    json.dumps(stored.model_dump(mode="json"))
    refused = runner.run("query_logs", {"query": "x\ud800"})  # not even valid text: refused, still recorded
    assert refused.status == "error" and store.get_invocations([refused.invocation_id])


def test_tool_specs_are_json_schemas() -> None:
    specs = {spec["name"]: spec for spec in tool_specs()}
    assert set(specs) == {
        "query_logs",
        "query_metrics",
        "query_changes",
        "lookup_knowledge",
        "rank_suspects",
        "query_traces",
    }
    assert specs["query_traces"]["parameters"]["required"] == ["service"]
    assert specs["lookup_knowledge"]["parameters"]["required"] == ["query"]
    assert "required" not in specs["rank_suspects"]["parameters"]  # every service, the last hour by default
    assert specs["query_logs"]["parameters"]["additionalProperties"] is False


def test_trace_summary_is_bounded_and_cites_ids(store: SessionStore, demo_env: EmbeddedEnvironment) -> None:
    runner = runner_for(store, Toolbox(demo_env, demo_env, demo_env, demo_env))
    first = runner.run(
        "query_logs", {"service": "payment-service", "start": "2026-07-07T10:00:00Z", "end": "2026-07-07T10:30:00Z"}
    )
    second = runner.run("lookup_knowledge", {"query": "连接池 超时"})
    summary = build_trace_summary(store.list_invocations(runner.session_id))
    assert [(e.trace_ref, e.invocation_ids) for e in summary] == [
        ("trace-1", [first.invocation_id]),
        ("trace-2", [second.invocation_id]),
    ]
    assert all(len(e.output_summary) <= 800 for e in summary)
    assert summary[0].output_summary.startswith("query_logs service=payment-service")


def _nested(depth: int, kind: str) -> str:
    if kind == "object":
        return '{"service": ' + '{"a": ' * depth + "1" + "}" * depth + "}"
    if kind == "array":
        return '{"service": ' + "[" * depth + "]" * depth + "}"
    return "[" * depth + "]" * depth


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tool=st.sampled_from(["query_logs", "query_metrics", "lookup_knowledge", "query_changes", "nope"]),
    arguments=st.one_of(
        st.builds(_nested, st.integers(100, 20000), st.sampled_from(["object", "array", "bare"])),
        st.sampled_from(['{"service": NaN}', '{"limit": Infinity}', '{"service": "a", "service": "b"}']),
    ),
)
def test_arguments_no_call_can_read_are_a_recorded_error_never_a_raise(
    store: SessionStore, tool: str, arguments: str
) -> None:
    """A model or a command line may write nesting ``json`` cannot recurse through, NaN or a key
    twice: the call is refused and recorded, as any bad call is, and the run goes on."""
    broken = Broken()
    runner = runner_for(store, Toolbox(broken, broken, broken, broken))  # type: ignore[arg-type]
    result = runner.run(tool, arguments)
    assert result.status == "error"
    stored = store.get_invocations([result.invocation_id])[result.invocation_id]
    assert stored.status == "error" and stored.error


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.integers(201, 5000))
def test_arguments_a_model_sdk_already_read_nested_too_deep_are_a_recorded_error(
    store: SessionStore, depth: int
) -> None:
    """The LLM engine hands the runner the arguments its SDK parsed: nesting no validator or
    store recurses through is refused like nesting in text."""
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    broken = Broken()
    runner = runner_for(store, Toolbox(broken, broken, broken, broken))  # type: ignore[arg-type]
    result = runner.run("query_logs", {"service": value})
    assert result.status == "error" and "too deep" in (result.output.error or "")
