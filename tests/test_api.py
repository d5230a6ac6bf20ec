"""The HTTP API: the chat document equals `ask --json`, streaming stages, sessions and audit,
metrics, auth, and bad requests rejected with clear JSON errors and nothing persisted."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.builders import ASK_JSON_KEYS
from veridiag.api import create_app
from veridiag.api.app import openapi_text
from veridiag.api.local import LocalServer
from veridiag.cli.app import app as cli
from veridiag.config import Settings
from veridiag.pipeline.factory import Assembly, assemble

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "订单123支付失败，帮我看看是什么原因"
BASE = "http://localhost"  # an allowed host (TestClient's default, testserver, is not)


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("api")))


@pytest.fixture()
def client(assembly: Assembly) -> TestClient:
    return TestClient(create_app(Settings(home=Path("/nonexistent")), assembly=assembly), base_url=BASE)


def _sessions(assembly: Assembly) -> int:
    return assembly.store.count_sessions()


def test_chat_returns_the_ask_json_document(client: TestClient, assembly: Assembly) -> None:
    response = client.post("/api/v1/chat", json={"query": QUESTION})
    assert response.status_code == 200
    body = response.json()
    assert set(body) >= ASK_JSON_KEYS
    assert body["verdict"] == "PASS" and "payment-service" in body["final_answer"]
    stored = client.get(f"/api/v1/sessions/{body['session_id']}").json()
    assert stored["final_answer"] == body["final_answer"] and stored["status"] == "completed"
    audit = client.get(f"/api/v1/sessions/{body['session_id']}/audit").json()
    assert audit["final_answer"] == body["final_answer"]
    assert {i["id"] for i in audit["invocations"]} >= {
        e["invocation_id"] for c in body["claims"] for e in c["evidence"]
    }


def test_stream_sends_each_stage_then_the_document(client: TestClient) -> None:
    with client.stream("POST", "/api/v1/chat/stream", json={"query": "Why is checkout slow since 10:00?"}) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        frames = [f for f in stream.read().decode().split("\n\n") if f.strip()]
    events = [
        (f.split("\n")[0].removeprefix("event: "), json.loads(f.split("\n")[1].removeprefix("data: "))) for f in frames
    ]
    stages = [name for name, _ in events]
    assert stages[0] == "session" and stages[-1] == "done"
    assert stages.index("plan") < stages.index("tool") < stages.index("gatekeeper") < stages.index("verifier")
    assert stages.index("verifier") < stages.index("composer") < stages.index("done")
    assert stages.count("tool") >= 2
    done = events[-1][1]
    assert set(done) >= ASK_JSON_KEYS and done["session_id"] == events[0][1]["session_id"]
    assert client.get(f"/api/v1/sessions/{done['session_id']}").json()["status"] == "completed"


#: The audit document's shape (``veridiag audit --json``, ``GET …/audit``): sections in this order.
AUDIT_KEYS = [
    "session",
    "final_answer",
    "answer_source",
    "composer",
    "verifier",
    "gatekeeper",
    "executor",
    "rounds",
    "invocations",
    "failed_at",
    "timings_ms",
    "role_calls",
    "usage",
]
AUDIT_VERIFIER_KEYS = [
    "verdict",
    "verifier_verdict",
    "verifier_status",
    "groundedness_score",
    "claim_checks",
    "hypothesis_checks",
    "facts_checked",
    "rationale",
    "corrections",
    "round",
]


def test_audit_shows_the_stored_session_the_same_in_the_cli_and_the_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERIDIAG_HOME", str(tmp_path))
    monkeypatch.setenv("VERIDIAG_ENGINE", "offline")
    runner = CliRunner()
    session_id = json.loads(runner.invoke(cli, ["ask", "--json", QUESTION]).stdout)["session_id"]
    printed = runner.invoke(cli, ["audit", "--json", session_id])
    assert printed.exit_code == 0, printed.stderr
    client = TestClient(create_app(Settings(home=tmp_path)), base_url=BASE)
    served = client.get(f"/api/v1/sessions/{session_id}/audit").json()
    shown = json.loads(printed.stdout)
    assert json.dumps(shown) == json.dumps(served), "the CLI and the API show one document, keys in one order"

    stored = client.get(f"/api/v1/sessions/{session_id}").json()
    record, evaluation = stored["self_evaluation"], stored["self_evaluation"]["verifier_evaluation"]
    assert list(shown) == AUDIT_KEYS
    assert shown["session"] == {k: v for k, v in stored.items() if k not in ("self_evaluation", "final_answer")}
    assert shown["final_answer"] == stored["final_answer"] and shown["answer_source"] == evaluation["answer_source"]
    assert shown["composer"] == {
        "input": evaluation["composer_input"],
        "output": evaluation["composer_output"],
        "guard": evaluation["composer_guard"],
        "reason": evaluation["answer_source_reason"],
    }
    assert shown["verifier"] == {key: evaluation[key] for key in AUDIT_VERIFIER_KEYS}
    assert shown["gatekeeper"] == {
        "result": evaluation["gatekeeper_result"],
        "trace": record["rounds"][-1]["gatekeeper_trace"],
    }
    assert shown["executor"] == {
        "parse_status": evaluation["executor_output_parse_status"],
        "structured_output": evaluation["executor_structured_output"],
    }
    assert [shown[key] for key in ("rounds", "timings_ms", "role_calls", "usage")] == [
        record[key] for key in ("rounds", "timings_ms", "role_calls", "usage")
    ]
    assert shown["failed_at"] is None and shown["invocations"][0]["session_id"] == session_id


def test_sessions_page_filter_and_search(client: TestClient) -> None:
    client.post("/api/v1/chat", json={"query": "Why does /api/cart return 504 since 08:10?"})
    page = client.get("/api/v1/sessions", params={"limit": 1}).json()
    assert page["limit"] == 1 and len(page["items"]) == 1 and page["total"] >= 1
    everything = client.get("/api/v1/sessions", params={"limit": 200}).json()
    passing = client.get("/api/v1/sessions", params={"verdict": "PASS", "limit": 200}).json()
    assert all(item["verdict"] == "PASS" for item in passing["items"])
    assert passing["total"] == sum(1 for item in everything["items"] if item["verdict"] == "PASS")
    found = client.get("/api/v1/sessions", params={"q": "api/cart"}).json()
    assert found["total"] >= 1 and all("api/cart" in item["query"] for item in found["items"])
    assert client.get("/api/v1/sessions", params={"q": "100%_never"}).json()["total"] == 0


def test_health_checks_the_store_without_counting_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/healthz answers from one row at most (a count of a large sessions table is slow) and
    says 503 when the store does not answer."""
    assembly = assemble(Settings(home=tmp_path))
    app = TestClient(create_app(Settings(home=Path("/nonexistent")), assembly=assembly), base_url=BASE)

    def counted(*_args: object, **_kwargs: object) -> int:
        raise AssertionError("the health check counted the sessions")

    monkeypatch.setattr(assembly.store, "count_sessions", counted)
    assert app.get("/healthz").json()["status"] == "ok"
    with assembly.store.engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE tool_invocation")
        connection.exec_driver_sql("DROP TABLE diagnosis_session")
    down = app.get("/healthz")
    assert down.status_code == 503 and "store unavailable" in down.text


def test_rules_health_and_metrics(client: TestClient) -> None:
    rules = client.get("/api/v1/rules").json()
    assert rules["enabled"] and "evidence.excerpt_similarity" in {r["id"] for r in rules["rules"]}
    assert client.get("/healthz").json()["status"] == "ok"
    client.post("/api/v1/chat", json={"query": QUESTION})
    client.post("/api/v1/chat", json={"query": "x" * 5})
    metrics = client.get("/metrics").text
    assert 'veridiag_sessions_total{status="completed",verdict="PASS"}' in metrics
    assert 'veridiag_answer_source_total{source="template"}' in metrics
    assert 'veridiag_stage_latency_seconds_bucket{le="0.005",stage="executor"}' in metrics
    assert "veridiag_gatekeeper_failed_rules_total" in metrics


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "x" * 5_000}, "query"),  # over MAX_QUERY_CHARS, under the body limit (413: test_api_limits)
        ({"query": "   "}, "query"),
        (
            {"query": "\u200b\u3000\ufeff\t\u2800"},
            "query",
        ),  # invisible: zero width, ideographic space, BOM, braille blank
        ({"query": 123}, "query"),
        ({"query": QUESTION, "lang": "fr"}, "lang"),
        ({"query": QUESTION, "unexpected": 1}, "unexpected"),
        ({}, "query"),
        ([QUESTION], "body"),
    ],
)
def test_bad_bodies_get_422_and_persist_nothing(client: TestClient, assembly: Assembly, body: Any, field: str) -> None:
    before = _sessions(assembly)
    response = client.post("/api/v1/chat", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and field in error["message"]
    assert _sessions(assembly) == before


@pytest.mark.parametrize("raw", [b"{not json", b"\xff\xfe\x00garbage", b""])
def test_unparseable_bodies_get_422(client: TestClient, assembly: Assembly, raw: bytes) -> None:
    before = _sessions(assembly)
    response = client.post("/api/v1/chat", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"
    assert _sessions(assembly) == before


def test_unknown_ids_and_paths_are_404_json(client: TestClient) -> None:
    for path in ("/api/v1/sessions/nope", "/api/v1/sessions/nope/audit", "/api/v1/nothing"):
        response = client.get(path)
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_bearer_tokens(assembly: Assembly) -> None:
    client = TestClient(
        create_app(Settings(home=Path("/nonexistent"), api_tokens="alpha, beta"), assembly=assembly), base_url=BASE
    )
    before = _sessions(assembly)
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic alpha"}):
        response = client.post("/api/v1/chat", json={"query": QUESTION}, headers=headers)
        assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "unauthorized"
    assert _sessions(assembly) == before
    assert client.get("/api/v1/sessions", headers={"Authorization": "Bearer beta"}).status_code == 200
    assert client.get("/healthz").status_code == 200  # probes stay open
    page = client.get("/", headers={"Accept": "text/html"}, follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/login"
    assert (
        client.post("/login", data={"token": "nope"}, follow_redirects=False)
        .headers["location"]
        .startswith("/login?failed")
    )
    client.post("/login", data={"token": "alpha"}, follow_redirects=False)
    assert client.get("/").status_code == 200  # the session cookie now authenticates the browser
    assert "alpha" not in str(client.cookies.get("veridiag_session"))  # a session, not the token
    for path in ("/metrics", "/api/docs", "/api/openapi.json"):  # behind auth with tokens configured
        assert client.get(path).status_code == 200
        anonymous = TestClient(client.app, base_url=BASE).get(path)
        assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "unauthorized"


def test_serve_refuses_an_open_api_beyond_loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIDIAG_HOME", str(tmp_path))
    monkeypatch.delenv("VERIDIAG_API_TOKENS", raising=False)
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code != 0 and "VERIDIAG_API_TOKENS" in result.output


def test_committed_openapi_matches_the_app() -> None:
    assert (ROOT / "schemas" / "openapi.json").read_text(encoding="utf-8") == openapi_text(), (
        "schemas/openapi.json drifted: run `make schemas` and commit the result"
    )


def test_api_docs_are_served_without_a_cdn(client: TestClient) -> None:
    page = client.get("/api/docs")
    assert page.status_code == 200 and "/api/openapi.json" in page.text
    assert "cdn." not in page.text and "https://" not in page.text, "the docs page must not need the internet"
    for asset, kind in (("swagger-ui-bundle.js", "javascript"), ("swagger-ui.css", "text/css")):
        assert f"/api/docs-assets/{asset}" in page.text
        served = client.get(f"/api/docs-assets/{asset}")
        assert served.status_code == 200 and kind in served.headers["content-type"]
        assert len(served.content) > 50_000
    assert "/api/docs" not in client.get("/api/openapi.json").json()["paths"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_concurrent_chats_on_one_server_lose_and_mix_nothing(backend: str, request: pytest.FixtureRequest) -> None:
    """The load benchmark's correctness half, small: real uvicorn, 30 requests at once, on a
    fresh SQLite file and on a shared PostgreSQL database (CI starts one)."""
    from veridiag.bench import api as api_bench

    database_url = str(request.getfixturevalue("postgres_url")) if backend == "postgresql" else None
    result = api_bench.run(
        requests=30, runs=1, baseline_requests=2, inprocess_requests=4, serve_restarts=0, database_url=database_url
    )
    assert (result.errors, result.sessions_lost, result.sessions_mixed) == (0, 0, 0)
    assert result.per_run[0].sessions_stored == 30 + 2 + 4 + 2
    assert result.store == backend


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
BODIES = (
    JSON
    | st.fixed_dictionaries({"query": JSON})
    | st.fixed_dictionaries(
        {"query": st.text(min_size=1, max_size=60), "lang": st.sampled_from(["zh", "en", "fr", None, 1])}
    )
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES)
def test_any_json_body_gets_an_answer_or_a_clear_422(client: TestClient, assembly: Assembly, body: Any) -> None:
    before = _sessions(assembly)
    response = client.post("/api/v1/chat", json=body)
    assert response.status_code in (200, 422), response.text
    document = response.json()
    if response.status_code == 422:
        assert document["error"]["code"] == "invalid_request" and document["error"]["message"]
        assert _sessions(assembly) == before
    else:
        assert set(document) >= ASK_JSON_KEYS and _sessions(assembly) == before + 1
        assert not document["final_answer"].lstrip().startswith(("{", "["))


def test_a_stream_client_that_leaves_does_not_lose_the_session(assembly: Assembly) -> None:
    before = _sessions(assembly)
    with LocalServer(create_app(Settings(home=Path("/nonexistent")), assembly=assembly)) as server:
        with httpx2.stream("POST", f"{server.url}/api/v1/chat/stream", json={"query": QUESTION}, timeout=30) as stream:
            first = next(stream.iter_lines())
        assert first == "event: session"  # the client reads one event and hangs up
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            newest = assembly.store.list_sessions(limit=1)[0]
            if _sessions(assembly) == before + 1 and newest.status == "completed":
                break
            time.sleep(0.1)
    newest = assembly.store.list_sessions(limit=1)[0]
    assert newest.query == QUESTION and newest.status == "completed" and newest.final_answer
