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

``ask_libraries``: the floor under ``ask`` that veridiag's own code cannot lower. The
third-party packages a demo ``ask`` imports (read from ``-X importtime`` after the warm-up)
are imported alone, by a bare interpreter, in the same rounds: what loading them costs
before any of veridiag's modules, models or its diagnosis run.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import sysconfig
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


def _installed_packages(names: set[str]) -> list[str]:
    """The top-level ``names`` that are installed packages (in site-packages): not the standard
    library, not veridiag itself (an editable install lives in its source tree)."""
    roots = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    found = []
    for name in sorted(names):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        origin = spec.origin if spec is not None else None
        if origin and any(root in Path(origin).resolve().parents for root in roots):
            found.append(name)
    return found


def _imported_modules(arguments: list[str], home: Path, env: dict[str, str]) -> set[str]:
    """The top-level modules ``python -X importtime ARGUMENTS`` imports."""
    traced = [sys.executable, "-X", "importtime", *arguments]
    done = subprocess.run(traced, cwd=home, env=env, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(traced)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def _ask_libraries(arguments: list[str], home: Path, env: dict[str, str]) -> list[str]:
    """The installed packages ``veridiag ARGUMENTS`` imports that a bare interpreter does not
    (``site`` may load a ``.pth`` hook's module in both)."""
    ask = _imported_modules(["-m", "veridiag", *arguments], home, env)
    bare = _imported_modules(["-c", "pass"], home, env)
    return _installed_packages(ask - bare - {"veridiag"})


class StartupBench(BaseModel):
    """Medians of whole-process wall time (ms), and their ratios to the bare interpreter."""

    python_ms: float
    help_ms: float
    help_ratio: float
    ask_ms: float
    ask_ratio: float
    #: The installed packages ``ask`` imports, imported alone by a bare interpreter: the floor.
    ask_libraries_ms: float
    ask_libraries_ratio: float
    ask_libraries: list[str]
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
        libraries = _ask_libraries(["ask", DEMO_QUESTION], home, env)
        commands["libraries"] = [sys.executable, "-c", f"import {', '.join(libraries)}" if libraries else "pass"]
        _wall_ms(commands["libraries"], home, env)
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
        ask_libraries_ms=round(medians["libraries"], 1),
        ask_libraries_ratio=round(medians["libraries"] / medians["python"], 2),
        ask_libraries=libraries,
        repeats=repeats,
        load_1m=round(os.getloadavg()[0], 2),
    )
