"""Issue 15: a long-running command freezes what its start-up built (``started_once``).

Unfrozen, every full collection walked the ~1.4·10⁵ objects the imports and the app leave —
110–220 ms a pass of cache misses, the p99 spikes of ``query_logs`` in ``serve`` and the tools
bench. Each command is run with the call it makes once started replaced by one that records the
collector's state then, so what is checked is the state a request or a diagnosis meets; a caller
in the same process gets the collector back as it was.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import veridiag.alerts.worker
import veridiag.bench
from tests.ports import free_port
from veridiag.cli.app import app


class _Worker:
    """Stands for the alert worker: ``start`` is where the diagnoses would begin."""

    name = "test"

    def __init__(self, record: Callable[[], None]) -> None:
        self.start = record

    def wait(self) -> None: ...

    def stop(self, timeout: float | None = None) -> None: ...


def _serve(monkeypatch: pytest.MonkeyPatch, record: Callable[[], None]) -> list[str]:
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda server, sockets=None: record())
    return ["serve", "--port", str(free_port())]


def _worker(monkeypatch: pytest.MonkeyPatch, record: Callable[[], None]) -> list[str]:
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # the test process keeps its handlers
    monkeypatch.setattr(veridiag.alerts.worker, "from_settings", lambda *args: _Worker(record))
    return ["worker"]


def _bench(monkeypatch: pytest.MonkeyPatch, record: Callable[[], None]) -> list[str]:
    def run_benchmarks(*args: object, **kwargs: object) -> dict[str, Any]:
        record()
        return {"goals": []}

    monkeypatch.setattr(veridiag.bench, "run_benchmarks", run_benchmarks)
    return ["bench", "--json", "--only", "tools"]


@pytest.mark.parametrize("command", [_serve, _worker, _bench], ids=["serve", "worker", "bench"])
def test_a_long_running_command_freezes_what_start_up_built(
    command: Callable[[pytest.MonkeyPatch, Callable[[], None]], list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[bool, int, int]] = []
    monkeypatch.setenv("VERIDIAG_HOME", str(tmp_path))
    arguments = command(
        monkeypatch, lambda: seen.append((gc.isenabled(), gc.get_freeze_count(), len(gc.get_objects())))
    )
    assert gc.isenabled() and gc.get_freeze_count() == 0
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 0, result.output
    [(enabled, frozen, tracked)] = seen
    # Everything start-up made is frozen: what a full pass still walks is a small remainder.
    assert enabled and tracked * 20 < frozen, (enabled, frozen, tracked)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_the_entry_point_runs_no_collector_pass_while_the_command_line_loads(tmp_path: Path) -> None:
    """``veridiag`` (``veridiag.__main__``) pauses the collector while typer, rich, pydantic and the
    command's modules load and its arguments are read, and freezes what they built when the
    command starts: no pass walks them, and the command runs with the collector on."""
    probe = (
        "import atexit, gc, sys\n"
        "from veridiag.__main__ import main\n"
        "passes = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and passes.append(gc.get_freeze_count()))\n"
        "atexit.register(lambda: print(len(passes), passes.count(0), gc.isenabled(), gc.get_freeze_count() > 0,"
        " file=sys.stderr))\n"
        "sys.argv = ['veridiag', 'rules', '--json']\n"
        "main()\n"
    )
    env = {**os.environ, "VERIDIAG_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout), "the command ran"
    _passes, unfrozen, enabled, frozen = done.stderr.split()[-4:]
    assert unfrozen == "0" and enabled == "True" and frozen == "True", done.stderr[-500:]
