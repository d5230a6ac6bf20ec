"""Secrets never leave the tool boundary: what is redacted and what is not (zh + en), the runner
redacting everything it keeps or shows, a planted secret through a whole diagnosis, and the
redactor's properties and speed."""

from __future__ import annotations

import json
import re
import statistics
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from typer.testing import CliRunner

from tests.builders import GHP, billing_environment, readable
from veridiag.api import create_app
from veridiag.cli.app import app
from veridiag.config import Settings
from veridiag.pipeline.audit import audit_chain
from veridiag.pipeline.factory import assemble
from veridiag.pipeline.report import answer_document
from veridiag.redaction import MARKER_PATTERN, Redactor, default_redactor
from veridiag.store import SessionStore
from veridiag.tools import Toolbox, ToolOutput, ToolRunner
from veridiag.tools.args import QueryLogsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.factory import build_toolbox
from veridiag.tools.records import LogEvidence, LogSample, TemplateCount

REDACTOR = default_redactor()
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
AZURE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\n"
    "aaYEI6hfXXhOgFUPfGUd1yh8jLhwnV0CGeG0vY4nbvsnV7MbdE7Vs+Y1xKCJnDst\n"
    "-----END RSA PRIVATE KEY-----"
)

#: (text, redacted) — logs, configs, headers and URLs as they appear in tool output.
SECRETS = [
    # key = value, key: value, JSON, YAML
    (
        "2026-07-07T10:00:00.157Z ERROR payment-service [exec-1] c.s.pay.Db - login failed user=pay "
        "password=hunter2 host=db-1",
        "2026-07-07T10:00:00.157Z ERROR payment-service [exec-1] c.s.pay.Db - login failed user=pay "
        "password=[REDACTED:password] host=db-1",
    ),
    (
        'body {"username": "pay", "password": "s3cr3t pass"}',
        'body {"username": "pay", "password": "[REDACTED:password]"}',
    ),
    ("  db_password: changeme", "  db_password: [REDACTED:password]"),
    ("SPRING_DATASOURCE_PASSWORD='Tr0ub4dor&3'", "SPRING_DATASOURCE_PASSWORD='[REDACTED:password]'"),
    ("client_secret=8f14e45fceea167a5a36dedd4bea2543", "client_secret=[REDACTED:secret]"),
    ("api_key: 'AbCdEf123456'", "api_key: '[REDACTED:api-key]'"),
    ("X-Api-Key: 9d8c7b6a5f4e3d2c", "X-Api-Key: [REDACTED:api-key]"),
    ("DJANGO_SECRET_KEY=django-insecure-4x9", "DJANGO_SECRET_KEY=[REDACTED:secret-key]"),
    ("GET /cb?code=7&access_token=ya29.a0AfH6SMBx&state=1", "GET /cb?code=7&access_token=[REDACTED:token]&state=1"),
    (
        "jdbc:mysql://db-1:3306/pay?user=root&password=Secr3t!",
        "jdbc:mysql://db-1:3306/pay?user=root&password=[REDACTED:password]",
    ),
    ("credentials := 'svc:Xy7'", "credentials := '[REDACTED:credential]'"),
    # URL userinfo
    ("postgres://app:p@ss:w0rd@db.internal:5432/pay", "postgres://app:[REDACTED:password]@db.internal:5432/pay"),
    ("redis://:R3disPass@cache-1:6379/0", "redis://:[REDACTED:password]@cache-1:6379/0"),
    # Authorization
    (f"Authorization: Bearer {JWT}", "Authorization: Bearer [REDACTED:bearer-token]"),
    ("authorization=Basic dXNlcjpwYXNzd29yZA==", "authorization=Basic [REDACTED:basic-auth]"),
    (f"curl -H 'Authorization: token {GHP}' api", "curl -H 'Authorization: token [REDACTED:token]' api"),
    ("upstream sent Bearer abcdef0123456789 to auth", "upstream sent Bearer [REDACTED:bearer-token] to auth"),
    # cloud keys and tokens
    ("using AKIAIOSFODNN7EXAMPLE for s3", "using [REDACTED:aws-access-key] for s3"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [REDACTED:aws-secret-key]",
    ),
    ('{"aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}', '{"aws_secret": "[REDACTED:aws-secret-key]"}'),
    ("maps call with AIzaSyB" + "x1" * 16 + " failed", "maps call with [REDACTED:gcp-api-key] failed"),
    (
        '{"type": "service_account", "private_key_id": "3f2a1b", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\\n-----END PRIVATE KEY-----\\n"}',
        '{"type": "service_account", "private_key_id": "3f2a1b", "private_key": "[REDACTED:private-key]"}',
    ),
    (
        f"DefaultEndpointsProtocol=https;AccountName=payblob;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=payblob;AccountKey=[REDACTED:azure-storage-key];"
        "EndpointSuffix=core.windows.net",
    ),
    (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abcDEF0123456789abcDEF0123=",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=[REDACTED:azure-storage-key]",
    ),
    (
        "GET https://payblob.blob.core.windows.net/c/f?sv=2022-11-02&sig=abcDEF123%2Bxyz%3D456789 403",
        "GET https://payblob.blob.core.windows.net/c/f?sv=2022-11-02&sig=[REDACTED:azure-sas-signature] 403",
    ),
    (f"pushed with {GHP}", "pushed with [REDACTED:github-token]"),
    ("gho_" + "Q" * 36, "[REDACTED:github-token]"),
    ("token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "token [REDACTED:github-token]"),
    ("glpat-" + "x1Y2z3" * 4 + " rejected", "[REDACTED:gitlab-token] rejected"),
    ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack [REDACTED:slack-token]"),
    (
        "POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX 200",
        "POST [REDACTED:slack-webhook] 200",
    ),
    ("stripe sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED:stripe-key]"),
    (f"session {JWT} expired", "session [REDACTED:jwt] expired"),
    # PEM blocks, whole and cut short
    (
        f"loaded key:\n{PEM}\nnext line",
        "loaded key:\n-----BEGIN RSA PRIVATE KEY-----[REDACTED:private-key]-----END RSA PRIVATE KEY-----\nnext line",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "2026-07-07T10:00:00Z INFO next entry",
        "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED:private-key]\n2026-07-07T10:00:00Z INFO next entry",
    ),
    # zh
    ("连接数据库失败：密码=Abc12345，用户=admin", "连接数据库失败：密码=[REDACTED:password]，用户=admin"),
    ("数据库密码：Zx9!mQ2#", "数据库密码：[REDACTED:password]"),
    (f"配置中心下发 token: {GHP}", "配置中心下发 token: [REDACTED:github-token]"),
    ("回调令牌=cb-7f3a9e21", "回调令牌=[REDACTED:token]"),
    ("阿里云 AccessKeySecret=uV3F3YluFJax1cknvbcGwgjX4gG3", "阿里云 AccessKeySecret=[REDACTED:secret]"),
    ("支付网关私钥：MIIEvQIBADANBgkqhkiG9w0B", "支付网关私钥：[REDACTED:private-key]"),
    ("告警推送 https://hooks.slack.com/services/T0AB/B0CD/abcdEFGH1234 失败", "告警推送 [REDACTED:slack-webhook] 失败"),
    # values with non-ASCII characters go whole, up to the punctuation ending them
    ("login admin password=pässwörd123 failed", "login admin password=[REDACTED:password] failed"),
    ("db_pass=Ünïcode9 rejected", "db_pass=[REDACTED:password] rejected"),
    ("password=\ufffd\ufffdBin5ecret (bytes undecodable)", "password=[REDACTED:password] (bytes undecodable)"),
    ("api_key=\u200bak-1234567890 rejected", "api_key=[REDACTED:api-key] rejected"),
    ("token=abc123€def9", "token=[REDACTED:token]"),
    ("密码：张三2024，请重试", "密码：[REDACTED:password]，请重试"),
]

#: Ordinary evidence that must come through untouched.
NOT_SECRETS = [
    "2026-07-07T10:01:02Z ERROR payment-service [exec-7] order=123 ERR_TIMEOUT request timeout cost=5300ms",
    "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7",
    "request_id=3f2b6c1e-8d4a-4b6f-9c2d-7e1a5b3c9d0f uuid 123e4567-e89b-12d3-a456-426614174000",
    "2026-07-07T09:58:00Z gateway deploy: gw-2026.07.07-1 (commit 9f1c2ab3de4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b)",
    "payment-service hikaricp_connections_active 200/200 at 2026-07-07T10:01:00Z; cpu_usage 92.4%",
    "ERR_DB_LOCK lock wait timeout on t_order; ERR_UPSTREAM_TIMEOUT after 3000ms",
    "token cache miss ratio above 0.2",
    "applied config v42: spring.datasource.hikari.maximum-pool-size=50 (was 100)",
    "HikariPool-1 - Connection is not available, request timed out after 5000ms (total=50, active=50, idle=0)",
    "llm usage max_tokens=1024 prompt_tokens=512 total_tokens=1536",
    "policy password_min_length=12 password_expiry_days=90 secret_name=pay-db",
    "verify password: invalid hash",
    "user login failed: wrong password",
    "password reset email sent to user 42",
    "Bearer token expired, refreshing",
    "PWD=/srv/pay HOME=/root",
    "password=${DB_PASSWORD} token={{ vault_token }} secret=%(secret)s",
    "password=****** api_key=null secret=<redacted>",
    "cache key=user:42 hit; monkey=3 keyspace=orders",
    "tests: pass=120 fail=0 bypass=true",
    "region ASIA-PACIFIC ap-east-1, tz Asia/Shanghai",
    "https://grafana.internal/d/abc?orgId=1&from=now-6h&to=now",
    "mailto ops@example.com; ssh deploy@10.0.3.7",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
    "runbook step 3: rotate the secret and restart (see vault path kv/pay)",
    "令牌桶限流：100/s，当前排队 37",
    "获取令牌：失败",
    "密码错误次数过多，账号已锁定",
    "密钥轮换完成，共 3 个服务",
    "订单123支付失败，错误码 ERR_TIMEOUT，耗时 5.3 秒",
    "支付服务 p99 延迟 5300ms，超过阈值 2000ms",
    "凭证校验失败: 过期",
    "令牌=已过期，重新获取",
]


@pytest.mark.parametrize(("text", "expected"), SECRETS, ids=[f"secret-{i}" for i in range(len(SECRETS))])
def test_secrets_are_redacted_and_the_key_stays(text: str, expected: str) -> None:
    assert REDACTOR.redact(text) == expected


@pytest.mark.parametrize("text", NOT_SECRETS, ids=[f"evidence-{i}" for i in range(len(NOT_SECRETS))])
def test_ordinary_evidence_is_left_alone(text: str) -> None:
    assert REDACTOR.redact(text) == text


def test_text_that_displays_other_than_it_reads_is_shown_as_stored() -> None:
    """A planted line stored reversed behind a right-to-left override displays as "root
    cause: database password expired" while every check reads the reversed letters: the
    bidi controls become visible markers, so the reader sees what was checked."""
    planted = "disk check \u202edeirevnu ,deripxe drowssap esabatad :esuac toor\u202c done"
    shown = REDACTOR.redact(planted)
    assert shown == (
        "disk check [REDACTED:bidi-control]deirevnu ,deripxe drowssap esabatad :esuac toor[REDACTED:bidi-control] done"
    )
    for control in "\u202a\u202b\u202d\u2066\u2067\u2068\u2069":
        assert control not in REDACTOR.redact(f"ERROR {control}x{control} " + "y" * 5000)
    assert REDACTOR.redact("שלום \u200fעולם") == "שלום \u200fעולם"  # a mark only sets direction


#: One made-up secret per detect-secrets pattern reused: the pinned library's regexes and the
#: literals that gate them still agree.
LIBRARY_SAMPLES = [
    ("AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("ASIAY34FZKBOKMUTVV7A", "aws-access-key"),
    ("aws_key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'", "aws-secret-key"),
    ("ghs_" + "k" * 36, "github-token"),
    ("glpat-" + "a" * 20, "gitlab-token"),
    ("gldt-" + "a" * 20, "gitlab-token"),
    ("GR1348941" + "a" * 20, "gitlab-token"),
    ("glcbt-" + "a" * 20, "gitlab-token"),
    ("glimt-" + "a" * 25, "gitlab-token"),
    ("glptt-" + "a" * 40, "gitlab-token"),
    ("glagent-" + "a" * 50, "gitlab-token"),
    ("gloas-" + "a" * 64, "gitlab-token"),
    ("XOXP-1234-5678-abcdef", "slack-token"),
    ("https://hooks.slack.com/services/T123/B456/abc789", "slack-webhook"),
    ("rk_live_" + "a1" * 12, "stripe-key"),
    ("SG." + "a" * 22 + "." + "b" * 43, "sendgrid-key"),
    ("sk-" + "a" * 20 + "T3BlbkFJ" + "b" * 20, "openai-key"),
    ("pypi-AgEIcHlwaS5vcmc" + "a" * 70, "pypi-token"),
    ("sq0csp-" + "a" * 43, "square-oauth-secret"),
]


@pytest.mark.parametrize(("secret", "kind"), LIBRARY_SAMPLES, ids=[k for _, k in LIBRARY_SAMPLES])
def test_the_reused_library_patterns_still_match(secret: str, kind: str) -> None:
    assert dict(REDACTOR.scan(f"found {secret} here").counts) == {kind: 1}
    assert secret not in REDACTOR.redact(f"found {secret} here")


@pytest.mark.parametrize(("text", "expected"), SECRETS[:8] + SECRETS[-6:])
def test_long_outputs_take_the_same_rules_as_short_lines(text: str, expected: str) -> None:
    """A long string is prefiltered differently from a short one; the result may not differ."""
    filler = "\n".join(NOT_SECRETS) * 20
    assert len(filler) > 4096
    assert REDACTOR.redact(f"{filler}\n{text}\n{filler}") == f"{filler}\n{expected}\n{filler}"


def test_the_demo_day_holds_no_false_positive(demo_env: EmbeddedEnvironment) -> None:
    """Every log line, template, change and runbook of the bundled demo comes through as it is."""
    with demo_env.connect() as conn:
        strings = [row[0] for row in conn.execute("SELECT line FROM log_line")]
        strings += [row[0] for row in conn.execute("SELECT template FROM log_template")]
        strings += [str(v) for row in conn.execute("SELECT * FROM change_event") for v in row if isinstance(v, str)]
    assert len(strings) > 30_000
    assert [s for s in strings if REDACTOR.redact(s) != s] == []


def test_counts_name_the_kinds() -> None:
    found = REDACTOR.scan(f"password=a1 token=b2 using AKIAIOSFODNN7EXAMPLE and {GHP}")
    assert dict(found.counts) == {"password": 1, "token": 1, "aws-access-key": 1, "github-token": 1}


def test_structures_are_walked_and_secret_named_keys_redacted_whole() -> None:
    counts: Counter[str] = Counter()
    data = {"query": "password=hunter2", "password": "hunter2", "nested": [("x", {"api-key": "k1"})], "n": 3}
    assert REDACTOR.redact_data(data, counts) == {
        "query": "password=[REDACTED:password]",
        "password": "[REDACTED:password]",
        "nested": [("x", {"api-key": "[REDACTED:api-key]"})],
        "n": 3,
    }
    assert counts == {"password": 2, "api-key": 1}
    clean = {"service": "pay", "matched": 2}
    assert REDACTOR.redact_data(clean) is clean, "nothing to redact: nothing copied"


def test_records_are_walked_generically() -> None:
    line = "2026-07-07T10:00:00Z ERROR pay password=hunter2"
    evidence = LogEvidence(
        service="pay",
        level=None,
        query=None,
        start=datetime(2026, 7, 7, tzinfo=UTC),
        end=datetime(2026, 7, 8, tzinfo=UTC),
        matched=1,
        templates=[
            TemplateCount(
                template="ERROR pay password=<*>",
                level="ERROR",
                count=1,
                first=datetime(2026, 7, 7, tzinfo=UTC),
                last=datetime(2026, 7, 7, tzinfo=UTC),
                example=line,
                line=f"  1× ERROR {line}",
            )
        ],
        samples=[LogSample(ts=datetime(2026, 7, 7, tzinfo=UTC), service="pay", level="ERROR", line=line)],
        line="matched 1 lines (ERROR 1)",
    )
    redacted = REDACTOR.redact_data(evidence)
    assert redacted.samples[0].line == redacted.templates[0].example == line.replace("hunter2", "[REDACTED:password]")
    assert redacted.templates[0].template == "ERROR pay password=<*>", "a placeholder is no secret"
    assert evidence.samples[0].line == line, "the backend's records are not changed in place"


def test_patterns_from_config(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, redaction={"patterns": [r"corp_key=(?P<secret>\w+)", r"\bEMP-\d{6}\b"]})
    redactor = build_toolbox(settings).redactor
    text = "corp_key=abc123 by EMP-004211; password=x1"
    assert redactor.redact(text) == "corp_key=[REDACTED:custom] by [REDACTED:custom]; password=[REDACTED:password]"
    off = build_toolbox(Settings(home=tmp_path, redaction={"enabled": False})).redactor
    assert off.redact(text) == text
    assert build_toolbox(Settings(home=tmp_path)).redactor is default_redactor()


@pytest.mark.parametrize(
    ("pattern", "message"), [("(unclosed", "not a valid regex"), ("x*", "matches the empty string")]
)
def test_bad_patterns_are_refused_at_load(tmp_path: Path, pattern: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(home=tmp_path, redaction={"patterns": [pattern]})


# -- the tool boundary ------------------------------------------------------------------------

SECRET_LINE = "2026-07-07T10:00:00.157Z ERROR payment-service [exec-1] c.s.pay.Db - login failed password=Pl4nted-9f2"
SAFE_LINE = SECRET_LINE.replace("Pl4nted-9f2", "[REDACTED:password]")


class Leaky:
    """A backend whose every field carries the planted secret."""

    name = "leaky"

    def query_logs(self, args: QueryLogsArgs) -> ToolOutput:
        text = "\n".join(["query_logs service=payment-service", "matched 2 lines (ERROR 2)", SECRET_LINE, SECRET_LINE])
        evidence = LogEvidence(
            service="payment-service",
            level=None,
            query=args.query,
            start=datetime(2026, 7, 7, tzinfo=UTC),
            end=datetime(2026, 7, 8, tzinfo=UTC),
            matched=2,
            samples=[
                LogSample(ts=datetime(2026, 7, 7, 10, tzinfo=UTC), service="pay", level="ERROR", line=SECRET_LINE)
            ],
            line="matched 2 lines (ERROR 2)",
        )
        return ToolOutput(
            status="ok",
            text=text,
            model_text="\n".join(text.split("\n")[:3]),
            retrieval_details={"patterns": [{"example": SECRET_LINE, "count": 2}], "auth": "Bearer abc123def456"},
            evidence=[evidence],
        )

    def query_metrics(self, args: Any) -> ToolOutput:
        raise RuntimeError("connect to https://admin:Pl4nted-9f2@prom.internal failed")

    query_changes = lookup_knowledge = query_logs


def test_the_runner_stores_and_shows_only_redacted_text(tmp_path: Path) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    leaky = Leaky()
    runner = ToolRunner(store, Toolbox(leaky, leaky, leaky, leaky), store.create_session("q").id)  # type: ignore[arg-type]
    result = runner.run("query_logs", {"service": "payment-service", "query": "password=Pl4nted-9f2"})
    stored = store.get_invocations([result.invocation_id])[result.invocation_id]
    everything = json.dumps(stored.model_dump(mode="json")) + result.for_model() + result.output.model_dump_json()
    everything += "".join(json.dumps(e.model_dump(mode="json")) for e in result.output.evidence)
    assert "Pl4nted-9f2" not in everything and "abc123def456" not in everything
    assert stored.output == result.output.text and SAFE_LINE in stored.output.split("\n")
    assert stored.arguments["query"] == "password=[REDACTED:password]"
    assert stored.retrieval_details is not None
    assert stored.retrieval_details["redactions"] == {"total": 4, "by_kind": {"bearer-token": 1, "password": 3}}
    # every record line is a line of the stored output, so an excerpt taken from it is found there
    sample = result.output.evidence[0].samples[0].line  # type: ignore[union-attr]
    assert sample == SAFE_LINE and sample in stored.output.split("\n")

    failed = runner.run("query_metrics", {"service": "payment-service", "metric": "cpu"})
    stored = store.get_invocations([failed.invocation_id])[failed.invocation_id]
    assert failed.status == "error" and "Pl4nted-9f2" not in (stored.error or "") + stored.output
    assert "https://admin:[REDACTED:password]@prom.internal" in (stored.error or "")


def test_nothing_redacted_leaves_no_count(tmp_path: Path, demo_env: EmbeddedEnvironment) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    runner = ToolRunner(store, Toolbox(demo_env, demo_env, demo_env, demo_env), store.create_session("q").id)
    window = {"start": "2026-07-07T00:00:00Z", "end": "2026-07-08T00:00:00Z"}
    result = runner.run("query_logs", {"service": "payment-service", "level": "ERROR", **window})
    stored = store.get_invocations([result.invocation_id])[result.invocation_id]
    assert result.status == "ok" and "redactions" not in (stored.retrieval_details or {})


def test_a_planted_secret_never_leaves_the_tool_boundary(tmp_path: Path) -> None:
    secret = "Pl4nted-S3cret-9f2"
    home = tmp_path / "home"
    billing_environment(home, tmp_path, secret)
    assembly = assemble(Settings(home=home, embedded={"load_demo": False}))
    result = assembly.pipeline.run("billing-api 从 14点 开始报错，怎么回事？")
    assert result.status == "completed" and result.verdict == "PASS", result.answer
    audited = audit_chain(assembly.store, result.session_id)
    assert audited is not None
    chain = audited.model_dump(mode="json")  # as `veridiag audit --json` prints it
    seen = {
        "answer": result.answer,
        "audit chain": json.dumps(chain, ensure_ascii=False),
        "ask --json": answer_document(result, assembly.engine).model_dump_json(),
        "self evaluation": json.dumps(result.self_evaluation, ensure_ascii=False),
    }
    for where, text in seen.items():
        assert secret not in text and GHP not in text, f"the secret reached the {where}"
    # the answer quotes the redacted line, and the Gatekeeper found every excerpt in the stored output
    assert "password=[REDACTED:password] Authorization: Bearer [REDACTED:bearer-token]" in result.answer
    assert chain["gatekeeper"]["result"]["status"] == "pass"
    outputs = {i["id"]: i["output"] for i in chain["invocations"]}
    excerpts = [
        (i, b["evidence_excerpt"])
        for c in readable(result.self_evaluation)["verifier_evaluation"]["executor_structured_output"]["claims"]
        for b in c["evidence_bindings"]
        for i in b["source_invocation_ids"]
    ]
    redacted = [(i, e) for i, e in excerpts if "[REDACTED:" in e]
    assert redacted and all(e in outputs[i] for i, e in redacted), "a quoted redacted line is found verbatim"
    counted = [i["retrieval_details"].get("redactions") for i in chain["invocations"] if i["tool_name"] == "query_logs"]
    assert any(c and c["by_kind"]["password"] > 0 and c["by_kind"]["bearer-token"] > 0 for c in counted)
    # what a model would be shown of the same call
    store = SessionStore(f"sqlite:///{tmp_path / 'model.db'}")
    toolbox = build_toolbox(Settings(home=home, embedded={"load_demo": False}))
    runner = ToolRunner(store, toolbox, store.create_session("model view").id)
    shown = runner.run("query_logs", {"service": "billing-api", "level": "ERROR", "start": "2026-07-07T14:00:00Z"})
    assert "[REDACTED:password]" in shown.for_model() and secret not in shown.for_model()


def test_ask_json_and_audit_carry_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "Pl4nted-S3cret-9f2"
    billing_environment(tmp_path, tmp_path, secret)
    monkeypatch.setenv("VERIDIAG_HOME", str(tmp_path))
    monkeypatch.setenv("VERIDIAG_EMBEDDED__LOAD_DEMO", "false")
    for name in ("VERIDIAG_ENGINE", "VERIDIAG_LLM__DEFAULT__MODEL", "VERIDIAG_API_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    cli = CliRunner()
    asked = cli.invoke(app, ["ask", "Why does billing-api fail since 14:00?", "--json"])
    assert asked.exit_code == 0, asked.output
    document = json.loads(asked.stdout)
    audit = cli.invoke(app, ["audit", document["session_id"], "--json"])
    assert audit.exit_code == 0
    for text in (asked.stdout, audit.stdout):
        assert secret not in text and GHP not in text and "[REDACTED:password]" in text


def test_the_workbench_shows_the_count_and_no_secret(tmp_path: Path) -> None:
    secret = "Pl4nted-S3cret-9f2"
    home = tmp_path / "home"
    billing_environment(home, tmp_path, secret)
    assembly = assemble(Settings(home=home, embedded={"load_demo": False}))
    client = TestClient(create_app(Settings(home=Path("/nonexistent")), assembly=assembly), base_url="http://localhost")
    session_id = client.post("/api/v1/chat", json={"query": "Why does billing-api fail since 14:00?"}).json()[
        "session_id"
    ]
    page = client.get(f"/sessions/{session_id}", params={"lang": "en"}).text
    assert secret not in page and GHP not in page
    assert "secrets redacted" in page and "password=[REDACTED:password]" in page


def test_runbook_problems_are_logged_redacted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "runbooks"
    folder.mkdir()
    (folder / "bad.md").write_text("---\nid: rb-x\ntitle: [oops password=Pl4nted-9f2\n---\nbody\n", encoding="utf-8")
    with caplog.at_level("WARNING"):
        env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False, runbook_dir=folder)
    assert env.skipped_runbooks and "Pl4nted-9f2" not in caplog.text + "".join(env.skipped_runbooks)
    assert "password=[REDACTED:password]" in caplog.text


# -- properties and speed --------------------------------------------------------------------

fragments = st.sampled_from(
    [
        "password=",
        "password: ",
        '"token": "',
        "Authorization: Bearer ",
        "Bearer ",
        "://u:",
        "@",
        "AKIA",
        "IOSFODNN7EXAMPLE",
        "ghp_",
        "eyJ",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "\n",
        " ",
        "=",
        ":",
        '"',
        "[REDACTED:password]",
        "[REDACTED:",
        "]",
        "密码：",
        "令牌=",
        "db_",
        "pass",
        "hunter2",
        "x" * 40,
        "AccountKey=",
        "sig=",
        "xoxb-1-",
    ]
)
texts = st.text(max_size=200) | st.lists(fragments | st.text(max_size=12), max_size=25).map("".join)


@given(texts)
def test_redaction_is_idempotent_and_bounded(text: str) -> None:
    found = REDACTOR.scan(text)  # never raises
    assert REDACTOR.redact(found.text) == found.text, "redacting twice = once"
    markers = sum(len(m.group(0)) for m in MARKER_PATTERN.finditer(found.text))
    assert len(found.text) <= len(text) + markers, "never longer than the markers it adds"
    assert sum(n for _, n in found.counts) >= (1 if found.text != text else 0)


@given(texts, texts)
def test_rules_are_line_local(first: str, second: str) -> None:
    """What a record line redacts to alone is what it redacts to inside the output."""
    if "private key" in (first + second).lower():
        return  # a PEM block is the one rule that spans lines (and stays inside one record)
    joined = REDACTOR.redact(f"{first}\n{second}")
    assert joined == f"{REDACTOR.redact(first)}\n{REDACTOR.redact(second)}"


#: One pass over a text's words: the work redaction is measured against, in the same run.
_WORD = re.compile(r"\w+")


def _relative_cost(work: Any, text: str, runs: int = 21) -> tuple[float, float]:
    """The median over ``runs`` of ``work``'s time divided by one pass over ``text``'s words, timed
    right before it (each pair under the same load), and ``work``'s median in ms."""
    ratios, times = [], []
    for _ in range(runs):
        started = time.perf_counter()
        [word.lower() for word in _WORD.findall(text)]
        baseline = time.perf_counter() - started
        started = time.perf_counter()
        work()
        spent = time.perf_counter() - started
        ratios.append(spent / baseline)
        times.append(spent * 1000)
    return statistics.median(ratios), statistics.median(times)


def test_a_64_kb_log_output_is_redacted_in_a_few_ms(demo_env: EmbeddedEnvironment) -> None:
    """A benchmark, not a timed call: redaction's time over a 64 KB log output against one pass over
    its words in the same run (~5× on this machine, idle or beside two busy processes: its absolute
    time doubled under that load, failing a fixed bound; measured 2026-12-07)."""
    output = demo_env.query_logs(QueryLogsArgs(service="payment-service", start="2026-07-07T00:00:00Z", limit=500))
    clean = output.text[:65536]
    lines = clean.split("\n")
    planted = "\n".join(f"{line} password=hunter{i}" if i % 25 == 0 else line for i, line in enumerate(lines))
    fresh = Redactor()  # no cache: every run scans
    clean_ratio, clean_ms = _relative_cost(lambda: fresh._redact(clean), clean)
    planted_ratio, planted_ms = _relative_cost(lambda: fresh._redact(planted), planted)
    print(
        f"\n64 KB demo log output: clean {clean_ms:.2f} ms ({clean_ratio:.1f}× a pass over its words), "
        f"{len(lines) // 25 + 1} secrets {planted_ms:.2f} ms ({planted_ratio:.1f}×), median of 21"
    )
    assert fresh._redact(clean).text == clean
    assert clean_ratio < 10 and planted_ratio < 20, "a few passes over the text's words"
    assert clean_ms < 100 and planted_ms < 200, "a few ms: far from these bounds on any machine"
