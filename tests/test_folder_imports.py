"""Folders and several files in one import: per file what was taken and what was left and why,
idempotent, one bad file failing alone (issue 26: the nezha folders as shipped)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veridiag.cli.app import app
from veridiag.ingest.batch import import_metric_files
from veridiag.ingest.importers import ImportFailedError
from veridiag.tools import QueryMetricsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment

NEZHA = Path(__file__).parent / "fixtures" / "nezha"
BOUTIQUE = NEZHA / "onlineboutique" / "metric"
runner = CliRunner()


def home(tmp_path: Path) -> dict[str, str]:
    return {"VERIDIAG_HOME": str(tmp_path / "home"), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}


def test_the_boutique_folder_imports_with_a_reason_for_every_file_left(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    report = import_metric_files(env, [BOUTIQUE])
    by_name = {Path(f.path).name: f for f in report.files}
    assert list(by_name) == sorted(p.name for p in BOUTIQUE.glob("*.csv"))  # every file, in name order
    assert by_name["dependency.csv"].outcome == "skipped"
    assert "import-dependencies" in by_name["dependency.csv"].why
    for edges in ("source_50.csv", "destination_50.csv"):
        assert by_name[edges].outcome == "skipped"
        assert "caller_callee" in by_name[edges].why
    front = by_name["front_service.csv"].report
    assert front is not None
    assert front.services == ["frontend"]  # ServiceName=Frontend: the pods' spelling
    assert front.respelt == ["'Frontend' is the known service 'frontend'"]
    assert report.services == ["frontend", "recommendationservice"]
    assert sorted(m for s, m, _u in env.metrics("frontend") if "latency_p" in m)[:3] == [
        "latency_p50",
        "latency_p90",
        "latency_p95",
    ]
    assert not any("time" in m for _s, m, _u in env.metrics())

    again = import_metric_files(env, [BOUTIQUE])
    assert (again.imported, again.duplicates) == (0, report.imported)


def test_the_imported_points_are_the_files_values_at_the_files_times(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    import_metric_files(env, [NEZHA / "trainticket" / "metric"])
    out = env.query_metrics(
        QueryMetricsArgs(
            service="ts-order-service",
            metric="cpu_usage_rate",
            start="2023-01-29T08:41:00Z",
            end="2023-01-29T08:47:00Z",
        )
    )
    assert "2023-01-29T08:42:09Z 0.78%" in out.text  # row 2: 08:42:09.805279981, 0.7849721764386064
    stored = env._connection().execute(
        "SELECT ts, value FROM metric_point WHERE service='ts-order-service' AND metric='cpu_usage_rate' ORDER BY ts"
    )
    first_ts, first_value = next(iter(stored))
    assert first_ts == int(datetime(2023, 1, 29, 8, 41, 10, 171000, tzinfo=UTC).timestamp() * 1000)
    assert first_value == 1.5655674612329498


def test_service_overrides_the_pods_workload(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    pod_file = BOUTIQUE / "recommendationservice-6cfdd55578-gfj6q_metric.csv"
    report = import_metric_files(env, [pod_file], service="recs")
    assert report.services == ["recs"]
    assert report.files[0].report is not None and report.files[0].report.service_column == "--service recs"


def test_a_bad_file_fails_alone_and_the_command_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "metrics"
    shutil.copytree(BOUTIQUE, folder)
    (folder / "broken.csv").write_text("PodName,cpu\nfrontend-579b9bff58-t2dbm,1\n", encoding="utf-8")
    done = runner.invoke(app, ["data", "import-metrics", str(folder), "--json"], env=home(tmp_path))
    assert done.exit_code == 1
    report = json.loads(done.stdout)
    outcomes = {Path(f["path"]).name: f["outcome"] for f in report["files"]}
    assert outcomes["broken.csv"] == "failed"
    assert outcomes["frontend-579b9bff58-t2dbm_metric.csv"] == "imported"
    assert report["imported"] > 0 and "frontend" in report["services"]


def test_the_cli_reports_each_file_and_takes_several_paths(tmp_path: Path) -> None:
    files = [str(BOUTIQUE / "front_service.csv"), str(NEZHA / "trainticket" / "metric")]
    done = runner.invoke(app, ["data", "import-metrics", *files], env=home(tmp_path))
    assert done.exit_code == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("front_service.csv: ") and "Frontend from ServiceName" in line for line in lines)
    assert any(line.startswith("ts-order-service-5b67c48447-mv5hb_metric.csv: ") for line in lines)
    assert any("left out TimeStamp: not a series" in line for line in lines)
    assert "services: Frontend, ts-contacts-service, ts-order-service" in done.stdout

    single = runner.invoke(app, ["data", "import-metrics", str(BOUTIQUE / "dependency.csv")], env=home(tmp_path))
    assert single.exit_code != 0 and "import-dependencies" in single.stderr


def test_a_missing_path_fails_before_anything_is_read(tmp_path: Path) -> None:
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    with pytest.raises(ImportFailedError, match="nope: no such file or folder"):
        import_metric_files(env, [BOUTIQUE, tmp_path / "nope"])
    assert env.metrics() == []
