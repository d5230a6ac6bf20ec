"""``ask`` names the engine that answered each role — a model's offline fallback included —
beside the engine the settings asked for, in ``--json`` and in the text output."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veridiag.cli.app import app

runner = CliRunner()


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("engines")  # the demo data is built once for both tests


@pytest.fixture
def verifier_model_down(shared_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the verifier has a model, at an address where nothing listens."""
    for name in ("VERIDIAG_ENGINE", "VERIDIAG_LLM__DEFAULT__MODEL", "VERIDIAG_DATABASE_URL", "VERIDIAG_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("VERIDIAG_HOME", str(shared_home))
    monkeypatch.setenv("VERIDIAG_LLM__VERIFIER__MODEL", "judge-model")
    monkeypatch.setenv("VERIDIAG_LLM__VERIFIER__BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("VERIDIAG_LLM__VERIFIER__API_KEY", "k")
    monkeypatch.setenv("VERIDIAG_LLM__VERIFIER__MAX_RETRIES", "0")


def test_json_names_the_fallback_that_answered(verifier_model_down: None) -> None:
    result = runner.invoke(app, ["ask", "Why is checkout slow since 10:00?", "--json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["engine"] == {
        "planner": "offline",
        "executor": "offline",
        "verifier": "offline (fallback)",
        "composer": "template",
    }
    assert document["engine_configured"]["verifier"] == "llm:judge-model"
    assert [f["role"] for f in document["usage"]["fallbacks"]] == ["verifier"] * document["rounds"]


def test_json_records_which_engine_failed_and_why(verifier_model_down: None) -> None:
    result = runner.invoke(app, ["ask", "Why is checkout slow since 10:00?", "--json"])
    assert result.exit_code == 0, result.stderr
    engines = json.loads(result.stdout)["engines"]
    assert engines["planner"] == [{"engine": "offline", "fallback_from": None, "reason": None}]
    assert engines["composer"] == [{"engine": "template", "fallback_from": None, "reason": None}]
    (verifier,) = engines["verifier"]  # every round failed alike: one record
    assert (verifier["engine"], verifier["fallback_from"]) == ("offline", "llm:judge-model")
    assert "Connect" in verifier["reason"]


def test_text_shows_what_ran_and_what_was_configured(verifier_model_down: None) -> None:
    result = runner.invoke(app, ["ask", "Why is checkout slow since 10:00?"])
    assert result.exit_code == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("Engines: "))
    assert line == (
        "Engines: planner offline; executor offline; "
        "verifier offline (fallback) (configured llm:judge-model); composer template"
    )
