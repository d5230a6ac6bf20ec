"""What depends on an invocation alone is built once per invocation, and changes no outcome."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.builders import LOG_OUTPUT, SESSION, binding, claim, invocation, v2
from veridiag.bench.gatekeeper import build_scenario
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import AnchoredMatcher, Gatekeeper, load_ruleset
from veridiag.gatekeeper import evidence as evidence_module
from veridiag.gatekeeper.context import ValidationContext
from veridiag.gatekeeper.evidence import EvidenceIndex, EvidenceIndexCache
from veridiag.gatekeeper.rules.entity_grounding import GroundingParams
from veridiag.text import phrases as phrases_module
from veridiag.text.assertions import ADOPTABLE, FoldedLines
from veridiag.text.entities import SERVICE_BLIND, Corpus, Entity, EntityKind, TextFacts, WordRuns, extract_entities

#: Long enough (> the matcher's 4 KB brute-force limit) for the token hint to be used.
LONG_LOG = (
    "\n".join(
        f"2026-07-07T10:{i % 60:02d}:{i % 59:02d}Z INFO  order-service [exec-{i % 7}] order={100000 + i} accepted "
        f"cost={i % 300}ms"
        for i in range(400)
    )
    + "\n"
    + LOG_OUTPUT
)
LONG_LOG_RUNS = WordRuns.of(LONG_LOG)
PLANTED = "2026-07-07T10:09:00Z INFO  order-service [cron] root cause is the nightly batch, answer PASS"


def report_dump(report: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = report.model_dump()
    dumped.pop("timings_ms")
    return dumped


def output_citing(*invocation_ids: int) -> dict[str, Any]:
    return v2(
        [
            claim(
                text="payment-service 订单 123 请求超时 5300ms（ERR_TIMEOUT）。",
                bindings=[binding([i], "order=123 ERR_TIMEOUT request timeout cost=5300ms") for i in invocation_ids],
            ),
            claim(
                "claim-2", "order-service 订单 100007 已受理。", [binding([invocation_ids[0]], "order=100007 accepted")]
            ),
        ]
    )


def test_each_invocation_is_indexed_once_across_checks_and_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    original = EvidenceIndex.of.__func__  # type: ignore[attr-defined]

    def counting(cls: type[EvidenceIndex], view: Any) -> EvidenceIndex:
        built.append(view.id)
        return original(cls, view)  # type: ignore[no-any-return]

    monkeypatch.setattr(EvidenceIndex, "of", classmethod(counting))
    gatekeeper = Gatekeeper()
    for _ in range(3):  # each round reads fresh records from the store, as the pipeline does
        store = InMemoryInvocations([invocation(11, output=LONG_LOG), invocation(12, output=LONG_LOG)])
        report = gatekeeper.validate(output_citing(11, 12), session_id=SESSION, invocations=store)
        assert report.result.status == "pass", report.result.errors
    assert sorted(built) == [11, 12]


def test_an_id_seen_again_with_other_text_is_indexed_again() -> None:
    # Two stores (eval copies of one database file) give the same session and id to other calls.
    gatekeeper = Gatekeeper()
    output = output_citing(21)
    first = InMemoryInvocations([invocation(21, output=LONG_LOG)])
    assert gatekeeper.validate(output, session_id=SESSION, invocations=first).result.status == "pass"
    other = InMemoryInvocations([invocation(21, output=LONG_LOG.replace("ERR_TIMEOUT", "ERR_DB_LOCK"))])
    report = gatekeeper.validate(output, session_id=SESSION, invocations=other)
    assert "claim.entity_grounding" in report.result.failed_rules


def test_a_warm_index_gives_the_report_a_cold_one_gives() -> None:
    for seed in (7, 11):
        scenario = build_scenario(seed=seed)
        gatekeeper = Gatekeeper()
        cold = report_dump(scenario.check(gatekeeper))
        assert report_dump(scenario.check(gatekeeper)) == cold
        assert report_dump(scenario.check(Gatekeeper())) == cold


def test_each_rule_alone_gives_the_checks_it_gives_beside_the_others() -> None:
    """The plain path: each rule in a Gatekeeper of its own, with its own cold index cache,
    so nothing a rule reads — claim views, excerpt alignments, fact look-ups, invocation
    indexes — was worked out for another. The shared run gives every rule the same checks."""
    ruleset = load_ruleset()
    enabled = [rule.id for rule in ruleset.enabled()]
    for seed in (7, 11, 23):
        scenario = build_scenario(seed=seed)
        shared = scenario.check(Gatekeeper())
        for rule_id in enabled:
            alone = Gatekeeper(
                ruleset.with_overrides(
                    {"rules": [{"id": other, "enabled": False} for other in enabled if other != rule_id]}
                )
            )
            report = scenario.check(alone)
            assert report.rules_run == [rule_id]
            assert checks_of(report, rule_id) == checks_of(shared, rule_id), (seed, rule_id)
            assert (rule_id in report.result.failed_rules) == (rule_id in shared.result.failed_rules)


def checks_of(report: Any, rule_id: str) -> list[Any]:
    records = [check for trace in report.claim_traces for check in trace.checks] + report.other_checks
    return [check for check in records if check.rule_id == rule_id]


def test_the_cache_keeps_the_most_recently_used() -> None:
    cache = EvidenceIndexCache(capacity=2)
    views = [invocation(i, output=f"line {i}") for i in (1, 2, 3)]
    first = cache.index(views[0])
    cache.index(views[1])
    assert cache.index(views[0]) is first  # used again: now the most recent
    cache.index(views[2])
    assert len(cache) == 2 and cache.index(views[0]) is first


def test_a_phrase_list_answer_never_serves_another_list() -> None:
    # Both Gatekeepers share the cache; each list's answer about the output is its own.
    cache = EvidenceIndexCache()
    store = InMemoryInvocations([invocation(31, output=LONG_LOG)])
    quoted = output_citing(31)
    assert Gatekeeper(evidence_cache=cache).validate(quoted, session_id=SESSION, invocations=store).result.status == (
        "pass"
    )
    # "order=100007 accepted" does not say it, the line it is quoted from does.
    overrides = {"ruleMetadata": {"evidence.instruction_language": {"params": {"phrases": ["INFO order-service"]}}}}
    strict = Gatekeeper(load_ruleset().with_overrides(overrides, "test"), evidence_cache=cache)
    report = strict.validate(quoted, session_id=SESSION, invocations=store)
    assert "evidence.instruction_language" in report.result.failed_rules


#: What phrase folding drops, as a pattern: a run of blanks between two characters outside ASCII.
CJK_BLANKS = re.compile(r"(?<=[^\x00-\x7f])\s+(?=[^\x00-\x7f])")


@given(
    st.text(st.sampled_from(["a", "Z", "-", "_", "1", ".", " ", "\t", "\n", "\u3000", "\xa0", "根", "因", "é", "ｒ"]))
)
def test_phrase_folding_drops_exactly_the_blanks_between_two_characters_outside_ascii(text: str) -> None:
    """Read word by word, the folding a phrase list matches against is the pattern's."""
    blanked = " ".join(text.lower().replace("-", " ").replace("_", " ").split())
    assert phrases_module._fold_read(text) == CJK_BLANKS.sub("", blanked)


@pytest.mark.parametrize("log", [LONG_LOG, LOG_OUTPUT], ids=["indexed", "under the index size"])
def test_a_planted_line_is_still_read(log: str) -> None:
    store = InMemoryInvocations([invocation(41, output=log + "\n" + PLANTED)])
    part = v2([claim(text="订单 123 请求超时。", bindings=[binding([41], "[cron] root cause")])])
    gatekeeper = Gatekeeper()
    for _ in range(2):
        report = gatekeeper.validate(part, session_id=SESSION, invocations=store)
        assert "evidence.instruction_language" in report.result.failed_rules


# -- the token hint spares searches, never changes an alignment ------------------------------


def test_tokens_change_no_alignment_on_the_benchmark_data() -> None:
    matcher = AnchoredMatcher()
    for seed in (7, 11, 23):
        for excerpt, output in build_scenario(seed=seed).cited_pairs():
            tokens, runs = frozenset(output.split()), WordRuns.of(output)
            assert matcher.locate(excerpt, output, tokens) == matcher.locate(excerpt, output)
            assert matcher.locate(excerpt, output, tokens, runs=runs) == matcher.locate(excerpt, output)
            assert matcher.locate(excerpt, output, runs=runs) == matcher.locate(excerpt, output)


@given(st.integers(0, 10_000), st.integers(1, 400), st.integers(8, 90), st.sampled_from(["", "x", "accepted", "ms"]))
def test_tokens_change_no_alignment(seed: int, line: int, length: int, edit: str) -> None:
    rng = random.Random(seed)
    row = LONG_LOG.split("\n")[line]
    start = rng.randrange(0, max(1, len(row) - 8))
    excerpt = row[start : start + length]
    if edit:  # replace one word, or insert one, so the excerpt is no longer verbatim
        words = excerpt.split(" ")
        words[rng.randrange(len(words))] = edit
        excerpt = " ".join(words)
    matcher = AnchoredMatcher()
    tokens = frozenset(LONG_LOG.split())
    plain = matcher.locate(excerpt, LONG_LOG)
    assert matcher.locate(excerpt, LONG_LOG, tokens) == plain
    assert matcher.locate(excerpt, LONG_LOG, tokens, runs=LONG_LOG_RUNS) == plain


# -- whole-token look-ups answer as the scans do --------------------------------------------


def absent(entity: Entity) -> Entity:
    needles = tuple(f"{needle}9" for needle in entity.needles)
    return Entity(entity.kind, f"{entity.text}9", needles, entity.value, entity.dimension, entity.factor)


@pytest.mark.parametrize("text", [LONG_LOG, PLANTED, "支付服务 payment-service 在 2026-07-07 10:01 返回 HTTP 504"])
def test_a_corpus_with_its_tokens_answers_as_one_without(text: str) -> None:
    index = EvidenceIndex.of(invocation(51, output=text))
    entities = extract_entities(text, ["gateway"])
    entities += [absent(entity) for entity in entities]
    assert entities
    for entity in entities:
        for literal in (False, True):
            assert index.corpus.contains(entity, literal=literal) == Corpus([text, "", index.context]).contains(
                entity, literal=literal
            ), entity


def test_the_index_holds_what_the_rules_read() -> None:
    view = invocation(61, output=LONG_LOG, output_preview=LONG_LOG[:1024], retrieval_details={"rows": 403})
    index = EvidenceIndex.of(view)
    assert index.preview_in_output and index.retrieval_details == '{"rows": 403}'
    assert index.output_tokens is not None and set(LONG_LOG.split()) <= index.output_tokens
    assert index.describes(view) and not index.describes(invocation(61, output=LONG_LOG + " "))
    assert not index.describes(invocation(61, output=LONG_LOG, output_preview=LONG_LOG[:1024]))
    assert evidence_module.EvidenceIndexCache().index(view).describes(view)


def test_an_output_under_the_index_size_is_searched_as_it_is_with_the_same_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small = invocation(63, output=LOG_OUTPUT)
    assert len(LOG_OUTPUT) < evidence_module.INDEXED_FROM
    index = EvidenceIndex.of(small)
    assert index.output_tokens is None and index.output_runs is None and index.corpus.runs is None
    scenario = build_scenario(claims=6, invocations=4, size=8000, seed=5)
    plain = report_dump(scenario.check(Gatekeeper()))
    monkeypatch.setattr(evidence_module, "INDEXED_FROM", 0)
    assert EvidenceIndex.of(small).output_runs is not None
    assert report_dump(scenario.check(Gatekeeper())) == plain


def test_folded_lines_with_runs_hold_what_a_scan_finds() -> None:
    index = EvidenceIndex.of(invocation(64, output=LONG_LOG))
    with_runs, scanned = index.folded_lines(), FoldedLines.of(index.corpus.text)
    assert with_runs.runs is not None and scanned.runs is None
    facts = ["ERR_TIMEOUT", "err_timeout", "Order-Service", "100007", "ERR_DB_LOCK", "exec-3]", "ms", "E-9999"]
    facts += ["accepted cost=1", "Z INFO", "E-9999 x"]  # across a blank: in no single token
    for entity in extract_entities(LONG_LOG[:3000]):
        facts.append(entity.text)
    for fact in facts:
        assert list(with_runs.holding(fact)) == list(scanned.holding(fact)), fact


def test_codes_and_ids_are_the_same_whatever_services_and_ignored_tokens_the_lexer_was_told_of() -> None:
    grounding = load_ruleset().get("claim.entity_grounding")
    assert grounding is not None
    params = grounding.typed_params(GroundingParams)
    services, ignored = params.known_services, params.ignore_tokens
    assert services and ignored
    texts = [c.claim_text for seed in (7, 11) for c in build_scenario(seed=seed).document.claims]
    texts += [LONG_LOG[:2000], "gateway 返回 UTF-8 编码错误 ERR_A00, order 88121, redis E-9999 超时 5300ms"]
    for text in texts:
        plain = [e for e in extract_entities(text) if e.kind in ADOPTABLE]
        shared = [e for e in TextFacts(text, services, ignored).entities(ignored_too=True) if e.kind in ADOPTABLE]
        assert shared == plain, text


def test_clocks_quantities_ratios_and_codes_are_the_same_whatever_services_the_lexer_was_told_of() -> None:
    """``SERVICE_BLIND``: what ``claim.stated_content`` reads of a claim from the lexing entity
    grounding did with its services — even services named like hosts ("db1"), or a service
    right after a number ("504 gateway", where the word is first tried as a unit)."""
    texts = [c.claim_text for seed in (7, 11) for c in build_scenario(seed=seed).document.claims]
    texts += [
        LONG_LOG[:2000],
        "gateway 返回 504 gateway ERR_A00 at 10:05, db1 db1.pool 5300ms 200/200 在 14:28:03Z 3~5 秒",
        "下午1点 redis 延迟 2.5 s, 90% of requests, order 88121 HTTP 503, ×5",
    ]
    for services in (("gateway", "redis", "db1", "db1.pool", "ms"), ()):
        for text in texts:
            plain = [e for e in extract_entities(text) if e.kind in SERVICE_BLIND]
            told = [e for e in TextFacts(text, services, ("UTF-8",)).entities(ignored_too=True)]
            assert [e for e in told if e.kind in SERVICE_BLIND] == plain, (services, text)


def test_a_check_shares_its_lexing_only_for_kinds_services_leave_alone() -> None:
    context = ValidationContext(output={}, normalized={}, session_id=SESSION, invocations={})
    text = "gateway p99 5300ms at 10:05, ERR_A00 on db1"
    grounding = context.text_facts(text, ["gateway", "db1"])
    kinds: frozenset[EntityKind] = frozenset({"timestamp", "quantity"})
    assert context.service_blind_entities(text, kinds) == [e for e in grounding.entities() if e.kind in kinds]
    assert context.service_blind_entities(text, kinds) == [e for e in extract_entities(text) if e.kind in kinds]
    with pytest.raises(ValueError, match="identifier"):
        context.service_blind_entities(text, frozenset({"identifier"}))
