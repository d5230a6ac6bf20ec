"""A veridiag command run as the first process of a new PID namespace — a container's PID 1, which
ignores every signal it does not handle — and stopped with SIGTERM from outside, as a runtime
stops a container (``unshare``, root in CI)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def first_process(args: list[str], env: dict[str, str], cwd: Path, **popen: Any) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m veridiag *args`` as PID 1 of a new namespace: the ``unshare`` wrapping it is
    yielded (its exit status is the command's), and the command is killed with it, whatever the test."""
    unshare = shutil.which("unshare")
    assert unshare, "util-linux's unshare"
    command = [unshare, "--pid", "--fork", "--kill-child=SIGKILL", sys.executable, "-m", "veridiag", *args]
    popen.setdefault("stdout", subprocess.DEVNULL)
    popen.setdefault("stderr", subprocess.DEVNULL)
    wrapper = subprocess.Popen(command, env=env, cwd=cwd, **popen)
    try:
        yield wrapper
    finally:
        wrapper.kill()
        wrapper.wait()


def terminate(wrapper: subprocess.Popen[bytes], *, within: float = 10) -> None:
    """SIGTERM to the namespace's first process (the wrapper's child), once it exists."""
    children = Path(f"/proc/{wrapper.pid}/task/{wrapper.pid}/children")
    deadline = time.monotonic() + within
    while not children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.01)
    (child,) = (int(p) for p in children.read_text().split())
    os.kill(child, signal.SIGTERM)
