"""`veridiag ask`, `sessions` and `audit` from the command line: the stable `ask --json` shape,
exit codes, and clear errors for bad input or configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.builders import ASK_JSON_KEYS
from veridiag.cli.app import app

runner = CliRunner()
CLAIM = {"claim_id", "claim_text", "verification", "allowed", "evidence"}
EVIDENCE = {"invocation_id", "tool_name", "excerpt"}


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VERIDIAG_HOME", str(tmp_path))
    for name in ("VERIDIAG_ENGINE", "VERIDIAG_LLM__DEFAULT__MODEL", "VERIDIAG_API_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_ask_json_shape_then_sessions_and_audit(home: Path) -> None:
    result = runner.invoke(app, ["ask", "Why is checkout slow since 10:00?", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert set(document) >= ASK_JSON_KEYS
    assert document["engine"]["executor"] == "offline" and document["verdict"] == "PASS"
    assert document["claims"] and all(set(c) >= CLAIM for c in document["claims"])
    assert all(set(e) >= EVIDENCE for c in document["claims"] for e in c["evidence"])

    listed = json.loads(runner.invoke(app, ["sessions", "--json", "-q", "checkout"]).stdout)
    assert [s["id"] for s in listed] == [document["session_id"]]
    # where it came from, the line that answers (the answer's first after the scope), its service
    [row] = listed
    body = document["final_answer"].split("\n\n", 1)[1]
    assert row["source"] == "cli" and row["answer_line"] == body.splitlines()[0].strip()
    assert row["service"] == "payment-service" and "payment-service" in row["answer_line"]
    table = runner.invoke(app, ["sessions", "-q", "checkout"]).stdout
    assert "cli" in table and "payment-ser" in table
    assert json.loads(runner.invoke(app, ["sessions", "--json", "-q", "nothing-like-this"]).stdout) == []

    audit = runner.invoke(app, ["audit", document["session_id"], "--json"])
    assert audit.exit_code == 0 and json.loads(audit.stdout)["final_answer"] == document["final_answer"]


def test_ask_text_mode_shows_verdict_evidence_and_the_audit_command(home: Path) -> None:
    """The answer lists its key facts, each with its evidence (issue 28); ``--all`` adds every
    claim with its excerpts, which the JSON always holds."""
    result = runner.invoke(app, ["ask", "订单123支付失败，帮我看看是什么原因"])
    assert result.exit_code == 0
    assert "PASS" in result.stdout and "关键事实：" in result.stdout and "（证据 #" in result.stdout
    assert "已确认的事实与出处" not in result.stdout and "veridiag ask --all" in result.stdout
    assert "veridiag audit s-" in result.stdout
    every = runner.invoke(app, ["ask", "--all", "订单123支付失败，帮我看看是什么原因"])
    assert every.exit_code == 0 and "已确认的事实与出处" in every.stdout
    document = json.loads(runner.invoke(app, ["ask", "--json", "订单123支付失败，帮我看看是什么原因"]).stdout)
    listed = every.stdout.split("已确认的事实与出处", 1)[1]
    assert all(f"{c['claim_id']} (" in listed for c in document["claims"] if c["allowed"])
    assert len([c for c in document["claims"] if c["allowed"]]) > 5, "more claims than key facts: none lost"


@pytest.mark.parametrize(
    ("args", "message"),
    [(["ask", "   "], "empty"), (["ask", "x" * 4001], "4000"), (["ask", "why?", "--lang", "fr"], "--lang")],
)
def test_ask_bad_input_exits_2(home: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and message in result.output


def test_ask_with_llm_engine_but_no_model_is_a_clear_error(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIDIAG_ENGINE", "llm")
    result = runner.invoke(app, ["ask", "why?"])
    assert result.exit_code == 2 and "VERIDIAG_LLM__DEFAULT__MODEL" in result.output


def test_ask_closes_what_it_opened_and_leaves_the_collector_as_it_found_it(home: Path) -> None:
    """``ask`` pauses the collector while it starts and freezes what it built (``started_once``);
    a caller in the same process gets the collector back as it was, and no connection is left
    open for a collection that a frozen exit never runs (SQLite keeps its WAL file while one is)."""
    import gc

    assert gc.isenabled() and gc.get_freeze_count() == 0
    result = runner.invoke(app, ["ask", "订单123支付失败，帮我看看是什么原因", "--json"])
    assert result.exit_code == 0, result.output
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert sorted(p.name for p in home.iterdir() if p.name.endswith(("-wal", "-shm"))) == []
