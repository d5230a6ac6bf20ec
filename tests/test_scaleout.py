"""Several processes on one PostgreSQL (issue 18, item 3): two ``veridiag serve`` and a
``veridiag worker``, started together on a new database and one home — so they migrate it and
build the demo data and runbook index at the same moment — serve each other's sessions.

A session asked on server A is listed on B while it runs (and not taken for abandoned), its
stages streamed by B as A stores them and replayed by B after it completed, its audit read on
B as JSON and as the workbench page; an alert posted to A is diagnosed by the worker and seen
on B. A server in another pid namespace (a container on another machine with the same host
name, as far as pids go) leaves a running session of A alone too.

A's diagnoses wait on a Prometheus that accepts connections and never answers: each of its ~30
metrics calls times out (0.15 s, twice with the metadata look-up), so a diagnosis runs for
seconds however idle the machine — long enough to be watched from the other server.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.builders import am_alert, am_payload
from tests.pg import own_schema
from tests.ports import free_port
from tests.sse import Event, read_events
from veridiag.api.security import COOKIE

pytestmark = pytest.mark.slow

QUESTION = "订单123支付失败，帮我看看是什么原因"
VERIDIAG = str(Path(sys.executable).parent / "veridiag")


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def get(self, path: str, **kwargs: Any) -> httpx2.Response:
        return httpx2.get(self.url + path, timeout=30, **kwargs)

    def events(self, session_id: str, **headers: str) -> Iterator[Event]:
        with httpx2.stream("GET", f"{self.url}/api/v1/sessions/{session_id}/events", headers=headers, timeout=60) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            yield from read_events(r.iter_lines())


@contextmanager
def silent_server() -> Iterator[str]:
    """A 'Prometheus' that accepts connections and never answers."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        yield f"http://127.0.0.1:{silent.getsockname()[1]}"


def environment(home: Path, database: str, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("VERIDIAG_")}
    return {
        **env,
        "VERIDIAG_HOME": str(home),
        "VERIDIAG_DATABASE_URL": database,
        "VERIDIAG_ALERTS__SERVE_WORKERS": "0",  # alerts are the worker's
        **extra,
    }


def start(stack: ExitStack, command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    output = stack.enter_context(log.open("wb"))
    process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)

    def stop() -> None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    stack.callback(stop)
    return process


def serve(stack: ExitStack, env: dict[str, str], log: Path, prefix: list[str] | None = None) -> Server:
    port = free_port()
    process = start(stack, [*(prefix or []), VERIDIAG, "serve", "--port", str(port)], env, log)
    return Server(process, f"http://127.0.0.1:{port}", log)


def wait_healthy(*servers: Server) -> None:
    deadline = time.monotonic() + 180
    for server in servers:
        while True:
            assert server.process.poll() is None, server.log.read_text(errors="replace")
            try:
                if server.get("/healthz").status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, f"{server.url} did not start: {server.log.read_text(errors='replace')}"
            time.sleep(0.2)


def ask_streaming(server: Server) -> tuple[str, list[Event], threading.Thread]:
    """Asks on ``server`` through ``POST /chat/stream``; returns the session id as soon as the
    first event names it, and the list the rest of the stream fills (``thread`` ends with it)."""
    heard: list[Event] = []
    named = threading.Event()

    def listen() -> None:
        with httpx2.stream("POST", f"{server.url}/api/v1/chat/stream", json={"query": QUESTION}, timeout=120) as r:
            for event in read_events(r.iter_lines()):
                heard.append(event)
                named.set()
        named.set()

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    assert named.wait(60) and heard, "no session event"
    return str(heard[0].data["session_id"]), heard, thread


def listed(server: Server, session_id: str) -> dict[str, Any]:
    page = server.get("/api/v1/sessions", params={"limit": 200}).json()
    [found] = [item for item in page["items"] if item["id"] == session_id]
    return dict(found)


@pytest.fixture
def database(postgres_url: str) -> Iterator[str]:
    """A new, empty database (a schema of its own in this process's CI PostgreSQL database)."""
    with own_schema(postgres_url) as url:
        yield url


def test_two_servers_and_a_worker_share_one_postgresql(database: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ExitStack() as stack:
        prometheus = stack.enter_context(silent_server())
        slow = environment(
            home,
            database,
            VERIDIAG_TOOLS__METRICS="prometheus",
            VERIDIAG_PROMETHEUS__URL=prometheus,
            VERIDIAG_PROMETHEUS__TIMEOUT_SECONDS="0.15",
        )
        # All three at once, on a database with no tables and a home not built yet.
        a = serve(stack, slow, tmp_path / "a.log")
        b = serve(stack, slow, tmp_path / "b.log")
        worker_env = environment(home, database, VERIDIAG_ALERTS__POLL_SECONDS="0.2")
        worker = start(stack, [VERIDIAG, "worker"], worker_env, tmp_path / "worker.log")
        wait_healthy(a, b)

        # -- a session asked on A, watched on B while it runs ---------------------------------
        session_id, heard_on_a, a_stream = ask_streaming(a)
        assert listed(b, session_id)["status"] == "running"
        live = list(b.events(session_id))
        assert live[-1].stage == "done"
        a_stream.join(60)
        # B streamed what A's own stream sent, in the same order, from the store.
        assert [(e.stage, e.data) for e in live] == [(e.stage, e.data) for e in heard_on_a]
        assert [e.id for e in live[:-1]] == list(range(1, len(live)))
        stages = [e.stage for e in live]
        assert stages[0] == "session" and stages.count("tool") >= 2 and "verifier" in stages
        session = b.get(f"/api/v1/sessions/{session_id}").json()
        assert (session["status"], session["error"]) == ("completed", None)  # never taken for abandoned
        assert live[-1].data["session_id"] == session_id and live[-1].data["final_answer"] == session["final_answer"]
        tool_errors = [e.data for e in live if e.stage == "tool" and e.data["status"] != "ok"]
        assert tool_errors, "the silent Prometheus should have cost A's diagnosis a metrics call"

        # -- after completion: replayed whole, or resumed after the last event a client saw ------
        assert [(e.id, e.stage, e.data) for e in b.events(session_id)] == [(e.id, e.stage, e.data) for e in live]
        resumed = list(b.events(session_id, **{"Last-Event-ID": "3"}))
        assert [(e.id, e.stage) for e in resumed] == [(e.id, e.stage) for e in live[3:]]

        # -- audited on B -----------------------------------------------------------------------
        audit = b.get(f"/api/v1/sessions/{session_id}/audit").json()
        assert audit["session"]["id"] == session_id
        tool_ids = sorted(e.data["invocation_id"] for e in live if e.stage == "tool")
        assert sorted(i["id"] for i in audit["invocations"]) == tool_ids
        page = b.get(f"/sessions/{session_id}", headers={"Accept": "text/html"})
        assert page.status_code == 200 and QUESTION in page.text and session_id in page.text

        # -- an alert posted to A, diagnosed by the worker, seen on B --------------------------
        posted = httpx2.post(
            f"{a.url}/api/v1/alerts/alertmanager", json=am_payload(am_alert(f"scaleout-{time.time_ns()}")), timeout=30
        )
        assert posted.status_code == 202, posted.text
        [job_id] = posted.json()["jobs"]
        deadline = time.monotonic() + 120
        while (job := b.get(f"/api/v1/alerts/jobs/{job_id}").json())["status"] != "done":
            assert worker.poll() is None, (tmp_path / "worker.log").read_text(errors="replace")
            assert time.monotonic() < deadline, job
            time.sleep(0.2)
        alerted = b.get(f"/api/v1/sessions/{job['session_id']}").json()
        assert alerted["status"] == "completed" and alerted["verdict"] and alerted["final_answer"]
        assert job["progress"] == "done" and job["attempts"] == 1
        # The worker ran it, on its own embedded metrics (A and B would have waited on Prometheus).
        worker_stages = [e.stage for e in b.events(job["session_id"])]
        assert worker_stages[0] == "session" and worker_stages[-1] == "done"

        for server in (a, b):
            assert server.process.poll() is None, server.log.read_text(errors="replace")
            assert "Traceback" not in server.log.read_text(errors="replace")
        assert worker.poll() is None and "Traceback" not in (tmp_path / "worker.log").read_text(errors="replace")


def test_a_sign_out_on_one_server_holds_on_the_other(database: str, tmp_path: Path) -> None:
    """Browser sign-in is a cookie both servers accept (one session secret); signing out on A
    refuses a copy of it on B at once — the revocation is a row in the shared PostgreSQL, not
    A's memory — and on a server started after it."""
    env = environment(tmp_path / "home", database, VERIDIAG_API_TOKENS="alpha", VERIDIAG_API_SESSION_SECRET="s" * 40)
    with ExitStack() as stack:
        a, b = serve(stack, env, tmp_path / "a.log"), serve(stack, env, tmp_path / "b.log")
        wait_healthy(a, b)
        login = httpx2.post(f"{a.url}/login", data={"token": "alpha"}, timeout=30)
        assert login.status_code == 303 and login.headers["location"] == "/", login.text
        cookie = {COOKIE: login.cookies[COOKIE]}  # what a copy of the browser's cookie sends

        def status(server: Server) -> int:
            return server.get("/api/v1/sessions", cookies=cookie).status_code

        assert status(a) == status(b) == 200
        page = a.get("/", cookies=cookie)
        [csrf] = set(re.findall(r'name="csrf_token" value="([^"]+)"', page.text))  # one per session
        out = httpx2.post(f"{a.url}/logout", data={"csrf_token": csrf}, cookies=cookie, timeout=30)
        assert out.status_code == 303 and out.headers["location"] == "/login"
        assert status(b) == status(a) == 401
        later = serve(stack, env, tmp_path / "c.log")
        wait_healthy(later)
        assert status(later) == 401
        bearer = {"Authorization": "Bearer alpha"}
        assert all(server.get("/api/v1/sessions", headers=bearer).status_code == 200 for server in (a, b, later))
        for server in (a, b, later):
            assert "Traceback" not in server.log.read_text(errors="replace")


def unshare_prefix() -> list[str]:
    """A command prefix that runs a process in a pid namespace of its own (util-linux
    ``unshare``, as root): its pids are not the host's, its host name is."""
    found = shutil.which("unshare")
    # --kill-child: the server goes when unshare is stopped (else it outlives the test).
    prefix = [found, "--pid", "--fork", "--mount-proc", "--kill-child=SIGTERM"] if found else []
    if prefix and subprocess.run([*prefix, "true"], capture_output=True, check=False).returncode == 0:
        return prefix
    if os.environ.get("CI") == "true":
        pytest.fail("unshare --pid does not work here: the CI runs as root on Linux")
    pytest.skip("unshare --pid needs root on Linux")


def test_a_server_in_another_pid_namespace_leaves_a_running_session_alone(database: str, tmp_path: Path) -> None:
    """B shares A's host name but not its pids: A's pid is unknown to B, which must not read
    that as A being gone (before migration 0007 it did, and interrupted A's session)."""
    prefix = unshare_prefix()
    home = tmp_path / "home"
    with ExitStack() as stack:
        prometheus = stack.enter_context(silent_server())
        env = environment(
            home,
            database,
            VERIDIAG_TOOLS__METRICS="prometheus",
            VERIDIAG_PROMETHEUS__URL=prometheus,
            VERIDIAG_PROMETHEUS__TIMEOUT_SECONDS="0.15",
        )
        a = serve(stack, env, tmp_path / "a.log")
        b = serve(stack, env, tmp_path / "b.log", prefix=prefix)
        wait_healthy(a, b)
        session_id, _heard, a_stream = ask_streaming(a)
        assert listed(b, session_id)["status"] == "running"
        assert b.get(f"/api/v1/sessions/{session_id}").json()["status"] == "running"
        a_stream.join(60)
        final = b.get(f"/api/v1/sessions/{session_id}").json()
        assert (final["status"], final["error"]) == ("completed", None)
