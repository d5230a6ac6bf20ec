"""``claim.root_cause_support``: a root cause is an inference over independent observations.

A ``root_cause`` claim must cite at least ``minInvocations`` different invocations of this
session (a structured change event and the symptom that started after it, say). Resting on
one output — one log line that *says* what the cause is — it is a warning here, and the
guardrails carry the claim as a hypothesis with the evidence it still needs.

A claim of another type whose own words name a cause ("支付失败是因为数据库密码过期",
"timed out because …": ``causalWording``, data) is a root cause by what it says, whatever
its type: checked the same, so a model cannot confirm a cause by calling it a symptom. Words
it quotes from its own excerpts (after a colon or a quote mark) are the evidence's, not the
claim's (a log template saying "Caused by: …" is an observation of that line). Nor is a cause
that one quoted line shows joined to its effect, in a line that itself says no cause word: the
program wrote them together ("NullPointerException: coupon is null" read as "coupon 为空导致的
NullPointerException") — an observation of that line, not an incident's root cause, which
stays a ``root_cause`` claim's to make.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, Field

from veridiag.contracts.invocation import InvocationView
from veridiag.gatekeeper.context import ClaimView, RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata
from veridiag.text.phrases import PhraseList, phrase_list
from veridiag.text.quotes import own_words


class RootCauseParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    claim_types: list[str] = Field(default=["root_cause"], alias="claimTypes")
    min_invocations: int = Field(default=2, ge=1, le=10, alias="minInvocations")
    #: Wording that names a cause: a claim of any type saying it is checked as a root cause.
    causal_wording: list[str] = Field(default_factory=list, alias="causalWording")


#: What opens a quotation: an excerpt right after one is quoted, not stated.
_QUOTE_OPENERS = (":", "：", '"', "“", "「", "『", "'", "‘")


def names_a_cause(claim: ClaimView, wording: PhraseList) -> list[str]:
    """The causal wording of the claim's own text, beside what it quotes of its excerpts — an
    excerpt after a colon or an opening quote mark ("最多的一类：…", "log record: …"). An
    excerpt copied bare is stated: a planted "payment failed because …" made the claim is
    the claim's own cause."""
    text = claim.claim.get("claim_text")
    if not isinstance(text, str):
        return []
    for binding in claim.bindings:
        excerpt = binding.excerpt.strip() if isinstance(binding.excerpt, str) else ""
        if excerpt:
            text = _unquoted(text, excerpt)
    if not wording.hits(text):
        return []  # no cause word at all: no need to read the cited outputs (64 KB each)
    # a part of a cited line quoted after a colon or in quote marks (a change note) is the line's
    outputs = [invocation.output or "" for binding in claim.bindings for invocation in binding.usable]
    return wording.hits(own_words(text, outputs))


#: A term either side of a cause word may be found by on a line: a Latin word of five or more
#: characters (an identifier, an exception, a field) — short words recur anywhere.
_TERM = re.compile(r"[a-z][a-z0-9_$]{4,}")


def read_off_one_line(claim_text: str, lines: list[str], wording: PhraseList) -> bool:
    """Does every cause word of the claim join two things one quoted line shows together, on a
    line that says no cause word itself (an assertion there is not adopted this way)?"""
    joined = wording.split(claim_text)
    if not joined or not lines:
        return False
    plain = [line.lower() for text in lines for line in text.splitlines() if not wording.hits(line)]
    return all(any(_shows(before, line) and _shows(after, line) for line in plain) for before, _word, after in joined)


def _shows(side: str, line: str) -> bool:
    return any(term in line for term in _TERM.findall(side))


def _observation(invocation: InvocationView) -> tuple[str, str]:
    """What one observation is: a tool and its arguments (two runs of the same query, or of
    the same output, observe one thing once)."""
    arguments = json.dumps(invocation.arguments, sort_keys=True, ensure_ascii=False, default=str)
    return invocation.tool_name, arguments if invocation.arguments else (invocation.output or "")


#: A record's own time: a line holding one is an event of the data (a log line, a pattern's span,
#: an anomaly), the same wherever a query shows it; a line without one (``matched 3 lines``) is a
#: query's own summary, which two queries of different data may word alike.
_CLOCK = re.compile(r"\d{1,2}:\d{2}")
#: What a query output writes before a record it shows as an example.
_EXAMPLE = re.compile(r"^\s*(?:e\.g\.\s*)?")


def _observations(context: ValidationContext, claim: ClaimView, usable: dict[int, InvocationView]) -> set[str]:
    """The independent observations behind a claim: its invocations grouped by query (tool and
    arguments), and groups joined when the claim's excerpts quote one record in each — the same
    log line found by two searches, or by a re-run with another limit, is seen once."""
    group = {invocation_id: _observation(invocation) for invocation_id, invocation in usable.items()}
    parent = {key: key for key in group.values()}

    def root(key: tuple[str, str]) -> tuple[str, str]:
        while parent[key] != key:
            key = parent[key]
        return key

    seen: dict[str, tuple[str, str]] = {}
    for binding in claim.bindings:
        if not isinstance(binding.excerpt, str) or not binding.excerpt.strip():
            continue
        for invocation in binding.usable:
            if invocation.id not in group:
                continue
            located = context.locate(binding.excerpt, invocation, ("output",))
            if located is None or located.score < _SAME_RECORD:
                continue
            record = _EXAMPLE.sub("", located.region()).strip()
            if not _CLOCK.search(record):
                continue
            key = root(group[invocation.id])
            other = seen.setdefault(record, key)
            parent[root(other)] = key
    return {json.dumps(root(key)) for key in parent}


#: How well an excerpt must align with a line for the claim to quote that line's record.
_SAME_RECORD = 0.5


def _unquoted(text: str, excerpt: str) -> str:
    """``text`` without the places it quotes ``excerpt``."""
    parts: list[str] = []
    done = 0
    at = text.find(excerpt)
    while at >= 0:
        if text[:at].rstrip().endswith(_QUOTE_OPENERS):
            parts += (text[done:at], " ")
            done = at + len(excerpt)
        at = text.find(excerpt, at + len(excerpt))
    return "".join(parts) + text[done:]


@register
class RootCauseSupport(GatekeeperRule):
    id = "claim.root_cause_support"
    Params = RootCauseParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(RootCauseParams)
        result = RuleResult(self.id)
        wording = phrase_list(tuple(params.causal_wording))
        for claim in context.claim_views():
            named = [] if claim.claim.get("claim_type") in params.claim_types else names_a_cause(claim, wording)
            if claim.claim.get("claim_type") not in params.claim_types and not named:
                continue
            text = claim.claim.get("claim_text")
            if named and isinstance(text, str) and read_off_one_line(text, context.quoted_lines(claim), wording):
                continue  # the line's own reading, stated by one observation: nothing to judge
            usable = {
                invocation.id: invocation
                for binding in claim.bindings
                for invocation in binding.usable
                if invocation.status != "error"
            }
            cited = sorted(usable)
            # Re-running one query is one observation, and so is one record read by two queries:
            # independent sources are distinct calls that show the claim distinct records.
            sources = _observations(context, claim, usable)
            names = f"names a cause ({', '.join(named)}); " if named else ""
            if len(sources) >= params.min_invocations:
                result.add(claim.target, "pass", f"{names}rests on {len(sources)} independent invocations: {cited}")
            else:
                result.add(
                    claim.target,
                    "fail",
                    f"{names}a root cause resting on {len(sources)} independent invocation(s) {cited} is a "
                    "hypothesis: it needs "
                    f"{params.min_invocations} independent observations from different invocations",
                )
        return result
