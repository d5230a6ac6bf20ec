"""Commands import what they run: ``veridiag --help`` loads no store, migrations, web server,
model client or Chinese tokenizer, and a package's re-exports load only when used."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from veridiag.cli import data
from veridiag.ingest import importers
from veridiag.store import open_store

#: The Makefile's demo question.
DEMO_QUESTION = "订单123支付失败，帮我看看是什么原因"

#: What a help text must not pay for (each costs 100–300 ms on this machine).
HEAVY = ("sqlalchemy.orm", "alembic", "fastapi", "pydantic_ai", "rjieba", "mcp", "clickhouse_connect", "chdb")

#: Packages whose ``__init__`` re-exports lazily (``veridiag._lazy``) → a module it must not load.
LAZY_PACKAGES = {
    "veridiag.api": "veridiag.api.app",
    "veridiag.contracts": "veridiag.contracts.executor_v2",
    "veridiag.mcp_server": "veridiag.mcp_server.http",
    "veridiag.text": "veridiag.text.when",
    "veridiag.tools": "veridiag.tools.runner",
}


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY or m.startswith("sqlalchemy.orm"))


def cli_imports(*args: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules ``python -m veridiag ARGS`` imported (read from ``-X importtime``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "veridiag", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "veridiag.cli.app" in imported, "the importtime report was read"
    return imported


def test_help_imports_none_of_the_heavy_libraries() -> None:
    imported = cli_imports("--help")
    assert not _heavy(imported)
    assert "veridiag.contracts.executor_v2" not in imported, "the schema names are listed without the models"
    # Small ones that only some commands use (a few ms each: --help is within ~1 ms of its goal).
    assert not {"socket", "sqlite3", "rich.progress"} & imported


@pytest.mark.parametrize("package", sorted(LAZY_PACKAGES))
def test_a_lazy_package_loads_a_submodule_only_when_its_name_is_used(package: str) -> None:
    probe = f"import json, sys, {package} as p; before = set(sys.modules); [getattr(p, n) for n in p.__all__]; "
    probe += "print(json.dumps([sorted(before), sorted(set(sys.modules))]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    before, after = (set(names) for names in json.loads(done.stdout))
    assert LAZY_PACKAGES[package] not in before
    assert LAZY_PACKAGES[package] in after


@pytest.mark.parametrize("package", sorted(LAZY_PACKAGES))
def test_a_lazy_package_exports_what_it_lists_and_nothing_else(package: str) -> None:
    module = importlib.import_module(package)
    assert all(getattr(module, name) is not None for name in module.__all__)
    with pytest.raises(AttributeError, match="no attribute 'not_exported'"):
        module.not_exported  # noqa: B018


def test_an_up_to_date_store_opens_without_alembic(tmp_path: Path) -> None:
    """Every start that opens the store checks its schema: one query, not alembic (~150 ms)."""
    open_store(f"sqlite:///{tmp_path / 'store.db'}")  # created and migrated here
    probe = "import sys; from veridiag.store import open_store; open_store(sys.argv[1]); "
    probe += "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))"
    done = subprocess.run(
        [sys.executable, "-c", probe, f"sqlite:///{tmp_path / 'store.db'}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_an_offline_diagnosis_loads_no_web_server_model_client_or_unneeded_tables(tmp_path: Path) -> None:
    env = {**os.environ, "VERIDIAG_HOME": str(tmp_path), "VERIDIAG_ENGINE": "offline"}
    env.pop("VERIDIAG_DATABASE_URL", None)
    cli_imports("ask", "--json", DEMO_QUESTION, env=env)  # creates the store
    imported = cli_imports("ask", "--json", DEMO_QUESTION, env=env)
    assert "veridiag.pipeline.service" in imported, "the diagnosis ran"
    unneeded = ("alembic", "fastapi", "limits", "pydantic_ai", "openai", "cn2an", "confusable_homoglyphs", "dateparser")
    assert not sorted(m for m in imported if m.split(".")[0] in unneeded)
    # Nor what only another backend or writing data needs: an HTTP client (Loki, Prometheus), the
    # log template miner, the demo generator and its models (the first run above loaded the demo).
    writing = ("httpx2", "drain3", "veridiag.tools.templates", "veridiag.tools.demo", "clickhouse_connect", "chdb")
    assert not sorted(m for m in imported if any(m == w or m.startswith(f"{w}.") for w in writing))
    # The store is Core tables: no ORM (~120 ms) and, on SQLite, no PostgreSQL dialect (~50 ms).
    assert not sorted(m for m in imported if m.startswith(("sqlalchemy.orm", "sqlalchemy.dialects.postgresql")))
    # Its start-up objects stay frozen through the exit (no collection closes a connection):
    # it closed them itself, so SQLite removed its WAL and shared-memory files.
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(("-wal", "-shm"))) == []


def test_an_offline_diagnosis_builds_no_validator_for_what_only_other_commands_read(tmp_path: Path) -> None:
    """The audit chain, chat reports, the API's progress pages and a failed run's record are
    built on first use (``contracts/build.py``): a diagnosis that completes uses none of them."""
    probe = (
        "import atexit, sys\n"
        "from veridiag.contracts.audit import AuditChain, FailedEvaluation\n"
        "from veridiag.contracts.delivery import AnswerReport, DeliveryAttempt\n"
        "from veridiag.contracts.session import SessionProgress\n"
        "from veridiag.pipeline.progress import DiagnosisFailed\n"
        "models = (AuditChain, FailedEvaluation, AnswerReport, DeliveryAttempt, SessionProgress, DiagnosisFailed)\n"
        "built = lambda: [m.__name__ for m in models if m.__pydantic_complete__]\n"
        "atexit.register(lambda: print('BUILT', built(), file=sys.stderr))\n"
        "from veridiag.cli.app import main\n"
        "sys.argv = ['veridiag', 'ask', '--json', sys.argv[1]]\n"
        "main()\n"
    )
    env = {**os.environ, "VERIDIAG_HOME": str(tmp_path), "VERIDIAG_ENGINE": "offline"}
    env.pop("VERIDIAG_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", probe, DEMO_QUESTION], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["verdict"], "the diagnosis completed"
    assert done.stderr.split("BUILT")[-1].strip() == "[]"


def test_the_startup_benchmark_times_help_and_a_diagnosis_against_bare_python() -> None:
    from veridiag.bench import startup

    result = startup.run(repeats=1)
    assert 0 < result.python_ms < result.help_ms < result.ask_ms
    assert result.help_ratio == pytest.approx(result.help_ms / result.python_ms, rel=0.01)
    assert result.ask_ratio == pytest.approx(result.ask_ms / result.python_ms, rel=0.01)
    # The floor: the installed packages a diagnosis imports, and only those, imported alone.
    assert {"pydantic", "rjieba", "typer"} <= set(result.ask_libraries)
    assert not {"veridiag", "json", "sqlite3", "fastapi", "alembic"} & set(result.ask_libraries)
    assert result.python_ms < result.ask_libraries_ms < result.ask_ms
    assert result.ask_libraries_ratio == pytest.approx(result.ask_libraries_ms / result.python_ms, rel=0.01)


def test_the_cli_offers_the_metric_formats_the_importer_reads() -> None:
    assert get_args(data.MetricFormat) == get_args(importers.MetricFormat)


def test_a_command_run_builds_only_itself(tmp_path: Path) -> None:
    """typer builds each registered command from its signature on every start; a process that runs
    one command builds that one (``cli/app.py`` ``_only``), and ``--help`` still lists them all."""
    probe = (
        "import sys, typer.main\n"
        "built = []\n"
        "original = typer.main.get_command_from_info\n"
        "typer.main.get_command_from_info = lambda *args, **kw: built.append(1) or original(*args, **kw)\n"
        "from veridiag.cli.app import main\n"
        "sys.argv = ['veridiag', *sys.argv[1:]]\n"
        "import atexit\n"
        "atexit.register(lambda: print('BUILT', len(built), file=sys.stderr))\n"
        "main()\n"
    )
    env = {**os.environ, "VERIDIAG_HOME": str(tmp_path)}
    counts = {}
    for args in (["rules", "--json"], ["--help"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120, env=env, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        counts[args[0]] = int(done.stderr.split("BUILT")[-1].split()[0])
    assert counts["rules"] == 1
    assert counts["--help"] > 20
