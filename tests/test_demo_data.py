"""The demo environment is data: an incident is a folder, a bad file is named with its line and
field, and an added incident is diagnosed like the bundled ones — without a line of Python."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from veridiag.tools.demo import DemoDataError, bundled_environment, load_environment

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
