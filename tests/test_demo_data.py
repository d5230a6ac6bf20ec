"""The demo environment is data: an incident is a folder, a bad file is named with its line and
field, and an added incident is diagnosed like the bundled ones — without a line of Python."""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from veridiag.cli.app import app
from veridiag.config import Settings
from veridiag.pipeline.factory import assemble
from veridiag.tools.demo import DemoDataError, DemoEnvironment, bundled_environment, load_environment

ADDED = Path(__file__).parent / "fixtures" / "demo_incidents"
ADDED_ID = "search-index-rebuild"
ADDED_SERVICE = "search-service"


@pytest.fixture
def incidents(tmp_path: Path) -> Path:
    """A folder of extra incidents holding a copy of the search incident (its YAML and runbook)."""
    folder = tmp_path / "incidents"
    shutil.copytree(ADDED, folder)
    return folder


def _edit(folder: Path, old: str, new: str) -> Path:
    path = folder / ADDED_ID / "incident.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text, f"the fixture no longer contains {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ("{kind: ramp, low: 900, high: 4200}", "{kind: ramp, low: 900}", "metrics.0.shape.ramp.high", "required"),
        ('window: ["13:10", "13:40"]', 'window: [13:10, "13:40"]', "window.0", "quoted"),
        ('window: ["13:10", "13:40"]', 'window: ["13:40", "13:10"]', "window", "start must come before its end"),
        ("hits={n200}", "hits={hits}", "logs.0.template", "unknown placeholder {hits}"),
        ("metric: http_error_percent, shape", "metric: http_errors, shape", "metrics.1.metric", "no series"),
        ("    level: ERROR", "    level: FATAL", "logs.1.level", "'ERROR'"),
        ('at: "13:06:20"', 'at: "17:06:20"', "changes.0.at", "outside the demo day"),
        ("id: search-index-rebuild", "id: payment-pool-exhaustion", "id", "already the id of"),
        ("kind: job\n", "kind: job\n    when: nightly\n", "changes.0.when", "Extra inputs are not permitted"),
        ("query_id: {kind: hex", "order: {kind: hex", "placeholders.order", "already defines"),
        (
            "{service: search-service, metric: http_request_p99_ms, unit",
            "{service: gateway, metric: http_request_p99_ms, unit",
            "series.0",
            "environment.yaml",
        ),
        ("{kind: hex, bits: 32}", "{kind: hex, bits: 30}", "placeholders.query_id.hex.bits", "multiple of 4"),
        (
            "{kind: ramp, low: 900, high: 4200}",
            '{kind: counter, events: ["13:40", "13:41"]}',
            "metrics.0.shape.events.1",
            "must lie in its window (13:10–13:40, end included)",
        ),
    ],
)
def test_a_malformed_incident_file_is_named_with_its_line_and_field(
    incidents: Path, old: str, new: str, field: str, message: str
) -> None:
    path = _edit(incidents, old, new)
    line = 1 + next(i for i, text in enumerate(path.read_text().splitlines()) if new.splitlines()[-1] in text)
    with pytest.raises(DemoDataError) as raised:
        load_environment(incidents)
    assert str(raised.value).startswith(f"{path}:{line}: {field}: "), raised.value
    assert message in str(raised.value)


def test_invalid_yaml_and_a_folder_without_incident_are_named(incidents: Path) -> None:
    path = _edit(incidents, "questions:\n", "questions: [\n")
    with pytest.raises(DemoDataError, match=rf"^{path}:\d+: invalid YAML"):
        load_environment(incidents)
    (incidents / "notes").mkdir()
    with pytest.raises(DemoDataError, match=rf"^{incidents / 'notes'}: an incident folder needs an incident.yaml"):
        load_environment(incidents)


def test_the_cli_reports_a_bad_incident_in_one_line(incidents: Path, tmp_path: Path) -> None:
    path = _edit(incidents, "per_minute: 12", "per_minute: -1")
    env = {"VERIDIAG_HOME": str(tmp_path / "home"), "VERIDIAG_EMBEDDED__DEMO_INCIDENTS": str(incidents)}
    result = CliRunner().invoke(app, ["ask", "why is search slow?"], env=env)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {path}:") and "logs.1.per_minute" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_an_added_incident_leaves_the_bundled_day_as_it_was(incidents: Path) -> None:
    """Its values are drawn after the bundled ones, so the lines evals and tests quote stay put."""
    bundled, extended = bundled_environment(), load_environment(incidents)
    assert [i.id for i in extended.incidents] == [*(i.id for i in bundled.incidents), ADDED_ID]
    logs = extended.logs()
    assert [line for line in logs if line.service != ADDED_SERVICE] == bundled.logs()
    assert any("ERR_SEARCH_TIMEOUT no response from shard-" in line.line for line in logs)
    points = extended.metrics()
    assert [p for p in points if p.service != ADDED_SERVICE] == bundled.metrics()
    assert {p.metric for p in points if p.service == ADDED_SERVICE} == {"http_request_p99_ms", "http_error_percent"}
    assert [c.kind for c in extended.changes() if c.service == ADDED_SERVICE] == ["job"]


def _counter(environment: DemoEnvironment) -> list[tuple[str, float]]:
    return [
        (f"{p.ts:%H:%M}", p.value)
        for p in environment.metrics()
        if (p.service, p.metric) == ("inventory-service", "pod_restarts_total")
    ]


def _increases(points: list[tuple[str, float]]) -> list[tuple[str, float]]:
    return [(at, value - before) for (_at, before), (at, value) in pairwise(points) if value != before]


def test_a_counter_never_goes_down_and_holds_its_count_after_its_window() -> None:
    """The OOM kills at 12:01, 12:31 and 13:00 — the last at the window's end — and 3 for the
    rest of the day: a counter that fell back to its baseline would read as a reset."""
    points = _counter(bundled_environment())
    assert _increases(points) == [("12:01", 1.0), ("12:31", 1.0), ("13:00", 1.0)]
    assert points[-1] == ("15:59", 3.0)


def test_counters_of_one_series_add_up_across_incidents(incidents: Path) -> None:
    """A second incident restarting the same pod counts on from the first one's total."""
    more = (
        "  - {service: inventory-service, metric: pod_restarts_total,\n"
        '     shape: {kind: counter, events: ["13:20", "13:40"]}}\n'
    )
    _edit(incidents, "\nlogs:\n", f"\n{more}\nlogs:\n")
    points = _counter(load_environment(incidents))
    assert _increases(points) == [(t, 1.0) for t in ("12:01", "12:31", "13:00", "13:20", "13:40")]
    assert points[-1] == ("15:59", 5.0)


@pytest.fixture(scope="module")
def with_added(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The pipeline (offline engine) on the demo plus an incident folder written into a data dir."""
    data = tmp_path_factory.mktemp("data")
    shutil.copytree(ADDED, data / "incidents")
    settings = Settings(home=data / "home", engine="offline", embedded={"demo_incidents": data / "incidents"})
    return assemble(settings)


@pytest.mark.parametrize("question", load_environment(ADDED).incidents[-1].questions)
def test_an_incident_added_as_a_folder_is_diagnosed_from_its_evidence(with_added: Any, question: str) -> None:
    result = with_added.pipeline.run(question)
    assert result.status == "completed" and result.verdict == "PASS", result.answer
    evaluation = result.self_evaluation["verifier_evaluation"]
    allowed = {c["claim_id"] for c in evaluation["composer_input"]["allowed_claims"]}
    output = evaluation["executor_structured_output"]
    cited = {
        i
        for c in output["claims"]
        if c["claim_id"] in allowed
        for b in c["evidence_bindings"]
        for i in b["source_invocation_ids"]
    }
    invocations = with_added.store.get_invocations(cited).values()
    by_tool: dict[str, str] = {}
    for invocation in invocations:  # every cited output of a tool, not only the last one read
        by_tool[invocation.tool_name] = by_tool.get(invocation.tool_name, "") + "\n" + invocation.output
    assert ADDED_SERVICE in by_tool["query_metrics"] and "http_request_p99_ms" in by_tool["query_metrics"]
    assert "ERR_SEARCH_TIMEOUT no response from" in by_tool["query_logs"]
    assert "full reindex of products started (shards=12, replicas=0)" in by_tool["query_changes"]
    assert "ERR_SEARCH_TIMEOUT" in result.answer and "full reindex of products started" in result.answer
    # the runbook in the incident's folder was indexed and matched what was seen
    assert any(a["reason"] == "runbook rb-search-reindex" for a in output["recommended_actions"])
