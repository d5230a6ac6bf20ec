"""Start-up benchmark (issue 15): how long a person waits for ``veridiag --help`` and for one
demo diagnosis, each in a fresh process, against a bare interpreter in the same run.

Wall time of whole subprocesses, medians over ``repeats`` rounds; each round runs the three
commands one after another, so load from other processes falls on all three alike. The bare
baseline is ``python -c pass`` with the interpreter veridiag runs on. ``ask`` asks the
Makefile's demo question with the offline engine, in a temporary home whose store and
embedded demo data one untimed warm-up run created: a user's steady state, not the first
run's migration. The commands see no ``VERIDIAG_*`` variable and no ``veridiag.yaml`` of the
caller, so a configured model or database cannot change what is timed. Bytecode is cached as
an installed package has it (pip compiles on install), in the temporary directory
(``PYTHONPYCACHEPREFIX``) even where ``PYTHONDONTWRITEBYTECODE`` is set: otherwise every run
would compile veridiag's own modules from source, which no user's start does.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

#: The Makefile's ``DEMO_QUESTION``.
DEMO_QUESTION = "订单123支付失败，帮我看看是什么原因"


def _veridiag() -> list[str]:
    """The installed ``veridiag`` script beside this interpreter, else ``python -m veridiag``."""
    script = Path(sys.executable).with_name("veridiag")
    return [str(script)] if script.exists() else [sys.executable, "-m", "veridiag"]


def _wall_ms(command: list[str], home: Path, env: dict[str, str]) -> float:
    start = time.perf_counter_ns()
    done = subprocess.run(command, cwd=home, env=env, capture_output=True, text=True, timeout=300, check=False)
    elapsed = (time.perf_counter_ns() - start) / 1e6
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return elapsed


class StartupBench(BaseModel):
    """Medians of whole-process wall time (ms), and their ratios to the bare interpreter."""

    python_ms: float
    help_ms: float
    help_ratio: float
    ask_ms: float
    ask_ratio: float
    repeats: int
    #: The machine's 1-minute load average when the run ended: how busy it was around the timing.
    load_1m: float


def run(repeats: int = 10) -> StartupBench:
    veridiag = _veridiag()
    commands = {
        "python": [sys.executable, "-c", "pass"],
        "help": [*veridiag, "--help"],
        "ask": [*veridiag, "ask", DEMO_QUESTION],
    }
    with tempfile.TemporaryDirectory(prefix="veridiag-startup-") as tmp:
        home = Path(tmp)
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("VERIDIAG_") and key != "PYTHONDONTWRITEBYTECODE"
        }
        env |= {
            "VERIDIAG_HOME": str(home / "home"),
            "VERIDIAG_ENGINE": "offline",
            "PYTHONPYCACHEPREFIX": str(home / "pycache"),
        }
        for command in commands.values():  # warm-up: the store, the embedded data, the bytecode
            _wall_ms(command, home, env)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(repeats):
            for name, command in commands.items():
                samples[name].append(_wall_ms(command, home, env))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return StartupBench(
        python_ms=round(medians["python"], 1),
        help_ms=round(medians["help"], 1),
        help_ratio=round(medians["help"] / medians["python"], 2),
        ask_ms=round(medians["ask"], 1),
        ask_ratio=round(medians["ask"] / medians["python"], 2),
        repeats=repeats,
        load_1m=round(os.getloadavg()[0], 2),
    )
