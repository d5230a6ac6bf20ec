"""``claim.entity_grounding`` (docs/DESIGN.md §4): every exact fact — number with unit,
percentage, ratio, error code, order/request id, service name, timestamp — in a claim's
text or an excerpt must occur in what that claim (or binding) cites. Excerpts quote, so
their facts must occur as written; claims may round or change units, so their quantities
match by value.

Excerpt similarity forgives one changed number; this rule does not. An excerpt that
aligns with a place in the output must carry the facts the output has *at that place*
(a misquoted ``cost=5800ms`` fails even if 5800ms occurs elsewhere). A claim's facts must be
in its **own** excerpts (the lines they align with, and the call's arguments and details):
a number that occurs only elsewhere in the cited output may describe something else — a
count over another window, another incident — so it is a warning that keeps the answer from
PASS, and a fact found nowhere is a failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from veridiag.contracts.invocation import InvocationView
from veridiag.gatekeeper.context import BindingView, Located, RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata, RuleSet
from veridiag.text.derived import Cited, derived
from veridiag.text.entities import (
    Corpus,
    Entity,
    TextFacts,
    claim_reading,
    extract_entities,
    is_difference,
    level_for_difference,
    period_lengths,
)
from veridiag.text.epochs import EPOCH_MISREAD, epoch_misread
from veridiag.text.pairs import CLAUSE, broken_pairs
from veridiag.text.records import records


class GroundingParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    check_claim_text: bool = Field(default=True, alias="checkClaimText")
    check_excerpts: bool = Field(default=True, alias="checkExcerpts")
    #: Alignment score from which an excerpt is taken to quote one place of the output.
    aligned_at: float = Field(default=0.5, ge=0, le=1, alias="alignedAt")
    #: A claim's facts must be in its own excerpts; found only elsewhere in the output ⇒ warn.
    own_excerpts_only: bool = Field(default=True, alias="ownExcerptsOnly")
    known_services: list[str] = Field(default_factory=list, alias="knownServices")
    ignore_tokens: list[str] = Field(default_factory=list, alias="ignoreTokens")


@dataclass
class _Binding:
    target: str
    excerpt: object
    sources: list[InvocationView]
    located: list[Located] = field(default_factory=list)


@dataclass
class _Check:
    """One run of the rule: what every helper needs, without seven-argument calls."""

    context: ValidationContext
    params: GroundingParams
    result: RuleResult

    def facts(self, text: str) -> TextFacts:
        """``text``'s facts, lexed once in this check (a claim text that repeats an excerpt, an
        excerpt cited by several claims, a claim the adopted-assertion rule reads too). Per
        check, on purpose: kept across checks, keyed by text, it would answer a later check
        from this one."""
        return self.context.text_facts(text, self.params.known_services, self.params.ignore_tokens)

    def context_text(self, invocation: InvocationView) -> str:
        """Arguments and the retrieval details' own properties: small, and often where the
        service name lives (``EvidenceIndex.properties``)."""
        return self.context.evidence(invocation).properties

    def in_output(self, invocation: InvocationView, entity: Entity, *, literal: bool) -> bool:
        """Whole-output look-ups are the costly ones (an absent fact scans 64 KB); a claim
        and its excerpts often state the same fact, so each is looked up once per run.
        ``literal`` matters for quantities only."""
        key = ("in_output", invocation.id, entity.kind, entity.text, literal and entity.kind == "quantity")
        if key not in self.context.memo:
            self.context.memo[key] = self.context.evidence(invocation).corpus.contains(entity, literal=literal)
        return bool(self.context.memo[key])

    def paired(
        self, entity: Entity, anchors: list[Entity], instances: list[re.Pattern[str]], sources: list[InvocationView]
    ) -> bool:
        """Is ``entity``, found only elsewhere in the cited output, in a record (a line with the
        lines indented under it) that also states one of the facts the claim quotes
        (``_anchors``), or that is an instance of a log pattern it quotes (``_instances``)? That
        record ties it to what the claim quotes — the time of the last value ("down to 5.85% by
        14:29" quoting "last 5.85%" beside the point "14:29:00Z 5.85%"), the hosts whose lines
        a quoted pattern counts — where a figure on an unrelated line (the count of a
        neighbouring log pattern) is still only elsewhere."""
        if not anchors and not instances:
            return False
        for invocation in sources:
            for record in self.records(invocation):
                if not _may_hold(record, entity):
                    continue
                corpus = Corpus([record])
                if corpus.contains(entity) and (
                    any(corpus.contains(anchor) for anchor in anchors) or any(i.search(record) for i in instances)
                ):
                    return True
        return False

    def records(self, invocation: InvocationView) -> list[str]:
        """The output's records (``text/records.py``), split once per check for every claim asking."""
        key = ("records", invocation.id)
        if key not in self.context.memo:
            self.context.memo[key] = list(records(self.context.evidence(invocation).output))
        split: list[str] = self.context.memo[key]
        return split

    def stated(self, entity: Entity, text: Corpus) -> bool:
        """Does ``text`` state ``entity``, a clock without a zone also as read in the reader's?"""
        return text.contains(entity) or self.in_reader_zone(entity, text)

    def in_reader_zone(self, entity: Entity, near: Corpus) -> bool:
        """Is ``entity``, a clock written without a zone, stated in a zone the answer names for its
        reader ("北京时间 12:45 …" in one claim, "峰值出现在 12:46" in another)?"""
        if entity.kind != "timestamp":
            return False
        from veridiag.text.zones import read_in  # a clock to place: a zone-reading text

        return any(near.contains(reading) for reading in read_in(entity, self.context.reader_zones()))

    def entities(self, text: object, known_tokens: frozenset[str]) -> list[Entity]:
        """The facts of ``text`` that ``known_tokens`` do not carry (``entities_outside``)."""
        if not isinstance(text, str):
            return []
        return self.facts(text).outside(known_tokens)

    def excerpt(self, entry: _Binding) -> None:
        exact = next((loc for loc in entry.located if loc.score >= 1.0), None)
        if exact is not None:
            self.result.add(
                entry.target,
                "pass",
                f"excerpt is verbatim from invocation {exact.invocation.id}",
                score=1.0,
                invocation_id=exact.invocation.id,
            )
        elif entry.located:
            # The excerpt quotes a place: its facts must be the ones written there.
            near = Corpus([loc.region() for loc in entry.located])
            entities = self.entities(entry.excerpt, near.tokens)
            missing = [e for e in entities if not near.contains(e, literal=True)]
            ids = ", ".join(str(loc.invocation.id) for loc in entry.located)
            self.record(
                entry.target,
                entities,
                missing,
                entry.located[0].invocation.id,
                where=f"the quoted lines of invocation {ids}",
            )
        else:
            # Quoted from nowhere in particular: each fact must at least occur, as written.
            self.text(entry.target, entry.excerpt, regions=[], sources=entry.sources, literal=True)

    def text(
        self,
        target: str,
        text: object,
        *,
        regions: list[str],
        sources: list[InvocationView],
        literal: bool = False,
        own_only: bool = False,
        previous: Sequence[_Binding] = (),
        quoted: Sequence[str] = (),
    ) -> None:
        """``own_only``: facts must be in ``regions`` (the claim's own excerpts and the lines
        they align with) or the calls' context; elsewhere in the output only warns. ``previous``:
        the bindings of the answer's previous claim, whose lines "1 秒后" counts from. ``quoted``:
        the claim's excerpts, whose facts may tie a line elsewhere in the output to it (``paired``)."""
        near = Corpus([*regions, *(self.context_text(inv) for inv in sources)])
        entities = self.entities(text, near.tokens)
        # A derivation is computed from the claim's own lines, not from the call's whole record
        # (its retrieval details list every episode: any two of their times give some duration).
        own_lines = Corpus(regions) if regions else None
        if isinstance(text, str) and not literal and self.misread_epoch(target, text, entities, own_lines, sources):
            return
        outside = [entity for entity in entities if not _grounds(near, own_lines, entity, literal)]
        # a difference found only as some level near it is written nowhere (computed, or not at all)
        read = claim_reading(text) if isinstance(text, str) and not literal else None
        differences = [e for e in entities if read and is_difference(e, read)]
        outside += [e for e in differences if e not in outside and level_for_difference(e, read or "", near)]
        if outside and isinstance(text, str) and not literal:
            cited = self.cited(text, own_lines, sources, previous)
            outside = [entity for entity in outside if not derived(entity, text, cited)]
        # A clock in the reader's zone on the claim's own lines is theirs before any line elsewhere
        # that writes the same face in UTC ("14:29" Berlin quoting "12:29:00Z", the output's
        # points running past 14:29Z): at most an inference, as the zone is the answer's.
        in_reader_zone = [e for e in outside if not literal and self.in_reader_zone(e, near)]
        outside = [e for e in outside if e not in in_reader_zone]
        found_elsewhere = [
            e for e in outside if any(self.in_output(inv, e, literal=literal or e in differences) for inv in sources)
        ]
        missing = [e for e in outside if e not in found_elsewhere]
        if found_elsewhere and own_only and quoted and isinstance(text, str):
            found_elsewhere = [
                e
                for e in found_elsewhere
                if not (
                    e.kind in _PAIRED_KINDS
                    and self.paired(
                        e,
                        _anchors(e, self.facts(text).entities(), outside, quoted, self.facts),
                        _instances(quoted),
                        sources,
                    )
                )
            ]
        ids = ", ".join(str(inv.id) for inv in sources)
        if own_only and found_elsewhere and not missing:
            listed = ", ".join(f"{e.kind} {e.text!r}" for e in found_elsewhere)
            why = f"not in the claim's own excerpts, only elsewhere in invocation {ids}: {listed}"
            self.warn(target, why, len(found_elsewhere), len(entities), sources[0].id)
            return
        if own_only and not missing and isinstance(text, str):
            context = Corpus([self.context_text(inv) for inv in sources])
            swapped = _on_another_subjects_line(self.facts(text).entities(), regions, context)
            if swapped:
                listed = ", ".join(f"{e.kind} {e.text!r} (the line of {other.text!r})" for e, other in swapped)
                why = f"found only on the line of another subject than the claim's, in invocation {ids}: {listed}"
                self.warn(target, why, len(swapped), len(entities), sources[0].id)
                return
            firsts = _of_a_patterns_first_line(self.facts(text).entities(), regions)
            if firsts:
                listed = ", ".join(f"{e.kind} {e.text!r} (not of the line at {clock.text!r})" for e, clock in firsts)
                why = f"found only on a pattern's example, its first line, in invocation {ids}: {listed}"
                self.warn(target, why, len(firsts), len(entities), sources[0].id)
                return
            named = self.facts(text).entities()  # all of them: a pair may be quoted verbatim
            outputs = [self.context.evidence(inv).output for inv in sources]
            broken = broken_pairs(text, outputs, self.stated, self.facts)
            if broken:
                listed = ", ".join(f"{b.fact.text!r} with {b.instead!r}, not {b.partner.text!r}" for b in broken)
                why = f"{PAIRED_OTHERWISE} in invocation {ids}: {listed}"
                self.warn(target, why, len(broken), len(named), sources[0].id)
                return
        doubtful = [e for e in entities if e not in outside and _doubted(e) and not near.pins(e)] + in_reader_zone
        if doubtful and not missing and not literal:
            listed = ", ".join(f"{e.kind} {e.text!r}" for e in doubtful)
            why = f"{ZONE_UNPINNED}: true in one reading of its zone only, in invocation {ids}: {listed}"
            self.warn(target, why, len(doubtful), len(entities), sources[0].id)
            return
        self.record(target, entities, missing, sources[0].id, where=f"the output of invocation {ids}")

    def misread_epoch(
        self, target: str, text: str, entities: list[Entity], own_lines: Corpus | None, sources: list[InvocationView]
    ) -> bool:
        """Fails a date or clock written beside an epoch of the claim's lines as its restatement
        but not its instant ("1513958400000 ms 是 2017-12-23 00:00", really 22 Dec 16:00), though the
        face may be found on some other line; True when it did."""
        misread = epoch_misread(text, entities, own_lines)
        if not misread:
            return False
        listed = ", ".join(f"{e.kind} {e.text!r}" for e in misread)
        why = f"{EPOCH_MISREAD} in invocation {', '.join(str(inv.id) for inv in sources)}: {listed}"
        self.result.add(
            target, "fail", why, score=round(1 - len(misread) / len(entities), 4), invocation_id=sources[0].id
        )
        return True

    def cited(
        self, text: str, own_lines: Corpus | None, sources: list[InvocationView], previous: Sequence[_Binding]
    ) -> Cited:
        """What the claim's derived facts are computed from (``text/derived.py``), each part read
        only when a fact asks for it."""

        def periods() -> tuple[int, ...]:
            return tuple(p for inv in sources for p in period_lengths(inv.arguments, inv.retrieval_details))

        def before() -> Corpus | None:
            lines = [loc.region() for entry in previous for loc in entry.located]
            return Corpus(lines) if lines else None

        return Cited(
            own_lines,
            outputs=[inv.output or "" for inv in sources],
            context=[self.context_text(inv) for inv in sources],
            periods=periods,
            previous=before,
            facts=self.facts(text).entities(),
        )

    def warn(self, target: str, why: str, flagged: int, total: int, invocation_id: int) -> None:
        """A claim whose facts are found, ``flagged`` of its ``total`` only in a weaker way."""
        score = round(1 - flagged / total, 4)
        self.result.add(target, "warn", why, score=score, invocation_id=invocation_id)

    def record(
        self, target: str, entities: list[Entity], missing: list[Entity], invocation_id: int, *, where: str
    ) -> None:
        if missing:
            listed = ", ".join(f"{e.kind} {e.text!r}" for e in missing)
            score = round(1 - len(missing) / len(entities), 4)
            self.result.add(target, "fail", f"not in {where}: {listed}", score=score, invocation_id=invocation_id)
        elif entities:
            self.result.add(
                target,
                "pass",
                f"{len(entities)} facts found in {where}",
                score=1.0,
                invocation_id=invocation_id,
            )
        else:
            self.result.add(
                target, "pass", f"every fact also occurs in {where}", score=1.0, invocation_id=invocation_id
            )


def _grounds(near: Corpus, own_lines: Corpus | None, entity: Entity, literal: bool) -> bool:
    """Is ``entity`` in the claim's lines or its calls' context? A date only in its own lines: the
    day a call's window spans is no day anything happened on."""
    if entity.kind == "date" and own_lines is not None:
        return own_lines.contains(entity)
    return near.contains(entity, literal=literal)


#: The reason a claim pairs two facts its evidence gives with others ("merchant m-40281 at 10:05:30"
#: of the lines of m-40277 at 02:05:30Z and m-40281 at 02:05:39Z): at most an inference.
PAIRED_OTHERWISE = "facts its lines pair otherwise"

#: The reason a claim's clock is stated only in one reading of a zone its words do not pin
#: ("08:22 CST": China, US Central or Cuba) begins with this: at most an inference, never a REJECT.
ZONE_UNPINNED = "zone not pinned"


def _doubted(entity: Entity) -> bool:
    return entity.uncertain or any(other.uncertain for other in entity.alternatives)


#: Facts found elsewhere that a line stating one of the claim's own facts ties to it: which
#: moment, which thing. An amount is read by its role on its line ("5 min" of an episode is no
#: span of the two points a claim quotes), so it stays only elsewhere.
_PAIRED_KINDS = ("timestamp", "identifier", "error_code")
#: Facts that tie no line to a claim: a day and a service are on every line of a call's output.
_UNTYING_KINDS = ("date", "service")
_WORD = re.compile(r"[^\W\d_]{3,}")


def _anchors(
    fact: Entity,
    entities: list[Entity],
    outside: list[Entity],
    quoted: Sequence[str],
    read: Callable[[str], TextFacts],
) -> list[Entity]:
    """The facts the claim quotes — its own facts its excerpts state, and the moments and things
    its excerpts name (not their amounts: a baseline's value is on many lines) — in a clause
    that gives no other fact of ``fact``'s kind: what may tie another record of the output to
    the claim. "峰值 50 在 10:17" quoting "peak 50 connections at 10:00" is not tied to
    the point "10:17 50 connections": the clause it quotes already places the peak."""
    anchors: list[Entity] = []
    for text in quoted:
        for line in text.splitlines():
            for part in CLAUSE.split(line):
                facts = read(part).entities()
                if any(e.kind == fact.kind and e.dimension == fact.dimension for e in facts):
                    continue
                clause = Corpus([part])
                anchors += [e for e in facts if e.kind in _PAIRED_KINDS]  # which moment, which thing
                anchors += [
                    e
                    for e in entities
                    if e not in outside and e is not fact and e.kind not in _UNTYING_KINDS and clause.contains(e)
                ]
    return anchors


#: A ``query_logs`` pattern of several lines and its first and last times.
_MANY_LINES_HEAD = re.compile(r"^\s*(?:[2-9]|[1-9]\d+)×\s+\S+\s+(?P<first>\S+)\s+–\s+(?P<last>\S+)\s")


def _of_a_patterns_first_line(facts: list[Entity], regions: list[str]) -> list[tuple[Entity, Entity]]:
    """Facts a claim gives the last line of a quoted pattern of several lines ("最后一条（04:02:27）来自
    gige4") that only the pattern's example holds: the example is its first line, another line than
    the last (each with the clock it pairs with). The pattern's own words are all its lines'; a claim
    naming its first and last times speaks of its span, its example's facts one of its lines'."""
    clocks = [fact for fact in facts if fact.kind == "timestamp"]
    if not clocks:
        return []
    found: list[tuple[Entity, Entity]] = []
    for region in regions:
        head, _, example = region.partition("\n")
        times = _MANY_LINES_HEAD.match(head)
        if times is None or not example.strip() or times["first"] == times["last"]:
            continue
        first, last, pattern, instance = (Corpus([t]) for t in (times["first"], times["last"], head, example))
        at_last = [c for c in clocks if last.contains(c) and not first.contains(c)]
        if at_last and not any(first.contains(c) for c in clocks):  # both ends: the pattern's span
            found += [
                (fact, at_last[0])
                for fact in facts
                if fact.kind in _PAIRED_KINDS
                and fact.kind != "timestamp"
                and instance.contains(fact)
                and not pattern.contains(fact)
            ]
    return found


#: A ``query_logs`` pattern line's head: its count, level and first and last times.
_PATTERN_HEAD = re.compile(r"^\s*\d+×\s+\S+\s+\S+\s+–\s+\S+\s+")
_WILDCARD = "<*>"


def _instances(quoted: Sequence[str]) -> list[re.Pattern[str]]:
    """The lines a quoted log pattern stands for, as a search: its words in order, each ``<*>``
    any run without a line break. Only a quote with a wildcard and a word of its own."""
    found = []
    for text in quoted:
        body = _PATTERN_HEAD.sub("", text.strip())
        parts = body.split(_WILDCARD)
        if len(parts) < 2 or not any(_WORD.search(part) for part in parts):
            continue
        found.append(re.compile("[^\n]+?".join(re.escape(part) for part in parts)))
    return found


def _may_hold(line: str, entity: Entity) -> bool:
    """A cheap test before reading ``line``: a quantity's whole digits, another fact's needle (of
    any of its readings)."""
    if entity.kind == "quantity" and entity.value is not None:
        return str(abs(int(entity.value))) in line
    return any(needle in line for reading in (entity, *entity.alternatives) for needle in reading.needles)


#: What a claim is about: the facts of a line belong to the id or service it names.
_SUBJECT_KINDS = ("identifier", "service")


def _on_another_subjects_line(
    entities: list[Entity], regions: list[str], context: Corpus
) -> list[tuple[Entity, Entity]]:
    """Facts of the claim found in its quoted lines only on lines naming another subject of the
    same kind and not the claim's own ("订单88121 等待 2950ms" where 2950ms is order 88122's
    line): each with the subject whose line it is. A fact on a line naming no subject, or on
    one of the claim's own, is the claim's; so is one its calls' ``context`` states (the end of
    the window asked about, "10:00 to 10:03", near a line naming an upstream at 10:02:56)."""
    subjects = [e for e in entities if e.kind in _SUBJECT_KINDS]
    facts = [e for e in entities if e.kind not in _SUBJECT_KINDS or e not in subjects]
    # each line, with the record its subjects are read in: a log pattern's own (its count and times
    # are every line's, so its example's service is its too: "37× … upstream=payment-api" over
    # "e.g. … payment-service …"), else the line's
    lines = [
        (line, region if _PATTERN_HEAD.match(region) else line)
        for region in regions
        for line in region.splitlines()
        if line.strip()
    ]
    if not subjects or not facts or not lines:
        return []
    kinds = {s.kind for s in subjects}
    swapped: list[tuple[Entity, Entity]] = []
    corpora = [(Corpus([line]), Corpus([scope])) for line, scope in lines]  # each read once, for every fact
    for fact in (f for f in facts if f.kind not in _SUBJECT_KINDS and not context.contains(f)):
        found = [(corpus, scope) for corpus, scope in corpora if corpus.contains(fact)]
        holding = [corpus for corpus, _scope in found]
        if not holding or any(scope.contains(s) for _corpus, scope in found for s in subjects):
            continue
        others = [
            e
            for corpus in holding
            for e in extract_entities(corpus.text)
            if e.kind in kinds and not any(e.needles == s.needles for s in subjects)
        ]
        if others and all(any(corpus.contains(o) for o in others) for corpus in holding):
            swapped.append((fact, others[0]))
    return swapped


@register
class EntityGrounding(GatekeeperRule):
    id = "claim.entity_grounding"
    Params = GroundingParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(GroundingParams)
        check = _Check(context, params, RuleResult(self.id))
        previous: list[_Binding] = []
        for claim in context.claim_views():
            entries = [self._binding(context, params, binding) for binding in claim.bindings]
            if params.check_excerpts:
                for entry in entries:
                    if entry.sources:
                        check.excerpt(entry)
            sources = list({inv.id: inv for entry in entries for inv in entry.sources}.values())
            if params.check_claim_text and sources:
                regions = [loc.record() for entry in entries for loc in entry.located]
                check.text(
                    f"{claim.target}.claim_text",
                    claim.claim.get("claim_text"),
                    regions=regions,
                    sources=sources,
                    own_only=params.own_excerpts_only,
                    previous=previous,
                    quoted=[entry.excerpt for entry in entries if entry.located and isinstance(entry.excerpt, str)],
                )
            previous = entries
        return check.result

    @staticmethod
    def _binding(context: ValidationContext, params: GroundingParams, binding: BindingView) -> _Binding:
        entry = _Binding(binding.excerpt_target, binding.excerpt, list(binding.usable))
        if isinstance(entry.excerpt, str) and entry.excerpt.strip():
            located = (context.locate(entry.excerpt, inv) for inv in binding.usable)
            entry.located = [loc for loc in located if loc is not None and loc.score >= params.aligned_at]
        return entry


def known_services(ruleset: RuleSet) -> list[str]:
    """The service names entity grounding is told of (``knownServices``), read through its
    params model; none when the rule set has no such rule. The planner and roles know them too."""
    rule = ruleset.get(EntityGrounding.id)
    return list(rule.typed_params(GroundingParams).known_services) if rule else []
