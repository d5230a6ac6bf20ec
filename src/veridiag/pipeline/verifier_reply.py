"""Reading the Verifier's raw output (docs/spec §16): tolerant of shape, never of meaning.

Entries that do not parse are dropped and noted; the guardrails then treat every claim
without a usable check as ``unsupported``. An old-style ``facts_checked``-only output is
accepted by reading the claim id off each ``fact`` ("claim-1: …", §16.1.1).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal, get_args

from pydantic import ValidationError

from veridiag.contracts.json import JsonValue
from veridiag.contracts.parsing import parse_executor_output
from veridiag.contracts.verifier import (
    FACT_MAPPING,
    ClaimCheck,
    ClaimVerification,
    FactVerification,
    HypothesisCheck,
    Verdict,
)

_FACT_ID = re.compile(r"^\s*([\w.\-#]+)\s*[:：]")
_LEGACY: dict[str, ClaimVerification] = {
    "direct_evidence": "direct_observation",
    "indirect_support": "reasonable_inference",
    "no_evidence": "unsupported",
    "contradicted": "contradicted",
}
assert set(_LEGACY) == set(get_args(FactVerification)) and set(FACT_MAPPING) == set(get_args(ClaimVerification))

VerifierStatus = Literal["ok", "malformed", "missing", "unavailable", "skipped"]


@dataclass
class ParsedVerifier:
    status: VerifierStatus
    detail: str = ""
    verdict: Verdict | None = None
    groundedness: float | None = None
    checks: dict[str, ClaimCheck] = field(default_factory=dict)
    hypothesis_checks: list[HypothesisCheck] = field(default_factory=list)
    rationale: str = ""
    problems: list[str] = field(default_factory=list)
    legacy: bool = False


def parse_verifier_output(text: str | None) -> ParsedVerifier:
    if text is None:
        return ParsedVerifier("missing", "verifier returned nothing")
    parsed = parse_executor_output(text)
    if not parsed.ok or parsed.value is None:
        status: VerifierStatus = "missing" if parsed.status.status == "missing" else "malformed"
        return ParsedVerifier(status, parsed.status.detail)
    data = parsed.value
    result = ParsedVerifier("ok", "parsed")
    verdict = data.get("verdict")
    if isinstance(verdict, str) and verdict.strip().upper() in ("PASS", "LOW_CONFID", "REJECT"):
        result.verdict = verdict.strip().upper()  # type: ignore[assignment]
    else:
        result.problems.append(f"verdict {verdict!r} is not PASS / LOW_CONFID / REJECT")
    score = data.get("groundedness_score")
    if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
        result.groundedness = min(1.0, max(0.0, float(score) / (100.0 if score > 1 else 1.0)))
    rationale = data.get("rationale")
    result.rationale = rationale if isinstance(rationale, str) else ""
    checks = data.get("claim_checks")
    if isinstance(checks, list) and checks:
        _read_claim_checks(checks, result)
    elif isinstance(facts := data.get("facts_checked"), list):
        result.legacy = True
        _read_facts(facts, result)
    else:
        result.problems.append("no claim_checks")
    hypotheses = data.get("hypothesis_checks")
    for index, item in enumerate(hypotheses if isinstance(hypotheses, list) else []):
        try:
            result.hypothesis_checks.append(HypothesisCheck.model_validate(item))
        except ValidationError:
            result.problems.append(f"hypothesis_checks[{index}] is not a valid check")
    return result


def _read_claim_checks(items: list[JsonValue], result: ParsedVerifier) -> None:
    for index, item in enumerate(items):
        try:
            check = ClaimCheck.model_validate(item)
        except ValidationError as exc:
            where = exc.errors()[0]["loc"]
            result.problems.append(f"claim_checks[{index}] invalid at {'.'.join(str(p) for p in where)}")
            continue
        if check.claim_id in result.checks:
            result.problems.append(f"claim_checks[{index}] repeats {check.claim_id}; the first is kept")
            continue
        result.checks[check.claim_id] = check


def _read_facts(items: list[JsonValue], result: ParsedVerifier) -> None:
    for index, item in enumerate(items):
        fact = item.get("fact") if isinstance(item, dict) else None
        label = _LEGACY.get(str(item.get("verification"))) if isinstance(item, dict) else None
        match = _FACT_ID.match(fact) if isinstance(fact, str) else None
        if not match or label is None:
            result.problems.append(f"facts_checked[{index}] names no claim or label")
            continue
        claim_id = match.group(1)
        if claim_id not in result.checks:
            result.checks[claim_id] = ClaimCheck(claim_id=claim_id, verification=label, detail="from facts_checked")
