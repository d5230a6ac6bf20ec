"""Gatekeeper benchmark (issue #2): 20 claims × 2 bindings over 10 invocations of 64 KB.

Half the excerpts are verbatim, a quarter have one word or number changed and a quarter
are invented; the data is drawn from several seeds and the runs take the scenarios in
turn. The same Gatekeeper runs with the anchored matcher and with the naive
``difflib.SequenceMatcher`` baseline, in this process, on this data. Outcomes per
excerpt kind are reported too: speed that lets invented excerpts through is no speed.

What depends on an invocation alone is built once per invocation (``EvidenceIndex``), as
when it is recorded: its cost is reported on its own (``record_ms_per_64kb``), and the
checks are timed with the indexes built, as every check after an invocation's first is.
"""

from __future__ import annotations

import functools
import itertools
import random
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from veridiag.bench.stats import summary, time_runs
from veridiag.contracts.executor_v2 import Claim, EvidenceBinding, ExecutorEvidenceV2
from veridiag.contracts.gatekeeper import GatekeeperReport
from veridiag.contracts.invocation import InMemoryInvocations, InvocationRecord
from veridiag.contracts.json import JsonObject
from veridiag.gatekeeper import AnchoredMatcher, Gatekeeper, SequenceMatcherBaseline, load_ruleset
from veridiag.gatekeeper.evidence import EvidenceIndex
from veridiag.gatekeeper.matching import BruteForceMatcher, ExcerptMatcher

#: The scenarios' seeds: the p50 is over all of them, taken in turn.
SEEDS = (7, 11, 23)
OUTPUT_BYTES = 65536
SERVICES = ["gateway", "order-service", "payment-service", "inventory-service"]
CODES = ["ERR_TIMEOUT", "ERR_POOL_EXHAUSTED", "ERR_DB_LOCK", "ERR_UPSTREAM_5XX"]
WORDS = ["timeout", "refused", "exhausted", "deadlock", "throttled", "rejected"]


def _ts(rng: random.Random) -> str:
    return f"2026-07-07T10:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z"


def _log_line(rng: random.Random) -> str:
    svc = rng.choice(SERVICES)
    thread = f"http-nio-8080-exec-{rng.randint(1, 200)}"
    order = rng.randint(100000, 999999)
    templates = [
        f"{_ts(rng)} INFO  {svc} [{thread}] c.s.web.OrderController - GET /api/orders/{order} status=200 "
        f"cost={rng.randint(5, 400)}ms traceId={rng.getrandbits(64):016x}",
        f"{_ts(rng)} ERROR {svc} [{thread}] c.s.pay.PaymentClient - order={order} {rng.choice(CODES)} "
        f"request {rng.choice(WORDS)} cost={rng.randint(1000, 9000)}ms",
        f"{_ts(rng)} WARN  {svc} [HikariPool-1 housekeeper] c.z.h.pool.HikariPool - HikariPool-1 - "
        f"Pool stats (total={rng.randint(10, 200)}, active={rng.randint(0, 200)}, idle={rng.randint(0, 20)}, "
        f"waiting={rng.randint(0, 90)})",
        f"{_ts(rng)} ERROR {svc} [{thread}] o.h.e.j.s.SqlExceptionHelper - Lock wait timeout exceeded; "
        f"try restarting transaction (table=t_order, wait={rng.randint(1, 60)}s)",
    ]
    return rng.choice(templates)


def _metric_line(rng: random.Random) -> str:
    svc = rng.choice(SERVICES)
    metric, value = rng.choice(
        [
            ("http_server_requests_seconds_p99", f"{rng.uniform(0.05, 9):.3f}"),
            ("process_cpu_usage_percent", f"{rng.uniform(5, 99):.1f}"),
            ("hikaricp_connections_active", f"{rng.randint(0, 200)}/200"),
            ("jvm_memory_used_mib", f"{rng.randint(300, 4000)}"),
        ]
    )
    return f'{_ts(rng)} {svc} {metric}{{instance="{svc}-{rng.randint(0, 3)}"}} {value}'


def _output(rng: random.Random, size: int, line: Callable[[random.Random], str]) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        text = line(rng)
        lines.append(text)
        total += len(text) + 1
    return "\n".join(lines)[:size]


def _invented(rng: random.Random) -> str:
    svc = rng.choice(SERVICES)
    return rng.choice(
        [
            f"{svc} HikariPool-2 - Connection is not available, request timed out after {rng.randint(3, 60)}000ms",
            f"{svc} OutOfMemoryError: Java heap space, container restarted (exit code 137)",
            f"redis ERR_REDIS_CLUSTERDOWN cluster state changed, slot {rng.randint(0, 16383)} migrating",
            f"{svc} circuit breaker OPEN after {rng.randint(20, 80)} consecutive failures to upstream",
        ]
    )


def _change_one(rng: random.Random, excerpt: str) -> str:
    """The excerpt with one word or one digit changed; never the first word of several
    (the edit should not just shorten the excerpt), the only word of a one-word excerpt."""
    words = excerpt.split(" ")
    first = 1 if len(words) > 1 else 0
    numeric = [i for i, w in enumerate(words) if any(c.isdigit() for c in w) and i >= first]
    index = rng.choice(numeric) if numeric and rng.random() < 0.6 else rng.randrange(first, len(words))
    word = words[index]
    if any(c.isdigit() for c in word):
        digits = [i for i, c in enumerate(word) if c.isdigit()]
        pos = rng.choice(digits)
        words[index] = word[:pos] + str((int(word[pos]) + rng.randint(1, 8)) % 10) + word[pos + 1 :]
    else:
        words[index] = rng.choice([w for w in WORDS if w != word])
    return " ".join(words)


@dataclass
class Scenario:
    #: The Executor output the bench writes, typed; ``output`` is it as the Gatekeeper gets it.
    document: ExecutorEvidenceV2
    #: Raw JSON, as parsed from an Executor's reply: only the fields written (no defaults).
    output: JsonObject
    invocations: InMemoryInvocations
    kinds: list[str]  # per binding, in claim order: verbatim / changed / invented
    output_bytes: int
    session_id: str
    records: list[InvocationRecord]

    def check(self, gatekeeper: Gatekeeper) -> GatekeeperReport:
        """One Gatekeeper run on this scenario's output and invocations."""
        return gatekeeper.validate(self.output, session_id=self.session_id, invocations=self.invocations)

    def cited_pairs(self) -> list[tuple[str, str]]:
        """(excerpt, output of the invocation it cites) for every binding, in order."""
        bindings = [binding for claim in self.document.claims for binding in claim.evidence_bindings]
        outputs = self.invocations.get_invocations({b.source_invocation_ids[0] for b in bindings})
        return [(b.evidence_excerpt, outputs[b.source_invocation_ids[0]].output or "") for b in bindings]


def build_scenario(claims: int = 20, invocations: int = 10, size: int = OUTPUT_BYTES, seed: int = 7) -> Scenario:
    """Deterministic realistic data: log and metric outputs, excerpts of the three kinds.
    Each seed is its own session, as each diagnosis is."""
    rng = random.Random(seed)
    session_id = f"bench-session-{seed}"
    records = []
    for i in range(invocations):
        is_logs = i % 2 == 0
        text = _output(rng, size, _log_line if is_logs else _metric_line)
        records.append(
            InvocationRecord(
                id=1000 + i,
                session_id=session_id,
                tool_name="query_logs" if is_logs else "query_metrics",
                output=text,
                output_preview=text[:1024],
                arguments={"service": SERVICES[i % len(SERVICES)]},
            )
        )
    bindings_total = claims * 2
    kinds = ["verbatim"] * (bindings_total // 2) + ["changed"] * (bindings_total // 4)
    kinds += ["invented"] * (bindings_total - len(kinds))
    rng.shuffle(kinds)

    claim_list = []
    for c in range(claims):
        bindings = []
        for b in range(2):
            record = records[(c + 3 * b) % invocations]
            kind = kinds[2 * c + b]
            lines = record.output.split("\n")[:-1]
            line = rng.choice(lines)
            start = line.find(" ", 25) + 1
            excerpt = line[start : start + rng.randint(50, 110)].strip()
            if kind == "changed":
                excerpt = _change_one(rng, excerpt)
            elif kind == "invented":
                excerpt = _invented(rng)
            bindings.append(
                EvidenceBinding(
                    source_type="tool_trace",
                    tool_name=record.tool_name,
                    source_invocation_ids=[record.id],
                    evidence_excerpt=excerpt,
                )
            )
        first = bindings[0].evidence_excerpt
        claim_list.append(
            Claim(
                claim_id=f"claim-{c + 1}",
                claim_type="symptom",
                claim_text=f"日志与指标显示：{first[:60]}",
                support_level="direct",
                evidence_bindings=bindings,
            )
        )
    document = ExecutorEvidenceV2(answer_version="executor_evidence_v2", claims=claim_list)
    output = document.model_dump(mode="json", exclude_unset=True)
    return Scenario(document, output, InMemoryInvocations(records), kinds, size, session_id, records)


def _excerpt_outcomes(gatekeeper: Gatekeeper, scenario: Scenario) -> list[str]:
    report = scenario.check(gatekeeper)
    outcomes: list[str] = []
    for trace in report.claim_traces:
        for check in trace.checks:
            if check.rule_id == "evidence.excerpt_similarity":
                outcomes.append(check.outcome)
    return outcomes


def _floors(scenarios: Sequence[Scenario], repeats: int) -> dict[str, float]:
    """What parts of a run cost on their own, measured on the same data.

    ``exact_find``: one ``str.find`` of each excerpt in its cited output — the least any
    exact-first search pays. ``locate_only``: the anchored matcher for every binding, no
    rule logic. ``structural_rules``: the Gatekeeper with the two text-searching rules
    (excerpt similarity, entity grounding) disabled — walking the claims, schema,
    references, phrases and the report. ``without_entity_grounding``: the spec's own
    rules only. Together they say where the p50 goes.
    """
    pair_sets = [scenario.cited_pairs() for scenario in scenarios]
    tokens = {output: frozenset(output.split()) for pairs in pair_sets for _, output in pairs}
    matcher = AnchoredMatcher()

    def without(*rule_ids: str) -> Gatekeeper:
        overrides = {"rules": [{"id": rule_id, "enabled": False} for rule_id in rule_ids]}
        return Gatekeeper(load_ruleset().with_overrides(overrides, "bench"))

    structural = without("evidence.excerpt_similarity", "claim.entity_grounding")
    spec_rules = without("claim.entity_grounding")
    parts: dict[str, Callable[[int], object]] = {
        "exact_find": lambda i: [output.find(excerpt) for excerpt, output in pair_sets[i]],
        "locate_only": lambda i: [matcher.locate(excerpt, output, tokens[output]) for excerpt, output in pair_sets[i]],
        "structural_rules": lambda i: scenarios[i].check(structural),
        "without_entity_grounding": lambda i: scenarios[i].check(spec_rules),
    }
    return {name: round(statistics.median(_in_turn(part, len(scenarios), repeats)), 4) for name, part in parts.items()}


def _in_turn(run: Callable[[int], object], scenarios: int, repeats: int, warmup: int = 2) -> list[float]:
    """``time_runs`` over the scenarios taken in turn (``run`` gets the scenario's index);
    at least one run of each, each warmed up."""
    turn = itertools.cycle(range(scenarios))
    return time_runs(lambda: run(next(turn)), max(repeats, scenarios), warmup=warmup * scenarios)


def _record_ms_per_64kb(scenarios: Sequence[Scenario], repeats: int) -> list[float]:
    """Building each invocation's ``EvidenceIndex`` (once per invocation in a real run),
    scaled to 64 KB of output."""
    samples: list[float] = []
    for record in (record for scenario in scenarios for record in scenario.records):
        scale = OUTPUT_BYTES / max(1, len(record.output))
        samples += [ms * scale for ms in time_runs(functools.partial(EvidenceIndex.of, record), repeats, warmup=1)]
    return samples


def _outcomes(gatekeeper: Gatekeeper, scenarios: Sequence[Scenario]) -> list[str]:
    return [outcome for scenario in scenarios for outcome in _excerpt_outcomes(gatekeeper, scenario)]


class GatekeeperBench(BaseModel):
    """Per-check times (all rules, indexes built), the baselines on the same data, the
    record-side cost, and the excerpt outcomes that show the speed lets nothing through."""

    p50_ms: float
    p99_ms: float
    baseline_p50_ms: float
    speedup: float
    claims: int
    invocations: int
    output_bytes: int
    seeds: list[int]
    runs: int
    baseline_runs: int
    record_ms_per_64kb: float
    brute_force_partial_ratio_p50_ms: float
    #: excerpt kind (verbatim / changed / invented) → outcome → count
    excerpt_outcomes: dict[str, dict[str, int]]
    decision_agreement_with_brute_force: float
    rule_p50_ms: dict[str, float]
    floor_p50_ms: dict[str, float]


def run(repeats: int = 200, baseline_repeats: int = 5, seeds: Sequence[int] = SEEDS) -> GatekeeperBench:
    scenarios = [build_scenario(seed=seed) for seed in seeds]

    def timed(make_matcher: Callable[[], ExcerptMatcher], count: int) -> list[float]:
        gatekeeper = Gatekeeper()

        def once(index: int) -> None:
            gatekeeper.matcher = make_matcher()  # no matcher state survives between runs
            scenarios[index].check(gatekeeper)

        # The warm-up builds each invocation's index, as its first check in a run would.
        return _in_turn(once, len(scenarios), count, warmup=1 if count < 10 else 3)

    ours = timed(AnchoredMatcher, repeats)
    record = _record_ms_per_64kb(scenarios, max(3, repeats // 20))
    per_rule: dict[str, list[float]] = {}
    reference = Gatekeeper()
    for index in range(max(5, repeats // 4)):
        report = scenarios[index % len(scenarios)].check(reference)
        for rule_id, ms in report.timings_ms.items():
            per_rule.setdefault(rule_id, []).append(ms)
    baseline = timed(SequenceMatcherBaseline, baseline_repeats)
    brute = timed(BruteForceMatcher, max(3, baseline_repeats))

    anchored_outcomes = _outcomes(Gatekeeper(matcher=AnchoredMatcher()), scenarios)
    brute_outcomes = _outcomes(Gatekeeper(matcher=BruteForceMatcher()), scenarios)
    kinds = [kind for scenario in scenarios for kind in scenario.kinds]
    by_kind: dict[str, Counter[str]] = {kind: Counter() for kind in ("verbatim", "changed", "invented")}
    for kind, outcome in zip(kinds, anchored_outcomes, strict=True):
        by_kind[kind][outcome] += 1
    agreement = sum(a == b for a, b in zip(anchored_outcomes, brute_outcomes, strict=True)) / len(brute_outcomes)
    stats = summary(ours)
    baseline_p50 = statistics.median(baseline)
    first = scenarios[0]
    return GatekeeperBench(
        p50_ms=stats["p50_ms"],
        p99_ms=stats["p99_ms"],
        baseline_p50_ms=round(baseline_p50, 3),
        speedup=round(baseline_p50 / stats["p50_ms"], 1),
        claims=len(first.document.claims),
        invocations=len(first.invocations),
        output_bytes=first.output_bytes,
        seeds=list(seeds),
        runs=len(ours),
        baseline_runs=len(baseline),
        record_ms_per_64kb=round(statistics.median(record), 4),
        brute_force_partial_ratio_p50_ms=round(statistics.median(brute), 3),
        excerpt_outcomes={kind: dict(counter) for kind, counter in by_kind.items()},
        decision_agreement_with_brute_force=round(agreement, 3),
        rule_p50_ms={rule_id: round(statistics.median(v), 4) for rule_id, v in per_rule.items()},
        floor_p50_ms=_floors(scenarios, max(5, repeats // 2)),
    )
