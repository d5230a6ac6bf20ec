"""The script-facing commands: JSON out, clear errors, meaningful exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.builders import LOG_OUTPUT, binding, claim, invocation, v2
from veridiag.cli.app import app
from veridiag.contracts.schemas import SCHEMAS

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def gatekeeper_check(out_file: Path, inv_file: Path, *extra: str) -> Result:
    """``veridiag gatekeeper check --output OUT --invocations INV [extra…]``."""
    return runner.invoke(
        app, ["gatekeeper", "check", "--output", str(out_file), "--invocations", str(inv_file), *extra]
    )


def write_inputs(tmp_path: Path, output: str | bytes) -> tuple[Path, Path]:
    out_file = tmp_path / "executor.txt"
    if isinstance(output, bytes):
        out_file.write_bytes(output)
    else:
        out_file.write_text(output, encoding="utf-8")
    inv_file = tmp_path / "invocations.json"
    inv_file.write_text(json.dumps([invocation(394).model_dump()]), encoding="utf-8")
    return out_file, inv_file


def test_schema_prints_the_committed_file() -> None:
    result = runner.invoke(app, ["schema", "executor-v2"])
    assert result.exit_code == 0
    assert result.stdout == (ROOT / "schemas" / SCHEMAS["executor-v2"][1]).read_text(encoding="utf-8")


def test_unknown_schema_exits_2() -> None:
    result = runner.invoke(app, ["schema", "nope"])
    assert result.exit_code == 2 and "unknown schema" in result.stderr


def test_rules_json_lists_the_effective_set(tmp_path: Path) -> None:
    override = tmp_path / "rules.yaml"
    override.write_text("rules:\n  - id: claim.evidence_utilization\n    enabled: true\n", encoding="utf-8")
    result = runner.invoke(app, ["rules", "--json", "--rules-file", str(override)])
    assert result.exit_code == 0, result.stderr
    rules = {rule["id"]: rule for rule in json.loads(result.stdout)["rules"]}
    assert len(rules) == 10 and rules["claim.evidence_utilization"]["enabled"] is True
    assert rules["evidence.invocation_ref"]["verdictImpact"] == "reject_on_fail"


def test_rules_with_a_bad_file_exits_2(tmp_path: Path) -> None:
    override = tmp_path / "rules.yaml"
    override.write_text("rules:\n  - id: nope\n", encoding="utf-8")
    result = runner.invoke(app, ["rules", "--rules-file", str(override)])
    assert result.exit_code == 2 and "unknown rule id 'nope'" in result.stderr


def test_rules_file_from_environment(tmp_path: Path, monkeypatch: object) -> None:
    override = tmp_path / "rules.yaml"
    override.write_text("rules:\n  - id: claim.hallucination_phrases\n    enabled: false\n", encoding="utf-8")
    result = runner.invoke(app, ["rules", "--json"], env={"VERIDIAG_GATEKEEPER__RULES_FILE": str(override)})
    rules = {rule["id"]: rule for rule in json.loads(result.stdout)["rules"]}
    assert rules["claim.hallucination_phrases"]["enabled"] is False


def test_gatekeeper_check_pass(tmp_path: Path) -> None:
    output = json.dumps(v2([claim(bindings=[binding([394], "ERR_TIMEOUT request timeout cost=5300ms")])]))
    out_file, inv_file = write_inputs(tmp_path, f"```json\n{output}\n```")
    result = gatekeeper_check(out_file, inv_file, "--trace")
    assert result.exit_code == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert document["session_id"] == "s-1"
    assert document["executor_output_parse_status"]["status"] == "valid"
    assert document["gatekeeper_result"]["status"] == "pass"
    span = next(
        c["matched_span"]
        for c in document["claim_traces"][0]["checks"]
        if c["rule_id"] == "evidence.excerpt_similarity"
    )
    assert LOG_OUTPUT[span["start"] : span["end"]] == span["text"] == "ERR_TIMEOUT request timeout cost=5300ms"


def test_gatekeeper_check_fabricated_id_exits_1(tmp_path: Path) -> None:
    out_file, inv_file = write_inputs(tmp_path, json.dumps(v2([claim(bindings=[binding([7], "request timeout")])])))
    result = gatekeeper_check(out_file, inv_file, "--session", "s-1")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["gatekeeper_result"]["failed_rules"] == ["evidence.invocation_ref"]
    assert document["failed_rule_impacts"] == {"evidence.invocation_ref": "reject_on_fail"}


def test_gatekeeper_check_non_utf8_output_is_malformed_not_a_crash(tmp_path: Path) -> None:
    out_file, inv_file = write_inputs(tmp_path, b"\xff\xfe\x00{garbage")
    result = gatekeeper_check(out_file, inv_file)
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["executor_output_parse_status"]["status"] == "malformed"
    assert "UTF-8" in document["executor_output_parse_status"]["detail"]


def test_gatekeeper_check_bad_invocations_file_exits_2(tmp_path: Path) -> None:
    out_file, inv_file = write_inputs(tmp_path, "{}")
    inv_file.write_text('[{"id": "x", "session_id": "s", "tool_name": "q"}]', encoding="utf-8")
    result = gatekeeper_check(out_file, inv_file)
    assert result.exit_code == 2 and "invocation [0] id" in result.stderr
    inv_file.write_text("[1, 2", encoding="utf-8")
    result = gatekeeper_check(out_file, inv_file)
    assert result.exit_code == 2 and "invalid JSON" in result.stderr
    result = gatekeeper_check(tmp_path / "none.txt", inv_file)
    assert result.exit_code == 2


def test_gatekeeper_check_accepts_json_lines_and_needs_a_session_when_ambiguous(tmp_path: Path) -> None:
    out_file, inv_file = write_inputs(tmp_path, json.dumps(v2()))
    lines = [invocation(394).model_dump_json(), invocation(395, session_id="s-2").model_dump_json()]
    inv_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = gatekeeper_check(out_file, inv_file)
    assert result.exit_code == 2 and "--session is required" in result.stderr
    result = gatekeeper_check(out_file, inv_file, "--session", "s-1")
    assert result.exit_code == 0, result.stdout


def test_bench_quick_json_has_the_promised_shape() -> None:
    result = runner.invoke(app, ["bench", "--json", "--quick", "--only", "gatekeeper"])
    assert result.exit_code == 0, result.stderr
    gatekeeper = json.loads(result.stdout)["gatekeeper"]
    for key in ("p50_ms", "p99_ms", "baseline_p50_ms", "speedup"):
        assert isinstance(gatekeeper[key], float) and gatekeeper[key] > 0
    assert (gatekeeper["claims"], gatekeeper["invocations"], gatekeeper["output_bytes"]) == (20, 10, 65536)
    # Several seeds, each at least once; the per-invocation index is timed on its own.
    assert len(gatekeeper["seeds"]) >= 2 and gatekeeper["baseline_runs"] >= len(gatekeeper["seeds"])
    assert isinstance(gatekeeper["record_ms_per_64kb"], float) and gatekeeper["record_ms_per_64kb"] > 0
    assert gatekeeper["excerpt_outcomes"]["verbatim"] == {"pass": 20 * len(gatekeeper["seeds"])}
    floors = gatekeeper["floor_p50_ms"]
    assert set(floors) == {"exact_find", "locate_only", "structural_rules", "without_entity_grounding"}
    assert all(isinstance(v, float) and v > 0 for v in floors.values())
    goals = {goal["key"]: goal for goal in json.loads(result.stdout)["goals"]}
    assert goals["gatekeeper.p50_ms"]["value"] == pytest.approx(gatekeeper["p50_ms"], abs=1e-3)
    assert goals["gatekeeper.p50_ms"]["status"] == ("met" if gatekeeper["p50_ms"] <= 4 else "missed")
    assert goals["sessions.list_p50_ms"]["status"] == "not measured"  # not run: never "met"


def test_bench_on_an_unreachable_database_says_so() -> None:
    url = "postgresql://nobody@127.0.0.1:1/nothing?connect_timeout=2"
    result = runner.invoke(app, ["bench", "--json", "--quick", "--only", "api", "--database-url", url])
    assert result.exit_code == 2 and "cannot open store" in result.stderr and result.stdout == ""


def test_bench_unknown_name_exits_2() -> None:
    result = runner.invoke(app, ["bench", "--only", "nope"])
    assert result.exit_code == 2 and "unknown benchmark" in result.stderr


def test_piped_errors_are_one_literal_line_whatever_the_path(tmp_path: Path) -> None:
    """Not a terminal: no hard wrap at 80 columns and no rich markup read out of user text."""
    deep = tmp_path / ("a-long-directory-name-" * 6) / "[bold]not-markup[/]"
    deep.mkdir(parents=True)
    missing = deep / "nope.log"
    env = {"VERIDIAG_HOME": str(tmp_path), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}
    result = runner.invoke(app, ["data", "import-logs", str(missing), "--service", "pay"], env=env)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: {missing}: no such file or folder"]


@pytest.mark.parametrize(
    ("command", "content", "name"),
    [
        ("import-logs", "2026-01-05T10:00:00Z ERROR boom happened\n", "app.log"),
        ("import-metrics", "timestamp,latency_ms\n2026-01-05T10:00:00Z,1.5\n2026-01-05T10:01:00Z,2.5\n", "latency.csv"),
    ],
)
def test_importing_into_a_fresh_home_keeps_the_demo_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, content: str, name: str
) -> None:
    """A user who imports their own data into a new home (without knowing of ``load_demo``) gets
    a home of their services only: the demo shop's services and 2026-07-07 clock never answer a
    question about their data, and a later command does not load the demo beside it."""
    monkeypatch.delenv("VERIDIAG_EMBEDDED__LOAD_DEMO", raising=False)
    data = tmp_path / name
    data.write_text(content, encoding="utf-8")
    env = {"VERIDIAG_HOME": str(tmp_path / "home")}
    imported = runner.invoke(app, ["data", command, str(data), "--service", "my-api"], env=env)
    assert imported.exit_code == 0, imported.stderr
    info = runner.invoke(app, ["data", "info"], env=env)
    assert info.exit_code == 0, info.stderr
    services = next(line for line in info.stdout.splitlines() if line.startswith("services:"))
    assert services == "services: my-api", info.stdout
    assert "2026-07-07" not in info.stdout


def test_tools_call_help_lists_every_registered_tool() -> None:
    """The help reads the registry (``TOOL_ARGS``, by id): a tool added there is listed with no
    second list to keep in step."""
    from veridiag.tools.args import TOOL_ARGS

    result = runner.invoke(app, ["tools", "call", "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.stderr
    listed = next(line for line in result.stdout.splitlines() if "One of:" in line)
    assert all(name in listed for name in TOOL_ARGS), listed


@pytest.mark.parametrize("command", [["data", "info"], ["tools", "call", "query_changes", "{}"], ["sessions"]])
def test_a_home_made_where_none_was_is_said_once_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """A ``VERIDIAG_HOME`` that names no folder (a typo, a first run) becomes a new home — the demo's
    or an empty one — and the user is told so, on stderr (stdout stays the command's: JSON stays
    JSON); a command that makes nothing says nothing, nor does the next run."""
    monkeypatch.delenv("VERIDIAG_DATABASE_URL", raising=False)
    home = tmp_path / "no" / "such-home"
    env = {"VERIDIAG_HOME": str(home), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}
    untouched = runner.invoke(app, ["rules", "--json"], env=env)
    assert untouched.exit_code == 0 and not home.exists() and "note:" not in untouched.stderr
    first = runner.invoke(app, command, env=env)
    assert home.exists(), first.output
    assert f"note: {home} did not exist: made a new veridiag home there" in first.stderr
    assert "note:" not in first.stdout
    again = runner.invoke(app, command, env=env)
    assert "note:" not in again.stderr
