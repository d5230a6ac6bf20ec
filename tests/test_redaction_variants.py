"""Secrets found, not listed (issue 27 D6): strategies generate how a secret is written — key
spellings in zh and en, casing, separators, invisible and look-alike characters, quoting, JSON
escaping, URL encoding, base64, line splits, surrounding log text — and the secret's value
never survives while the text around it does. Real logs keep their content, and every entry
that stores text (tool outputs, alerts, questions, MCP arguments, eval fixtures) redacts."""

from __future__ import annotations

import base64
import json
import os
import random
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.builders import am_alert, am_payload, binding, claim, v2
from veridiag.alerts.worker import Worker, job_queue
from veridiag.api import create_app
from veridiag.cli.app import app
from veridiag.config import AlertSettings, Settings
from veridiag.evals.fixtures import Case
from veridiag.evals.runner import EvalRunner
from veridiag.ingest.importers import import_logs
from veridiag.pipeline.factory import assemble
from veridiag.redaction import redact
from veridiag.redaction.keys import vocabulary
from veridiag.tools.backends.embedded import EmbeddedEnvironment

# -- generated spellings --------------------------------------------------------------------------

_WORDS = sorted({w for spellings in vocabulary().kinds.values() for w in spellings if w not in vocabulary().not_alone})
#: Latin letters and a Cyrillic letter that looks the same.
_LOOKALIKES = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441", "x": "\u0445"}
_INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


@st.composite
def key_names(draw: st.DrawFn) -> str:
    """A secret's key as people and programs write it."""
    words = draw(st.sampled_from(_WORDS)).split()
    prefix = draw(st.sampled_from(["", "db", "app", "mysql", "商户", "redis", "prod db"]))
    parts = [*prefix.split(), *words]
    case = draw(st.sampled_from(["lower", "upper", "title", "camel"]))
    if case == "upper":
        parts = [p.upper() for p in parts]
    elif case == "title":
        parts = [p.title() for p in parts]
    elif case == "camel":
        parts = [parts[0], *(p.title() for p in parts[1:])]
    joiner = "" if case == "camel" else draw(st.sampled_from(["_", "-", ".", ""]))
    if joiner == "" and case != "camel" and len(parts) > 1 and parts[-1].isascii() and parts[-2].isascii():
        joiner = "_"  # "mysqlpassword" is written with a break more often than not; both read
    key = joiner.join(parts)
    if draw(st.booleans()):
        key += draw(st.sampled_from(["_B64", "_base64", "Enc", "_HEX"]))
    trick = draw(st.sampled_from(["none", "invisible", "lookalike", "fullwidth"]))
    if trick == "invisible":
        at = draw(st.integers(1, max(1, len(key) - 1)))
        key = key[:at] + draw(st.sampled_from(_INVISIBLE)) + key[at:]
    elif trick == "lookalike":
        spots = [i for i, c in enumerate(key) if c in _LOOKALIKES]
        if spots:
            at = draw(st.sampled_from(spots))
            key = key[:at] + _LOOKALIKES[key[at]] + key[at + 1 :]
    elif trick == "fullwidth":
        key = "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in key)
    return key


#: A value: letters, digits and the punctuation passwords use (not what ends a bare value).
secret_values = st.builds(
    lambda body: "Zq7" + body,
    st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!@#$^*_+~", min_size=6, max_size=20),
)

PREFIXES = st.sampled_from(
    [
        "2026-07-07T10:00:00.157Z ERROR payment-service [exec-1] c.s.pay.Db - login failed user=pay ",
        "Jul  7 10:00:01 db-1 app[4121]: connect trace_id=4bf92f3577b34da6a3ce929d0e0e4736 ",
        "2026-07-07 18:00:00,001 WARN 订单 88121 支付失败 配置 ",
        "",
    ]
)
SUFFIXES = st.sampled_from(
    [
        " host=db-1 order=88121 took=2950ms",
        " span=00f067aa0ba902b7 uuid=550e8400-e29b-41d4-a716-446655440000",
        " 耗时 2950ms",
        "",
    ]
)


@st.composite
def written(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A key and its value in one of the ways a line carries them; and what must not survive."""
    key, value = draw(key_names()), draw(secret_values)
    forms = ["eq", "colon", "json", "quoted", "escaped", "url", "base64", "env", "option", "compare", "compared"]
    form = draw(st.sampled_from(forms))
    hidden = [value]
    if form == "eq":
        text = f"{key}={value}"
    elif form == "colon":
        text = f"{key}: {value}"
    elif form == "json":
        text = json.dumps({"user": "pay", key: value}, ensure_ascii=draw(st.booleans()))
    elif form == "quoted":
        text = f"{key}='{value}'"
    elif form == "escaped":  # JSON inside a JSON string, as a log shipper writes it
        text = json.dumps({"message": json.dumps({key: value}, ensure_ascii=False)}, ensure_ascii=False)
    elif form == "url":
        encoded = quote(value, safe="")
        text = f"body=user%3Dpay%26{quote(key, safe='')}%3D{encoded}%26next%3D1"
        hidden.append(encoded)
    elif form == "base64":
        token = base64.b64encode(f"{key}={value}".encode()).decode()
        text = f"config={token}"
        hidden = [token, value]
    elif form == "compare":  # code in a stack trace or a config check
        text = f'if {key} == "{value}":'
    elif form == "compared":
        text = f'assert "{value}" == {key}'
    elif form == "env":
        text = f'export {key}="{value}"'
    else:
        text = f"--{key} {value}"
        if not key.isascii() or any(c in key for c in _INVISIBLE):
            text = f"--{key}={value}"
    return text, hidden


def _survives(hidden: list[str], text: str) -> list[str]:
    return [h for h in hidden if h in text]


@settings(max_examples=300, deadline=None)
@given(written(), PREFIXES, SUFFIXES)
def test_a_secret_written_any_way_never_survives_and_the_line_does(
    case: tuple[str, list[str]], prefix: str, suffix: str
) -> None:
    text, hidden = case
    line = prefix + text + suffix
    redacted = redact(line)
    assert not _survives(hidden, redacted), (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)
    assert redact(redacted) == redacted


@given(
    st.sampled_from(["curl -u", "curl --user", "wget --user=", "curl --proxy-user"]),
    st.from_regex(r"[a-z][a-z0-9_.-]{1,12}", fullmatch=True),
    secret_values,
)
def test_a_command_line_user_keeps_the_user_and_loses_the_password(option: str, user: str, value: str) -> None:
    joined = f"{option}{user}:{value}" if option.endswith("=") else f"{option} {user}:{value}"
    line = f"2026-07-07T10:00:00Z INFO deploy ran: {joined} https://pay.internal/v1"
    redacted = redact(line)
    assert value not in redacted and f"{user}:[REDACTED:" in redacted and redacted.endswith(" https://pay.internal/v1")


@given(
    st.sampled_from(["https", "postgres", "redis", "amqp", "mongodb+srv"]),
    st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
    secret_values.filter(lambda v: not set(v) & set("@#/?")),  # unencoded, these end userinfo
)
@example(scheme="https", user="pw", value="Zq7222222")  # a user named as a secret word: the URL's, no key
def test_url_userinfo_loses_its_password(scheme: str, user: str, value: str) -> None:
    line = f"connect {scheme}://{user}:{value}@db-1.internal:5432/pay failed"
    redacted = redact(line)
    assert value not in redacted and "@db-1.internal:5432/pay failed" in redacted


@given(
    st.sampled_from(["Authorization", "authorization", "Proxy-Authorization", "AUTHORIZATION"]),
    st.sampled_from(["Bearer ", "Basic ", "Token ", ""]),
    st.sampled_from([": ", "=", '": "']),
    st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-._~+/", min_size=12, max_size=60),
)
def test_authorization_headers_lose_their_credentials(header: str, scheme: str, sep: str, token: str) -> None:
    token = "Zq7" + token
    redacted = redact(f"GET /api/orders {header}{sep}{scheme}{token} status=401")
    assert token not in redacted and redacted.startswith("GET /api/orders") and redacted.endswith("status=401")


@given(st.sampled_from(["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-"]), st.randoms(use_true_random=False))
def test_openai_keys_in_any_of_their_forms(prefix: str, rng: random.Random) -> None:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    key = prefix + "".join(rng.choice(alphabet) for _ in range(rng.randint(40, 120))) + "7"
    redacted = redact(f"llm call with {key} failed: 401")
    assert key[len(prefix) :] not in redacted and redacted.endswith(" failed: 401")


@given(st.integers(0, 2**32), st.integers(2, 12), st.sampled_from(["RSA ", "EC ", "", "ENCRYPTED "]))
def test_a_pem_body_split_over_log_lines_never_survives(seed: int, count: int, kind: str) -> None:
    """Each body line on a log line of its own, with the log's prefix: whole, and line by line
    (a record holds one line). Key bytes are random, as a key's are (a seeded generator)."""
    rng = random.Random(seed)
    body = [base64.b64encode(rng.randbytes(48)).decode() for _ in range(count)]
    stamp = "2026-07-07T10:00:0{}Z INFO  pay-svc [main] c.s.Boot - "
    lines = [stamp.format(0) + f"-----BEGIN {kind}PRIVATE KEY-----"]
    lines += [stamp.format(1) + b for b in body]
    lines += [stamp.format(2) + f"-----END {kind}PRIVATE KEY-----", stamp.format(3) + "started order=88121"]
    whole = redact("\n".join(lines))
    alone = "\n".join(redact(line) for line in lines)
    for text in (whole, alone):
        assert not [b for b in body if b in text]
        assert f"BEGIN {kind}PRIVATE KEY" in text and text.endswith("started order=88121")


# -- real logs keep their content ------------------------------------------------------------------


def _samples() -> Path | None:
    """The shared sample data (loghub, NAB, Nezha), when the machine has it: its folder in
    ``VERIDIAG_TEST_SAMPLES``, as ``VERIDIAG_TEST_POSTGRES_URL`` names a database."""
    folder = os.environ.get("VERIDIAG_TEST_SAMPLES")
    return Path(folder) if folder and Path(folder).is_dir() else None


SAMPLES = _samples()


@pytest.mark.skipif(SAMPLES is None, reason="VERIDIAG_TEST_SAMPLES not set: no sample data on this machine")
def test_real_logs_lose_nothing_but_secrets() -> None:
    """Trace ids, hashes, UUIDs, order ids, timestamps, block and container ids survive; the
    only finds in the sample logs are the JWTs TrainTicket's auth service logs (real tokens)."""
    assert SAMPLES is not None
    files = sorted(SAMPLES.glob("logs/*.log")) + sorted(SAMPLES.glob("nezha/*/log/*.csv"))[:3]
    files += sorted(SAMPLES.glob("nezha/*/trace/*.csv"))[:1] + sorted(SAMPLES.glob("metrics/*.csv"))[:2]
    assert files
    changed: list[tuple[str, str]] = []
    lines = 0
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[:3000]:
            lines += 1
            redacted = redact(line)
            if redacted != line:
                changed.append((line, redacted))
    assert lines > 15000
    kinds = {marker for _, text in changed for marker in _markers(text)}
    assert kinds <= {"[REDACTED:jwt]"}, [c for c in changed if set(_markers(c[1])) - {"[REDACTED:jwt]"}][:3]
    for line, text in changed:  # around each token, the line is as it was
        assert text.replace("[REDACTED:jwt]", "") == _without_jwts(line)


def _markers(text: str) -> list[str]:
    import re

    return re.findall(r"\[REDACTED:[a-z0-9-]+\]", text)


def _without_jwts(line: str) -> str:
    import re

    return re.sub(r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*", "", line)


def test_cost_per_64_kb_stays_a_few_ms() -> None:
    """Median of repeated runs over 64 KB of mixed log text with and without decodable lines."""
    from veridiag.redaction import Redactor

    line = "2026-07-07T10:00:00.157Z INFO payment-service [exec-1] c.s.pay.Api - order 88121 paid trace_id={} in 29ms"
    escaped = '{"log": "2026-07-07 10:00:01 WARN \\"order\\": 88122 retry=%d, path=/v1/pay%%3Fid%%3D7"}'
    rows = []
    for i in range(2000):
        rows.append(line.format(f"{i:032x}") if i % 4 else escaped % i)
    text = "\n".join(rows)[:65536]
    fresh = Redactor()
    times = []
    for _ in range(9):
        started = time.perf_counter()
        fresh._redact(text)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    print(f"\n64 KB mixed log text: {times[4]:.2f} ms median of 9")
    assert fresh._redact(text).text == text
    assert times[0] < 40, "a few ms (bound loose for loaded machines)"


# -- every entry that stores or shows text ---------------------------------------------------------

SECRET = "Pl4nted-S3cret-9f2"
B64 = base64.b64encode(SECRET.encode()).decode()
OPENAI = "sk-proj-" + "Ab9" * 20
#: A signature: a secret by its key alone (hex ids stay), so an entity a check quotes back shows it bare.
HMAC = "5f2b9c1e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c"
PEM_LINES = [
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF",
    "aaYEI6hfXXhOgFUPfGUd1yh8jLhwnV0CGeG0vY4nbvsnV7MbdE7Vs+Y1xKCJnDst",
]
#: What the issue found readable, each planted once in a log line.
PLANTED = [
    f"DB_PASSWORD_B64={B64}",
    f"body=user%3Dledger%26password%3D{SECRET}%26db%3D1",
    f"curl -u deploy:{SECRET} https://ledger.internal",
    f"pass\u200bword={SECRET}",
    f"商户秘钥={SECRET}",
    f"openai key {OPENAI}",
    '{"event": "{\\"password\\":\\"' + SECRET + '\\"}"}',
    # the second round's (issue 27): client options, broken keys, YAML tags
    f"mysql -uroot -p{SECRET} -h db-1",
    f"redis-cli -h cache-1 -a {SECRET} ping",
    f"密\u3000码：{SECRET}",
    f"pass word={SECRET}",
    f"db_password: !!binary {B64}",
    # the third round's: credentials in a client's arguments
    f"sqlplus -s ledger/{SECRET}@db-1:1521/LEDGER @/srv/sql/check.sql",
    f"smbclient //fs-1/ledger -U svc%{SECRET} -c ls",
    f"lftp -u svc,{SECRET} ftp.ledger.internal",
    f"htpasswd -b /etc/nginx/.htpasswd svc {SECRET}",
    f"callback rejected hmac={HMAC}",
]
HIDDEN = [SECRET, B64, OPENAI, HMAC, *PEM_LINES]


def _planted_environment(home: Path, tmp_path: Path) -> None:
    env = EmbeddedEnvironment(home / "embedded.db", load_demo=False)
    lines = []
    for minute in range(60):
        stamp = f"2026-07-07T14:{minute:02d}:00.000Z"
        lines.append(f"{stamp} INFO  ledger-api [worker-1] c.s.Ledger - invoice {1000 + minute} issued")
        if 10 <= minute < 10 + len(PLANTED):
            lines.append(f"{stamp} ERROR ledger-api [worker-2] c.s.Ledger - ERR_DB_AUTH {PLANTED[minute - 10]}")
    lines.append(
        "2026-07-07T14:30:00.000Z ERROR ledger-api [main] c.s.Boot - ERR_DB_AUTH -----BEGIN RSA PRIVATE KEY-----"
    )
    lines += [f"2026-07-07T14:30:00.000Z ERROR ledger-api [main] c.s.Boot - {body}" for body in PEM_LINES]
    lines.append("2026-07-07T14:30:00.000Z ERROR ledger-api [main] c.s.Boot - -----END RSA PRIVATE KEY-----")
    (tmp_path / "ledger.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_logs(env, tmp_path / "ledger.log", service="ledger-api")
    env.close()


def _leaks(text: str) -> list[str]:
    return [h for h in HIDDEN if h in text]


@pytest.fixture()
def planted_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    _planted_environment(home, tmp_path)
    monkeypatch.setenv("VERIDIAG_HOME", str(home))
    monkeypatch.setenv("VERIDIAG_EMBEDDED__LOAD_DEMO", "false")
    for name in ("VERIDIAG_ENGINE", "VERIDIAG_LLM__DEFAULT__MODEL", "VERIDIAG_API_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_tools_call_ask_and_audit_show_no_planted_secret(planted_home: Path) -> None:
    cli = CliRunner()
    called = cli.invoke(
        app, ["tools", "call", "query_logs", '{"service": "ledger-api", "start": "2026-07-07T14:00:00Z", "limit": 200}']
    )
    assert called.exit_code == 0, called.output
    assert "ERR_DB_AUTH" in called.stdout and not _leaks(called.stdout)
    question = f"ledger-api 14点以后 ERR_DB_AUTH 报错，password={SECRET} 是不是错了？"
    asked = cli.invoke(app, ["ask", question, "--json"])
    assert asked.exit_code == 0, asked.output
    document = json.loads(asked.stdout)
    audit = cli.invoke(app, ["audit", document["session_id"], "--json"])
    markdown = cli.invoke(app, ["ask", "Why does ledger-api log ERR_DB_AUTH since 14:00?", "--format", "markdown"])
    for text in (asked.stdout, audit.stdout, markdown.stdout):
        assert not _leaks(text), _leaks(text)
    assert "password=[REDACTED:password]" in audit.stdout


def test_the_alert_job_session_and_audit_apis_show_no_alert_password(tmp_path: Path) -> None:
    assembly = assemble(Settings(home=tmp_path / "home"))
    client = TestClient(create_app(Settings(home=Path("/nonexistent")), assembly=assembly), base_url="http://localhost")
    note = f"db login failed: password={SECRET}, curl -u deploy:{SECRET}, 商户秘钥={SECRET}, key {OPENAI}"
    alert = am_alert(f"leak-{time.time_ns()}", annotations={"summary": "p99 latency above 2s", "description": note})
    accepted = client.post("/api/v1/alerts/alertmanager", json=am_payload(alert))
    assert accepted.status_code == 202, accepted.text
    [job_id] = accepted.json()["jobs"]
    worker = Worker(job_queue(assembly.store, AlertSettings()), assembly.pipeline)
    while worker.run_one() is not None:
        pass
    job = client.get(f"/api/v1/alerts/jobs/{job_id}").json()
    assert job["session_id"], job
    shown: dict[str, Any] = {
        "job": job,
        "session": client.get(f"/api/v1/sessions/{job['session_id']}").json(),
        "audit": client.get(f"/api/v1/sessions/{job['session_id']}/audit").json(),
        "stored alerts": [a.model_dump(mode="json") for a in job_queue(assembly.store, AlertSettings()).alerts(job_id)],
    }
    for where, body in shown.items():
        text = json.dumps(body, ensure_ascii=False)
        assert not _leaks(text), f"{where}: {_leaks(text)}"
    assert "[REDACTED:password]" in json.dumps(shown["session"], ensure_ascii=False)


def test_mcp_evidence_diagnosis_and_audit_show_no_planted_secret(planted_home: Path) -> None:
    """What an MCP client reads: an evidence call's arguments and output, a diagnosis asked
    with a secret in the question, that session's audit, and the check of its own claims."""
    from veridiag.api.schemas import ChatRequest
    from veridiag.mcp_server.server import VeridiagTools
    from veridiag.pipeline import audit_chain
    from veridiag.tools.args import QueryLogsArgs

    assembly = assemble(Settings(home=planted_home, embedded={"load_demo": False}))
    tools = VeridiagTools(assembly, concurrency=1)
    arguments = QueryLogsArgs(service="ledger-api", start="2026-07-07T14:00:00Z", query=f"password={SECRET}", limit=200)
    evidence = tools._gather("query_logs", arguments, None)
    stored = assembly.store.get_invocations([evidence.invocation_id])[evidence.invocation_id]
    question = f"ledger-api 14点以后为什么报 ERR_DB_AUTH？curl -u deploy:{SECRET} 也失败"
    document = tools._diagnose(ChatRequest(query=question), lambda _stage, _details: None)
    chain = audit_chain(assembly.store, document.session_id)
    assert chain is not None
    # a client's own document, checked: what the Gatekeeper says back quotes its claims' words
    line = next(row for row in evidence.output.splitlines() if "ERR_DB_AUTH" in row and row[:4].isdigit())
    claims = [
        claim(f"c-{i}", f"ledger-api logged {planted} at 14:10", [binding([evidence.invocation_id], excerpt)])
        for i, planted in enumerate(PLANTED)
        for excerpt in (line, f"ERR_DB_AUTH {planted}")
    ]
    checked = tools._check(evidence.session_id, json.dumps(v2(claims), ensure_ascii=False))
    shown = {
        "evidence call": evidence.model_dump_json(),
        "stored call": stored.model_dump_json(),
        "diagnose": document.model_dump_json(),
        "get_audit": chain.model_dump_json(),
        "check_claims": checked.model_dump_json(),
    }
    for where, text in shown.items():
        assert not _leaks(text), f"{where}: {_leaks(text)}"
    assert "ERR_DB_AUTH" in evidence.output


def test_eval_fixtures_pass_the_live_tool_boundary(tmp_path: Path) -> None:
    case = Case.model_validate(
        {
            "id": "fixture-secret",
            "query": "why does ledger-api fail?",
            "invocations": [
                {
                    "id": 1,
                    "tool_name": "query_logs",
                    "arguments": {"service": "ledger-api", "query": f"password={SECRET}"},
                    "output": "\n".join(f"2026-07-07T14:10:00Z ERROR ledger-api {p}" for p in PLANTED),
                    "error": None,
                    "retrieval_details": {"note": f"curl -u deploy:{SECRET}"},
                }
            ],
            "executor_output": None,
        }
    )
    seen: list[str] = []
    with EvalRunner() as runner:
        original = runner._run

        def spy(case: Case, store: Any) -> Any:
            result = original(case, store)
            for session in store.list_sessions():
                for invocation in store.list_invocations(session.id):
                    seen.append(json.dumps(invocation.model_dump(mode="json"), ensure_ascii=False))
            return result

        runner._run = spy  # type: ignore[method-assign]
        runner.run(case)
    assert seen and not [leak for text in seen for leak in _leaks(text)]
    assert "[REDACTED:password]" in seen[0]
