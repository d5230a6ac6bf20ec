"""The composer guard (docs/DESIGN.md §4): a composed answer may state nothing its input does
not, and must fit its verdict. Each check is a small class registered by id; any violation
sends the answer back to the template (``OnFail.FALLBACK``), and the audit names the checks
that failed.

- ``composer.unknown_fact``: a number, code, id or service the input does not hold.
- ``composer.novel_content``: a sentence mostly of words found nowhere in the input.
- ``composer.unhedged_restatement``: a hypothesis or gap restated as fact.
- ``composer.raw_json``: the answer looks like JSON.
- ``composer.reject_root_cause``: a REJECT answer states a root cause.
- ``composer.low_confid_no_gap``: a LOW_CONFID answer names no gap.
- ``composer.unconfirmed_root_cause``: a root cause called confirmed without an allowed
  ``root_cause`` claim under PASS.
- ``composer.adopted_assertion``: the answer names, outside a quotation, a fact the evidence
  holds only in a line that asserts or orders.
- ``composer.known_gap``: the answer leaves out a gap known from the records (a failed call, a
  named service without data), on any verdict.
- ``composer.headline_fact``: the opening paragraph (the headline) names a fact no allowed
  claim holds — a hypothesis, gap or the question may not supply a headline's numbers.
- ``composer.answer_shape``: the answer is not in the answer's shape (issue 28): its first line
  (after the scope) is longer than ~160 Chinese characters or ~30 English words or, when there
  is an answer (a headline), has no label,
  it lists more than five facts, states gaps of one kind on several lines, repeats what a
  hypothesis needs, or has a next step ask to check what a confirmed claim already states.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

from pydantic import ValidationError

from veridiag.agents.template import template_phrases
from veridiag.contracts.composer import ComposerInput, ComposerOutput, GuardResult
from veridiag.contracts.parsing import parse_executor_output
from veridiag.contracts.registry import Registry
from veridiag.contracts.verifier import OnFail
from veridiag.pipeline.composer_input import GuardPatterns, already_shown, composer_wording, gap_stated
from veridiag.pipeline.shape import MAX_KEY_FACTS, answer_body, answer_lines, fits, gap_groups
from veridiag.text.entities import Corpus, extract_entities
from veridiag.text.normalize import reader_text
from veridiag.text.tokens import keywords


@cache
def _answer_words() -> frozenset[str]:
    """Words any answer may use without adding facts: ``composer.yaml`` plus the template's wording."""
    wording = composer_wording().answer_words
    listed = f"{wording.zh} {wording.en}".split()
    template = " ".join(p for phrases in template_phrases().values() for p in phrases.values())
    return frozenset(listed) | keywords(template)


def _novel_sentences(answer: str, allowed_words: frozenset[str]) -> list[str]:
    """Sentences mostly made of content words that occur nowhere in the composer input."""
    flagged = []
    for sentence in re.split(r"(?<=[。.!！?？；;\n])", answer):
        words = [w for w in keywords(sentence) if not any(ch.isdigit() for ch in w)]
        novel = [w for w in words if w not in allowed_words and w not in _answer_words()]
        if len(novel) >= 2 and len(novel) * 2 > len(words):
            flagged.append(sentence.strip())
    return flagged


def _unhedged_restatements(answer: str, composer_input: ComposerInput, patterns: GuardPatterns) -> list[str]:
    """Sentences that restate a hypothesis or a gap as if it were confirmed (no hedge word)."""
    unconfirmed = [h.hypothesis_text for h in composer_input.allowed_hypotheses]
    unconfirmed += [gap.split("：", 1)[-1].split(": ", 1)[-1] for gap in composer_input.missing_info]
    targets = [words for text in unconfirmed if (words := keywords(text))]
    confirmed = [keywords(c.claim_text) for c in composer_input.allowed_claims]
    flagged = []
    for sentence in _sentences_outside_hedged_lists(answer, patterns):
        if patterns.hedge.search(sentence):
            continue
        words = keywords(sentence)
        for target in targets:
            overlap = len(words & target) / len(target)
            if overlap >= 0.6 and not any(len(words & c) / len(c) >= overlap for c in confirmed if c):
                flagged.append(sentence.strip())
                break
    return flagged


_HEADING = re.compile(r"[:：]\s*$")


def _sentences_outside_hedged_lists(answer: str, patterns: GuardPatterns) -> list[str]:
    """The answer's sentences, except the items listed under a heading that already hedges them
    ("证据缺口：", "Possible directions (not confirmed):"): a gap listed as a gap is not a gap
    stated as fact. A list ends at the first line that is not an item."""
    sentences: list[str] = []
    hedged_list = False
    for line in answer.splitlines():
        stripped = line.strip()
        if _HEADING.search(stripped):
            hedged_list = bool(patterns.hedge.search(stripped) or patterns.gap_words.search(stripped))
            continue
        if hedged_list and stripped.startswith(("-", "*", "•")):
            continue
        hedged_list = False
        sentences += [s.strip() for s in re.split(r"(?<=[。.!！?？；;])", stripped) if s.strip()]
    return sentences


def _input_texts(composer_input: ComposerInput) -> list[str]:
    return [
        composer_input.original_query,
        composer_input.rationale,
        *(c.claim_text for c in composer_input.allowed_claims),
        *(h.hypothesis_text for h in composer_input.allowed_hypotheses),
        *(n for h in composer_input.allowed_hypotheses for n in h.needed_evidence),
        *composer_input.missing_info,
        *(f"{a.action_text} {a.reason}" for a in composer_input.recommended_actions),
    ]


def parse_composer_output(text: str | None) -> tuple[ComposerOutput | None, str]:
    """Strict JSON with answer_summary, recommended_actions, user_facing_answer (§19.3)."""
    parsed = parse_executor_output(text)
    if not parsed.ok or parsed.value is None:
        return None, f"composer output {parsed.status.status}: {parsed.status.detail}"
    try:
        return ComposerOutput.model_validate(parsed.value), "ok"
    except ValidationError as exc:
        first = exc.errors()[0]
        return None, f"composer output invalid at {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"


_JSONISH = re.compile(r'^\s*[\[{]|"\w+"\s*:\s*[\[{"]|executor_evidence|"claims"')


@dataclass(frozen=True)
class ComposedAnswer:
    """One guard call: the answer, the input it must stay within, and the wording it is read by."""

    output: ComposerOutput
    composer_input: ComposerInput
    known_services: Sequence[str]
    patterns: GuardPatterns

    @property
    def answer(self) -> str:
        return self.output.user_facing_answer


class ComposerCheck(ABC):
    id: ClassVar[str]
    on_fail: ClassVar[OnFail] = OnFail.FALLBACK

    @abstractmethod
    def violations(self, given: ComposedAnswer) -> list[str]:
        """What this check finds wrong with the answer (empty: nothing)."""


_CHECKS: Registry[ComposerCheck] = Registry("composer check")
composer_check = _CHECKS.register
composer_checks = _CHECKS.as_dict


@composer_check
class UnknownFact(ComposerCheck):
    id = "composer.unknown_fact"

    def violations(self, given: ComposedAnswer) -> list[str]:
        source = Corpus(_input_texts(given.composer_input))
        texts = [
            given.answer,
            given.output.answer_summary,
            *(f"{a.action_text} {a.reason}" for a in given.output.recommended_actions),
        ]
        return [
            f"{entity.kind} {entity.text!r} is not in the composer input"
            for text in texts
            for entity in extract_entities(text, given.known_services)
            if not source.contains(entity)
        ]


@composer_check
class NovelContent(ComposerCheck):
    id = "composer.novel_content"

    def violations(self, given: ComposedAnswer) -> list[str]:
        allowed_words = keywords(" ".join(_input_texts(given.composer_input)))
        return [f"content not in the composer input: {s[:80]!r}" for s in _novel_sentences(given.answer, allowed_words)]


@composer_check
class UnhedgedRestatement(ComposerCheck):
    id = "composer.unhedged_restatement"

    def violations(self, given: ComposedAnswer) -> list[str]:
        found = _unhedged_restatements(given.answer, given.composer_input, given.patterns)
        return [f"an unconfirmed statement is written as fact: {s[:80]!r}" for s in found]


@composer_check
class RawJson(ComposerCheck):
    id = "composer.raw_json"

    def violations(self, given: ComposedAnswer) -> list[str]:
        return ["the answer looks like JSON"] if _JSONISH.search(given.answer) else []


@composer_check
class RejectRootCause(ComposerCheck):
    id = "composer.reject_root_cause"

    def violations(self, given: ComposedAnswer) -> list[str]:
        stated = given.composer_input.verdict == "REJECT" and given.patterns.root_cause.search(given.answer)
        return ["a REJECT answer states a root cause"] if stated else []


@composer_check
class LowConfidNoGap(ComposerCheck):
    id = "composer.low_confid_no_gap"

    def violations(self, given: ComposedAnswer) -> list[str]:
        composer_input = given.composer_input
        if composer_input.verdict != "LOW_CONFID" or given.patterns.gap_words.search(given.answer):
            return []
        named = any(gap in given.answer for gap in composer_input.missing_info)
        return [] if named else ["a LOW_CONFID answer names no gap"]


@composer_check
class UnconfirmedRootCause(ComposerCheck):
    id = "composer.unconfirmed_root_cause"

    def violations(self, given: ComposedAnswer) -> list[str]:
        composer_input = given.composer_input
        has_root = any(c.claim_type == "root_cause" for c in composer_input.allowed_claims)
        confirmed = given.patterns.confirmed_root_cause.search(given.answer)
        if confirmed and (composer_input.verdict != "PASS" or not has_root):
            return ["the answer calls a root cause confirmed without an allowed root_cause claim"]
        return []


#: Text inside quote marks: what the answer reports someone wrote.
_QUOTE_MARKS = re.compile(r"\"[^\"\n]+\"|“[^”\n]+”|「[^」\n]+」|『[^』\n]+』|«[^»\n]+»|‘[^’\n]+’")


@composer_check
class AdoptedAssertion(ComposerCheck):
    """What a log line or change note asserts may be quoted — as the allowed claim that quotes it
    words it, or in quote marks — never said in the answer's own words: a cause, a headline or
    a next step naming a code only an asserting line holds adopts that line (issue 27 D4)."""

    id = "composer.adopted_assertion"

    def violations(self, given: ComposedAnswer) -> list[str]:
        composer_input = given.composer_input
        if not composer_input.quoted_only:
            return []
        quotations = sorted((reader_text(q) for q in composer_input.quotations), key=len, reverse=True)
        # the headline, the summary and the next steps are the answer's own voice: a fact only an
        # asserting line holds has no place there, quoted or not (the template's headline leaves
        # out every claim naming one; without a headline the opening is read as the rest is)
        voiced = [
            _opening(given.answer, composer_input.scope) if composer_input.headline else "",
            given.output.answer_summary,
            *(f"{a.action_text} {a.reason}" for a in given.output.recommended_actions),
        ]
        found = [fact for text in voiced for fact in _naming(reader_text(text), composer_input.quoted_only)]
        own = reader_text(given.answer)
        for quotation in quotations:
            own = own.replace(quotation, " ")
        # quote marks make a quotation of the line's words, not of a bare code ("caused by
        # "ERR_X"" states ERR_X as the answer's own)
        own = _QUOTE_MARKS.sub(lambda m: _unless_quoting(m.group(0), quotations, composer_input.quoted_only), own)
        found += _naming(own, composer_input.quoted_only)
        return [
            f"{fact!r} is stated as the answer's own, but only a line that asserts or orders holds it"
            for fact in dict.fromkeys(found)
        ]


def _naming(text: str, facts: Sequence[str]) -> list[str]:
    folded = text.casefold()
    return [fact for fact in facts if fact.casefold() in folded]


def _unless_quoting(span: str, quotations: Sequence[str], facts: Sequence[str]) -> str:
    """A span in quote marks, blanked when it quotes an asserting line's words: it stands inside
    one of the ``quotations`` and holds a word of it besides the ``facts``."""
    inner = span[1:-1].strip().casefold()
    rest = inner
    for fact in facts:
        rest = rest.replace(fact.casefold(), " ")
    quoting = any(inner in q.casefold() for q in quotations) and re.search(r"\w", rest) is not None
    return " " * len(span) if quoting else span


@composer_check
class KnownGapLeftOut(ComposerCheck):
    """A failed call or a named service without data is stated whatever the verdict: an answer
    that drops one reads as if everything was checked, so it goes back to the template, which
    lists every gap."""

    id = "composer.known_gap"

    def violations(self, given: ComposedAnswer) -> list[str]:
        return [
            f"the answer leaves out a known gap: {gap.text[:80]!r}"
            for gap in given.composer_input.known_gaps
            if not gap_stated(gap, given.answer)
        ]


@composer_check
class HeadlineFact(ComposerCheck):
    id = "composer.headline_fact"

    def violations(self, given: ComposedAnswer) -> list[str]:
        composer_input = given.composer_input
        if not composer_input.headline:  # nothing allowed: the answer opens with what is missing
            return []
        claims = Corpus([c.claim_text for c in composer_input.allowed_claims])
        return [
            f"the headline states {entity.kind} {entity.text!r}, which no allowed claim holds"
            for entity in extract_entities(_opening(given.answer, composer_input.scope), given.known_services)
            if not claims.contains(entity)
        ]


@composer_check
class AnswerShape(ComposerCheck):
    """A phone-width answer: the first line answers, with its label, within the bound; at most five
    facts; one line per kind of gap; each need of the hypotheses once; no next step re-asking a
    confirmed fact. A composed answer out of shape goes back to the template, which is in it."""

    id = "composer.answer_shape"

    def violations(self, given: ComposedAnswer) -> list[str]:
        composer_input = given.composer_input
        lang = composer_input.lang
        lines = answer_lines(given.answer, composer_input.scope)
        found = []
        first = lines[0] if lines else ""
        if not fits(first, lang):
            found.append(f"the first line is too long to read at a glance: {first[:80]!r}")
        if composer_input.headline and first and not given.patterns.label.search(first):
            found.append(f"the first line carries no label (confirmed, inferred, cannot tell): {first[:80]!r}")
        facts = [line for line in lines[1:] if _is_item(line) and _states_a_claim(line, composer_input)]
        if len(facts) > MAX_KEY_FACTS:
            found.append(f"{len(facts)} facts are listed; at most {MAX_KEY_FACTS} key facts, the rest in the full list")
        groups = gap_groups(composer_input.missing_info, given.known_services, lang)
        for group in groups:
            stating = [line for line in lines if any(member in line for member in group.members)]
            if len(group.members) > 1 and len(stating) > 1:
                found.append(f"gaps of one kind on {len(stating)} lines: {group.line[:80]!r}")
        steps = [a.action_text for a in [*composer_input.recommended_actions, *given.output.recommended_actions]]
        needs = {n for h in composer_input.allowed_hypotheses for n in h.needed_evidence if n.strip()}
        for need in needs:
            said = [line for line in lines if need in line and not any(step in line for step in steps)]
            if len(said) > 1:
                found.append(f"what a hypothesis needs is repeated: {need[:80]!r}")
        shown = [c.claim_text.lower() for c in composer_input.allowed_claims if c.verification == "direct_observation"]
        found += [
            f"a next step asks to check what a confirmed claim states: {a.action_text[:80]!r}"
            for a in given.output.recommended_actions
            if already_shown(a.action_text, shown)
        ]
        return found


def _is_item(line: str) -> bool:
    return line.startswith(("-", "*", "•")) or re.match(r"\d+[.)、]\s", line) is not None


def _states_a_claim(line: str, composer_input: ComposerInput) -> bool:
    """A listed line that is one of the allowed claims: verbatim, or mostly its words."""
    words = keywords(line)
    for claim in composer_input.allowed_claims:
        if claim.claim_text.strip().rstrip("。.") in line:
            return True
        target = keywords(claim.claim_text)
        if target and len(words & target) / len(target) >= 0.6:
            return True
    return False


def _opening(answer: str, scope: str) -> str:
    """The answer's first paragraph after the scope line: where the headline stands."""
    return next((p for p in re.split(r"\n\s*\n", answer_body(answer, scope)) if p.strip()), "")


def guard_composed(
    output: ComposerOutput,
    composer_input: ComposerInput,
    known_services: Sequence[str] = (),
    patterns: GuardPatterns | None = None,
) -> GuardResult:
    """Every registered check over the answer. ``patterns`` replace the bundled ones of
    ``composer.yaml`` (another wording, same code)."""
    given = ComposedAnswer(output, composer_input, known_services, patterns or composer_wording().patterns)
    violations: list[str] = []
    failed: list[str] = []
    for check in _CHECKS:
        found = check.violations(given)
        if found:
            failed.append(check.id)
            violations += found
    return GuardResult(passed=not violations, violations=list(dict.fromkeys(violations)), failed_checks=failed)
