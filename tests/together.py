"""Several Python processes doing one thing at the same moment: each imports and prepares,
says ``ready``, and all are let go together — the start-up races of several servers."""

from __future__ import annotations

import subprocess
import sys


def run_together(prepare: str, act: str, args: list[str], count: int = 4) -> list[str]:
    """Runs ``count`` processes of ``prepare`` (its code), then — once every one is ready —
    ``act``; returns what each printed last. A process that fails fails the caller's test."""
    code = f"import sys\n{prepare}\nprint('ready', flush=True)\nsys.stdin.readline()\n{act}\n"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    for process in processes:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line == "ready", process.communicate()[1]
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    printed = []
    for process in processes:
        out, problem = process.communicate(timeout=180)
        assert process.returncode == 0, problem
        printed.append(out.strip().splitlines()[-1] if out.strip() else "")
    return printed
