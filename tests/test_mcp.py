"""``veridiag mcp`` through the SDK's own client: over stdio (the command spawned as a client
would) and streamable HTTP (the command on a free port, behind the API's bearer token) a client
lists the tools, diagnoses the demo question hearing each stage as progress, reads its audit and
checks claims — a fabricated citation fails, a correct one passes; bad input is a clear tool
error; secrets stay redacted."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from pydantic import SecretStr
from typer.testing import CliRunner

from tests.builders import GHP, billing_environment, binding, claim, v2
from tests.first_process import first_process, terminate
from tests.ports import free_port
from veridiag.cli.app import app as cli
from veridiag.config import Settings
from veridiag.mcp_server import build_server
from veridiag.pipeline.factory import Assembly, assemble

QUESTION = "订单123支付失败，帮我看看是什么原因"
TOKEN = "mcp-test-token-5d1"
TOOLS = {
    "diagnose",
    "get_audit",
    "query_logs",
    "query_metrics",
    "query_changes",
    "lookup_knowledge",
    "rank_suspects",
    "query_traces",
    "check_claims",
}
WINDOW = {"start": "2026-07-07T09:00:00Z", "end": "2026-07-07T11:00:00Z"}

Connect = Callable[[], AbstractAsyncContextManager[Client]]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch home with the demo built once; the spawned servers open it as it is."""
    path = tmp_path_factory.mktemp("mcp-home")
    assemble(_settings(path)).store.close()
    return path


@pytest.fixture(scope="module")
def assembly(home: Path) -> Assembly:
    return assemble(_settings(home))


def _settings(home: Path) -> Settings:
    return Settings(home=home, engine="offline")


def _env(home: Path, **extra: str) -> dict[str, str]:
    """Only what the server needs: no VERIDIAG_* of the machine running the tests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIDIAG_")}
    return {**env, "VERIDIAG_HOME": str(home), "VERIDIAG_ENGINE": "offline", **extra}


@pytest.fixture(scope="module")
def http_url(home: Path) -> Iterator[str]:
    """``veridiag mcp --transport http`` on a free port, with the API token configured."""
    port = free_port()
    command = [sys.executable, "-m", "veridiag", "mcp", "--transport", "http", "--port", str(port)]
    server = subprocess.Popen(
        command, env=_env(home, VERIDIAG_API_TOKENS=TOKEN), cwd=home, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, f"the server exited: {server.stderr.read() if server.stderr else ''}"
            assert time.monotonic() < deadline, "the server did not listen within 60 s"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, home: Path) -> Connect:
    """A way to open the SDK's client on the transport under test."""
    if request.param == "stdio":
        parameters = StdioServerParameters(
            command=sys.executable, args=["-m", "veridiag", "mcp"], env=_env(home), cwd=str(home)
        )
        return lambda: Client(parameters)
    url = request.getfixturevalue("http_url")

    @asynccontextmanager
    async def over_http() -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            yield client

    return over_http


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The structured result of a call that must succeed."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    structured: dict[str, Any] | None = result.structured_content
    assert structured is not None
    return structured


def _run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def test_a_client_lists_the_tools_diagnoses_reads_the_audit_and_checks_claims(connect: Connect) -> None:
    async def scenario() -> None:
        async with connect() as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(listed) == TOOLS
            assert all(listed[name].output_schema for name in ("diagnose", "get_audit", "check_claims"))

            stages: list[str | None] = []

            async def heard(progress: float, total: float | None, message: str | None) -> None:
                stages.append(message)

            diagnosed = await client.call_tool("diagnose", {"question": QUESTION}, progress_callback=heard)
            answer = diagnosed.structured_content
            assert not diagnosed.is_error and answer is not None
            assert answer["verdict"] == "PASS" and "payment-service" in answer["final_answer"]
            assert stages[0] == "session" and {"plan", "tool", "gatekeeper", "verifier", "composer"} <= set(stages)
            cited = {e["invocation_id"] for c in answer["claims"] if c["allowed"] for e in c["evidence"]}
            assert cited, "the answer's claims cite invocations"

            audit = await _call(client, "get_audit", {"session_id": answer["session_id"]})
            assert audit["session"]["id"] == answer["session_id"]
            assert audit["final_answer"] == answer["final_answer"]
            assert {i["id"] for i in audit["invocations"]} >= cited

            # an agent's own evidence: one session across calls, each call stored and citable
            logs = await _call(
                client, "query_logs", {"arguments": {"service": "payment-service", "level": "ERROR", **WINDOW}}
            )
            metrics = await _call(
                client,
                "query_metrics",
                {"arguments": {"service": "payment-service", **WINDOW}, "session_id": logs["session_id"]},
            )
            assert metrics["session_id"] == logs["session_id"] and logs["status"] == "ok"
            line = next(row for row in logs["output"].splitlines() if "ERR_TIMEOUT" in row and row[:4].isdigit())
            text = "payment-service logged ERR_TIMEOUT request timeouts."

            correct = v2([claim(text=text, bindings=[binding([logs["invocation_id"]], line)])])
            checked = await _call(client, "check_claims", {"session_id": logs["session_id"], "document": correct})
            assert checked["result"]["status"] == "pass", checked["result"]
            assert checked["claim_traces"][0]["claim_id"] == "claim-1"

            other_session = min(cited)  # exists, but in the diagnosis's session
            fabricated = v2(
                [
                    claim("claim-1", text, [binding([other_session], line)]),
                    claim("claim-2", text, [binding([logs["invocation_id"] + 10_000], line)]),
                ]
            )
            checked = await _call(
                client, "check_claims", {"session_id": logs["session_id"], "document": json.dumps(fabricated)}
            )
            result = checked["result"]
            assert result["status"] == "fail" and "evidence.invocation_ref" in result["failed_rules"]
            refused = {e["target"]: e["message"] for e in result["errors"] if e["rule_id"] == "evidence.invocation_ref"}
            assert "another session" in refused["claims[0].evidence_bindings[0]"]
            assert "not found" in refused["claims[1].evidence_bindings[0]"]

    _run(scenario)


def test_http_without_the_token_is_refused(http_url: str) -> None:
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    accept = {"Accept": "application/json, text/event-stream"}
    for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": TOKEN}):
        response = httpx2.post(http_url, json=hello, headers={**accept, **headers}, timeout=30)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"].startswith("Bearer")
    other_host = httpx2.post(
        http_url, json=hello, headers={**accept, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example"}
    )
    assert other_host.status_code == 400 and other_host.json()["error"]["code"] == "invalid_host"
    welcomed = httpx2.post(http_url, json=hello, headers={**accept, "Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert welcomed.status_code == 200


def test_http_is_rate_limited_per_token_like_the_api(assembly: Assembly, home: Path) -> None:
    from fastapi.testclient import TestClient

    from veridiag.mcp_server import http_app

    settings = Settings(home=home, engine="offline", api_tokens=SecretStr(TOKEN), api_rate_limit="3/minute")
    served = http_app(assembly, settings, host="127.0.0.1", port=8090)
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    signed = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}
    with TestClient(served, base_url="http://127.0.0.1:8090") as client:
        codes = [client.post("/mcp", json=hello, headers=signed).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        refused = client.post("/mcp", json=hello, headers=signed)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert refused.json()["error"]["code"] == "rate_limited"
        # Another identity (no token: the client's address) has its own budget, and still needs a token.
        assert client.post("/mcp", json=hello, headers={"Accept": signed["Accept"]}).status_code == 401


def test_bad_input_is_a_clear_tool_error_and_stores_nothing(assembly: Assembly) -> None:
    async def scenario() -> None:
        async with Client(build_server(assembly, concurrency=1)) as client:
            answer = await _call(client, "diagnose", {"question": "Why is checkout slow since 10:00?"})
            session = answer["session_id"]
            before = len(assembly.store.list_invocations(session))

            async def error(tool: str, arguments: dict[str, Any]) -> str:
                result = await client.call_tool(tool, arguments)
                assert result.is_error and result.structured_content is None
                return " ".join(getattr(block, "text", "") for block in result.content)

            assert "no session 's-nope'" in await error("get_audit", {"session_id": "s-nope"})
            assert "no session 's-nope'" in await error("check_claims", {"session_id": "s-nope", "document": v2()})
            assert "not one JSON object" in await error("check_claims", {"session_id": session, "document": "ok"})
            assert "blank" in await error("diagnose", {"question": " \u200b "})
            assert "Extra inputs" in await error("query_logs", {"arguments": {"services": "payment-service"}})
            # a diagnosis's evidence is closed: its answer was judged on what it had
            refused = await error("query_logs", {"arguments": {"service": "payment-service"}, "session_id": session})
            assert "takes no evidence calls" in refused
            assert len(assembly.store.list_invocations(session)) == before

    _run(scenario)


def test_what_a_client_receives_carries_no_secret(tmp_path: Path) -> None:
    secret = "Pl4nted-S3cret-9f2"
    home = tmp_path / "home"
    billing_environment(home, tmp_path, secret)
    assembly = assemble(Settings(home=home, engine="offline", embedded={"load_demo": False}))

    async def scenario() -> None:
        async with Client(build_server(assembly, concurrency=1)) as client:
            answer = await _call(client, "diagnose", {"question": "billing-api 从 14点 开始报错，怎么回事？"})
            audit = await _call(client, "get_audit", {"session_id": answer["session_id"]})
            logs = await _call(
                client,
                "query_logs",
                {"arguments": {"service": "billing-api", "level": "ERROR", "start": "2026-07-07T14:00:00Z"}},
            )
            assert "[REDACTED:password]" in logs["output"]
            for seen in (answer, audit, logs):
                text = json.dumps(seen, ensure_ascii=False)
                assert secret not in text and GHP not in text

    _run(scenario)


def test_an_open_http_server_beyond_loopback_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIDIAG_HOME", str(tmp_path))
    monkeypatch.delenv("VERIDIAG_API_TOKENS", raising=False)
    done = CliRunner().invoke(cli, ["mcp", "--transport", "http", "--host", "0.0.0.0"])
    assert done.exit_code == 2
    assert "refusing to serve on 0.0.0.0 without API tokens" in done.output
    assert not (tmp_path / "veridiag.db").exists(), "refused before anything was built"


def test_the_stdio_server_loads_no_fastapi_app() -> None:
    """What ``veridiag mcp`` imports before it serves over stdio (ARCHITECTURE: a command imports
    what it runs): the pipeline and the SDK, not the HTTP API's app, routes or workbench."""
    probe = "import sys, veridiag.cli.app, veridiag.pipeline.factory, veridiag.mcp_server.server; "
    probe += "print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(done.stdout.split())
    assert "mcp.server.mcpserver" in loaded, "the probe read the modules"
    assert not {"fastapi", "jinja2", "limits", "veridiag.api.app", "veridiag.mcp_server.http"} & loaded


def test_a_lone_surrogate_over_stdio_is_answered(home: Path) -> None:
    """The SDK's reader refuses ``"\\ud800"`` as JSON and drops the message: the client would wait
    forever. ``veridiag mcp`` repairs the line first, so ``diagnose`` answers, sanitised."""
    server = subprocess.Popen(
        [sys.executable, "-m", "veridiag", "mcp"],
        env=_env(home),
        cwd=home,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    question = json.dumps("订单123支付失败\ud800，帮我看看\u202e是什么原因")  # ASCII: "\\ud800" as sent
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "diagnose", "arguments": '
        f'{{"question": {question}}}}}}}',
    ]
    try:
        server.stdin.write("".join(line + "\n" for line in lines).encode())
        server.stdin.flush()
        answers: dict[int, Any] = {}
        deadline = time.monotonic() + 60
        while 1 not in answers:
            ready, _, _ = select.select([server.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no answer to the call within 60 s: {answers}"
            message = json.loads(server.stdout.readline())
            answers[message.get("id", -1)] = message
        result = answers[1]["result"]
        assert not result.get("isError"), result
        document = result["structuredContent"]
        assert document["verdict"] and "\u202e" not in json.dumps(document, ensure_ascii=False)
    finally:
        server.kill()
        server.wait(timeout=30)


def test_a_lone_surrogate_over_http_is_answered(http_url: str) -> None:
    """Over HTTP the SDK answered a parse error; the body is repaired first, so it diagnoses."""
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    with httpx2.Client(headers=headers, timeout=60) as http:
        opened = http.post(http_url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        assert opened.status_code == 200
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        http.post(http_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        question = json.dumps("订单123支付失败\ud800，帮我看看是什么原因")  # "\\ud800" as sent
        call = (
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "diagnose", '
            f'"arguments": {{"question": {question}}}}}}}'
        )
        answered = http.post(http_url, content=call.encode(), headers=session)
    assert answered.status_code == 200, answered.text
    data = next(line.removeprefix("data: ") for line in answered.text.splitlines() if line.startswith("data: "))
    result = json.loads(data)["result"]
    assert not result.get("isError") and result["structuredContent"]["verdict"], result


def test_sigterm_stops_the_stdio_server_as_a_containers_first_process(home: Path) -> None:
    """As PID 1 (a container's first process, `docker stop`, a pod ending) a process ignores
    SIGTERM unless it handles it: the stdio server handles it and exits. Run as PID 1 of a new
    PID namespace (``unshare``, as root in CI); signals from outside reach it only if handled."""
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
    with first_process(["mcp"], _env(home), home, **pipes) as wrapper:
        assert wrapper.stdin is not None and wrapper.stdout is not None
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        wrapper.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}).encode())
        wrapper.stdin.write(b"\n")
        wrapper.stdin.flush()
        assert b'"id":0' in wrapper.stdout.readline().replace(b" ", b"")  # serving; its stdin stays open
        terminate(wrapper)
        assert wrapper.wait(timeout=20) == 0
