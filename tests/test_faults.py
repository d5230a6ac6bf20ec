"""Faults as they happen: ``kill -9`` in the middle of a diagnosis, a database that really is
read-only, a metrics backend that dies mid-session. Each runs the real thing (``veridiag`` in
a subprocess, or the pipeline with a failing backend) and checks what a person then sees."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from veridiag.agents.engines import offline_roles
from veridiag.pipeline import DiagnosisPipeline
from veridiag.pipeline.report import answer_document
from veridiag.store import SessionStore, open_store
from veridiag.tools import Toolbox
from veridiag.tools.args import QueryMetricsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.results import ToolOutput

VERIDIAG = [sys.executable, "-c", "from veridiag.cli.app import main; main()"]
QUESTION = "Why is checkout slow since 10:00?"


def copy_demo(env: EmbeddedEnvironment, target: Path) -> Path:
    """A private copy of the demo data (SQLite's backup: the WAL's pages included)."""
    source = sqlite3.connect(env.path)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()
    return target


@pytest.fixture
def home(tmp_path: Path, demo_env: EmbeddedEnvironment) -> Path:
    copy_demo(demo_env, tmp_path / "embedded.db")
    return tmp_path


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith("VERIDIAG_")}
    return {**keep, "VERIDIAG_HOME": str(home), "VERIDIAG_ENGINE": "offline", **extra}


def veridiag(home: Path, *args: str, prefix: list[str] | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(prefix or []), *VERIDIAG, *args],
        check=False,
        env=cli_env(home, **env),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


# --- kill -9 in the middle of a tool call ------------------------------------------------


class HangingServer:
    """A "Prometheus" on a loopback port that accepts requests and never answers: the
    diagnosis waits inside a tool call until it is killed."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.asked = threading.Event()
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(connection)
            self.asked.set()

    def close(self) -> None:
        self.sock.close()
        for connection in self.held:
            connection.close()


@pytest.fixture
def hanging() -> Iterator[HangingServer]:
    server = HangingServer()
    yield server
    server.close()


def test_kill_9_mid_session_leaves_an_interrupted_session_and_the_next_diagnosis_works(
    home: Path, hanging: HangingServer
) -> None:
    slow = {
        "VERIDIAG_TOOLS__METRICS": "prometheus",
        "VERIDIAG_PROMETHEUS__URL": hanging.url,
        "VERIDIAG_PROMETHEUS__TIMEOUT_SECONDS": "300",
        "VERIDIAG_TOOLS__TIMEOUT_SECONDS": "300",
    }
    ask = subprocess.Popen(
        [*VERIDIAG, "ask", QUESTION, "--json"],
        env=cli_env(home, **slow),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert hanging.asked.wait(120), "the diagnosis never reached its first metrics call"
        store = SessionStore(f"sqlite:///{home / 'veridiag.db'}")
        (running,) = store.list_sessions()
        assert running.status == "running", f"a live owner's session is left alone: {running.error}"
        os.kill(ask.pid, signal.SIGKILL)
    finally:
        ask.kill()
        ask.wait(30)
        ask.stdout.close()  # type: ignore[union-attr]
        ask.stderr.close()  # type: ignore[union-attr]
    assert ask.returncode == -signal.SIGKILL

    listed = veridiag(home, "sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    (session,) = json.loads(listed.stdout)
    assert (session["id"], session["status"], session["verdict"]) == (running.id, "interrupted", None)
    assert (
        session["error"]
        == f"interrupted: its process (pid {ask.pid} on {socket.gethostname()}) is gone before the session finished"
    )
    audit = veridiag(home, "audit", running.id)
    assert audit.returncode == 0 and f"{running.id} interrupted" in audit.stdout and "is gone" in audit.stdout

    again = veridiag(home, "ask", QUESTION, "--json")
    assert again.returncode == 0, again.stderr
    document = json.loads(again.stdout)
    assert document["status"] == "completed" and document["final_answer"]
    statuses = {s.id: s.status for s in open_store(f"sqlite:///{home / 'veridiag.db'}").list_sessions()}
    assert statuses == {running.id: "interrupted", document["session_id"]: "completed"}


# --- a read-only database ------------------------------------------------------------------


def read_only_prefix(directory: Path) -> list[str]:
    """A command prefix under which ``directory`` really is read-only. As root (CI) file modes
    stop nothing, so the directory is bind-mounted read-only in a private mount namespace;
    otherwise the caller's chmod does it and no prefix is needed."""
    if os.geteuid() != 0:
        return []
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh", str(directory)]


@pytest.fixture(scope="module")
def read_only_home(
    tmp_path_factory: pytest.TempPathFactory, demo_env: EmbeddedEnvironment
) -> Iterator[tuple[Path, list[str]]]:
    home = tmp_path_factory.mktemp("read-only")
    copy_demo(demo_env, home / "embedded.db")
    assert veridiag(home, "ask", QUESTION).returncode == 0  # both databases exist, with a session
    modes = {path: path.stat().st_mode for path in [home, *home.iterdir()]}
    if os.geteuid() != 0:
        for path in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        yield home, read_only_prefix(home)
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def test_the_read_only_setup_really_is_read_only(read_only_home: tuple[Path, list[str]]) -> None:
    home, prefix = read_only_home
    script = f'touch "{home}/probe" || exit 3; echo x >> "{home}/veridiag.db"'
    probe = subprocess.run([*prefix, "sh", "-c", script], check=False)
    assert probe.returncode == 3


@pytest.mark.parametrize(
    "args",
    [
        ["ask", QUESTION],
        ["sessions"],
        ["audit", "s-x"],
        ["tools", "call", "query_logs", '{"service": "payment-service"}'],
        ["kb", "index"],
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_read_only_database_is_one_line_exit_2(read_only_home: tuple[Path, list[str]], args: list[str]) -> None:
    home, prefix = read_only_home
    result = veridiag(home, *args, prefix=prefix)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr[-2000:]
    assert "read-only" in result.stderr and str(home) in result.stderr


# --- the metrics backend goes down in the middle of a session -----------------------------


class DyingMetrics:
    """Answers the first query from the demo data, then fails every later one: by raising, or
    by hanging past the toolbox's timeout."""

    name = "dying-metrics"

    def __init__(self, env: EmbeddedEnvironment, how: str) -> None:
        self.env = env
        self.how = how
        self.calls = 0

    def query_metrics(self, args: QueryMetricsArgs) -> ToolOutput:
        self.calls += 1
        if self.calls == 1:
            return self.env.query_metrics(args)
        if self.how == "raises":
            raise ConnectionError("connection refused")
        time.sleep(1.5)
        return self.env.query_metrics(args)


@pytest.mark.parametrize("how", ["raises", "times out"])
def test_metrics_dying_mid_session_are_gaps_the_answer_names(
    tmp_path: Path, demo_env: EmbeddedEnvironment, how: str
) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    metrics = DyingMetrics(demo_env, how)
    toolbox = Toolbox(logs=demo_env, metrics=metrics, knowledge=demo_env, changes=demo_env, timeout_seconds=0.5)
    pipeline = DiagnosisPipeline(store, offline_roles(demo_env, store), toolbox=toolbox)
    result = pipeline.run(QUESTION)
    assert result.status == "completed" and metrics.calls > 2

    calls = [i for i in store.list_invocations(result.session_id) if i.tool_name == "query_metrics"]
    failed = [i for i in calls if i.status == "error"]
    assert calls[0].status == "ok" and len(failed) == len(calls) - 1
    reason = "ConnectionError: connection refused" if how == "raises" else "timed out"
    assert all(reason in (i.error or "") for i in failed), {i.error for i in failed}
    document = answer_document(result, pipeline.roles.names).model_dump(mode="json")
    # failed calls of one kind are one line (issue 28), naming every metric
    failing = [line for line in result.answer.splitlines() if line.startswith("- query_metrics") and "failed" in line]
    assert len(failing) == 1, result.answer
    for invocation in failed:  # whatever the verdict, no failed call is hidden
        named = f"metric={invocation.arguments['metric']}) failed"
        metric = str(invocation.arguments["metric"])
        assert re.search(rf"metric=[^)]*\b{metric}\b", failing[0]), f"{metric!r} is not in {failing[0]!r}"
        assert any(named in gap for gap in document["missing_info"])
    # "Nothing deviated" speaks only of the metrics that were read; the rest are not ruled out.
    assert "deviated from its own history" not in result.answer
    quiet = [gap for gap in document["missing_info"] if "did not deviate" in gap]
    assert quiet, document["missing_info"]
    for gap in quiet:  # each service's gap counts that service's failed reads
        service = next(s for s in {str(i.arguments["service"]) for i in calls} if f"of {s} that" in gap)
        unread = [i for i in failed if i.arguments["service"] == service]
        assert f"{len(unread)} could not be read" in gap, (gap, len(unread))
    stored = store.get_session(result.session_id)
    assert stored is not None and stored.final_answer == result.answer and stored.verdict == result.verdict
