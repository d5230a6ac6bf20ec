"""An absolute its quoted lines do not state ("every", "都", "一直") is a generalisation the claim
drew: shown as an inference, never as what the lines say, and never in a PASS (issue 27 D3).
The words come from the vocabulary file, so a word added there is tested here."""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper
from veridiag.pipeline.guardrails import evaluate
from veridiag.pipeline.hook import verifier_input
from veridiag.pipeline.verifier_reply import parse_verifier_output
from veridiag.store import SessionStore
from veridiag.text.concepts import ConceptFile, concepts
from veridiag.text.wordfiles import bundled_words

_LINES = [
    "2026-07-07T10:01:02Z ERROR payment-service [worker-7] order=123 request failed status=504",
    "2026-07-07T10:01:09Z ERROR payment-service [worker-2] order=124 request failed status=504",
]
_OUTPUT = "query_logs service=payment-service\nlines:\n" + "\n".join([*_LINES, "... 40 more lines"])
_GATEKEEPER = Gatekeeper()


@cache
def _store() -> SessionStore:
    """One session holding the query the claims cite, for the life of the test process."""
    store = SessionStore(f"sqlite:///{Path(tempfile.mkdtemp(prefix='absolute-')) / 'store.db'}")
    store.create_session("为什么支付失败？", session_id=SESSION)
    store.record_invocation(
        session_id=SESSION, tool_name="query_logs", arguments={}, status="ok", output=_OUTPUT, invocation_id=101
    )
    return store


@cache
def _absolutes() -> list[str]:
    words = bundled_words("veridiag.text", "concepts.yaml", ConceptFile)
    return sorted(w for entry in words.concepts.values() if entry.kind == "absolute" for w in entry.words)


@cache
def _over_time() -> list[str]:
    """The absolutes over time (the ``always`` concept)."""
    return sorted(bundled_words("veridiag.text", "concepts.yaml", ConceptFile).concepts["always"].words)


def _judged(second: str) -> tuple[str, dict[str, str]]:
    """The verdict and each claim's final label, an obedient verifier calling every claim observed."""
    claims = [
        claim("claim-1", "订单 123 的请求 10:01:02 返回 504。", [binding([101], _LINES[0])]),
        claim("claim-2", second, [binding([101], line) for line in _LINES]),
    ]
    hook = verifier_input(
        "为什么支付失败？",
        json.dumps(v2(claims), ensure_ascii=False),
        session_id=SESSION,
        round=1,
        invocations=_store(),
        gatekeeper=_GATEKEEPER,
    )
    reply = {
        "verdict": "PASS",
        "groundedness_score": 1.0,
        "rationale": "ok",
        "claim_checks": [
            {"claim_id": c["claim_id"], "verification": "direct_observation", "detail": "ok"} for c in claims
        ],
    }
    evaluation = evaluate(parse_verifier_output(json.dumps(reply)), hook)
    return evaluation.verdict, {c.claim_id: c.verification for c in evaluation.claim_checks}


@given(st.sampled_from(_absolutes()), st.sampled_from(["payment-service 的请求{w}失败了", "{w} request failed"]))
def test_an_absolute_its_lines_do_not_state_is_an_inference_and_no_pass(word: str, form: str) -> None:
    """Two listed failures of more than forty lines: "every request failed" is drawn, not read."""
    verdict, labels = _judged(form.format(w=word))
    assert labels["claim-1"] == "direct_observation"
    assert labels["claim-2"] in ("reasonable_inference", "overstated", "unsupported"), (word, labels)
    assert verdict != "PASS", (word, verdict, labels)


def test_the_same_claim_without_the_absolute_is_observed_and_may_pass() -> None:
    verdict, labels = _judged("payment-service 的请求 10:01:09 也失败了，返回 504。")
    assert labels == {"claim-1": "direct_observation", "claim-2": "direct_observation"}
    assert verdict == "PASS"
    verdict, labels = _judged("payment-service 的请求都失败了。")
    assert labels["claim-2"] == "reasonable_inference" and verdict == "LOW_CONFID", (verdict, labels)


@given(st.data())
def test_a_zero_before_an_absolute_over_time_is_a_value_not_its_denial(data: st.DataObject) -> None:
    """ "Outside those bursts the value sat at exactly 0 for the rest of the afternoon" claims
    *always* (38 of 84 points were not 0): the 0 is the value it held, not a "not" before it."""
    word, zero = data.draw(st.sampled_from(_over_time())), data.draw(st.sampled_from(["0", "zero", "零"]))
    form = data.draw(st.sampled_from(["the retry queue sat at exactly {z} {w}", "重试队列是 {z} {w}"]))
    text = form.format(z=zero, w=word)
    assert "always" in [hit.concept for hit in concepts().in_claim(text)], text
    assert "always" not in [hit.concept for hit in concepts().in_claim(f"the queue was not {word} empty")]


@given(
    st.sampled_from([504, 503, 502, 429]),
    st.sampled_from(["/api/cart", "/api/pay", "/v2/orders"]),
    st.sampled_from(["网关所有接口都返回了 {c}。", "Every endpoint returned {c}.", "所有请求都是 HTTP {c}。"]),
    st.booleans(),
)
def test_what_a_search_searched_for_states_no_absolute(code: int, path: str, form: str, searched: bool) -> None:
    """Every line a search for 504 lists holds 504 because it was asked for: "all endpoints
    returned 504" of them (all GET /api/cart) is drawn. A search for something else whose lines
    all hold 504 does state it of every line it lists."""
    lines = [
        f"2026-07-07T08:{10 + i}:17.862Z WARN gateway RouteHandler - GET {path} timed out status={code} traceId=5a{i}f"
        for i in range(12)
    ]
    head = f"query_logs service=gateway query={code if searched else 'timed'} start=2026-07-07T08:10:00Z"
    output = "\n".join([head, "matched 12 lines (WARN 12)", "lines:", *lines])
    text = form.format(c=code)
    report = _GATEKEEPER.validate(
        v2([claim("claim-1", text, [binding([101], lines[0])])]),
        session_id=SESSION,
        invocations=InMemoryInvocations(
            [invocation(101, "query_logs", output, arguments={"query": str(code) if searched else "timed"})]
        ),
    )
    reasons = [c.reason for t in report.claim_traces for c in t.checks if c.rule_id == "claim.stated_content"]
    absolute = any("absolute" in reason for reason in reasons)
    assert absolute == searched, (text, reasons)
