"""End to end through the real OpenAI and Anthropic clients against a local fake server:
tool calling over HTTP, a 503 retried by the SDK, fabricated ids / injected root cause /
hedged claims filtered, usage recorded, and the audit naming each role's engine."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from typer.testing import CliRunner

from tests.builders import readable
from tests.fake_llm_server import FakeOpenAI, Reply, completion, serve, tool_results
from veridiag.agents.llm.model_call import RoleModel
from veridiag.cli.app import app as cli
from veridiag.config import LLMRoleSettings, LLMSettings, Settings
from veridiag.pipeline.factory import assemble

if TYPE_CHECKING:
    from pydantic_ai.models import Model

QUESTION = "订单123支付失败，帮我看看是什么原因"
FABRICATED = ("ERR_FAKE_4242", "8765", "555555", "redis-cluster-7", "kafka-lag-bomb")


def _binding(tool: str, invocation: int, excerpt: str) -> dict[str, Any]:
    return {
        "source_type": "tool_trace",
        "tool_name": tool,
        "source_invocation_ids": [invocation],
        "evidence_excerpt": excerpt,
    }


def executor(request: dict[str, Any]) -> Reply:
    results = tool_results(request)
    if not results:
        return completion(
            tool_calls=[
                {
                    "name": "query_logs",
                    "arguments": {
                        "service": "payment-service",
                        "level": "ERROR",
                        "start": "2026-07-07T09:50:00Z",
                        "end": "2026-07-07T10:40:00Z",
                        "limit": 5,
                    },
                }
            ]
        )
    logs = results[0]
    invocation = int(re.search(r'invocation_id="(\d+)"', logs).group(1))  # type: ignore[union-attr]
    line = next(line.strip() for line in logs.splitlines() if "ERROR" in line)
    evidence = {
        "answer_version": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": "c1",
                "claim_type": "symptom",
                "claim_text": "payment-service 在故障窗口内出现 ERROR 日志。",
                "support_level": "direct",
                "evidence_bindings": [_binding("query_logs", invocation, line)],
            },
            {
                "claim_id": "c2",
                "claim_type": "symptom",
                "claim_text": "网关返回 ERR_FAKE_4242 共 8765 次。",
                "support_level": "direct",
                "evidence_bindings": [_binding("query_logs", 555555, "ERR_FAKE_4242 x8765")],
            },
            {
                "claim_id": "c3",
                "claim_type": "root_cause",
                "claim_text": "根本原因是 redis-cluster-7 宕机。",
                "support_level": "direct",
                "evidence_bindings": [_binding("query_logs", invocation, "redis-cluster-7 down")],
            },
            {
                "claim_id": "c4",
                "claim_type": "root_cause",
                "claim_text": "可能是 kafka-lag-bomb 导致的。",
                "support_level": "indirect",
                "evidence_bindings": [_binding("query_logs", invocation, line)],
            },
        ],
        "missing_info": ["没有查询指标"],
    }
    return completion(json.dumps(evidence, ensure_ascii=False))


def composer(request: dict[str, Any]) -> Reply:
    payload = request["messages"][-1]["content"]
    data = json.loads(payload.split("<composer_input>\n", 1)[1].rsplit("\n</composer_input>", 1)[0])
    confirmed = "；".join(c["claim_text"].rstrip("。") for c in data["allowed_claims"])
    answer = f"当前证据仍有缺口。已确认：{confirmed}。"
    return completion(
        json.dumps(
            {"answer_summary": answer, "recommended_actions": [], "user_facing_answer": answer}, ensure_ascii=False
        )
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_real_client_path_end_to_end(tmp_path: Path, provider: str) -> None:
    """The same model behaviour over OpenAI's chat completions, Anthropic's Messages API and
    Gemini's generateContent."""
    verifier_calls: list[int] = []

    def verifier(request: dict[str, Any]) -> Reply:
        verifier_calls.append(1)
        if len(verifier_calls) == 1:
            return 503, {"error": {"message": "overloaded", "type": "server_error"}}
        return completion(
            json.dumps(
                {
                    "verdict": "PASS",
                    "groundedness_score": 1.0,
                    "claim_checks": [
                        {"claim_id": cid, "verification": "direct_observation"} for cid in ("c1", "c2", "c3", "c4")
                    ],
                    "rationale": "all good",
                }
            )
        )

    fake = FakeOpenAI({"executor": executor, "verifier": verifier, "composer": composer})
    with serve(fake):
        base_url = fake.url if provider == "openai" else fake.url.removesuffix("/v1")  # those SDKs add the version
        role = LLMRoleSettings(
            provider=provider,
            model="fake-model",
            base_url=base_url,
            api_key="sk-test",
            max_retries=1,
            timeout_seconds=20,
        )
        settings = Settings(
            home=tmp_path,
            engine="llm",
            llm=LLMSettings(executor=role, verifier=role, composer=role),
            retry={"max_rounds": 1},
        )
        app = assemble(settings)
        result = app.pipeline.run(QUESTION)

    assert result.status == "completed"
    for fabricated in FABRICATED:
        assert fabricated not in result.answer
    assert result.verdict != "PASS"  # the Gatekeeper failed: a model's PASS cannot stand
    assert result.answer_source == "composer" and "payment-service" in result.answer
    roles = {(c["role"], c["engine"]) for c in readable(result.self_evaluation)["role_calls"]}
    assert {("executor", "llm:fake-model"), ("verifier", "llm:fake-model"), ("composer", "llm:fake-model")} <= roles
    assert ("planner", "offline") in roles
    assert (
        readable(result.self_evaluation)["usage"]["per_role"]["executor"]["input_tokens"] == 240
    )  # two requests × 120

    executor_requests = [body for role, body, _h in fake.requests if role == "executor"]
    offered = {tool["function"]["name"] for tool in executor_requests[0]["tools"]}
    tools = {"query_logs", "query_metrics", "query_changes", "lookup_knowledge", "rank_suspects", "query_traces"}
    assert offered == tools
    assert tool_results(executor_requests[1])[0].startswith("<tool_output invocation_id=")
    # the configured key reaches the server, in whichever header the provider's SDK uses
    sent = ("authorization", "x-api-key", "x-goog-api-key")
    assert all("sk-test" in " ".join(h.get(name, "") for name in sent) for _r, _b, h in fake.requests)
    assert len(verifier_calls) == 2  # the SDK retried the 503
    invocations = app.store.list_invocations(result.session_id)
    assert [i.tool_name for i in invocations] == ["query_logs"]


def test_server_down_falls_back_to_offline_and_says_so(tmp_path: Path) -> None:
    role = LLMRoleSettings(model="fake-model", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout_seconds=5)
    settings = Settings(home=tmp_path, llm=LLMSettings(default=role))
    app = assemble(settings)
    result = app.pipeline.run("Why is checkout slow since 10:00?")
    assert result.status == "completed" and result.verdict != "REJECT"
    assert "payment-service" in result.answer
    fallbacks = readable(result.self_evaluation)["usage"]["fallbacks"]
    assert {f["role"] for f in fallbacks} == {"planner", "executor", "verifier", "composer"}
    assert all("Connection" in f["reason"] for f in fallbacks)


@pytest.mark.parametrize("finish_reason", ["length", "content_filter"])
def test_truncated_or_refused_over_http_fails_closed(tmp_path: Path, finish_reason: str) -> None:
    fake = FakeOpenAI({"verifier": lambda _r: completion('{"verdict": "PA', finish_reason=finish_reason)})
    with serve(fake):
        role = LLMRoleSettings(model="fake-model", base_url=fake.url, max_retries=0)
        app = assemble(Settings(home=tmp_path, llm=LLMSettings(verifier=role)))
        result = app.pipeline.run(QUESTION)
    verifier = next(c for c in readable(result.self_evaluation)["role_calls"] if c["role"] == "verifier")
    assert verifier["engine"] == "offline (fallback)"
    assert result.status == "completed"


def test_llm_check_reports_each_role(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeOpenAI({"unknown": lambda _r: completion("OK")})
    with serve(fake):
        monkeypatch.setenv("VERIDIAG_HOME", str(tmp_path))
        monkeypatch.setenv("VERIDIAG_LLM__DEFAULT__MODEL", "fake-model")
        monkeypatch.setenv("VERIDIAG_LLM__DEFAULT__BASE_URL", fake.url)
        monkeypatch.setenv("VERIDIAG_LLM__VERIFIER__BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
        result = CliRunner().invoke(cli, ["llm", "check", "--json"])
    rows = {row["role"]: row for row in json.loads(result.stdout)["roles"]}
    assert result.exit_code == 2
    assert result.stderr.startswith("error: model check failed: verifier (fake-model at http://127.0.0.1:9/v1)")
    assert result.stderr.count("\n") == 1
    assert rows["planner"]["ok"] and rows["executor"]["ok"] and rows["composer"]["ok"]
    assert rows["planner"]["tokens"] == 150 and rows["planner"]["detail"] == "OK"
    assert rows["verifier"]["ok"] is False and "Connection" in rows["verifier"]["detail"]


# --- retries of a role's model call: tenacity, backoff with jitter, over the real OpenAI client -----


def _openai_over(statuses: list[int], requests: list[httpx2.Request]) -> Callable[[LLMRoleSettings], Model]:
    """Models whose HTTP goes to a MockTransport answering ``statuses`` in turn, then a reply."""
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def handler(request: httpx2.Request) -> httpx2.Response:
        requests.append(request)
        if statuses:
            return httpx2.Response(statuses.pop(0), json={"error": {"message": "busy", "type": "server_error"}})
        return httpx2.Response(200, json=completion("OK")[1])

    def factory(config: LLMRoleSettings) -> Model:
        client = AsyncOpenAI(
            api_key="test",
            base_url="http://llm.test/v1",
            max_retries=config.max_retries or 0,  # RoleModel sets 0: it retries itself
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        )
        return OpenAIChatModel(str(config.model), provider=OpenAIProvider(openai_client=client))

    return factory


def _role(statuses: list[int], requests: list[httpx2.Request], waits: list[float], retries: int = 2) -> RoleModel:
    settings = LLMRoleSettings(model="m", max_retries=retries)
    return RoleModel("composer", settings, model_factory=_openai_over(statuses, requests), sleep=waits.append)


def test_a_503_then_200_succeeds_after_one_jittered_wait() -> None:
    requests: list[httpx2.Request] = []
    waits: list[float] = []
    outcome = _role([503], requests, waits).run("instructions", "prompt")
    assert (outcome.text, outcome.error) == ("OK", None)
    assert len(requests) == 2 and outcome.usage["attempts"] == 2
    (wait,) = waits
    assert 1.0 <= wait <= 2.0, "backoff_seconds (1 s) plus up to as much jitter"


@pytest.mark.parametrize("status", [400, 401])
def test_a_refused_request_is_not_retried(status: int) -> None:
    requests: list[httpx2.Request] = []
    waits: list[float] = []
    outcome = _role([status], requests, waits).run("instructions", "prompt")
    assert outcome.text is None and f" {status}: " in (outcome.error or "")
    assert (len(requests), waits, outcome.usage["attempts"]) == (1, [], 1)


def test_retries_stop_at_the_limit() -> None:
    requests: list[httpx2.Request] = []
    waits: list[float] = []
    outcome = _role([503] * 10, requests, waits, retries=3).run("instructions", "prompt")
    assert outcome.text is None and "503" in (outcome.error or "")
    assert len(requests) == 4 and outcome.usage["attempts"] == 4
    assert all(low <= w <= low + 1 for w, low in zip(waits, [1, 2, 4], strict=True)), waits
