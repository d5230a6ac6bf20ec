"""``GET /api/v1/sessions/{id}/events``: a session's stages read from the store — replayed once
it ended, followed while it runs (whichever process runs it), resumed after ``Last-Event-ID``,
and ended as the stored session states it (completed, failed, interrupted)."""

from __future__ import annotations

import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from tests.sse import Event, read_events
from veridiag.api import create_app
from veridiag.config import Settings
from veridiag.pipeline.factory import Assembly, assemble

QUESTION = "订单123支付失败，帮我看看是什么原因"
BASE = "http://localhost"


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("events")))


@pytest.fixture()
def client(assembly: Assembly) -> TestClient:
    return TestClient(create_app(Settings(home=Path("/nonexistent")), assembly=assembly), base_url=BASE)


def events(client: TestClient, session_id: str, **headers: str) -> list[Event]:
    with client.stream("GET", f"/api/v1/sessions/{session_id}/events", headers=headers) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        return list(read_events(response.iter_lines()))


def test_a_finished_session_replays_what_its_chat_stream_sent(client: TestClient) -> None:
    with client.stream("POST", "/api/v1/chat/stream", json={"query": QUESTION}) as response:
        sent = list(read_events(response.iter_lines()))
    session_id = sent[0].data["session_id"]
    replayed = events(client, session_id)
    assert [(e.stage, e.data) for e in replayed] == [(e.stage, e.data) for e in sent]
    assert replayed[-1].stage == "done" and replayed[-1].id is None  # the end is the session's, not a stored event
    assert [e.id for e in replayed[:-1]] == list(range(1, len(replayed)))
    assert replayed[-1].data["status"] == "completed" and replayed[-1].data["verdict"]
    resumed = events(client, session_id, **{"Last-Event-ID": "2"})
    assert [(e.id, e.stage, e.data) for e in resumed] == [(e.id, e.stage, e.data) for e in replayed[2:]]


def test_a_running_session_is_followed_as_its_events_are_stored(client: TestClient, assembly: Assembly) -> None:
    """Another process runs the session: here, a thread writing to the store as a run would."""
    store = assembly.store
    session = store.create_session("followed", lang="en")
    store.record_progress(session.id, "session", {"lang": "en", "session_id": session.id})

    def elsewhere() -> None:
        time.sleep(0.6)  # the follower has read the first event and polls
        store.record_progress(session.id, "plan", {"skill": "generic", "session_id": session.id})
        time.sleep(0.4)
        store.fail_session(session.id, error="plan: RuntimeError: backend gone")
        store.record_progress(session.id, "failed", {"error": "late", "session_id": session.id})

    writer = threading.Thread(target=elsewhere)
    writer.start()
    heard = events(client, session.id)
    writer.join()
    assert [(e.id, e.stage) for e in heard] == [(1, "session"), (2, "plan"), (None, "failed"), (None, "done")]
    # The end as the session row states it — never a stored event a reader could see half of.
    assert heard[2].data == {"error": "plan: RuntimeError: backend gone", "session_id": session.id}
    assert heard[3].data["status"] == "failed" and heard[3].data["verdict"] is None


def test_a_session_whose_process_died_ends_its_stream_as_interrupted(client: TestClient, assembly: Assembly) -> None:
    store = assembly.store
    session = store.create_session("owner killed", lang="en")
    store.record_progress(session.id, "session", {"lang": "en", "session_id": session.id})
    child = subprocess.Popen(["sleep", "30"])
    child.kill()
    child.wait()
    with store.engine.begin() as connection:
        connection.execute(
            text("UPDATE diagnosis_session SET owner_pid = :pid WHERE id = :id"), {"pid": child.pid, "id": session.id}
        )
    heard = events(client, session.id)
    assert [e.stage for e in heard] == ["session", "interrupted", "done"]
    assert str(heard[1].data["error"]).startswith("interrupted: its process (pid ")
    assert heard[2].data["status"] == "failed" and heard[2].data["final_answer"]  # the failure answer, no verdict


def test_an_unknown_session_has_no_events(client: TestClient) -> None:
    response = client.get("/api/v1/sessions/s-missing/events")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_compressing_a_sessions_audit_drops_its_stage_events(client: TestClient, assembly: Assembly) -> None:
    """A day later the audit holds what the events said: the stream is then only the end."""
    document = client.post("/api/v1/chat", json={"query": QUESTION}).json()
    before = events(client, document["session_id"])
    assert len(before) > 5
    with assembly.store.engine.begin() as connection:
        connection.execute(
            text("UPDATE diagnosis_session SET created_at = :when WHERE id = :id"),
            {"when": datetime.now(UTC) - timedelta(days=2), "id": document["session_id"]},
        )
    assert assembly.store.compress_older_audits() >= 1
    after = events(client, document["session_id"])
    assert [(e.stage, e.data) for e in after] == [("done", before[-1].data)]
    with assembly.store.engine.connect() as connection:
        stored = connection.execute(
            text("SELECT progress IS NULL FROM diagnosis_session WHERE id = :id"), {"id": document["session_id"]}
        ).scalar()
    assert stored  # SQL NULL, not a JSON null


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.integers(4301, 20_000).map(lambda n: "9" * n),  # past int()'s digit limit
        st.text(st.characters(codec="latin-1", categories=["Nd", "No"]), min_size=1, max_size=8),  # ¹²³ are digits too
        st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=40),
    )
)
def test_any_last_event_id_is_answered_never_a_500(client: TestClient, last_event_id: str) -> None:
    """A ``Last-Event-ID`` is the client's to write: one no event has is a resume after every
    event (only the end is sent), anything else a start from the first."""
    session_id = _finished_session(client)
    with client.stream(
        "GET", f"/api/v1/sessions/{session_id}/events", headers=[(b"last-event-id", last_event_id.encode("latin-1"))]
    ) as response:
        assert response.status_code == 200, response.read()
        sent = list(read_events(response.iter_lines()))
    assert sent[-1].stage == "done"
    if last_event_id.isascii() and last_event_id.isdigit() and len(last_event_id.lstrip("0")) > 4:
        assert len(sent) == 1


_FINISHED: dict[int, str] = {}


def _finished_session(client: TestClient) -> str:
    """One finished session per app's store, diagnosed once."""
    key = id(client.app.state.assembly)  # type: ignore[attr-defined]
    if key not in _FINISHED:
        _FINISHED[key] = client.post("/api/v1/chat", json={"query": QUESTION}).json()["session_id"]
    return _FINISHED[key]
