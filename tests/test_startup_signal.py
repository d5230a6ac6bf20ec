"""SIGTERM stops veridiag while it is still starting, also as a container's first process (issue
30): PID 1 ignores a signal it does not handle, and ``serve`` installs its handler only once it
listens — a pod deleted during start-up waited out its whole grace period."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.ports import free_port


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["worker"], ["ask", "订单123支付失败"]])
def test_sigterm_during_startup_stops_the_first_process_of_a_pid_namespace(tmp_path: Path, command: list[str]) -> None:
    unshare = shutil.which("unshare")
    assert unshare, "util-linux's unshare"
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIDIAG_")}
    env |= {"VERIDIAG_HOME": str(tmp_path), "VERIDIAG_ENGINE": "offline"}
    wrapper = subprocess.Popen(
        [unshare, "--pid", "--fork", "--kill-child=SIGKILL", sys.executable, "-m", "veridiag", *command],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        children = Path(f"/proc/{wrapper.pid}/task/{wrapper.pid}/children")
        deadline = time.monotonic() + 10
        while not children.read_text().split() and time.monotonic() < deadline:
            time.sleep(0.01)
        (child,) = (int(p) for p in children.read_text().split())
        time.sleep(0.15)  # inside the imports (start-up takes ~0.7 s and more)
        os.kill(child, signal.SIGTERM)
        assert wrapper.wait(timeout=15) == 128 + signal.SIGTERM
    finally:
        wrapper.kill()
        wrapper.wait()


def test_serve_stopped_by_sigterm_once_up_exits_cleanly_as_the_first_process(tmp_path: Path) -> None:
    """Once it serves, uvicorn stops it on SIGTERM and raises the signal again when done: as a
    container's first process that ends with 0 (the image smoke test's check), not with the start-up
    handler's 143."""
    unshare = shutil.which("unshare")
    assert unshare, "util-linux's unshare"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIDIAG_")}
    env |= {"VERIDIAG_HOME": str(tmp_path), "VERIDIAG_ENGINE": "offline"}
    wrapper = subprocess.Popen(
        [
            unshare,
            "--pid",
            "--fork",
            "--kill-child=SIGKILL",
            sys.executable,
            "-m",
            "veridiag",
            "serve",
            "--port",
            str(port),
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if (
                    httpx.get(f"http://127.0.0.1:{port}/healthz", headers={"Host": "localhost"}, timeout=2).status_code
                    == 200
                ):
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("serve never answered /healthz")
        (child,) = (int(p) for p in Path(f"/proc/{wrapper.pid}/task/{wrapper.pid}/children").read_text().split())
        os.kill(child, signal.SIGTERM)
        assert wrapper.wait(timeout=30) == 0
    finally:
        wrapper.kill()
        wrapper.wait()
