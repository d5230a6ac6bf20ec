"""No path shows a user raw JSON or an unverified claim as fact: random role outputs,
role exceptions and switch combinations (hypothesis)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any, get_args

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import LOG_OUTPUT, binding, claim, readable
from veridiag.agents import scripted_roles
from veridiag.contracts.verifier import VERDICT_SEVERITY, ClaimVerification
from veridiag.pipeline import DiagnosisPipeline, PipelineOptions
from veridiag.store import SessionStore

_DIR = tempfile.mkdtemp(prefix="veridiag-prop-")
STORE = SessionStore(f"sqlite:///{Path(_DIR) / 'store.db'}")
LABELS: list[ClaimVerification] = list(get_args(ClaimVerification))
# Each claim carries a unique marker word, so its text can be traced into the answer.
MARKERS = ["甲乙", "丙丁", "戊己", "庚辛", "壬癸"]
HEDGE = re.compile(
    r"可能|未确认|未予确认|尚未|缺少|无法确认|不足以|剔除|推测|疑似|待确认|还需|possibl|not confirmed|removed",
    re.IGNORECASE,
)
JSONISH = re.compile(r'^\s*[\[{]|"\w+"\s*:|executor_evidence|"claims"')


def make_claim(index: int, claim_type: str) -> dict[str, Any]:
    return claim(
        f"claim-{index}",
        f"{MARKERS[index]}现象：payment-service 出现 ERR_TIMEOUT。",
        [binding([1], "ERR_TIMEOUT request timeout cost=5300ms")],
        claim_type=claim_type,
    )


failure = st.sampled_from([RuntimeError("role crashed"), TimeoutError("slow")])
claim_sets = st.lists(
    st.tuples(st.integers(0, 4), st.sampled_from(["symptom", "root_cause", "context"])),
    unique_by=lambda t: t[0],
    max_size=4,
)


@st.composite
def executor_outputs(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["v2", "v2", "v2", "prose", "broken", "empty", "crash", "v1"]))
    claims = [make_claim(i, t) for i, t in draw(claim_sets)]
    hypotheses = [
        {"hypothesis_text": f"{MARKERS[i]}可能导致超时", "basis": "b", "needed_evidence": ["x"]}
        for i in draw(st.lists(st.integers(0, 4), max_size=2, unique=True))
    ]
    body = {"answer_version": "executor_evidence_v2", "claims": claims, "hypotheses": hypotheses}
    return {
        "v2": json.dumps(body, ensure_ascii=False),
        "v1": json.dumps(
            {**body, "user_facing_answer": "庚辛 根因已确认", "diagnosis_summary": "x"}, ensure_ascii=False
        ),
        "prose": f"根因是 {MARKERS[0]}。" + json.dumps(body, ensure_ascii=False)[:40],
        "broken": json.dumps(body, ensure_ascii=False)[:-5],
        "empty": "",
        "crash": draw(failure),
    }[kind]


@st.composite
def verifier_outputs(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["json", "json", "json", "garbage", "none", "crash"]))
    if kind == "garbage":
        return draw(st.text(max_size=30))
    if kind == "none":
        return None
    if kind == "crash":
        return draw(failure)
    checks = [
        {"claim_id": f"claim-{i}", "verification": draw(st.sampled_from(LABELS))}
        for i in draw(st.lists(st.integers(0, 6), max_size=5, unique=True))
    ]
    return json.dumps(
        {
            "verdict": draw(st.sampled_from(["PASS", "LOW_CONFID", "REJECT", "MAYBE"])),
            "groundedness_score": draw(st.floats(0, 1)),
            "claim_checks": checks,
            "rationale": draw(st.sampled_from(["", "根因是戊己。", "ok"])),
        },
        ensure_ascii=False,
    )


@st.composite
def composer_outputs(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["json", "json", "garbage", "none", "crash"]))
    if kind == "garbage":
        return draw(st.text(max_size=30))
    if kind == "none":
        return None
    if kind == "crash":
        return draw(failure)
    pieces = draw(
        st.lists(
            st.sampled_from(
                [f"{m}现象：payment-service 出现 ERR_TIMEOUT。" for m in MARKERS]
                + ["根因已确认。", '{"claims": []}', "缺少证据。", "redis 宕机 9.9 秒。"]
            ),
            max_size=4,
        )
    )
    answer = "".join(pieces) or "x"
    return json.dumps(
        {"answer_summary": "s", "recommended_actions": [], "user_facing_answer": answer}, ensure_ascii=False
    )


@settings(max_examples=120, deadline=None)
@given(
    executor_outputs(),
    verifier_outputs(),
    composer_outputs(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.integers(1, 2),
)
def test_no_raw_json_and_no_unverified_claim_as_fact(  # noqa: PLR0917 (one argument per strategy)
    executor: Any, verifier: Any, composer: Any, gatekeeper: bool, use_composer: bool, v2: bool, rounds: int
) -> None:
    def setup(session_id: str) -> None:
        STORE.record_invocation(
            session_id=session_id, tool_name="query_logs", arguments={}, status="ok", output=LOG_OUTPUT
        )

    options = PipelineOptions(gatekeeper=gatekeeper, composer=use_composer, structured_output_v2=v2, max_rounds=rounds)
    roles = scripted_roles(executor=executor, verifier=verifier, composer=composer)
    result = DiagnosisPipeline(STORE, roles, options=options).run("订单123支付失败，帮我看看原因", on_session=setup)

    answer = result.answer
    assert answer.strip(), "an answer is always given"
    assert not JSONISH.search(answer), answer
    assert result.status == "completed" or result.answer_source == "failure"
    evaluation = readable(result.self_evaluation).get("verifier_evaluation") or {}
    labels = {c["claim_id"]: c["verification"] for c in evaluation.get("claim_checks") or []}
    for index, marker in enumerate(MARKERS):
        if marker not in answer or labels.get(f"claim-{index}") in ("direct_observation", "reasonable_inference"):
            continue
        for line in re.split(r"(?<=[。\n])", answer):
            if marker in line:
                assert HEDGE.search(line), f"unverified {marker} shown as fact: {line!r}\n{answer}"
    if evaluation.get("verdict") == "REJECT":
        assert "根因已确认" not in answer
    # The guardrails only ever lower confidence: every correction moves a label or the verdict down.
    for correction in evaluation.get("corrections") or []:
        before, after = correction["before"], correction["after"]
        if before in LABELS and after in LABELS:
            assert LABELS.index(after) > LABELS.index(before), correction
        if before in VERDICT_SEVERITY and after in VERDICT_SEVERITY:
            assert VERDICT_SEVERITY[after] > VERDICT_SEVERITY[before], correction
