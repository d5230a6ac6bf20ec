"""Offline executor: runs the plan's tool calls and derives claims **only from the typed
records they returned** (``ToolOutput.evidence``), never by re-reading rendered text.

It works as an on-call engineer does, top to bottom in ``_Execution.run``:

1. The lines that name what was asked about (an order), when there are some: when to look.
2. The survey: one ``rank_suspects`` call over every service with data in the window, whatever
   the question names — ranking the services that changed (the named services' callers and
   callees, when a call graph is known, are read in detail when they changed).
3. The question's own words (``Plan.terms``) searched in every log with data in the window.
4. The focus, chosen by the question (``focus.py``): the moment asked, the records asked
   about, else the change most to do with the question — the latest incident when something is
   down or still failing — and the survey made again for that moment.
5. The involved services read in detail: the series that changed, ERROR and WARN logs,
   changes before the focus.
6. The answer to what was asked (``Plan.intent``) first — the culprit when one stands out, that
   none does, the ranking, the onset — then what moved, the logs, what stayed quiet, the
   changes; runbook matches become hypotheses; every call that failed or found nothing is a gap.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any, Protocol

from veridiag.agents.offline import focus as focusing
from veridiag.agents.offline.findings import STILL_GOING, Clock, Findings, Quote, spans_days
from veridiag.agents.offline.skills import catalog, term_words
from veridiag.agents.offline.still import answer_still
from veridiag.agents.offline.value import answer_value, asked_metric
from veridiag.agents.reply import OFFLINE, RoleReply
from veridiag.agents.roles import ExecuteRequest
from veridiag.analysis.signatures import family_of
from veridiag.analysis.suspects import AFTER_AT, BEFORE_AT
from veridiag.analysis.traces import own_grew
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.executor_v2 import ExecutorEvidenceV2, Hypothesis, RecommendedAction
from veridiag.contracts.material import ExecutorScope
from veridiag.contracts.plan import Step
from veridiag.text.cjk import HAN, has_cjk
from veridiag.text.entities import extract_entities
from veridiag.text.normalize import reader_text
from veridiag.text.render import format_value, iso, rounded
from veridiag.text.wordfiles import AnyOf, WordModel, bundled_words
from veridiag.tools.records import (
    AskedPoint,
    ChangeEvidence,
    ChangeRecord,
    KnowledgeEvidence,
    LogEvidence,
    LogSample,
    MetricAnomaly,
    MetricEvidence,
    NotCounted,
    RunbookMatch,
    Span,
    SuspectEvidence,
    SuspectSignal,
    TemplateCount,
    TraceEvidence,
)
from veridiag.tools.results import ToolCallResult
from veridiag.tools.spans import trace_id_in

#: Metrics read per named service that did not change (to say it stayed within its history).
MAX_METRICS = 8
#: Suspects read in detail, and metrics of each (the ones that changed).
MAX_SUSPECTS = 3
MAX_SIGNALS = 4
#: A suspect scored below this is not read in detail (its change is stated by the survey).
MIN_DETAIL_SCORE = 0.15
#: Of the changes of an onset's kind, those scored at least this share of the strongest mark the
#: incident's start.
ONSET_SHARE = 0.25
#: Services whose spans are read (``query_traces``), of the involved ones.
MAX_TRACED = 4
#: Services read in detail when the survey found no suspect and the question named none.
MAX_DETAIL = 8
#: Lines holding the question's words over longer than this are no period of their own.
BURST_AT_MOST = timedelta(hours=2)
#: Padding around an episode, and how long before an anomaly a change may have caused it.
PAD = timedelta(minutes=5)
CAUSE_LOOKBACK = timedelta(hours=2)
#: How long before an onset a change may be taken as its cause (the demo's are 1–5 minutes).
CAUSE_LEAD = timedelta(minutes=30)
#: A change this close after an onset started with it (metrics are sampled once a minute).
SAME_TIME = timedelta(seconds=60)
#: Change kinds a question's words mean beyond their own name ("发布后": a deploy or a release).
_AFTER_KINDS: dict[str, set[str]] = {"deploy": {"deploy", "release"}}
#: How far past the period asked about "how long did it last?" reads a change still going then.
LASTING_LOOKAHEAD = timedelta(hours=6)
#: Episodes stated as claims, the strongest first (a counter's steps count as one).
MAX_STATED_EPISODES = 6
#: Words a runbook must share with what was observed to be taken as a source of hypotheses.
MIN_SHARED_TERMS = 2
_TEMPLATE_WORD = re.compile(rf"[A-Za-z][A-Za-z_]{{2,}}|[{HAN}]{{2,}}")


class AnswerWords(WordModel):
    """``answers.yaml``: which answer a question of one intent gets where the intent alone does not say."""

    service_count: AnyOf


@lru_cache(maxsize=1)
def answer_words() -> AnswerWords:
    return bundled_words("veridiag.agents.offline", "answers.yaml", AnswerWords)


def counts_services(question: str) -> bool:
    """Whether a question asks how many services ("how many services were affected?")."""
    return answer_words().service_count.search(reader_text(question)) is not None


class Catalogue(Protocol):
    """What the executor may know without a tool call: which series and data exist."""

    def services(self) -> list[str]: ...
    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]: ...
    def log_span(self, service: str) -> Span | None: ...
    def metric_span(self, service: str, metric: str | None = None) -> Span | None: ...


Series = tuple[ToolCallResult, MetricEvidence]
Logs = tuple[ToolCallResult, LogEvidence]
Spotted = tuple[ToolCallResult, MetricEvidence, MetricAnomaly]
Traced = tuple[ToolCallResult, TraceEvidence]
Survey = tuple[ToolCallResult, SuspectEvidence]
#: A term searched: the call, its lines, the words found (as searched), the term as asked.
Searched = tuple[ToolCallResult, LogEvidence, str, str]


@dataclass
class _Execution:
    """One execution of a plan: its calls, what they returned, and the findings."""

    request: ExecuteRequest
    catalogue: Catalogue | None
    findings: Findings
    window: tuple[datetime, datetime]
    steps: list[Step]
    #: The services the question names exactly (checked, never assumed).
    named: list[str]
    calls: int = 0
    #: The change feed's answer when it held no change in the window: worth stating as a finding.
    no_changes: tuple[ToolCallResult, ChangeEvidence] | None = None
    #: Metrics that moved, in the order they were found: their words look up runbooks.
    spotted_metrics: list[str] = field(default_factory=list)
    #: Metric reads that failed, per service: "nothing deviated" then speaks only of what was read.
    unread_metrics: Counter[str] = field(default_factory=Counter)
    #: The change the question asked what followed ("发布后报错"), when the focus was put after it.
    after_change: ChangeRecord | None = None
    #: The standout's change (service, time) when its inference over what followed answers.
    _answered_change: tuple[str, datetime] | None = None
    #: The term searches already stated (the ones that lead a "why" are stated first).
    _stated_terms: set[int] = field(default_factory=set)
    #: Whether the episode the moment asked lies inside answers (nothing began in the window).
    _answer_by_episode: bool = False

    # -- the flow, top to bottom ------------------------------------------------------

    def run(self) -> ExecutorEvidenceV2:
        plan = self.request.plan
        order_id = plan.order_id
        mentions = self._order(str(order_id)) if order_id and self._has("query_logs", when="order_id") else []
        neighbours = self._neighbours(self.named)
        # Whether a service stands out is decided over every service with data, whatever the
        # question names (a leading question must not narrow it); the named services'
        # neighbourhood only chooses what is read in detail.
        scope: list[str] | None = None
        # the moment asked ("around 07:00"), or when the question says it began ("since 10:00")
        asked_at = focusing.moment(plan.time.at) or (self.window[0] if plan.time.kind == "since" else None)
        survey = self._survey(self.window, asked_at, scope)
        searched = self._terms(plan.terms, self.window) if self._has("query_logs", when="terms") else []
        focus = self._focus(survey, _bursts(searched, self.window), [s.ts for _r, s in mentions], neighbours)
        # ranked again for the moment chosen, and a ranking by a measure for the period it names
        span_asked = (focus.start, focus.end)
        levels_elsewhere = plan.intent.kind == "rank" and plan.intent.rank_by and span_asked != self.window
        if survey is not None and (_moved(focus, asked_at) or levels_elsewhere):
            survey = self._survey((focus.start, focus.end), focus.at, scope) or survey
        span = (focus.start, focus.end)
        self.findings.clock = Clock(with_date=spans_days(span))
        for result, sample in mentions:
            self.findings.order(result, str(order_id), sample)
        involved = self._involved(survey, neighbours)
        series = self._metrics(involved, survey, span) if self._has("query_metrics") else []
        logs = self._logs(involved, span) if self._has("query_logs") else []
        logs += self._levelless(logs, span)
        changes = self._changes(span) if self._has("query_changes") else []
        traced = self._traces(involved, span) if self._has("query_traces") else []
        self._answer(survey, series, logs, changes, searched)
        self._state_terms(searched)
        self._state_traces(traced)
        if survey is not None and self._has("query_traces"):
            self._error_trace(survey[1], logs)
        self._state(series, logs, span, changes, involved)
        if survey is None or survey[1].held is None:  # no data in the window: nothing to match a runbook to
            self._runbooks(logs, involved)
        examined = survey[1] if survey is not None else None
        return self.findings.output(
            ExecutorScope(
                window=(iso(self.window[0]), iso(self.window[1])),
                focus=(iso(focus.start), iso(focus.end)),
                chosen=focus.chosen,
                after_change_at=iso(self.after_change.ts) if self.after_change else None,
                services=tuple(self.named),
                surveyed=scope is None,
                involved=tuple(involved),
                examined=tuple(examined.examined) if examined else (),
                neighbours=tuple(neighbours),
                without_data=tuple(examined.without_data) if examined else (),
            )
        )

    # -- calls ------------------------------------------------------------------------

    def _has(self, tool: str, when: str | None = None) -> bool:
        return any(step.tool == tool and step.when == when for step in self.steps)

    def _call(self, tool: str, args: Mapping[str, Any]) -> ToolCallResult | None:
        """Run one tool. A failed call is a gap and gives None; a call that found nothing is a
        gap too — unless it is a finding: no log lines of a level, for a service that has logs."""
        runner = self.request.tools
        assert runner is not None
        self.calls += 1
        result: ToolCallResult = runner.run(tool, {k: v for k, v in args.items() if v not in (None, "", [])})
        if result.status == "ok" or _found_nothing(result):
            return result
        reason = (result.output.error or result.output.text or "").split("\n")[-1][:200]
        summary = ", ".join(f"{k}={v}" for k, v in args.items() if k not in ("start", "end", "at") and v)
        key = ("error" if result.status == "error" else "no_data") + ("" if summary else "_plain")
        self.findings.gap(key, tool=tool, args=summary, reason=reason)
        return result if result.status == "no_data" else None

    def _neighbours(self, services: Sequence[str]) -> list[str]:
        """The callers and callees of the named services, when a call graph is known."""
        graph = getattr(self.catalogue, "dependencies", None)
        edges: list[tuple[str, str]] = graph() if callable(graph) and services else []
        near = [b for a, b in edges if a in services] + [a for a, b in edges if b in services]
        return [s for s in dict.fromkeys(near) if s not in services]

    def _asked_still(self) -> list[str]:
        """The services the survey is asked about by name: those the question names — and, for
        "still failing?", else those a word of it points to ("支付服务还在报错吗": payment-service),
        so the answer says whether *they* still fail, not whichever service changed most."""
        plan = self.request.plan
        if self.named or plan.intent.still is None:
            return list(self.named)
        return list(plan.pointed_services)

    def _survey(self, window: tuple[datetime, datetime], at: datetime | None, scope: list[str] | None) -> Survey | None:
        """One ``rank_suspects`` over the services in scope (every service with data: None)."""
        if not self._has("rank_suspects"):
            return None
        intent = self.request.plan.intent
        # A ranking reads around a moment only when the question names one ("at 06:37"); "since
        # 06:30" ranks the whole period since (``levels_period``).
        if intent.kind == "rank" and focusing.moment(self.request.plan.time.at) is None:
            at = None
        args: dict[str, Any] = {
            **_bounds(window),
            "at": iso(at) if at is not None else None,
            "services": scope,
            "asked": [*self._asked_still(), *self.request.plan.unknown_services] or None,
            "by": intent.rank_by if intent.kind == "rank" else None,
        }
        result = self._call("rank_suspects", args)
        found = [e for e in (result.output.evidence if result else []) if isinstance(e, SuspectEvidence)]
        return (result, found[0]) if result is not None and found else None

    def _involved(self, survey: Survey | None, neighbours: Sequence[str] = ()) -> list[str]:
        """The services read in detail: the named ones, the first suspects and the named
        services' callers and callees that changed — or, when the survey found none and none was
        named, the services examined (at most ``MAX_DETAIL``, the rest said to be left out)."""
        if survey is None:
            return list(self.named) or (self.catalogue.services()[:MAX_DETAIL] if self.catalogue else [])
        evidence = survey[1]
        if evidence.held is not None:  # no service has data in the window: the survey said where it lies
            return list(self.named)
        suspects = [s.service for s in evidence.suspects[:MAX_SUSPECTS] if s.score >= MIN_DETAIL_SCORE]
        suspects += [s.service for s in evidence.suspects if s.service in neighbours and s.score >= MIN_DETAIL_SCORE][
            :MAX_SUSPECTS
        ]
        # data that begins during a period out of line is read too: the answer says so
        suspects += [item.service for item in _begins_during(evidence)][:MAX_SUSPECTS]
        # a named service without data too: what its data does cover is said where it is read
        involved = list(dict.fromkeys([*self.named, *suspects]))
        if involved:
            return involved
        if len(evidence.examined) > MAX_DETAIL:
            span = self.findings.during(evidence.start, evidence.end)
            self.findings.gap("detail_limited", count=len(evidence.examined), read=MAX_DETAIL, **span)
        if not evidence.examined and self.catalogue is not None:
            # nothing the survey could read holds data here (a metrics backend it cannot list, a
            # live window): the services known are read directly, as the backends answer
            return self.catalogue.services()[:MAX_DETAIL]
        return evidence.examined[:MAX_DETAIL]

    def _metrics(
        self, services: Sequence[str], survey: Survey | None, window: tuple[datetime, datetime]
    ) -> list[Series]:
        """The series that changed, of each involved service; a named service's metrics (its own
        resources first) when none changed, to say they stayed within their history."""
        changed: dict[str, list[str]] = {}
        if survey is not None:
            for episode in sorted(survey[1].episodes, key=lambda e: -e.score):
                if episode.source == "metric" and episode.name not in changed.setdefault(episode.service, []):
                    changed[episode.service].append(episode.name)
            for item in _begins_during(survey[1]):
                if item.name not in changed.setdefault(item.service, []):
                    changed[item.service].append(item.name)
            changed = {service: names[:MAX_SIGNALS] for service, names in changed.items()}
        found: list[Series] = []
        for service in services:
            if self.catalogue is None:
                self.findings.gap("no_metrics_catalogue", service=service)
                continue
            names = [m for _s, m, _u in self.catalogue.metrics(service)]
            if not names and service in self.named:
                self.findings.gap("no_metrics", service=service)
            # The survey's changed series; a named service's own (to say they stayed quiet); every
            # involved service's when the survey read no metrics (a backend that cannot list them).
            unsurveyed = survey is None or survey[1].series == 0
            wanted = service in self.named or unsurveyed
            chosen = changed.get(service) or (_by_role(names)[:MAX_METRICS] if wanted else [])
            for metric in chosen:
                asked = _bounds(window, focusing.moment(self.request.plan.time.at))
                result = self._call("query_metrics", {"service": service, "metric": metric, **asked})
                if result is None:
                    self.unread_metrics[service] += 1
                elif result.status == "ok":
                    found += [(result, e) for e in result.output.evidence if isinstance(e, MetricEvidence)]
        return found

    def _traces(self, services: Sequence[str], window: tuple[datetime, datetime]) -> list[Traced]:
        """The spans of the involved services that have some (issue 29), against their own
        earlier spans; none read when the backend knows no spans."""
        listed = getattr(self.catalogue, "trace_services", None)
        with_spans = set(listed()) if callable(listed) else set()
        found: list[Traced] = []
        for service in [s for s in services if s in with_spans][:MAX_TRACED]:
            result = self._call("query_traces", {"service": service, **_bounds(window)})
            if result is not None and result.status == "ok":
                found += [(result, e) for e in result.output.evidence if isinstance(e, TraceEvidence)]
        return found

    def _state_traces(self, traced: list[Traced]) -> None:
        """What the spans say, the services whose own time or errors grew first."""
        grew = [item for item in traced if _own_grew(item[1])]
        for result, spans in [*grew, *(item for item in traced if item not in grew)]:
            self.findings.traces(result, spans)

    def _error_trace(self, evidence: SuspectEvidence, logs: list[Logs]) -> None:
        """The request behind the first suspect's new error lines, read whole by the trace id its
        example line states (issue 29): which services it reached and whether the suspect called
        any — the logs and the spans of one request side by side."""
        top = evidence.suspects[0] if evidence.suspects else None
        listed = getattr(self.catalogue, "trace_services", None)
        if top is None or top.signals[0].source != "log" or not callable(listed) or top.service not in listed():
            return
        lead = top.signals[0]
        for result, found in logs:
            mine = found.templates if found.service == top.service else []
            template = next((t for t in mine if t.template == lead.name), None)
            trace_id = trace_id_in(template.example) if template is not None else None
            if template is None or trace_id is None:
                continue
            call = self._call("query_traces", {"service": top.service, "trace_id": trace_id})
            if call is not None and call.status == "ok":
                for trace in (e for e in call.output.evidence if isinstance(e, TraceEvidence) and e.trace_id):
                    self.findings.error_trace(result, template, call, trace)
            return

    def _logs(self, services: Sequence[str], window: tuple[datetime, datetime]) -> list[Logs]:
        found: list[Logs] = []
        for service in services:
            if self.catalogue is not None and self.catalogue.log_span(service) is None:
                if service in self.named:  # the backend says what the service has instead
                    self._call("query_logs", {"service": service, "level": "ERROR", **_bounds(window)})
                continue
            for level in ("ERROR", "WARN"):
                result = self._call("query_logs", {"service": service, "level": level, **_bounds(window)})
                if result is not None:
                    found += [(result, e) for e in result.output.evidence if isinstance(e, LogEvidence)]
        return found

    def _levelless(self, logs: list[Logs], window: tuple[datetime, datetime]) -> list[Logs]:
        """Services whose logs write no level and hold no ERROR or WARN line in the window are read
        at every level once more: their failure-like kind of line is what the question is about.
        Logs that do write levels said what was a failure: an INFO line ("Partition rdd_2_1 not
        found, computing it") is none, whatever its words."""
        found: list[Logs] = []
        quiet = [
            service
            for service in dict.fromkeys(e.service for _r, e in logs if e.service)
            if all(e.matched == 0 for _r, e in logs if e.service == service and e.level in ("ERROR", "WARN"))
            and any(_covers(e.span, e) for _r, e in logs if e.service == service)
            and any(e.unleveled is not None and e.unleveled.mostly for _r, e in logs if e.service == service)
        ]
        for service in quiet:
            result = self._call("query_logs", {"service": service, **_bounds(window)})
            if result is not None and result.status == "ok":
                found += [(result, e) for e in result.output.evidence if isinstance(e, LogEvidence)]
        return found

    def _changes(self, focus: tuple[datetime, datetime]) -> list[tuple[ToolCallResult, ChangeRecord]]:
        """Every service's changes shortly before and during the focus: a cause may sit elsewhere."""
        start = focus[0] - CAUSE_LOOKBACK
        result = self._call("query_changes", {"start": iso(start), "end": iso(focus[1])})
        if result is None:
            return []
        feeds = [e for e in result.output.evidence if isinstance(e, ChangeEvidence)]
        if result.status == "no_data" and feeds and not feeds[0].feed_empty:
            self.no_changes = (result, feeds[0])
        return [(result, c) for e in feeds for c in e.changes]

    def _terms(self, terms: Sequence[str], window: tuple[datetime, datetime]) -> list[Searched]:
        """Each term the question names, searched in every log with data in the window — and in
        each service the question names, counted there on its own — as written, then (where no
        line holds it) as the logs write it (``terms.yaml``: wifi → airport, wlan …). What each
        search found is stated after the answer (``_state_terms``)."""
        found: list[Searched] = []
        for term in terms:
            for service in [*self.named, None]:
                searched = self._search(term, service, window)
                if searched is not None:
                    found.append(searched)
        return found

    def _search(self, term: str, service: str | None, window: tuple[datetime, datetime]) -> Searched | None:
        """The first way of writing ``term`` that some line holds (else the term as written)."""
        first: Searched | None = None
        for variant in _variants(term):
            phrase = '"' + variant.replace('"', " ") + '"'
            result = self._call("query_logs", {"service": service, "query": phrase, **_bounds(window)})
            logs = [e for e in (result.output.evidence if result else []) if isinstance(e, LogEvidence)]
            if result is None or not logs:
                continue
            searched = (result, logs[0], logs[0].searched or variant, term)
            if logs[0].matched:
                return searched
            first = first or searched
        return first

    def _state_terms(self, found: list[Searched], *, leading: bool = False) -> bool:
        """How many lines hold each term in each service the question names, then in every log
        where the named services do not hold them all (per service, the first few), or that no
        line does; these answer a question asking how many. ``leading``: only the terms found by
        their shape (an HTTP status, an error code, a quoted phrase) that some line holds, which
        answer a "why" — a business word (``terms.yaml``: 下单) does not, its lines being mostly
        the feature working. Each term is stated once; whether any was, is returned."""
        counting = self.request.plan.intent.kind == "count"
        named = {
            term: sum(e.matched for _r, e, _n, t in found if t == term and e.service) for _r, _e, _n, term in found
        }
        business = {word.lower() for word in term_words().words}
        stated = False
        for item in found:
            result, evidence, name, term = item
            if leading and (term.lower() in business or not any(e.matched for _r, e, _n, t in found if t == term)):
                continue
            if id(item) in self._stated_terms or evidence.counted is not None:
                continue  # stated already; counts of the lines read, not of the window: no claim
            self._stated_terms.add(id(item))
            if evidence.service is None and self.named and evidence.matched == named[term]:
                continue  # every line holding it is in the named services, counted already
            if evidence.matched and evidence.templates:
                for top in _per_service(evidence.templates)[:MAX_SUSPECTS]:
                    self.findings.term(result, evidence, name, top, answers=counting or leading)
                    stated = True
            elif evidence.matched == 0 and (evidence.service is not None or not self.named) and self._logged(evidence):
                self.findings.no_term(result, evidence, term, answers=counting or leading)
                stated = True
        return stated

    def _logged(self, evidence: LogEvidence) -> bool:
        """Whether the logs searched hold lines in the window at all: "no line holds 网络" of
        logs that hold none is no finding (the call's gap says it found nothing)."""
        if self.catalogue is None:
            return True
        services = [evidence.service] if evidence.service else self.catalogue.services()
        spans = [self.catalogue.log_span(service) for service in services]
        return any(s is not None and s.first < self.window[1] and s.last >= self.window[0] for s in spans)

    def _order(self, order_id: str) -> list[tuple[ToolCallResult, LogSample]]:
        """The log lines that name the order (at most three): they also say when to look."""
        result = self._call("query_logs", {"query": f'"order {order_id}"', **_bounds(self.window)})
        if result is None or result.status != "ok":
            return []
        samples = [s for e in result.output.evidence if isinstance(e, LogEvidence) for s in e.samples]
        return [(result, sample) for sample in samples if order_id in sample.line][:3]

    # -- where to look ------------------------------------------------------------------

    def _focus(
        self,
        survey: Survey | None,
        bursts: list[tuple[str, datetime, datetime]],
        moments: list[datetime],
        neighbours: list[str],
    ) -> focusing.Focus:
        """The period the answer is about, chosen by the question (``focus.py``); "发布后报错"
        puts it after the change the question points at."""
        plan = self.request.plan
        episodes = survey[1].episodes if survey is not None else []
        found = focusing.candidates(plan, self.request.question, episodes, bursts, neighbours)
        if not moments and plan.time.at is None and (after := self._after_asked_change(found)) is not None:
            return focusing.around(after, self.window, "after_change", before=PAD)
        return focusing.choose(plan, self.window, found, moments)

    def _after_asked_change(self, found: list[focusing.Candidate]) -> focusing.Candidate | None:
        """The first change found that starts within ``CAUSE_LEAD`` of the latest change of the
        kind the question asked about ("发布后": a deploy) — the named services' changes first,
        else any service's — read from the change feed; None when no such change is followed by one."""
        kind = self.request.plan.after_change
        if kind is None or not self._has("query_changes"):
            return None
        result = self._call("query_changes", _bounds(self.window))
        if result is None:
            return None
        kinds = _AFTER_KINDS.get(kind, {kind})
        changes = [
            c
            for e in result.output.evidence
            if isinstance(e, ChangeEvidence)
            for c in e.changes
            if kind == "change" or c.kind in kinds
        ]
        own = [c for c in changes if c.service in self.named]
        for change in sorted(own or changes, key=lambda c: c.ts, reverse=True):
            after = [c for c in found if change.ts - SAME_TIME <= c.start <= change.ts + CAUSE_LEAD]
            if after:
                self.after_change = change
                return min(after, key=lambda c: c.start)
        return None

    # -- what to state ------------------------------------------------------------------

    def _answer(
        self,
        survey: Survey | None,
        series: list[Series],
        logs: list[Logs],
        changes: list[tuple[ToolCallResult, ChangeRecord]],
        searched: list[Searched],
    ) -> None:
        """What the question asked, first (``Plan.intent``): that no service has data in the
        window (and where the data lies), a named service without data; then the ranking by a
        measure (or that none can be made), the onset, how many services changed, the culprit —
        or that none stands out, or that nothing changed. A count of lines or a change is
        answered by the term or change claims; the lines holding a failure the question names
        (an HTTP status, an error code) lead a "why"."""
        if survey is None:
            return
        result, evidence = survey
        plan = self.request.plan
        if evidence.held is not None:
            self.findings.no_data_window(result, evidence)
            return
        for service in evidence.without_data:
            if service in self.named or service in plan.unknown_services:
                self.findings.without_data(result, evidence, service)
        if plan.intent.still is not None and plan.time.kind == "newest":  # "still failing?": first
            answer_still(self.findings, result, evidence, self._asked_still(), logs)
        intent = plan.intent
        if intent.kind_asked is not None:  # "is it the network?": whether that kind changed, first
            self._answer_kind(result, evidence, intent.kind_asked)
        if intent.kind == "count":
            if counts_services(self.request.question):
                self._answer_changed(result, evidence)
            return
        if intent.kind == "change":
            self._answer_changes(survey)
            return
        if intent.kind == "rank" and intent.rank_by and evidence.by:
            if evidence.levels:
                self.findings.levels(result, evidence)
                return
            self.findings.cannot_rank(result, evidence)  # then what did change
        if intent.kind == "blame" and intent.about in evidence.quiet:
            self.findings.quiet_named(result, evidence, intent.about)
        kinds = focusing.asked_kinds(plan, self.request.question)
        asked_at = focusing.moment(plan.time.at)
        question = self.request.question
        if intent.kind == "value" and self._answer_value(kinds, asked_at):
            return
        if intent.kind == "onset" and (first := _onset(evidence, self.named, kinds, asked_at, question)) is not None:
            self.findings.earliest(result, evidence, first)
            return
        # how long it lasted: the change that marks the incident (as for its onset), never a
        # recorded change (an instant)
        lasting = _onset(evidence, self.named, kinds, asked_at, question) if intent.kind == "duration" else None
        if lasting is not None and lasting.source != "change":
            self.findings.lasted(*self._to_its_end(survey, lasting, asked_at))
            return
        led = intent.kind in ("cause", "abnormal") and self._state_terms(searched, leading=True)
        cause = _cause_change(changes, _spotted(series, self.window))
        top = evidence.suspects[0].service if evidence.suspects else None
        close = [s.service for s in evidence.suspects[:2]] if not evidence.standout else []
        if cause is not None and (top in (cause[0][1].service, cause[1][1].service) or cause[0][1].service in close):
            # a recorded change shortly before the top suspect's change (or made to it), or to a
            # service ranked as close when none stands out, and what followed it answer, as one
            # inference over both (stated by _state_changes)
            self._answered_change = (cause[0][1].service, cause[0][1].ts)
            if not evidence.standout:
                self.findings.no_standout(result, evidence)
        elif intent.kind == "abnormal" and evidence.suspects:  # what is wrong, not where it started
            self.findings.most_changed(result, evidence)
        elif evidence.standout:
            lead = evidence.suspects[0].signals[0]
            self.findings.culprit(result, evidence, _support(lead, series, logs, changes))
        elif evidence.suspects:
            self.findings.no_standout(result, evidence)
        elif evidence.examined:
            self._nothing_began(result, evidence, _inside(series, asked_at) and not led, led=led)

    def _nothing_began(self, result: ToolCallResult, evidence: SuspectEvidence, inside: bool, *, led: bool) -> None:
        """No change began in the window: said so — unless the moment asked lies ``inside`` an
        episode that began before it; then that episode, with the value at the moment, answers
        (``_state_anomalies``), and "none changed" beside it would deny it."""
        if inside:
            self._answer_by_episode = True
        else:
            self.findings.nothing_changed(result, evidence, answers=not led)

    def _answer_kind(self, survey: ToolCallResult, evidence: SuspectEvidence, family: str) -> None:
        """ "Is it the network?": the change of that family the survey found (and whether it is
        what changed most) or that none did — only when the data measures that family at all:
        no network metric is no evidence of a quiet network (a gap says so)."""
        catalogue = self.catalogue
        measured = catalogue is not None and any(
            family_of(metric).id == family
            for service in evidence.examined
            for _s, metric, _u in catalogue.metrics(service)
        )
        changed = [(s, g) for s in evidence.suspects for g in s.signals if g.family == family]
        if changed or measured:
            self.findings.kind_asked(survey, evidence, family, changed[0] if changed else None)
        else:
            self.findings.gap("kind_unmeasured", kind=self.findings.family(family))

    def _naming_a_metric(self) -> list[str]:
        """The service with the metric the question names most parts of ("how high did the
        threads go?": mysql, for mysql_threads_running), when it names no service."""
        if self.catalogue is None:
            return []
        question = self.request.question
        named = [
            (len(focusing.metric_words(question, metric, service)), service)
            for service in self.catalogue.services()
            for _s, metric, _u in self.catalogue.metrics(service)
        ]
        most, service = max(named, default=(0, ""))
        return [service] if most else []

    def _answer_value(self, kinds: set[str], at: datetime | None) -> bool:
        """ "What was X's p99 at 15:20?": the metric asked about of each service asked about, read
        over the window, its value at the moment (the newest without one) and its peak
        (``value.py``); False when no service asked about has such a metric."""
        plan = self.request.plan
        services = list(self.named) or plan.pointed_services[:1] or self._naming_a_metric()
        answered = False
        for service in services[:MAX_SUSPECTS]:
            metrics = [m for _s, m, _u in self.catalogue.metrics(service)] if self.catalogue else []
            metric = asked_metric(self.request.question, kinds, metrics, service)
            if metric is None or not self._has("query_metrics"):
                continue
            result = self._call("query_metrics", {"service": service, "metric": metric, **_bounds(self.window, at)})
            shown = [e for e in result.output.evidence if isinstance(e, MetricEvidence)] if result else []
            if result is not None and shown:
                answered = answer_value(self.findings, result, shown[0], at) or answered
        return answered

    def _to_its_end(
        self, survey: Survey, change: SuspectSignal, at: datetime | None
    ) -> tuple[ToolCallResult, SuspectEvidence, SuspectSignal]:
        """How long did it last: a change still going when the period asked about ends is read on,
        up to ``LASTING_LOOKAHEAD`` more (never past the service's data), to where it ended."""
        result, evidence = survey
        spans = (
            [self.catalogue.log_span(change.service), self.catalogue.metric_span(change.service)]
            if self.catalogue
            else []
        )
        data_end = max((span.last for span in spans if span is not None), default=None)
        if change.end < evidence.end - STILL_GOING or data_end is None or data_end <= evidence.end:
            return result, evidence, change
        later = self._survey(
            (evidence.start, min(data_end + timedelta(minutes=1), evidence.end + LASTING_LOOKAHEAD)), at, None
        )
        if later is None:
            return result, evidence, change
        same = [
            s
            for suspect in later[1].suspects
            for s in suspect.signals
            if (s.service, s.name) == (change.service, change.name) and abs(s.onset - change.onset) <= SAME_TIME
        ]
        return (later[0], later[1], same[0]) if same else (result, evidence, change)

    def _answer_changed(self, result: ToolCallResult, evidence: SuspectEvidence) -> None:
        """ "How many services were affected?": how many of those examined changed, and which."""
        if evidence.changed:
            self.findings.changed_count(result, evidence)
        elif evidence.examined:
            self.findings.nothing_changed(result, evidence)

    def _answer_changes(self, survey: Survey) -> None:
        """ "What changed?": every change recorded in the window (of the named services, when the
        question names some), or that none was — or, without a change feed, that changes cannot
        be checked, and then what moved most."""
        result = self._call("query_changes", _bounds(self.window)) if self._has("query_changes") else None
        feeds = [e for e in (result.output.evidence if result else []) if isinstance(e, ChangeEvidence)]
        if result is None or not feeds or feeds[0].feed_empty:
            if result is not None and feeds:
                self.findings.no_change_feed(result, feeds[0])
            survey_result, evidence = survey
            if evidence.suspects:
                self.findings.most_changed(survey_result, evidence)
            elif evidence.examined:
                self.findings.nothing_changed(survey_result, evidence)
            return
        changes = [c for e in feeds for c in e.changes if not self.named or c.service in self.named]
        for change in changes[-MAX_STATED_EPISODES:]:
            self.findings.change(result, change, answers=True)
        if not changes:
            self.findings.no_changes(result, feeds[0], answers=True)

    def _state(
        self,
        series: list[Series],
        logs: list[Logs],
        focus: tuple[datetime, datetime],
        changes: list[tuple[ToolCallResult, ChangeRecord]],
        involved: list[str],
    ) -> None:
        spotted = _spotted(series, focus, focusing.moment(self.request.plan.time.at))
        self.spotted_metrics = list(dict.fromkeys(s.metric for _r, s, _a in spotted))
        # What moved, what quietly did not last: the answer leads with the news.
        self._state_anomalies(spotted, focus)
        self._state_logs(logs)
        self._state_quiet(series, spotted, focus)
        self._state_changes(changes, spotted, involved or self.named)

    def _state_anomalies(self, spotted: list[Spotted], focus: tuple[datetime, datetime]) -> None:
        """The strongest episodes; a counter shown as its increase is stated once, by its steps
        ("+1 at 12:01, 12:31, 13:00"), however many episodes its steps made. Which moved first
        is the culprit search's to say (``rank_suspects``: onsets inside the window only)."""
        episodes: dict[int, Spotted] = {}
        for item in sorted(spotted, key=lambda item: -item[2].score):
            episodes.setdefault(id(item[1]) if item[1].increases is not None else id(item[2]), item)
        for result, series, found in list(episodes.values())[:MAX_STATED_EPISODES]:
            if series.increases is not None:
                self.findings.increases(result, series, focus)
            else:
                asked = self._asked_value(series)
                answers = self._answer_by_episode and asked is not None and found.onset <= asked.at <= found.end
                self.findings.anomaly(result, series, found, asked=asked, answers=answers)

    def _asked_value(self, series: MetricEvidence) -> AskedPoint | None:
        """The series' value at the moment asked, to be said beside what it did then; None when
        the value is the answer itself ("what was X at 00:50?" says it first, ``value.py``)."""
        return series.asked if self.request.plan.intent.kind != "value" else None

    def _state_quiet(self, series: list[Series], spotted: list[Spotted], focus: tuple[datetime, datetime]) -> None:
        moved = {item[1].service for item in spotted}
        # A named service that stayed quiet is said to be (a comparison needs the quiet one too);
        # so is every service read in detail when nothing moved.
        quiet = [s.service for _r, s in series if s.service not in moved and (s.service in self.named or not spotted)]
        for service in dict.fromkeys(quiet):
            for result, s in [(r, s) for r, s in series if s.service == service][: 3 if not spotted else 2]:
                self.findings.normal(result, s, asked=self._asked_value(s))
            if not spotted:
                span = {"service": service, **self.findings.during(*focus)}
                if unread := self.unread_metrics[service]:
                    read = len({s.metric for _r, s in series if s.service == service})
                    self.findings.gap("no_anomaly_partial", read=read, unread=unread, **span)
                else:
                    self.findings.gap("no_anomaly", **span)

    def _state_logs(self, logs: list[Logs]) -> None:
        # What the logs hold before what they lack: the headline names the first symptom, and
        # "20 WARN lines" answers "which warnings?" where "no ERROR lines" does not.
        for result, evidence in sorted(logs, key=lambda item: item[1].matched == 0):
            if evidence.counted is not None:  # counts of the lines read, not of the window: no claim
                continue
            unleveled = evidence.unleveled is not None and evidence.unleveled.mostly
            if evidence.level is None:  # every level: only its failure-like kind of line is news
                failing = _failure_like(evidence)
                if failing is not None:
                    key = "failure_like_unleveled" if unleveled else "failure_like"
                    self.findings.logs(result, evidence, failing, key=key)
            elif evidence.matched and evidence.templates:
                self.findings.logs(result, evidence, evidence.templates[0], answers=self._lists_logs(evidence))
            elif evidence.matched == 0 and evidence.level == "ERROR" and _covers(evidence.span, evidence):
                # Logs that write no level hold no ERROR line whatever happened: say that instead.
                if unleveled:
                    self.findings.no_levels(result, evidence)
                else:
                    self.findings.no_logs(result, evidence)
            elif evidence.matched == 0 and evidence.level == "ERROR" and evidence.span is not None:
                held = evidence.span
                self.findings.gap(
                    "logs_elsewhere",
                    service=evidence.service or "",
                    **self.findings.during(evidence.start, evidence.end),
                    first=iso(held.first),
                    last=iso(held.last),
                )
            if evidence.unparsed:
                self.findings.gap(
                    "unparsed",
                    service=evidence.service or "",
                    **self.findings.during(evidence.start, evidence.end),
                    count=evidence.unparsed,
                )

    def _lists_logs(self, evidence: LogEvidence) -> bool:
        """A question asking which lines a named service logged ("有哪些 WARN") is answered by them:
        of the level it names, of every service read when it names none ("list the warnings")."""
        plan = self.request.plan
        asked = plan.intent.level in (None, evidence.level)
        return (
            plan.intent.kind == "count"
            and not plan.terms
            and asked
            and (evidence.service in self.named or not self.named)
        )

    def _state_changes(
        self, changes: list[tuple[ToolCallResult, ChangeRecord]], spotted: list[Spotted], services: list[str]
    ) -> None:
        """Changes that may have caused the episode — each within ``CAUSE_LEAD`` before an
        anomaly's onset; the one nearest an onset after it is the inferred cause, whichever
        service it touched (a batch job can lock another's database) — and the asked services'
        changes during it (a rollback that ended it)."""
        if not spotted:
            for result, change in [(r, c) for r, c in changes if c.service in services][-3:]:
                self.findings.change(result, change)
            return
        if self.no_changes is not None:  # no change explains what moved: worth saying
            self.findings.no_changes(*self.no_changes)
        onsets = [item[2].onset for item in spotted]
        ranked = _leading_changes(changes, onsets)
        end = max(item[2].end for item in spotted)
        during = [(r, c) for r, c in changes if min(onsets) + SAME_TIME < c.ts <= end and c.service in services]
        shown = {id(c): (r, c) for r, c in [*ranked[:2], *during[:2]]}
        for result, change in sorted(shown.values(), key=lambda rc: rc[1].ts):
            self.findings.change(result, change)
        found = _cause_change(changes, spotted)
        if found is not None:
            cause, effect = found
            answers = self._answered_change == (cause[1].service, cause[1].ts)
            self.findings.inference(cause, effect, together=cause[1].ts > effect[2].onset, answers=answers)

    def _runbooks(self, logs: list[Logs], involved: list[str]) -> None:
        """Runbooks looked up with what was seen — error codes, the dominant templates' words,
        anomalous metrics — not with the question's wording; a runbook sharing fewer than two
        of those words with them is no match."""
        if not any(step.tool == "lookup_knowledge" for step in self.steps):
            return
        seen = [e.text for c in self.findings.claims for e in extract_entities(c.claim_text) if e.kind == "error_code"]
        for _result, found in logs:
            if found.templates:
                seen += _TEMPLATE_WORD.findall(found.templates[0].template.replace("<*>", " "))[:12]
        seen += [metric.replace("_", " ") for metric in self.spotted_metrics]
        # The skill's own words only when nothing was seen: otherwise they would find the skill's runbook
        # whatever happened.
        terms = self.request.plan.runbook_terms
        query = " ".join(dict.fromkeys(seen)).strip() or terms or self.request.question
        # A runbook written for other services is no match for the one that moved; several moved: any.
        narrowed = involved if involved else self.named
        service = narrowed[0] if len(narrowed) == 1 else None
        result = self._call("lookup_knowledge", {"query": query[:480], "service": service})
        if result is None or result.status != "ok":
            if result is not None:
                self.findings.gap("no_runbook")
            return
        generic = set(catalog().generic_terms)
        shared = [
            (len(set(document.matched_terms) - generic), document.score, document)
            for evidence in result.output.evidence
            if isinstance(evidence, KnowledgeEvidence)
            for document in evidence.documents
        ]
        relevant = [item for item in shared if item[0] >= MIN_SHARED_TERMS]
        if relevant:  # the runbook that shares most of what was seen, not the one bm25 likes best
            self._hypotheses(max(relevant, key=lambda item: (item[0], item[1]))[2])
        else:
            self.findings.gap("no_runbook")

    def _hypotheses(self, top: RunbookMatch) -> None:
        lang = self.findings.lang
        causes = _section(top.sections, "可能原因", "Possible causes", lang)
        steps = _section(top.sections, "排查步骤", "Steps", lang)
        for cause in causes[:2]:
            self.findings.hypotheses.append(
                Hypothesis(
                    hypothesis_text=self.findings.say("hypothesis", cause=cause, runbook=top.id),
                    basis=self.findings.say("basis", title=top.title),
                    needed_evidence=steps[:3] or [top.title],
                )
            )
        for text in steps[:3]:
            self.findings.actions.append(RecommendedAction(action_text=text, reason=f"runbook {top.id}"))


class OfflineExecutor:
    name = OFFLINE

    def __init__(self, catalogue: Catalogue | None = None) -> None:
        self.catalogue = catalogue

    def execute(self, request: ExecuteRequest) -> RoleReply:
        plan = request.plan
        lang = "zh" if request.lang == "zh" else "en"
        window = (_parse(plan.start), _parse(plan.end))
        findings = Findings(lang, Clock(with_date=spans_days(window)))
        if request.tools is None or not plan.steps:
            findings.gap("no_tools" if request.tools is None else "no_service")
            return _reply(findings.output(None))
        if self.catalogue is not None and not self.catalogue.services():
            findings.gap("no_service")
        steps = plan.runnable_steps()
        execution = _Execution(request, self.catalogue, findings, window, steps, plan.examined_services)
        return _reply(execution.run())


def _found_nothing(result: ToolCallResult) -> bool:
    """An empty answer that is itself an observation: no lines of that level in the window, no
    change recorded while a change feed exists."""
    return result.status == "no_data" and (
        result.tool_name == "lookup_knowledge"  # said once, shortly, by the runbook step
        or any(
            # a level, or a term searched in one service's logs, that its logs of the window lack
            (isinstance(e, LogEvidence) and e.span is not None and (e.level is not None or _term_search(e)))
            or (isinstance(e, ChangeEvidence) and not e.feed_empty)
            for e in result.output.evidence
        )
    )


def _reply(output: ExecutorEvidenceV2) -> RoleReply:
    return RoleReply(text=output.model_dump_json(exclude_none=True), answered_by=EngineUse(engine=OFFLINE))


def _section(sections: dict[str, list[str]], zh_heading: str, en_heading: str, lang: str) -> list[str]:
    """The items under a runbook heading, in the answer's language when the runbook has it:
    bundled runbooks carry ``## 排查步骤`` and ``## Steps``; a runbook in one language (or with
    one bilingual heading) serves both."""
    own, other = (zh_heading, en_heading) if lang == "zh" else (en_heading, zh_heading)
    preferred = [h for h in sections if own in h and (lang == "zh" or not has_cjk(h))]
    fallback = [h for h in sections if own in h or other in h]
    heading = next(iter(preferred or fallback), None)
    return sections[heading] if heading is not None else []


def _parse(moment: Any) -> datetime:
    if not isinstance(moment, str):
        return datetime.now(UTC)
    parsed = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _bounds(window: tuple[datetime, datetime], at: datetime | None = None) -> dict[str, str]:
    """A call's window, and the moment asked (``at``) when it lies inside: a metrics output then
    states the series' value nearest it, however long the episode around it."""
    inside = at is not None and window[0] <= at < window[1]
    return {"start": iso(window[0]), "end": iso(window[1]), **({"at": iso(at)} if at and inside else {})}


def _lead(change: ChangeRecord, onsets: list[datetime]) -> float | None:
    """Seconds from the change to the nearest onset at or after it (a sample's slack allowed),
    None when no onset follows within ``CAUSE_LEAD``."""
    after = [(onset - change.ts).total_seconds() for onset in onsets if onset >= change.ts - SAME_TIME]
    nearest = min(after, default=None)
    return max(nearest, 0.0) if nearest is not None and nearest <= CAUSE_LEAD.total_seconds() else None


def _onset(
    evidence: SuspectEvidence, named: list[str], kinds: set[str], at: datetime | None = None, question: str = ""
) -> SuspectSignal | None:
    """ "When did it start?": the earliest listed change of the kind the question speaks of
    (errors, latency …), of the services it names first; else of any kind but a recorded
    change (the question asks when the symptom began, not when something was changed). Asked
    around a moment (``at``: the question's, not a focus chosen for it), only a change still going
    on then (or beginning after it) is the start of what was asked about: one over before it is
    an earlier incident."""
    signals = [s for suspect in evidence.suspects for s in suspect.signals]
    if at is not None:
        signals = [s for s in signals if s.end >= at - BEFORE_AT]
    tiers = [
        [s for s in signals if focusing.of_kind(s, kinds, question) and s.service in named],
        _marked([s for s in signals if focusing.of_kind(s, kinds, question)]),
        _marked([s for s in signals if s.service in named and s.source != "change"]),
        _marked([s for s in signals if s.source != "change"]),
    ]
    found = next((tier for tier in tiers if tier), [])
    return min(found, key=lambda s: s.onset) if found else None


def _marked(signals: list[SuspectSignal]) -> list[SuspectSignal]:
    """The changes that mark an incident: those scored at least ``ONSET_SHARE`` of the strongest
    (a faint ripple a little earlier elsewhere is no start of it). A named service's changes of
    the kind asked are taken whole instead: each of them is its symptom."""
    strongest = max((s.score for s in signals), default=0.0)
    return [s for s in signals if s.score >= ONSET_SHARE * strongest]


def _begins_during(evidence: SuspectEvidence) -> list[NotCounted]:
    """The series whose data begins during a period out of their usual level (the survey did not
    count that period, nor its end): worth reading, so the answer says where its data begins."""
    return [item for item in evidence.not_counted if item.reason == "begins_during"]


def _inside(series: list[Series], at: datetime | None) -> bool:
    """Whether the moment asked lies inside an episode of a series read."""
    return at is not None and any(a.onset <= at <= a.end for _r, s in series for a in s.anomalies)


def _spotted(series: list[Series], window: tuple[datetime, datetime], asked: datetime | None = None) -> list[Spotted]:
    """The anomalies of the series read that touch ``window``, earliest first — and one the
    moment asked lies inside, however long before it began and peaked: "at 00:50" inside a day
    and a half of high latency is in that episode, never "no deviation"."""
    found = [
        (r, s, a)
        for r, s in series
        for a in s.anomalies
        if (_of_window(a, window) or (asked is not None and a.onset <= asked <= a.end)) and _told_apart(a, s.unit)
    ]
    return sorted(found, key=lambda item: item[2].onset)


def _told_apart(anomaly: MetricAnomaly, unit: str) -> bool:
    """Whether the episode's peak and its expected value differ as written: "0.0048s against
    0.0048s expected (×1.00)" is a deviation of a flat series' noise, no change to state."""
    return format_value(rounded(anomaly.peak), unit) != format_value(rounded(anomaly.expected), unit)


def _of_window(anomaly: MetricAnomaly, window: tuple[datetime, datetime]) -> bool:
    """Whether an anomaly is the window's: it touches it, and did not both begin and peak before
    it — that is the tail of an earlier incident, not a change of this period."""
    touches = anomaly.onset < window[1] and anomaly.end >= window[0]
    return touches and not (anomaly.onset < window[0] and anomaly.peak_at < window[0])


def _leading_changes(
    changes: list[tuple[ToolCallResult, ChangeRecord]], onsets: list[datetime]
) -> list[tuple[ToolCallResult, ChangeRecord]]:
    """The changes within ``CAUSE_LEAD`` before an onset, nearest to one first."""
    lead = {id(c): _lead(c, onsets) for _r, c in changes}
    return sorted([(r, c) for r, c in changes if lead[id(c)] is not None], key=lambda rc: lead[id(rc[1])] or 0.0)


def _cause_change(
    changes: list[tuple[ToolCallResult, ChangeRecord]], spotted: list[Spotted]
) -> tuple[tuple[ToolCallResult, ChangeRecord], Spotted] | None:
    """The change inferred as the cause (the one nearest before an onset, whichever service it
    touched: a batch job can lock another's database) and the anomaly it is linked to."""
    if not spotted:
        return None
    ranked = _leading_changes(changes, [item[2].onset for item in spotted])
    if not ranked:
        return None
    return ranked[0], _effect_of(ranked[0][1], spotted)


def _effect_of(change: ChangeRecord, spotted: list[Spotted]) -> Spotted:
    """The anomaly a change is linked to: the changed service's own first one when it has one,
    else the first to start after the change."""
    own = [item for item in spotted if item[1].service == change.service]
    after = [item for item in spotted if item[2].onset >= change.ts - SAME_TIME]
    return (own or after or spotted)[0]


def _failure_like(logs: LogEvidence) -> TemplateCount | None:
    """The commonest template that reads as a failure (``failure_words``), if any."""
    words = [w.lower() for w in catalog().failure_words]
    return next((t for t in logs.templates if any(w in t.template.lower() for w in words)), None)


def _moved(focus: focusing.Focus, asked_at: datetime | None) -> bool:
    """Whether the focus is about another moment than the survey was ranked for: none was, or
    the chosen change began outside the span that counts in full around it."""
    if focus.at is None:
        return False
    return asked_at is None or not (asked_at - BEFORE_AT <= focus.at <= asked_at + AFTER_AT)


def _variants(term: str) -> list[str]:
    """A term as written, then as logs write it (``terms.yaml``), each once."""
    words = term_words().words
    written = next((v for k, v in words.items() if k.lower() == term.lower()), [])
    return list(dict.fromkeys([term, *written]))


def _bursts(searched: list[Searched], window: tuple[datetime, datetime]) -> list[tuple[str, datetime, datetime]]:
    """Where the lines holding the question's words came, per service: a period to look at —
    unless they fill most of the window or hours of it (a word every line holds says nothing of when)."""
    most = min((window[1] - window[0]) / 2, BURST_AT_MOST)
    return [
        (t.service or e.service or "", t.first, t.last)
        for _r, e, _n, _t in searched
        for t in _per_service(e.templates)
        if t.last - t.first < most
    ]


def _per_service(templates: Sequence[TemplateCount]) -> list[TemplateCount]:
    """The commonest template of each service (templates come commonest first), in that order."""
    seen: dict[str | None, TemplateCount] = {}
    for template in templates:
        seen.setdefault(template.service, template)
    return list(seen.values())


def _by_role(metrics: Sequence[str]) -> list[str]:
    """A service's metrics, its own resources first (``signatures.yaml``), context (the node) last."""
    order = {"cause": 0, "effect": 1, "context": 2}
    return sorted(metrics, key=lambda m: order.get(family_of(m).role, 1))


def _support(
    signal: SuspectSignal,
    series: list[Series],
    logs: list[Logs],
    changes: list[tuple[ToolCallResult, ChangeRecord]],
) -> list[Quote]:
    """The culprit's change as another tool states it (its anomaly line, its log template, its
    change event): a second, independent invocation behind the inference."""
    if signal.source == "metric":
        return [
            (result, anomaly.line)
            for result, found in series
            if (found.service, found.metric) == (signal.service, signal.name)
            for anomaly in found.anomalies[:1]
        ][:1]
    if signal.source == "log":
        return [
            (result, template.line)
            for result, found in logs
            if found.service == signal.service
            for template in found.templates
            if template.template == signal.name
        ][:1]
    return [(result, change.line) for result, change in changes if change.service == signal.service][:1]


def _term_search(logs: LogEvidence) -> bool:
    """A search for a term of the question (``Plan.terms``): in one service's logs that cover the
    window, or in every log."""
    return logs.query is not None and (logs.service is None or _covers(logs.span, logs))


def _covers(span: Span | None, logs: LogEvidence) -> bool:
    """The service has logs on both sides of the window, or inside it: silence there means something."""
    return span is not None and span.first <= logs.end and span.last >= logs.start


def _own_grew(spans: TraceEvidence) -> bool:
    """The service's own work or errors grew against its earlier spans (not only its wait)."""
    own, errors = spans.figure("self_p90"), spans.figure("errors")
    return own_grew(
        own.factor if own is not None else None,
        errors.window if errors is not None else None,
        errors.baseline if errors is not None else None,
    )
