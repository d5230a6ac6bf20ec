"""Hygiene at every entry (issue 27 D5): lone surrogates, control characters and bidi controls
never reach a check, the store or a person — not from a question, a role's reply, a tool's
output, an HTTP body, an alert or an MCP client. Strategies generate the characters; every
POST route gets them and never answers 500."""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import am_alert, am_payload
from veridiag.agents.reply import RoleReply
from veridiag.api import create_app
from veridiag.config import Settings
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.characters import INVISIBLE, SHOWN_FORMAT
from veridiag.contracts.parsing import parse_executor_output
from veridiag.contracts.sanitize import (
    clean_data,
    clean_json,
    clean_text,
    is_clean,
    needs_cleaning,
    repair_json_surrogates,
)
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.store import SessionStore
from veridiag.tools.records import LogEvidence, LogSample
from veridiag.tools.results import ToolOutput
from veridiag.tools.runner import Toolbox, ToolRunner

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
#: Letters and digits mixed with what the sanitiser takes out: surrogates, controls, format marks.
_unsafe = st.text(st.characters(categories=["Cs", "Cc", "Cf", "Lo", "Nd", "Ll"]), min_size=1, max_size=24)
_planted = st.builds(
    lambda head, mark, tail: head + mark + tail,
    st.text(st.characters(categories=["Nd", "Ll"]), min_size=1, max_size=8),
    st.sampled_from([*BIDI, "\ud800", "\udfff", "\x1b", "\x00", "\x85", "\r"]),
    st.text(st.characters(categories=["Nd", "Ll"]), min_size=1, max_size=8),
)


def _safe(text: str) -> bool:
    text.encode("utf-8")  # no lone surrogate
    return not any(
        c in BIDI or _INVISIBLE.match(c) or (unicodedata.category(c) == "Cc" and c not in "\n\t") for c in text
    )


#: Format characters that show nothing: every Cf character but the few that show (number marks).
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_SHOWN = re.compile(f"[{SHOWN_FORMAT}]")


@given(st.text(st.characters(categories=["Cf", "Ll", "Lo", "Nd"]), min_size=1, max_size=24))
def test_nothing_that_shows_nothing_survives_cleaning(text: str) -> None:
    """A zero-width space inside "pay\u200bment-service", a tag character spelling hidden text: out,
    whatever other letters surround them; only the format characters that show are kept."""
    cleaned = clean_text(text)
    assert all(unicodedata.category(c) != "Cf" or _SHOWN.match(c) for c in cleaned), ascii(cleaned)
    assert cleaned == "".join(c for c in text if unicodedata.category(c) != "Cf" or _SHOWN.match(c))


@given(_unsafe | _planted)
def test_clean_text_leaves_nothing_unsafe_and_is_idempotent(text: str) -> None:
    cleaned = clean_text(text)
    assert _safe(cleaned)
    assert clean_text(cleaned) == cleaned


@given(st.text(st.characters(categories=["L", "N", "P", "Zs"]) | st.sampled_from("\n\t")))
def test_clean_text_keeps_ordinary_text(text: str) -> None:
    assert clean_text(text) == text


#: Every kind of character the fast paths tell apart: ASCII (printable, tab, newline, controls),
#: C1 controls, BMP text and format marks, surrogates, characters above U+FFFF (emoji, musical
#: formatting, tag characters, the shown Kaithi number mark).
_ANY = st.characters(codec=None, categories=["Cc", "Cf", "Cs", "Lo", "Nd", "Ll", "So", "Zs", "Po"]) | st.sampled_from(
    "\t\n\r\x00\x1b\x7f\x85\x9f\u00ad\u200b\ufeff\U0001f600\U0001d173\U000e0041\U000e007f\U000110bd"
)


def _changed_by_cleaning(c: str) -> bool:
    """The sanitiser's definition, character by character (its module docstring)."""
    return (
        bool(_INVISIBLE.match(c)) or 0xD800 <= ord(c) <= 0xDFFF or (unicodedata.category(c) == "Cc" and c not in "\n\t")
    )


@given(st.text(_ANY, max_size=40) | st.text(st.characters(max_codepoint=0x7F), max_size=40))
def test_needs_cleaning_is_true_exactly_when_a_character_would_change(text: str) -> None:
    """The fast paths (ASCII by bytes, the BMP class with a look past the first astral character)
    answer as the character-by-character definition, wherever the character stands."""
    assert needs_cleaning(text) == any(map(_changed_by_cleaning, text)), ascii(text)
    assert (clean_text(text) == text) == (not needs_cleaning(text))


@given(
    st.recursive(
        st.text(_ANY, max_size=12),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(_ANY, max_size=6), inner, max_size=3),
    )
)
def test_is_clean_never_calls_unclean_data_clean(value: Any) -> None:
    """``is_clean`` may raise a false alarm (a walk), never miss: clean data walks to itself."""
    if is_clean(value):
        assert clean_json(value) == value, ascii(value)
    if clean_json(value) == value and not any(map(_changed_by_cleaning, json.dumps(value, ensure_ascii=False))):
        assert is_clean(value) or "\\" in json.dumps(value), ascii(value)


def test_a_bidi_override_cannot_reorder_digits() -> None:
    assert clean_text("订单88\u202e121 等待") == "订单88121 等待"
    assert clean_text("a\r\nb\x1b[31mc\rd\x85e") == "a\nb\ufffd[31mc\nd e"


@given(st.recursive(_unsafe | _planted, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_unsafe, inner)))
def test_json_with_lone_surrogate_escapes_reads_as_its_cleaned_value(value: Any) -> None:
    text = json.dumps(value)  # ASCII escapes: a lone surrogate is "\\udXXX"
    repaired = json.loads(repair_json_surrogates(text))
    assert clean_json(repaired) == clean_json(value)
    json.dumps(repaired, ensure_ascii=False).encode("utf-8")
    assert repair_json_surrogates(json.dumps("\\ud800 \U0001f600")) == json.dumps("\\ud800 \U0001f600")


@given(
    st.recursive(
        _unsafe | st.integers() | st.none(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_unsafe, inner, max_size=3),
    )
)
def test_clean_data_cleans_what_clean_json_cleans_and_keeps_clean_values_as_they_are(value: Any) -> None:
    cleaned = clean_data(value)
    assert cleaned == clean_json(value)
    assert clean_data(cleaned) is cleaned  # clean: recognised without a copy
    record = LogSample(ts=datetime(2026, 7, 7, tzinfo=UTC), service="pay", level="ERROR", line=json.dumps(value))
    assert clean_data(record).line == clean_text(record.line)


@given(_planted)
def test_role_replies_and_parsed_documents_are_sanitised(text: str) -> None:
    reply = RoleReply(text=text, answered_by=EngineUse(engine="offline"))
    assert reply.text is not None and _safe(reply.text)
    parsed = parse_executor_output(json.dumps({"claims": [{"text": text}]}))
    assert parsed.value is not None and _safe(json.dumps(parsed.value, ensure_ascii=False))


class _Planted:
    """A log backend whose lines carry what the sanitiser takes out."""

    line = "order 88\u202e121 waited 2950ms\x1b[8m hidden\u200f \ud800"

    def query_logs(self, args: Any) -> ToolOutput:
        return ToolOutput(
            status="ok",
            text=f"matched 1 line\n{self.line}",
            model_text=self.line,
            retrieval_details={"patterns": [{"example": self.line}]},
            evidence=[
                LogEvidence(
                    service=args.service,
                    level=None,
                    query=args.query,
                    start=datetime(2026, 7, 7, tzinfo=UTC),
                    end=datetime(2026, 7, 8, tzinfo=UTC),
                    matched=1,
                    samples=[
                        LogSample(ts=datetime(2026, 7, 7, 10, tzinfo=UTC), service="pay", level="ERROR", line=self.line)
                    ],
                    line="matched 1 line",
                )
            ],
        )

    query_metrics = query_changes = lookup_knowledge = query_logs


def test_tool_outputs_are_stored_and_shown_sanitised(tmp_path: Path) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    planted = _Planted()
    runner = ToolRunner(store, Toolbox(planted, planted, planted, planted), store.create_session("q").id)  # type: ignore[arg-type]
    result = runner.run("query_logs", {"service": "payment-service", "query": "x\u200ey\x07"})
    stored = store.get_invocations([result.invocation_id])[result.invocation_id]
    assert _safe(json.dumps(stored.model_dump(mode="json"), ensure_ascii=False))
    assert _safe(result.for_model()) and _safe(json.dumps(result.output.model_dump(mode="json"), ensure_ascii=False))
    assert stored.arguments["query"] == "xy\ufffd"
    records = json.dumps([e.model_dump(mode="json") for e in result.output.evidence], ensure_ascii=False)
    assert "waited 2950ms\ufffd[8m hidden" in records and _safe(records)


# --- every entry of the service --------------------------------------------------------------


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("sanitize")))


@pytest.fixture(scope="module")
def client(assembly: Assembly) -> TestClient:
    app = create_app(Settings(home=Path("/nonexistent"), api_rate_limit="0"), assembly=assembly)
    return TestClient(app, base_url="http://localhost", raise_server_exceptions=False)


def test_a_planted_question_is_stored_and_answered_as_it_displays(assembly: Assembly) -> None:
    result = assembly.pipeline.run("订单\u202e88121\x1b 支付失败\ud800，帮我看看是什么原因")
    session = assembly.store.get_session(result.session_id)
    assert session is not None and session.query == "订单88121\ufffd 支付失败\ufffd，帮我看看是什么原因"
    assert _safe(result.answer) and _safe(json.dumps(session.self_evaluation, ensure_ascii=False))
    for invocation in assembly.store.list_invocations(result.session_id):
        assert _safe(invocation.output) and _safe(json.dumps(invocation.arguments, ensure_ascii=False))


JSON_ROUTES = [
    "/api/v1/chat",
    "/api/v1/chat/stream",
    "/api/v1/alerts/alertmanager",
    "/api/v1/alerts/grafana",
    "/api/v1/alerts/pagerduty",
    "/login",
    "/logout",
    "/ask",
]


def _body(route: str, text: str) -> Any:
    """A body the route reads up to where the text is used: the question, an alert's fields."""
    if route.startswith("/api/v1/chat"):
        return {"query": "订单123支付失败" + text}
    if route.endswith("pagerduty"):
        incident = {"id": f"P{text}", "title": text, "created_at": "2026-07-07T10:05:00Z", "service": {"summary": text}}
        return {"event": {"event_type": "incident.triggered", "occurred_at": "2026-07-07T10:05:00Z", "data": incident}}
    alert = am_alert(f"fp-{text}", labels={"alertname": text, "service": f"svc{text}"}, annotations={"summary": text})
    return {**am_payload(alert), "version": "1" if route.endswith("grafana") else "4", "receiver": text}


_with_surrogate = st.builds(
    lambda text, half, at: text[:at] + half + text[at:],
    _unsafe | _planted,
    st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"]),
    st.integers(0, 30),
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(route=st.sampled_from(JSON_ROUTES), text=_with_surrogate)
def test_no_post_route_answers_500_to_unsafe_strings(client: TestClient, route: str, text: str) -> None:
    body = json.dumps(_body(route, text))  # lone surrogates as "\\udXXX" escapes
    response = client.post(route, content=body, headers={"content-type": "application/json"})
    assert response.status_code < 500, (route, response.text)
    if route.startswith("/api/v1/"):  # repaired, not refused: the question is answered, the alert taken
        assert response.status_code in (200, 202), (route, response.text)
    response.content.decode("utf-8")
    assert "\\ud8" not in response.text.lower() and "\\udc" not in response.text.lower()


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(route=st.sampled_from(["/login", "/logout", "/ask"]), text=_unsafe | _planted)
def test_form_posts_with_unsafe_bytes_never_answer_500(client: TestClient, route: str, text: str) -> None:
    """Form bodies percent-encode anything, lone surrogates as the UTF-8 bytes of one (ED A0 80)."""
    encoded = quote_plus(text.encode("utf-8", "surrogatepass"))
    body = f"query={encoded}&token={encoded}&csrf_token={encoded}&lang=zh"
    response = client.post(route, content=body, headers={"content-type": "application/x-www-form-urlencoded"})
    assert response.status_code < 500, (route, response.text)
