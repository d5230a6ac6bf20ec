"""Session lifecycle in the store, on SQLite and PostgreSQL: a verdict only with its answer,
abandoned ``running`` sessions become ``interrupted`` (owner gone, or past the timeout), and
migration 0002 keeps every invocation."""

from __future__ import annotations

import ast
import os
import socket
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from tests.together import run_together
from veridiag.agents.engines import offline_roles
from veridiag.pipeline import DiagnosisPipeline
from veridiag.store import SessionStore, StoreError, open_store
from veridiag.store.database import _alembic_config, head_revision, make_engine, upgrade
from veridiag.store.owner import pid_space, this_process
from veridiag.tools import Toolbox
from veridiag.tools.backends.embedded import EmbeddedEnvironment


def _dead_pid() -> int:
    """A pid that existed a moment ago and is now gone (reaped)."""
    child = subprocess.Popen(["sleep", "30"])
    child.kill()
    child.wait()
    return child.pid


def _set(store: SessionStore, session_id: str, **values: Any) -> None:
    """Write columns behind the store's back, as another (older, dead) process would have."""
    assignments = ", ".join(f"{column} = :{column}" for column in values)
    with store.engine.begin() as connection:
        connection.execute(
            text(f"UPDATE diagnosis_session SET {assignments} WHERE id = :id"), {**values, "id": session_id}
        )


def _stored_status(store: SessionStore, session_id: str) -> tuple[str, str | None]:
    with store.engine.connect() as connection:
        row = connection.execute(
            text("SELECT status, error FROM diagnosis_session WHERE id = :id"), {"id": session_id}
        ).one()
    return row.status, row.error


def test_a_verdict_is_stored_only_with_its_answer(store_url: str) -> None:
    store = SessionStore(store_url)
    session = store.create_session("q")
    with pytest.raises(ValueError, match="together with its final answer"):
        store.update_session(session.id, verdict="PASS")
    with pytest.raises(ValueError, match="final answer"):
        store.complete_session(session.id, verdict="PASS", final_answer="")
    for statement in (  # the schema refuses it whoever writes
        "UPDATE diagnosis_session SET verdict = 'PASS' WHERE id = :id",
        "UPDATE diagnosis_session SET verdict = 'PASS', final_answer = '' WHERE id = :id",
        "UPDATE diagnosis_session SET status = 'paused' WHERE id = :id",
    ):
        with pytest.raises(IntegrityError), store.engine.begin() as connection:
            connection.execute(text(statement), {"id": session.id})
    assert store.get_session(session.id).verdict is None  # type: ignore[union-attr]

    store.complete_session(session.id, verdict="PASS", final_answer="the answer", rounds=1)
    done = store.get_session(session.id)
    assert done is not None and (done.status, done.verdict, done.final_answer) == ("completed", "PASS", "the answer")
    with pytest.raises(StoreError, match="already completed"):
        store.complete_session(session.id, verdict="REJECT", final_answer="again")
    with pytest.raises(KeyError):
        store.complete_session("s-missing", verdict=None, final_answer="x")


def test_a_session_whose_process_died_is_interrupted_when_read_and_at_open(store_url: str) -> None:
    store = SessionStore(store_url)
    mine = store.create_session("still mine")
    dead = store.create_session("owner killed")
    _set(store, dead.id, owner_pid=_dead_pid())
    at_open = store.create_session("owner killed, found at open")
    _set(store, at_open.id, owner_pid=_dead_pid())

    found = store.get_session(dead.id)
    assert found is not None and found.status == "interrupted"
    assert found.error is not None and found.error.startswith("interrupted: its process (pid ")
    assert _stored_status(store, dead.id)[0] == "interrupted", "the reconciliation is stored"
    assert store.get_session(mine.id).status == "running"  # type: ignore[union-attr]

    reopened = open_store(store_url)  # start-up reconciliation, before anything is read
    assert _stored_status(reopened, at_open.id)[0] == "interrupted"
    listed = {s.id: s.status for s in reopened.list_sessions(limit=1000)}
    assert (listed[dead.id], listed[at_open.id], listed[mine.id]) == ("interrupted", "interrupted", "running")


def test_a_reused_pid_is_not_the_owner(store_url: str) -> None:
    store = SessionStore(store_url)
    session = store.create_session("pid reused")
    owner = this_process()
    assert owner.started_at is not None  # Linux: /proc gives the start time
    _set(store, session.id, owner_started_at=owner.started_at - timedelta(hours=1))
    found = store.get_session(session.id)
    assert found is not None and found.status == "interrupted"
    assert "now belongs to another process" in (found.error or "")


def test_a_start_time_read_a_second_or_two_apart_is_still_the_owner(store_url: str) -> None:
    """Two processes derive a start time from /proc/stat's boot time, which can read a second
    apart: that is the same process, not a reused pid."""
    store = SessionStore(store_url)
    session = store.create_session("boot time read apart")
    owner = this_process()
    assert owner.started_at is not None
    _set(store, session.id, owner_started_at=owner.started_at + timedelta(seconds=2))
    found = store.get_session(session.id)
    assert found is not None
    assert found.status == "running", found.error


def test_the_timeout_interrupts_sessions_of_other_hosts_and_the_owner_can_still_finish(store_url: str) -> None:
    store = SessionStore(store_url, stale_after=60)
    elsewhere = store.create_session("running on another host")
    _set(store, elsewhere.id, owner_host="another-" + socket.gethostname(), owner_pid=1, owner_space="boot-b/pid:1")
    assert store.get_session(elsewhere.id).status == "running"  # type: ignore[union-attr]
    _set(store, elsewhere.id, created_at=datetime.now(UTC) - timedelta(minutes=5))
    found = store.get_session(elsewhere.id)
    assert found is not None and found.status == "interrupted"
    assert found.error == "interrupted: still running after the session timeout (60 s)"
    # The timeout was a guess from outside: the owner's own result replaces it.
    store.complete_session(elsewhere.id, verdict="LOW_CONFID", final_answer="late but real")
    finished = store.get_session(elsewhere.id)
    assert finished is not None and (finished.status, finished.error) == ("completed", None)


def test_a_pid_is_judged_only_where_it_names_the_same_process(store_url: str) -> None:
    """A host name repeats — containers sharing the machine's name (``network_mode: host``), or
    one ``hostname:`` on several machines — while their pids are not each other's. The pid space
    (boot id and pid namespace) says whose pid a row holds; a pid from another space is left to
    the timeout, however dead it looks here."""
    store = SessionStore(store_url)
    gone = _dead_pid()
    host, other_host = socket.gethostname(), "another-" + socket.gethostname()
    rows = {  # (owner host, owner pid space) → status once read
        (host, "another-boot/pid:4026531836"): "running",  # same name, another machine
        (host, f"{pid_space()}".rsplit(":", 1)[0] + ":1"): "running",  # same name and boot, another container
        (other_host, pid_space()): "interrupted",  # another name, the same pids (docker --pid=host)
        (host, None): "interrupted",  # written before 0007: the host name decides, as it did
        (other_host, None): "running",
    }
    ids = {}
    for (owner_host, space), _expected in rows.items():
        ids[owner_host, space] = store.create_session(f"owned in {space}").id
        _set(store, ids[owner_host, space], owner_pid=gone, owner_host=owner_host, owner_space=space)
    found = {key: store.get_session(session_id) for key, session_id in ids.items()}
    assert {key: record.status for key, record in found.items() if record} == rows
    assert all(record and record.error is None for key, record in found.items() if rows[key] == "running")


def test_processes_starting_together_on_a_new_store_migrate_it_once(empty_url: str) -> None:
    """Servers and workers started at once on a new database each open it: one migrates, the
    others wait for it and find the schema at head (before, two ran the same ``CREATE TABLE``;
    and on SQLite one could fail switching the new file to WAL: "database is locked" — 3 runs
    in 15 with 8 processes before the switch was retried)."""
    printed = run_together(
        "from veridiag.store.database import make_engine, upgrade\nengine = make_engine(sys.argv[1])",
        "print(upgrade(engine))",
        [empty_url],
        count=8,
    )
    results = [ast.literal_eval(line) for line in printed]
    head = head_revision()
    assert sorted(results, key=str) == sorted([(None, head)] + [(head, head)] * 7, key=str)


def test_a_read_only_store_still_shows_the_truth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "store.db"
    store = SessionStore(f"sqlite:///{path}")
    session = store.create_session("owner killed")
    _set(store, session.id, owner_pid=_dead_pid())
    store.close()
    read_only = open_store(f"sqlite:///file:{path}?mode=ro&uri=true")
    found = read_only.get_session(session.id)
    assert found is not None and found.status == "interrupted"
    assert _stored_status(read_only, session.id)[0] == "running", "nothing could be written"
    with pytest.raises(Exception, match="readonly"):
        read_only.create_session("a write")
    assert not (tmp_path / "file:").exists(), "a file: URI is not a directory to create"


def test_migration_0002_keeps_invocations_and_clears_unanswered_verdicts(empty_url: str) -> None:
    engine = make_engine(empty_url)
    config = _alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    now = datetime.now(UTC)
    with engine.begin() as connection:
        insert = text(
            "INSERT INTO diagnosis_session (id, created_at, updated_at, query, status, rounds, verdict, final_answer)"
            " VALUES (:id, :now, :now, 'q', :status, 1, :verdict, :answer)"
        )
        connection.execute(
            insert, {"id": "s-crashed", "now": now, "status": "running", "verdict": "PASS", "answer": None}
        )
        connection.execute(
            insert, {"id": "s-done", "now": now, "status": "completed", "verdict": "PASS", "answer": "a"}
        )
        connection.execute(
            text(
                "INSERT INTO tool_invocation (session_id, round, tool_name, arguments, status, output,"
                " output_truncated, output_preview, started_at, latency_ms)"
                " VALUES (:s, 1, 'query_logs', '{}', 'ok', 'x', false, 'x', :now, 1.0)"
            ),
            [{"s": "s-crashed", "now": now}, {"s": "s-done", "now": now}],
        )
    assert upgrade(engine) == ("0001", head_revision())
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM tool_invocation")).scalar() == 2
        rows: dict[str, str | None] = dict(connection.execute(text("SELECT id, verdict FROM diagnosis_session")).all())
    assert rows == {"s-crashed": None, "s-done": "PASS"}
    store = SessionStore(empty_url)
    assert [i.session_id for i in store.list_invocations("s-crashed")] == ["s-crashed"]
    with pytest.raises(IntegrityError), engine.begin() as connection:
        connection.execute(text("UPDATE diagnosis_session SET verdict = 'PASS' WHERE id = 's-crashed'"))
    with engine.begin() as connection:  # and back down, and up again
        config.attributes["connection"] = connection
        command.downgrade(config, "0001")
    assert upgrade(engine) == ("0001", head_revision())
    engine.dispose()


def test_sessions_record_their_owner(store_url: str) -> None:
    store = SessionStore(store_url)
    session = store.create_session("whose?")
    with store.engine.connect() as connection:
        row = connection.execute(
            text("SELECT owner_pid, owner_host, owner_started_at FROM diagnosis_session WHERE id = :id"),
            {"id": session.id},
        ).one()
    assert (row.owner_pid, row.owner_host) == (os.getpid(), socket.gethostname())
    space = pid_space()
    assert space is not None and len(space) <= 100  # Linux: boot id and pid namespace (the column's width)
    with store.engine.connect() as connection:
        stored = connection.execute(
            text("SELECT owner_space FROM diagnosis_session WHERE id = :id"), {"id": session.id}
        ).scalar()
    assert stored == space
    assert row.owner_started_at is not None


def test_a_path_with_a_percent_sign_migrates(tmp_path: Path) -> None:
    """Alembic reads the URL through configparser, where % starts an interpolation."""
    store = open_store(f"sqlite:///{tmp_path / '100%' / 'store.db'}")
    assert store.create_session("q").status == "running"


def test_a_run_that_stops_after_its_verdict_leaves_no_verdict(tmp_path: Path, demo_env: EmbeddedEnvironment) -> None:
    """The verdict is known after the Verifier; if the process stops before the answer is
    written (here: the composer stage raises), the stored session has neither."""
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    toolbox = Toolbox(logs=demo_env, metrics=demo_env, knowledge=demo_env, changes=demo_env)
    pipeline = DiagnosisPipeline(store, offline_roles(demo_env, store), toolbox=toolbox)
    verdicts: list[str] = []

    def progress(stage: str, details: dict[str, Any]) -> None:
        if stage == "verifier":
            verdicts.append(details["verdict"])
        if stage == "composer":
            raise RuntimeError("stopped between the verdict and the answer")

    result = pipeline.run("订单123支付失败，帮我看看是什么原因", progress=progress)
    stored = store.get_session(result.session_id)
    assert verdicts == ["PASS"] and result.status == "failed"
    assert stored is not None and (stored.status, stored.verdict, stored.final_answer) == ("failed", None, None)


def test_the_api_shows_an_abandoned_session_as_interrupted(tmp_path: Path) -> None:
    """The session endpoints and the audit read through the store, so they reconcile too."""
    from fastapi.testclient import TestClient

    from veridiag.agents import scripted_roles
    from veridiag.api import create_app
    from veridiag.config import Settings
    from veridiag.gatekeeper import Gatekeeper
    from veridiag.pipeline.factory import Assembly

    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    gatekeeper = Gatekeeper()
    pipeline = DiagnosisPipeline(store, scripted_roles(executor="{}"), gatekeeper=gatekeeper)
    assembly = Assembly(store=store, pipeline=pipeline, engine={}, gatekeeper=gatekeeper)
    client = TestClient(create_app(Settings(home=tmp_path), assembly=assembly), base_url="http://localhost")
    session = store.create_session("owner killed")
    _set(store, session.id, owner_pid=_dead_pid())
    page = client.get("/api/v1/sessions").json()
    assert [(s["id"], s["status"]) for s in page["items"]] == [(session.id, "interrupted")]
    one = client.get(f"/api/v1/sessions/{session.id}").json()
    assert one["status"] == "interrupted" and "is gone" in one["error"]
    assert client.get(f"/api/v1/sessions/{session.id}/audit").json()["session"]["status"] == "interrupted"
