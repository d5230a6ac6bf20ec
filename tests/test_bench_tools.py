"""The tools benchmark as CI runs it: small stores, built once into a cache and reused."""

from __future__ import annotations

from pathlib import Path

import pytest

from veridiag.bench import tools


def test_a_short_run_reports_both_stores_and_reuses_them(tmp_path: Path) -> None:
    first = tools.run(lines=1500, runbooks=20, repeats=1, large_lines=3000, cache=tmp_path)
    assert first.log_store_built_this_run is True
    assert first.log_lines == 1500 and first.log_lines_10m == 3000
    outcomes = first.query_logs_outcomes
    assert len(outcomes) == len(tools.QUERIES) and "error" not in outcomes and "ok" in outcomes
    for value in (
        first.query_logs_p50_ms,
        first.query_logs_p99_ms,
        first.query_logs_10m_p50_ms,
        first.query_logs_10m_p99_ms,
    ):
        assert value is not None and value > 0
    assert len(first.query_logs_p50_by_query) == len(tools.QUERIES), "each query of the mix is told apart"
    assert first.query_logs_10m_p50_by_query is not None and len(first.query_logs_10m_p50_by_query) == len(
        tools.QUERIES
    )
    again = tools.run(lines=1500, runbooks=20, repeats=1, large_lines=None, cache=tmp_path)
    assert again.log_store_built_this_run is False
    assert again.import_seconds == first.import_seconds, "the build's own import time, kept beside it"
    assert again.query_logs_10m_p99_ms is None and again.query_logs_10m_p50_by_query is None


def test_a_store_is_rebuilt_when_the_generator_changes_or_its_build_did_not_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _env, _build, built = tools.log_store(800, tmp_path)
    assert built
    monkeypatch.setattr(tools, "GENERATOR_VERSION", tools.GENERATOR_VERSION + 1)
    _env, _build, built = tools.log_store(800, tmp_path)
    assert built, "another generator: another store"
    for record in tmp_path.glob("*.json"):
        record.unlink()  # as if the build had been stopped
    _env, build, built = tools.log_store(800, tmp_path)
    assert built and build.lines == 800, "a store without its record is built again, not added to"


def test_the_cache_folder_is_configurable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VERIDIAG_BENCH_CACHE", str(tmp_path))
    assert tools.cache_folder() == tmp_path
    monkeypatch.delenv("VERIDIAG_BENCH_CACHE")
    assert tools.cache_folder() == Path.home() / ".cache" / "veridiag" / "bench"
