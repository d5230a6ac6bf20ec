"""The published baseline of ``veridiag bench --only rca``: RCAEval's BARO and n-sigma.

RCAEval (on PyPI) imports its methods eagerly on Python 3.11 and pins numpy < 2 for Python
3.12, so it does not go into veridiag's environment: ``ensure_venv`` builds a Python 3.12
virtual environment of its own once, under the bench cache (``VERIDIAG_RCAEVAL_VENV``, else
``~/.cache/veridiag/rcaeval-py312``), from the pinned ``rcaeval-requirements.txt`` through the
machine's configured package index, and rebuilds it when that file changes. ``run_day`` hands
the standalone ``rcaeval_job.py`` one day's pod metric files and cases and reads back, per
case, each method's ranking of ``<service>_<metric>`` columns.

The window around each injection. RCAEval's ``main.py`` cuts a case to ``--length`` minutes'
worth of rows on each side of the inject time (``tail`` / ``head`` of ``length * 60 // 2``
rows; its README reproduces the paper's tables with ``--length 20``: 600 rows a side, which at
its datasets' one-second metric sampling is 10 minutes). Nezha's metrics are one row a minute,
so a case here is the 10 minutes before the injection (normal) and the 10 minutes from it
(anomalous), with one change for how Nezha is laid out: RCAEval's cases hold one fault each,
while Nezha injects every 4–9 minutes (each fault moves the metrics for about 4), so the
anomalous side ends at the next injection — past it, a method would be ranking the next
fault's culprit. The normal side is left as RCAEval would take it: an earlier fault may lie in
it, as it lies in the data; BARO's median and interquartile range are built to shrug that off,
n-sigma's mean and standard deviation are not, which is part of what the two show.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ValidationError

from veridiag.bench.nezha import Fault, NezhaDay
from veridiag.bench.rca_score import ranked_services
from veridiag.bench.rca_words import rca_words
from veridiag.bench.rcaeval_job import CaseJob, Job, MetricFile

Progress = Callable[[str], None]

METHODS = ("baro", "nsigma")
WINDOW = timedelta(minutes=10)
VENV_VARIABLE = "VERIDIAG_RCAEVAL_VENV"
PYTHON_VARIABLE = "VERIDIAG_RCAEVAL_PYTHON"
#: Nezha's pod files: epoch seconds (the series read are ``rca.yaml``'s ``baseline_columns``).
TIME_COLUMN = "TimeStamp"
_STAMP = "veridiag-baseline.json"
_PIP_NEWS = ("Collecting ", "Downloading ", "Installing collected packages", "Successfully installed")


class BaselineUnavailableError(RuntimeError):
    """The baseline cannot run here (no Python 3.12, the package index unreachable, its process
    failed); the message says what and what to do."""


class Venv(BaseModel):
    path: Path
    python: str
    #: This run built it (else an earlier run did, and ``seconds`` is what that took).
    created: bool
    seconds: float


class MethodRanking(BaseModel):
    #: RCAEval's ranking of ``<service>_<metric>`` columns, most suspect first.
    ranks: list[str]
    #: The services those columns stand for, in order of first appearance.
    services: list[str]
    seconds: float
    error: str | None = None


class BaselineCase(BaseModel):
    id: str
    normal_rows: int
    anomal_rows: int
    methods: dict[str, MethodRanking]


class BaselineDay(BaseModel):
    day: str
    versions: dict[str, str]
    columns: int
    unreadable_rows: int
    unreadable_values: int
    load_seconds: float
    #: Wall seconds of the whole child process (start-up and imports included).
    process_seconds: float
    cases: list[BaselineCase]


def venv_folder() -> Path:
    configured = os.environ.get(VENV_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "veridiag" / "rcaeval-py312"


def requirements_text() -> str:
    return files("veridiag.bench").joinpath("rcaeval-requirements.txt").read_text(encoding="utf-8")


def find_python() -> Path:
    """A Python 3.12: ``VERIDIAG_RCAEVAL_PYTHON``, else ``python3.12`` on the PATH, else one
    pyenv installed."""
    configured = os.environ.get(PYTHON_VARIABLE)
    candidates = [Path(configured).expanduser()] if configured else []
    if not configured:
        on_path = shutil.which("python3.12")
        candidates += [Path(on_path)] if on_path else []
        pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
        candidates += sorted(pyenv.glob("versions/3.12*/bin/python3.12"), reverse=True)
    for candidate in candidates:
        if _is_312(candidate):
            return candidate
    where = f"{PYTHON_VARIABLE}={configured} is not a Python 3.12" if configured else "no python3.12 found"
    raise BaselineUnavailableError(
        f"{where}: RCAEval's methods run on Python 3.12 in an environment of their own; "
        f"install Python 3.12 or set {PYTHON_VARIABLE} to its interpreter"
    )


def _is_312(python: Path) -> bool:
    try:
        done = subprocess.run(
            [str(python), "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except OSError:
        return False
    return done.returncode == 0 and done.stdout.strip() == "True"


def ensure_venv(folder: Path | None = None, progress: Progress | None = None) -> Venv:
    """The baseline's environment, built once: reused while the requirements file it was built
    from is unchanged, rebuilt from scratch otherwise."""
    folder = folder or venv_folder()
    say = progress or (lambda _text: None)
    wanted = hashlib.sha256(requirements_text().encode()).hexdigest()
    stamp = folder / _STAMP
    python = folder / "bin" / "python"
    built = _built(stamp) if python.exists() else None
    if built is not None and built.requirements == wanted:
        return Venv(path=folder, python=built.python, created=False, seconds=built.seconds)
    base = find_python()
    started = time.perf_counter()
    if folder.exists():
        say("removing the baseline environment built from other requirements")
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    say(f"creating the baseline environment ({base}) in {folder}")
    _checked([str(base), "-m", "venv", str(folder)], "python3.12 -m venv")
    with_requirements = folder / "requirements.txt"
    with_requirements.write_text(requirements_text(), encoding="utf-8")
    _pip_install(python, with_requirements, say)
    version = subprocess.run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    seconds = round(time.perf_counter() - started, 1)
    record = _Stamp(requirements=wanted, python=version, seconds=seconds, built=datetime.now(UTC))
    stamp.write_text(record.model_dump_json(), encoding="utf-8")
    return Venv(path=folder, python=version, created=True, seconds=seconds)


class _Stamp(BaseModel):
    """What the environment was built from, written once it works."""

    requirements: str
    python: str
    seconds: float
    built: datetime


def _built(stamp: Path) -> _Stamp | None:
    try:
        return _Stamp.model_validate_json(stamp.read_bytes())
    except (OSError, ValidationError):
        return None  # none, or not ours: built again


def _checked(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise BaselineUnavailableError(f"{what} failed: {_tail(done.stderr or done.stdout)}")


def _pip_install(python: Path, requirements: Path, say: Progress) -> None:
    """pip through the machine's own configuration (index, certificates); its progress lines
    passed on as they come."""
    command = [str(python), "-m", "pip", "install", "--progress-bar", "off", "--disable-pip-version-check"]
    command += ["-r", str(requirements)]
    lines: list[str] = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as child:
        assert child.stdout is not None
        for line in child.stdout:
            lines.append(line.rstrip())
            if line.startswith(_PIP_NEWS):
                say(f"baseline environment: {line.split(' (from ')[0].strip()[:100]}")
    if child.returncode != 0:
        raise BaselineUnavailableError(
            "pip could not install the baseline's pinned packages (rcaeval-requirements.txt) from the "
            f"configured package index — is it reachable? pip said: {_tail(chr(10).join(lines))}"
        )


def _tail(text: str, lines: int = 6) -> str:
    kept = [line for line in text.strip().splitlines() if not line.startswith("WARNING: Location")]
    return " | ".join(kept[-lines:]) or "(no output)"


def case_windows(faults: list[Fault], window: timedelta = WINDOW) -> list[CaseJob]:
    """Each fault's case: ``window`` before the injection, and ``window`` after it cut at the
    next injection (see the module's docstring). ``faults`` in time order."""
    size = int(window.total_seconds())
    cases = []
    for index, fault in enumerate(faults):
        inject = fault.inject_epoch
        end = inject + size
        later = [other.inject_epoch for other in faults[index + 1 :] if other.inject_epoch > inject]
        if later:
            end = min(end, later[0])
        cases.append(CaseJob(id=fault.id, inject=inject, normal_start=inject - size, anomal_end=end))
    return cases


def job_for(day: NezhaDay, methods: tuple[str, ...] = METHODS) -> Job:
    return Job(
        dataset=f"nezha-{day.system}",
        methods=list(methods),
        metrics=[MetricFile(service=pod.service, path=str(pod.path.resolve())) for pod in day.metrics],
        cases=case_windows(day.faults),
        time_column=TIME_COLUMN,
        columns=list(rca_words().baseline_columns),
    )


def script_path() -> Path:
    return Path(__file__).with_name("rcaeval_job.py")


def run_day(venv: Venv, day: NezhaDay, *, timeout: float = 1800) -> BaselineDay:
    """One day through the baseline's own process (``python -I``: nothing of veridiag, nor of
    the caller's ``PYTHONPATH``, can be imported there)."""
    job = job_for(day)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [str(venv.path / "bin" / "python"), "-I", str(script_path())],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BaselineUnavailableError(f"the baseline took over {timeout:.0f} s on {day.name}") from None
    elapsed = round(time.perf_counter() - started, 3)
    if done.returncode != 0:
        raise BaselineUnavailableError(f"the baseline's process failed on {day.name}: {_tail(done.stderr)}")
    try:
        output = _Output.model_validate_json(done.stdout)
    except ValidationError as exc:
        raise BaselineUnavailableError(f"the baseline's output on {day.name} is not its JSON: {exc}") from None
    services = day.services
    return BaselineDay(
        day=day.name,
        versions=output.versions,
        columns=output.columns,
        unreadable_rows=output.unreadable_rows,
        unreadable_values=output.unreadable_values,
        load_seconds=output.load_seconds,
        process_seconds=elapsed,
        cases=[
            BaselineCase(
                id=case.id,
                normal_rows=case.normal_rows,
                anomal_rows=case.anomal_rows,
                methods={
                    name: MethodRanking(
                        ranks=result.ranks,
                        services=ranked_services(result.ranks, services),
                        seconds=result.seconds,
                        error=result.error,
                    )
                    for name, result in case.methods.items()
                },
            )
            for case in output.cases
        ],
    )


class _Result(BaseModel):
    ranks: list[str]
    seconds: float
    error: str | None


class _Case(BaseModel):
    id: str
    normal_rows: int
    anomal_rows: int
    methods: dict[str, _Result]


class _Output(BaseModel):
    """What ``rcaeval_job.py`` prints (its ``Output``), checked as it is read back."""

    versions: dict[str, str]
    columns: int
    unreadable_rows: int
    unreadable_values: int
    load_seconds: float
    cases: list[_Case]
