"""Contracts mirror the spec and the committed JSON Schema files never drift from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veridiag.contracts import ExecutorEvidenceV2, InMemoryInvocations, InvocationRecord
from veridiag.contracts.schemas import SCHEMAS, schema_dict, schema_text

ROOT = Path(__file__).resolve().parents[1]

#: docs/spec §2, verbatim.
SPEC_EXAMPLE = """
{
  "answer_version": "executor_evidence_v2",
  "claims": [
    {
      "claim_id": "claim-1",
      "claim_type": "symptom",
      "claim_text": "payment-service 出现请求超时日志。",
      "support_level": "direct",
      "evidence_bindings": [
        {
          "source_type": "tool_trace",
          "source_id": "trace-1",
          "tool_name": "query_logs",
          "source_invocation_ids": [394],
          "evidence_excerpt": "request timeout"
        }
      ]
    }
  ],
  "hypotheses": [
    {
      "hypothesis_text": "连接池压力可能参与了超时问题。",
      "basis": "当前已有超时现象，但缺少连接池 active/idle/pending 指标。",
      "needed_evidence": ["HikariCP active/idle/pending 指标"]
    }
  ],
  "recommended_actions": [
    {
      "action_text": "补充查询连接池 active/idle/pending 指标。",
      "reason": "用于确认连接池是否达到上限。",
      "evidence_bindings": []
    }
  ],
  "missing_info": [
    "缺少连接池指标，无法确认连接池耗尽是根因。"
  ]
}
"""


def test_spec_example_validates() -> None:
    model = ExecutorEvidenceV2.model_validate_json(SPEC_EXAMPLE)
    assert model.claims[0].evidence_bindings[0].source_invocation_ids == [394]
    assert model.model_dump(exclude_none=True) == json.loads(SPEC_EXAMPLE)


def test_field_sets_match_spec_tables() -> None:
    """docs/spec §3–§7 field tables (names and required-ness)."""
    schema = json.loads(schema_text("executor-v2"))
    defs = schema["$defs"]
    assert set(schema["required"]) == {"answer_version", "claims"}
    assert set(schema["properties"]) == {
        "answer_version",
        "claims",
        "hypotheses",
        "recommended_actions",
        "missing_info",
    }
    assert set(defs["Claim"]["required"]) == {
        "claim_id",
        "claim_type",
        "claim_text",
        "support_level",
        "evidence_bindings",
    }
    assert set(defs["EvidenceBinding"]["required"]) == {
        "source_type",
        "tool_name",
        "source_invocation_ids",
        "evidence_excerpt",
    }
    assert "source_id" in defs["EvidenceBinding"]["properties"]
    assert set(defs["Hypothesis"]["required"]) == {"hypothesis_text", "basis", "needed_evidence"}
    assert set(defs["RecommendedAction"]["required"]) == {"action_text", "reason"}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schema_files_match_the_models(name: str) -> None:
    path = ROOT / "schemas" / SCHEMAS[name][1]
    assert path.read_text(encoding="utf-8") == schema_text(name), (
        f"{path.name} drifted from the model: run `make schemas` and commit the result"
    )


def test_unknown_schema_name_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="executor-v2"):
        schema_dict("nope")


def test_in_memory_source_refuses_duplicate_ids() -> None:
    record = InvocationRecord(id=1, session_id="s", tool_name="query_logs")
    with pytest.raises(ValueError, match="duplicate invocation id 1"):
        InMemoryInvocations([record, record])
    assert InMemoryInvocations([record]).get_invocations([1, 2]) == {1: record}
