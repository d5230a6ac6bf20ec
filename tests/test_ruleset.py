"""Rules are data: the bundled index mirrors docs/spec §10, overrides merge by id, errors are clear."""

from __future__ import annotations

from pathlib import Path

import pytest

from veridiag.gatekeeper import RulesetError, bundled_ruleset, load_ruleset, registered_rule_ids
from veridiag.gatekeeper.rules.excerpt_similarity import ExcerptParams
from veridiag.gatekeeper.rules.hallucination_phrases import PhraseParams

SPEC_INDEX = {
    "schema.executor_v2": ("Executor V2 Schema", True),
    "evidence.invocation_ref": ("Invocation Reference Check", True),
    "evidence.excerpt_similarity": ("Excerpt Similarity Check", True),
    "claim.hallucination_phrases": ("Hallucination Phrase Check", True),
    "claim.evidence_utilization": ("Evidence Utilization Check", False),
}
SPEC_BLACKLIST = ["通常情况下", "根据经验", "一般来说", "我认为", "理论上", "可能是", "推测"]


def test_bundled_index_mirrors_the_spec() -> None:
    rules = {rule.id: rule for rule in bundled_ruleset()}
    for rule_id, (name, enabled) in SPEC_INDEX.items():
        assert (rules[rule_id].name, rules[rule_id].enabled) == (name, enabled)
    assert rules["claim.entity_grounding"].enabled


def test_bundled_metadata_mirrors_the_spec() -> None:
    rules = {rule.id: rule for rule in bundled_ruleset()}
    assert rules["schema.executor_v2"].params["deprecatedFields"] == [
        "diagnosis_summary",
        "user_facing_answer",
    ]
    assert rules["schema.executor_v2"].verdict_impact == "low_confid_on_fail"
    assert rules["evidence.invocation_ref"].verdict_impact == "reject_on_fail"
    assert rules["claim.evidence_utilization"].severity == "warning"
    assert rules["claim.evidence_utilization"].verdict_impact == "warn_only"
    assert rules["claim.evidence_utilization"].params["minKeywordCoverage"] == 0.5
    assert rules["claim.hallucination_phrases"].typed_params(PhraseParams).blacklist[:7] == SPEC_BLACKLIST
    assert rules["claim.hallucination_phrases"].params["targetFields"] == ["claims[].claim_text"]


def test_every_registered_rule_is_indexed_and_vice_versa() -> None:
    assert {rule.id for rule in bundled_ruleset()} == registered_rule_ids()


def test_override_file_merges_by_rule_id(tmp_path: Path) -> None:
    path = tmp_path / "rules.local.yaml"
    path.write_text(
        """
rules:
  - id: claim.evidence_utilization
    enabled: true
ruleMetadata:
  evidence.excerpt_similarity:
    params:
      passThreshold: 0.9
  claim.hallucination_phrases:
    severity: warning
""",
        encoding="utf-8",
    )
    rules = {rule.id: rule for rule in load_ruleset(path)}
    similarity = rules["evidence.excerpt_similarity"]
    assert similarity.params["passThreshold"] == 0.9
    assert similarity.params["warnThreshold"] == 0.5, "params not named in the override are kept"
    assert similarity.typed_params(ExcerptParams).compare_against[0] == "output"
    assert rules["claim.evidence_utilization"].enabled
    assert rules["claim.hallucination_phrases"].severity == "warning"
    assert rules["claim.hallucination_phrases"].name == "Hallucination Phrase Check"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("rules:\n  - id: claim.made_up\n    enabled: true\n", "unknown rule id 'claim.made_up'"),
        ("ruleMetadata:\n  nope.rule:\n    severity: error\n", "unknown rule id 'nope.rule'"),
        (
            "ruleMetadata:\n  evidence.excerpt_similarity:\n    params:\n      passThreshold: high\n",
            "rule 'evidence.excerpt_similarity': params.passThreshold",
        ),
        (
            "ruleMetadata:\n  evidence.excerpt_similarity:\n    params:\n      passThreshold: 0.2\n",
            "warnThreshold must not exceed passThreshold",
        ),
        ("ruleMetadata:\n  schema.executor_v2:\n    severity: fatal\n", "severity"),
        ("rules: [\n", "invalid YAML"),
        ("- just\n- a list\n", "expected a mapping"),
        (
            "ruleMetadata:\n  claim.hallucination_phrases:\n    params:\n      targetFields: [claims]\n",
            "field path",
        ),
    ],
)
def test_bad_override_files_are_refused_with_a_reason(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(RulesetError) as raised:
        load_ruleset(path)
    assert message in str(raised.value)
    assert str(path) in str(raised.value)


def test_missing_override_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RulesetError, match="not found"):
        load_ruleset(tmp_path / "absent.yaml")


def test_empty_override_file_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    assert [r.model_dump() for r in load_ruleset(path)] == [r.model_dump() for r in bundled_ruleset()]
