"""Builders for Executor outputs and invocations as plain data, like a model would send."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from veridiag.contracts import InMemoryInvocations, InvocationRecord
from veridiag.contracts.audit import AuditChain
from veridiag.contracts.json import JsonObject
from veridiag.contracts.parsing import ParseStatus
from veridiag.contracts.verifier import VerifierPayload
from veridiag.gatekeeper import Gatekeeper
from veridiag.ingest.importers import import_logs, import_metrics_csv
from veridiag.text.entities import Entity, TextFacts
from veridiag.tools.backends.embedded import EmbeddedEnvironment

SESSION = "s-1"

LOG_OUTPUT = "\n".join(
    [
        "2026-07-07T10:00:58Z INFO  payment-service [http-nio-8080-exec-3] order=122 paid cost=120ms",
        "2026-07-07T10:01:02Z ERROR payment-service [http-nio-8080-exec-7] order=123 ERR_TIMEOUT "
        "request timeout cost=5300ms",
        "2026-07-07T10:01:05Z WARN  payment-service [HikariPool-1 housekeeper] HikariPool-1 - "
        "Pool stats (total=200, active=200, idle=0, waiting=37)",
    ]
)
METRIC_OUTPUT = "payment-service hikaricp_connections_active 200/200 at 2026-07-07T10:01:00Z; cpu_usage 92.4%"


def invocation(
    id: int,
    tool_name: str = "query_logs",
    output: str = LOG_OUTPUT,
    session_id: str = SESSION,
    **extra: Any,
) -> InvocationRecord:
    return InvocationRecord(id=id, session_id=session_id, tool_name=tool_name, output=output, **extra)


def binding(ids: list[Any], excerpt: str, tool_name: str = "query_logs", **extra: Any) -> dict[str, Any]:
    return {
        "source_type": "tool_trace",
        "source_id": "trace-1",
        "tool_name": tool_name,
        "source_invocation_ids": ids,
        "evidence_excerpt": excerpt,
        **extra,
    }


def claim(
    claim_id: str = "claim-1",
    text: str = "payment-service 出现请求超时日志。",
    bindings: list[dict[str, Any]] | None = None,
    claim_type: str = "symptom",
    support_level: str = "direct",
) -> dict[str, Any]:
    return {
        "claim_id": claim_id,
        "claim_type": claim_type,
        "claim_text": text,
        "support_level": support_level,
        "evidence_bindings": bindings if bindings is not None else [binding([394], "request timeout")],
    }


def v2(claims: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "answer_version": "executor_evidence_v2",
        "claims": claims if claims is not None else [claim()],
        **extra,
    }


#: The stable keys of ``veridiag ask --json`` and ``POST /api/v1/chat`` (additive changes only).
ASK_JSON_KEYS = frozenset(
    {
        "session_id",
        "verdict",
        "final_answer",
        "answer_source",
        "claims",
        "hypotheses",
        "missing_info",
        "recommended_actions",
        "gatekeeper",
        "rounds",
        "engine",
        "engine_configured",
        "engines",
    }
)


def verifier_payload(structured: dict[str, Any] | None = None) -> VerifierPayload:
    """A docs/spec §14 verifier payload around ``structured`` (what the hook would hand the Verifier)."""
    return VerifierPayload(
        original_query="q",
        executor_raw_output=None,
        executor_final_answer=None,
        executor_structured_output=structured,
        executor_output_parse_status=ParseStatus(status="valid" if structured else "missing", detail=""),
    )


def audit_chain_of(**sections: Any) -> AuditChain:
    """An audit chain as ``veridiag audit --json`` prints it, for a session ``SESSION`` with only
    ``sections`` stored."""
    session = {"id": SESSION, "created_at": "2026-07-07T10:00:00Z", "updated_at": "2026-07-07T10:05:00Z", "query": "q"}
    return AuditChain.model_validate({"session": session, **sections})


def readable(document: JsonObject) -> dict[str, Any]:
    """Stored JSON (a run's ``self_evaluation``, a tool's ``retrieval_details``) for a test to index
    into: a missing key or another shape fails the test all the same."""
    return document


#: A GitHub token shape (split so no scanner flags this file); used by the redaction, delivery and MCP tests.
GHP = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"


def billing_environment(home: Path, tmp_path: Path, secret: str) -> None:
    """billing-api slows down at 14:00 and logs, demo-style, an auth error carrying secrets."""
    env = EmbeddedEnvironment(home / "embedded.db", load_demo=False)
    start = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
    rows = ["timestamp,value"]
    for minute in range(240):
        value = 900 + minute if 120 <= minute < 150 else 110 + minute % 7
        rows.append(f"{(start + timedelta(minutes=minute)).strftime('%Y-%m-%dT%H:%M:%SZ')},{value}")
    (tmp_path / "latency.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    import_metrics_csv(env, tmp_path / "latency.csv", service="billing-api", metric="latency_p95_ms", unit="ms")
    lines = []
    for minute in range(240):
        stamp = (start + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        lines.append(f"{stamp} INFO  billing-api [worker-1] c.s.bill.Invoice - invoice {1000 + minute} issued")
        if 120 <= minute < 150:
            lines.append(
                f"{stamp} ERROR billing-api [worker-2] c.s.bill.Ledger - ERR_DB_AUTH login failed for "
                f"postgres://ledger:{secret}@db-1:5432/ledger password={secret} Authorization: Bearer {GHP}"
            )
    (tmp_path / "billing.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_logs(env, tmp_path / "billing.log", service="billing-api")


#: Inside the demo day's payment incident (10:00–10:30 UTC on 2026-07-07): an alert's startsAt.
STARTS_AT = "2026-07-07T10:05:00Z"


def am_alert(fingerprint: str = "f1", service: str = "payment-service", **extra: Any) -> dict[str, Any]:
    alert: dict[str, Any] = {
        "status": "firing",
        "labels": {
            "alertname": "PaymentLatencyHigh",
            "service": service,
            "instance": "10.0.0.7:8080",
            "namespace": "shop",
        },
        "annotations": {"summary": "p99 latency above 2s", "description": "payment requests are slow"},
        "startsAt": STARTS_AT,
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus/graph",
        "fingerprint": fingerprint,
    }
    alert.update(extra)
    return alert


def am_payload(*alerts: dict[str, Any], status: str = "firing") -> dict[str, Any]:
    return {
        "version": "4",
        "groupKey": '{}:{alertname="PaymentLatencyHigh"}',
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "veridiag",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": list(alerts),
    }


THUNDERBIRD_START = datetime(2005, 11, 9, 20, 1, tzinfo=UTC)


def thunderbird_lines(minutes: int = 30) -> list[str]:
    """Lines in loghub's Thunderbird shape: ``-`` marks no alert and no level; one failure every minute."""
    lines = []
    for minute in range(minutes):
        moment = THUNDERBIRD_START + timedelta(minutes=minute)
        stamp = int(moment.timestamp())
        local = (moment - timedelta(hours=8)).strftime("%b %-d %H:%M:%S")
        head = f"- {stamp} 2005.11.09 dn{minute} {local} dn{minute}/dn{minute}"
        lines.append(f"{head} ntpd[74{minute:02d}]: synchronized to 10.100.20.250, stratum 3")
        lines.append(f"{head} sshd[31{minute:02d}]: error: Bind to port 22 on 0.0.0.0 failed: Address already in use.")
    return lines


def answer_line(answer: str) -> tuple[str, str]:
    """The first line after the scope (issue 28), as its label (``confirmed``, ``inferred``,
    ``unknown``; "" when it has none) and what it says after the label."""
    from veridiag.agents.template import template_phrases

    line = answer.strip().split("\n\n")[1]
    for words in template_phrases().values():
        for label in ("confirmed", "inferred", "unknown"):
            if line.startswith(words[f"answer_{label}"]):
                return label, line[len(words[f"answer_{label}"]) :]
    return "", line


def counted_lexings(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, frozenset[str]]]:
    """Every lexing ``TextFacts`` does from now on, as (text read, services told of)."""
    lexed: list[tuple[str, frozenset[str]]] = []
    lex = TextFacts._lex

    def counted(self: TextFacts) -> list[tuple[Entity, tuple[str, ...]]]:
        lexed.append((self.text, self._services))
        return lex(self)

    monkeypatch.setattr(TextFacts, "_lex", counted)
    return lexed


@cache
def _gatekeeper() -> Gatekeeper:
    return Gatekeeper()


def rule_outcome(rule_id: str, text: str, output: str, excerpt: str) -> tuple[str, str]:
    """The outcome and reason of the Gatekeeper rule ``rule_id`` for one claim ``text`` quoting
    ``excerpt`` of one call's ``output``; ("pass", "nothing to judge") when the rule says nothing."""
    store = InMemoryInvocations([invocation(394, output=output)])
    report = _gatekeeper().validate(
        v2([claim(text=text, bindings=[binding([394], excerpt)])]), session_id=SESSION, invocations=store
    )
    checks = [c for t in report.claim_traces for c in t.checks if c.rule_id == rule_id]
    return (checks[0].outcome, checks[0].reason) if checks else ("pass", "nothing to judge")
