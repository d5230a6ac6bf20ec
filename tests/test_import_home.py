"""A home a user imports into holds their data alone: no demo beside it (unless asked for), its
clock the data's, and an import into a home that holds the demo says so and how to be rid of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from veridiag.cli.app import app

runner = CliRunner()
TRACES = Path(__file__).parent / "fixtures" / "nezha_days" / "trainticket-2023-01-29" / "trace" / "10_04_trace.csv"
NOTE = "also holds the bundled demo"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VERIDIAG_HOME", "VERIDIAG_EMBEDDED__LOAD_DEMO", "VERIDIAG_ENGINE", "VERIDIAG_LLM__DEFAULT__MODEL"):
        monkeypatch.delenv(name, raising=False)


def _files(folder: Path) -> dict[str, list[str]]:
    """Each import command with a small file of its kind (2014 data, services api and db)."""
    metrics = folder / "latency.csv"
    metrics.write_text(
        "timestamp,service,p99_ms\n"
        + "".join(
            f"2014-03-20T07:{m:02d}:00Z,api,{100 + m}\n2014-03-20T07:{m:02d}:00Z,db,{10 + m}\n" for m in range(30)
        ),
        encoding="utf-8",
    )
    logs = folder / "api.log"
    logs.write_text(
        "".join(f'{{"ts": "2014-03-20T07:{m:02d}:00Z", "level": "info", "msg": "GET /x 200"}}\n' for m in range(30)),
        encoding="utf-8",
    )
    edges = folder / "calls.csv"
    edges.write_text("caller,callee\napi,db\n", encoding="utf-8")
    changes = folder / "changes.csv"
    changes.write_text("timestamp,service,kind,description\n2014-03-20T07:00:00Z,db,deploy,db 1.2\n", encoding="utf-8")
    return {
        "import-metrics": [str(metrics)],
        "import-logs": [str(logs), "--service", "api"],
        "import-dependencies": [str(edges)],
        "import-traces": [str(TRACES)],
        "import-changes": [str(changes)],
    }


def _info(home: Path) -> dict[str, Any]:
    done = runner.invoke(app, ["data", "info", "--json"], env={"VERIDIAG_HOME": str(home)})
    assert done.exit_code == 0, done.output
    info: dict[str, Any] = json.loads(done.stdout)
    return info


@pytest.mark.parametrize(
    "command", ["import-metrics", "import-logs", "import-dependencies", "import-traces", "import-changes"]
)
def test_a_first_import_makes_a_home_without_the_demo(tmp_path: Path, command: str) -> None:
    home = tmp_path / "home"
    done = runner.invoke(app, ["data", command, *_files(tmp_path)[command]], env={"VERIDIAG_HOME": str(home)})
    assert done.exit_code == 0, done.output
    assert NOTE not in done.stderr
    info = _info(home)  # opened as `ask` opens it: the demo is loaded into an empty file only
    assert "order-service" not in info["services"], "the demo's shop beside the imported data"
    assert not str(info["now"]).startswith("2026-07-07"), "the demo's clock"


def test_ask_reads_a_time_on_the_imported_day(tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = _files(tmp_path)
    for command in ("import-metrics", "import-logs"):
        assert runner.invoke(app, ["data", command, *files[command]], env={"VERIDIAG_HOME": str(home)}).exit_code == 0
    assert _info(home)["services"] == ["api", "db"]
    done = runner.invoke(app, ["ask", "what happened to api at 07:01?", "--json"], env={"VERIDIAG_HOME": str(home)})
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)["final_answer"]
    assert "2014-03-20" in answer and "2026-07-07" not in answer
    assert "order-service" not in answer


def test_an_import_into_a_home_with_the_demo_says_so_and_how_to_be_rid_of_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert "order-service" in _info(home)["services"]  # any first use but an import loads the demo
    done = runner.invoke(
        app, ["data", "import-metrics", *_files(tmp_path)["import-metrics"], "--json"], env={"VERIDIAG_HOME": str(home)}
    )
    assert done.exit_code == 0, done.output
    json.loads(done.stdout)  # the note is on stderr: --json stays one document
    note = " ".join(done.stderr.split())
    assert NOTE in note and "--home" in note and "LOAD_DEMO=false" in note


def test_the_demo_asked_for_by_name_is_loaded_with_an_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIDIAG_EMBEDDED__LOAD_DEMO", "true")
    home = tmp_path / "home"
    done = runner.invoke(
        app, ["data", "import-metrics", *_files(tmp_path)["import-metrics"]], env={"VERIDIAG_HOME": str(home)}
    )
    assert done.exit_code == 0, done.output
    assert NOTE in " ".join(done.stderr.split())
    assert {"api", "order-service"} <= set(_info(home)["services"])
