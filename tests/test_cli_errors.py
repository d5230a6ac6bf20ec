"""Every command, every expected failure: one ``error:`` line on stderr, exit status 2, no
traceback — a damaged or read-only database, a bad configuration, a missing file, a backend
that does not answer, a port in use. Piped output is never wrapped nor read as markup."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from veridiag.cli.app import app
from veridiag.store import SessionStore
from veridiag.tools.backends.embedded import EmbeddedEnvironment

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
CASE = next((ROOT / "evals" / "regression").glob("*.yaml"))

#: Commands that open the session store, the embedded data, or only read the settings.
STORE = [
    ["ask", "why is checkout slow"],
    ["sessions"],
    ["audit", "s-x"],
    ["tools", "call", "query_logs", '{"service": "payment-service"}'],
    ["db", "upgrade"],
    ["db", "current"],
]
EMBEDDED = [
    ["ask", "why is checkout slow"],
    ["kb", "index"],
    ["kb", "search", "timeout"],
    ["data", "info"],
    ["data", "import-logs", "{logs}", "--service", "x"],
    ["data", "import-metrics", "{metrics}", "--service", "x", "--metric", "m"],
    ["data", "import-changes", "{changes}"],
    ["data", "export-openmetrics", "{home}/out.txt"],
    ["tools", "call", "query_logs", '{"service": "payment-service"}'],
]
SETTINGS_ONLY = [["rules"], ["llm", "check"], ["serve", "--port", "1"]]


@pytest.fixture(scope="module")
def good_home(tmp_path_factory: pytest.TempPathFactory, demo_env: EmbeddedEnvironment) -> Path:
    home = tmp_path_factory.mktemp("good")
    source, copy = sqlite3.connect(demo_env.path), sqlite3.connect(home / "embedded.db")
    source.backup(copy)
    source.close()
    copy.close()
    SessionStore(f"sqlite:///{home / 'veridiag.db'}").close()
    (home / "in.log").write_text("2026-07-07T10:00:00Z ERROR x failed\n", encoding="utf-8")
    (home / "in.csv").write_text("time,value\n2026-07-07T10:00:00Z,1\n", encoding="utf-8")
    (home / "changes.csv").write_text("time,service,kind,description\n2026-07-07T10:00:00Z,x,deploy,v2\n")
    return home


@pytest.fixture
def home(good_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    copy = tmp_path / "home"
    shutil.copytree(good_home, copy)
    for name in ("VERIDIAG_DATABASE_URL", "VERIDIAG_CONFIG", "VERIDIAG_ENGINE", "VERIDIAG_LLM__DEFAULT__MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VERIDIAG_HOME", str(copy))
    monkeypatch.chdir(copy)
    yield copy


def invoke(home: Path, args: list[str], **env: str) -> Result:
    files = {"{home}": str(home), "{logs}": str(home / "in.log"), "{metrics}": str(home / "in.csv")}
    files["{changes}"] = str(home / "changes.csv")
    for placeholder, path in files.items():
        args = [arg.replace(placeholder, path) for arg in args]
    return runner.invoke(app, args, env=env)


def assert_one_line(result: Result, *fragments: str) -> None:
    """Exit 2 with exactly one ``error:`` line on stderr, no traceback, naming ``fragments``."""
    shown = f"exit {result.exit_code}, exception {result.exception!r}\n{result.stderr[-3000:]}"
    assert result.exit_code == 2, shown
    assert isinstance(result.exception, SystemExit), shown
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, shown
    assert "Traceback" not in result.output, shown
    for fragment in fragments:
        assert fragment in result.stderr, shown


def _ids(commands: list[list[str]]) -> list[str]:
    return [" ".join(c[:2]) for c in commands]


@pytest.mark.parametrize("args", STORE, ids=_ids(STORE))
def test_a_damaged_session_store(home: Path, args: list[str]) -> None:
    (home / "veridiag.db").write_bytes(b"not a database at all, just garbage " * 100)
    assert_one_line(invoke(home, args), str(home / "veridiag.db"), "damaged")


@pytest.mark.parametrize("args", EMBEDDED, ids=_ids(EMBEDDED))
def test_damaged_embedded_data(home: Path, args: list[str]) -> None:
    (home / "embedded.db").write_bytes(b"\x00garbage" * 1000)
    for side in ("embedded.db-wal", "embedded.db-shm"):
        (home / side).unlink(missing_ok=True)
    assert_one_line(invoke(home, args), f"embedded data {home / 'embedded.db'}", "damaged")


@pytest.mark.parametrize("args", [STORE[0], STORE[3]], ids=["ask", "tools call"])
def test_a_read_only_session_store(home: Path, args: list[str]) -> None:
    """SQLite's own read-only mode: holds for root too (file modes do not)."""
    url = f"sqlite:///file:{home / 'veridiag.db'}?mode=ro&uri=true"
    assert_one_line(invoke(home, args, VERIDIAG_DATABASE_URL=url), "attempt to write a readonly database", "read-only")


def test_reading_a_read_only_session_store_works(home: Path) -> None:
    url = f"sqlite:///file:{home / 'veridiag.db'}?mode=ro&uri=true"
    result = invoke(home, ["sessions", "--json"], VERIDIAG_DATABASE_URL=url)
    assert result.exit_code == 0 and json.loads(result.stdout) == []


ALL = [*STORE, *EMBEDDED[1:-1], *SETTINGS_ONLY]


@pytest.mark.parametrize("args", ALL, ids=_ids(ALL))
def test_invalid_yaml_in_the_config_file(home: Path, args: list[str]) -> None:
    (home / "veridiag.yaml").write_text("retry:\n  max_rounds: [1\nengine: offline\n", encoding="utf-8")
    assert_one_line(invoke(home, args), "invalid configuration: veridiag.yaml: invalid YAML at line 3 column 7")


@pytest.mark.parametrize("args", ALL, ids=_ids(ALL))
def test_a_config_file_named_that_is_not_there(home: Path, args: list[str]) -> None:
    """``VERIDIAG_CONFIG`` names a file on purpose (a ConfigMap's mount path): missing, it is an
    error, not a silent run on defaults (a wrong mountPath lost a deployment's settings)."""
    (home / "veridiag.yaml").write_text("engine: offline\n", encoding="utf-8")  # not read instead
    missing = str(home / "conf" / "veridiag.yaml")
    assert_one_line(invoke(home, args, VERIDIAG_CONFIG=missing), f"VERIDIAG_CONFIG names {missing!r}, which is no file")


@pytest.mark.parametrize(
    "args", [STORE[0], STORE[1], ["rules"], ["llm", "check"]], ids=["ask", "sessions", "rules", "llm"]
)
def test_invalid_values_in_the_environment(home: Path, args: list[str]) -> None:
    result = invoke(home, args, VERIDIAG_RETRY__MAX_ROUNDS="9", VERIDIAG_TOOLS__METRICS="graphite")
    assert_one_line(
        result, "retry.max_rounds: Input should be less than or equal to 5", "tools.metrics: Input should be"
    )


@pytest.mark.parametrize(
    ("args", "missing"),
    [
        (["data", "import-metrics", "{home}/nope.csv", "--service", "x"], "nope.csv"),
        (["data", "import-changes", "{home}/nope.csv"], "nope.csv"),
        (["data", "export-openmetrics", "{home}/no/such/dir/out.txt"], "out.txt"),
        (["eval", "{home}/nope.yaml"], "nope.yaml"),
        (["rules", "--rules-file", "{home}/nope.yaml"], "nope.yaml"),
        (["gatekeeper", "check", "--output", "{home}/nope.txt", "--invocations", "{home}/in.log"], "nope.txt"),
    ],
    ids=["import-metrics", "import-changes", "export-openmetrics", "eval", "rules", "gatekeeper check"],
)
def test_a_missing_file(home: Path, args: list[str], missing: str) -> None:
    assert_one_line(invoke(home, args), missing)


def test_eval_of_a_real_case_still_runs(home: Path) -> None:
    assert invoke(home, ["eval", str(CASE)]).exit_code == 0


def test_an_unreachable_metrics_backend(home: Path) -> None:
    """A tool call failing is no CLI failure for ``ask`` (the diagnosis goes on and says so);
    ``tools call`` says it in one line."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"  # bound, never listening: refused
        # no retries: each refused read's backoff cost ~55 s over the diagnosis's reads, and
        # retrying is tests/test_http_backends.py's to check
        env = {"VERIDIAG_TOOLS__METRICS": "prometheus", "VERIDIAG_PROMETHEUS__URL": url}
        env["VERIDIAG_PROMETHEUS__MAX_RETRIES"] = "0"
        call = invoke(
            home, ["tools", "call", "query_metrics", '{"service": "payment-service", "metric": "cpu_percent"}'], **env
        )
        asked = invoke(home, ["ask", "Why is checkout slow since 10:00?", "--json"], **env)
    assert_one_line(call, "query_metrics failed (invocation #", "prometheus unavailable")
    assert json.loads(call.stdout)["status"] == "error"
    assert asked.exit_code == 0, asked.stderr
    document = json.loads(asked.stdout)
    assert document["status"] == "completed"
    # one gap line for every metric the backend could not serve (issue 28: one line per kind)
    failed = [line for line in document["final_answer"].splitlines() if "failed: prometheus unavailable" in line]
    assert len(failed) == 1 and "metric=cpu_percent" in failed[0], document["final_answer"]


def test_serve_on_a_port_in_use(home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke(home, ["serve", "--port", str(port)])
    assert_one_line(result, f"cannot listen on 127.0.0.1:{port}: Address already in use")


def test_serve_on_an_unknown_host(home: Path) -> None:
    assert_one_line(invoke(home, ["serve", "--host", "no-such-host.invalid", "--insecure-no-auth"]), "cannot listen on")


def test_piped_messages_keep_brackets_and_colons_literally(home: Path) -> None:
    """No rich markup ([bold]) and no emoji codes (:cd:) are read out of a path."""
    odd = home / "[bold]x[/bold]" / ":cd: :smile:"
    odd.mkdir(parents=True)
    result = invoke(home, ["data", "import-changes", str(odd / "nope.csv")])
    assert_one_line(result)
    assert result.stderr == f"error: {odd / 'nope.csv'}: no such file\n"


def _nested_json(depth: int, style: str) -> str:
    inner = "[" * depth + "]" * depth if style == "list" else '{"a": ' * depth + "1" + "}" * depth
    return f'[{{"id": 1, "arguments": {inner}}}]'


def _nested_yaml(depth: int, style: str) -> str:
    inner = "[" * depth + "]" * depth if style == "list" else "{a: " * depth + "1" + "}" * depth
    return f"rules:\n  - id: evidence.excerpt_match\n    params: {inner}\n"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    depth=st.integers(1200, 6000),
    style=st.sampled_from(["list", "map"]),
    target=st.sampled_from(["invocations", "rules", "jsonl"]),
)
def test_input_nested_past_what_a_parser_recurses_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, depth: int, style: str, target: str
) -> None:
    """``gatekeeper check`` and ``rules`` read files a user hands them: nesting a parser cannot
    recurse through is invalid input (exit 2, one line), never a RecursionError traceback.
    (Neither command opens the store or the embedded data: a bare home.)"""
    home = tmp_path / "bare"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("VERIDIAG_HOME", str(home))
    (home / "out.txt").write_text('{"answer_version": "executor_evidence_v2", "claims": []}', encoding="utf-8")
    invocations = _nested_json(depth, style)
    if target == "jsonl":
        invocations = invocations.removeprefix("[").removesuffix("]")
    (home / "in.json").write_text(invocations, encoding="utf-8")
    (home / "rules.yaml").write_text(_nested_yaml(depth, style), encoding="utf-8")
    if target == "rules":
        args = ["rules", "--rules-file", "{home}/rules.yaml"]
    else:
        args = ["gatekeeper", "check", "--output", "{home}/out.txt", "--invocations", "{home}/in.json"]
    assert_one_line(invoke(home, args), "nesting too deep")
