"""SIGTERM stops veridiag while it is still starting, also as a container's first process (issue
30): PID 1 ignores a signal it does not handle, and ``serve`` installs its handler only once it
listens — a pod deleted during start-up waited out its whole grace period."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.first_process import first_process, terminate
from tests.ports import free_port


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIDIAG_")}
    return env | {"VERIDIAG_HOME": str(home), "VERIDIAG_ENGINE": "offline"}


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["worker"], ["ask", "订单123支付失败"]])
def test_sigterm_during_startup_stops_the_first_process_of_a_pid_namespace(tmp_path: Path, command: list[str]) -> None:
    with first_process(command, _env(tmp_path), tmp_path) as wrapper:
        time.sleep(0.15)  # inside the imports (start-up takes ~0.7 s and more)
        terminate(wrapper)
        assert wrapper.wait(timeout=15) == 128 + signal.SIGTERM


def test_serve_stopped_by_sigterm_once_up_exits_cleanly_as_the_first_process(tmp_path: Path) -> None:
    """Once it serves, uvicorn stops it on SIGTERM and raises the signal again when done: as a
    container's first process that ends with 0 (the image smoke test's check), not with the start-up
    handler's 143."""
    port = free_port()
    with first_process(["serve", "--port", str(port)], _env(tmp_path), tmp_path) as wrapper:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", headers={"Host": "localhost"}, timeout=2)
                if health.status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("serve never answered /healthz")
        terminate(wrapper)
        assert wrapper.wait(timeout=30) == 0
