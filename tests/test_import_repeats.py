"""Rows a file states twice are repeats within the file, not rows "already stored": a first
import into a fresh home has none already stored, whatever the file repeats; a second import
has every distinct row already stored, and the same repeats."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from veridiag.cli.app import app
from veridiag.ingest.importers import ImportReport, import_changes, import_metrics
from veridiag.tools.backends.embedded import EmbeddedEnvironment

#: Minutes of one hour, each stated once or more (a repeated row states the same value).
rows = st.lists(st.integers(0, 59), min_size=1, max_size=80)


def _metrics_csv(folder: Path, minutes: list[int]) -> Path:
    path = folder / "latency.csv"
    body = "".join(f"2026-01-05T10:{m:02d}:00Z,{m + 0.5}\n" for m in minutes)
    path.write_text("timestamp,latency_ms\n" + body, encoding="utf-8")
    return path


def _changes_csv(folder: Path, minutes: list[int]) -> Path:
    path = folder / "changes.csv"
    body = "".join(f"2026-01-05T10:{m:02d}:00Z,api,deploy,v{m}\n" for m in minutes)
    path.write_text("timestamp,service,kind,description\n" + body, encoding="utf-8")
    return path


def _check(first: ImportReport, again: ImportReport, minutes: list[int]) -> None:
    distinct, repeats = len(set(minutes)), len(minutes) - len(set(minutes))
    assert (first.imported, first.duplicates, first.in_file) == (distinct, repeats, repeats), "a fresh import"
    assert (again.imported, again.duplicates, again.in_file) == (0, len(minutes), repeats), "the same file again"


@given(minutes=rows)
def test_a_metric_files_repeated_points_are_repeats_within_it(minutes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = EmbeddedEnvironment(Path(folder) / "e.db", load_demo=False)
        path = _metrics_csv(Path(folder), minutes)
        first = import_metrics(env, path, service="api")
        again = import_metrics(env, path, service="api")
        env.close()
    _check(first, again, minutes)


@given(minutes=rows)
def test_a_change_feeds_repeated_changes_are_repeats_within_it(minutes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = EmbeddedEnvironment(Path(folder) / "e.db", load_demo=False)
        path = _changes_csv(Path(folder), minutes)
        first = import_changes(env, path, service=None)
        again = import_changes(env, path, service=None)
        env.close()
    _check(first, again, minutes)


def test_the_cli_says_repeats_within_the_file_and_not_already_stored(tmp_path: Path) -> None:
    path = _metrics_csv(tmp_path, [0, 1, 1, 2, 2])
    env = {"VERIDIAG_HOME": str(tmp_path / "home"), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}
    first = CliRunner().invoke(app, ["data", "import-metrics", str(path), "--service", "api"], env=env)
    assert first.exit_code == 0, first.output
    assert "imported 3 new points (2 rows repeated within the file)" in first.stdout
    assert "already stored" not in first.stdout
    again = CliRunner().invoke(app, ["data", "import-metrics", str(path), "--service", "api"], env=env)
    assert "imported 0 new points (3 already stored; 2 rows repeated within the file)" in again.stdout
