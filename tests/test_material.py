"""The Executor's output read once into types: the one shape every stage after the hook uses."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given

from tests.builders import audit_chain_of, verifier_payload
from tests.test_gatekeeper_properties import GATEKEEPER, STORE, json_values, outputs
from veridiag.agents.offline.verifier import OfflineVerifier
from veridiag.api.workbench import session_view
from veridiag.contracts.json import JsonValue
from veridiag.contracts.material import ExecutorMaterial
from veridiag.contracts.parsing import ParseStatus


@given(outputs | json_values)
def test_reading_any_json_never_raises_and_keeps_every_claim_object(raw: Any) -> None:
    material = ExecutorMaterial.read(raw if isinstance(raw, dict) else None)
    stated = raw.get("claims") if isinstance(raw, dict) else None
    objects = [c for c in stated if isinstance(c, dict)] if isinstance(stated, list) else []
    assert len(material.claims) == len(objects)
    for claim in material.claims:
        assert claim.claim_id
        assert all(type(i) is int for b in claim.bindings for i in b.source_invocation_ids)


@given(outputs)
def test_the_gatekeeper_names_claims_as_the_pipeline_does(raw: dict[str, Any]) -> None:
    """A trace, a verifier check and a correction meet on the claim id: one rule makes it."""
    report = GATEKEEPER.validate(
        raw, session_id="s1", invocations=STORE, parse_status=ParseStatus(status="valid", detail="")
    )
    traced = {t.claim_index: t.claim_id for t in report.claim_traces}
    for claim in ExecutorMaterial.read(raw).claims:
        assert traced[claim.index] == claim.claim_id


def test_a_claim_without_an_id_is_judged_under_the_id_the_pipeline_gives_it() -> None:
    """The offline verifier once named it "None", so its judgement never reached the claim."""
    payload = verifier_payload({"claims": [{"claim_type": "symptom", "claim_text": "x"}]})
    reply = json.loads(OfflineVerifier(STORE).verify(payload).text or "")
    assert [c["claim_id"] for c in reply["claim_checks"]] == ["#0"]


def test_claim_1_is_not_claim_11_on_the_workbench() -> None:
    claims: list[JsonValue] = [
        {"claim_id": f"claim-{n}", "claim_type": "symptom", "claim_text": f"fact {n}", "evidence_bindings": []}
        for n in range(1, 12)
    ]
    chain = audit_chain_of(
        executor={"structured_output": {"claims": claims}},
        verifier={
            "corrections": [
                {"guard": "gatekeeper.targeted_claim", "target": "claim-11", "after": "unsupported", "reason": "r"}
            ]
        },
        gatekeeper={"result": {"errors": [{"target": "claims[10].evidence_bindings", "rule_id": "x"}]}},
    )
    shown = {c.claim_id: c for c in session_view(chain).claims}
    assert [c["target"] for c in shown["claim-11"].corrections] == ["claim-11"]
    assert shown["claim-1"].corrections == []
    assert len(shown["claim-11"].errors) == 1
    assert shown["claim-2"].errors == [] and shown["claim-1"].errors == []
