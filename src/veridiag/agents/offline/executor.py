"""Offline executor: runs the plan's tool calls and derives claims **only from the typed
records they returned** (``ToolOutput.evidence``), never by re-reading rendered text.

1. Metrics of every service examined, each judged against its own history (anomalies with
   onset, peak, end and factor).
2. ERROR and WARN logs over the window: exact counts, dominant templates, bursts.
3. The focus: the episode the question is about — the first one after the time it names for
   "since …", else the most anomalous — widened by overlapping episodes; without a time in
   the question this is how the period is chosen. Logs are read again over the focus.
4. Changes (from the change feed only) before the focus; a change shortly before an anomaly's
   onset is a root-cause *inference* over two invocations, never an observation.
5. Which service moved first when several did; quiet metrics and empty logs are stated as
   such; runbook matches become hypotheses; every call that failed or found nothing is a gap.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from veridiag.agents.offline.findings import Clock, Findings, spans_days
from veridiag.agents.offline.skills import catalog
from veridiag.agents.reply import OFFLINE, RoleReply
from veridiag.agents.roles import ExecuteRequest
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.executor_v2 import ExecutorEvidenceV2, Hypothesis, RecommendedAction
from veridiag.contracts.material import ExecutorScope
from veridiag.contracts.plan import Step
from veridiag.text.cjk import HAN, has_cjk
from veridiag.text.entities import extract_entities
from veridiag.text.render import iso
from veridiag.tools.records import (
    ChangeEvidence,
    ChangeRecord,
    KnowledgeEvidence,
    LogEvidence,
    LogSample,
    MetricAnomaly,
    MetricEvidence,
    RunbookMatch,
    Span,
    TemplateCount,
)
from veridiag.tools.results import ToolCallResult

#: Metrics read per service, services surveyed when the question names none.
MAX_METRICS = 8
MAX_SERVICES = 8
#: A focus shorter than this share of the window is worth reading the logs again for.
NARROWING = 0.8
#: Padding around an episode, and how long before an anomaly a change may have caused it.
PAD = timedelta(minutes=5)
#: Episodes of one series at most this far apart are one recurring episode (restarts every 30 min).
RECURRENCE = timedelta(hours=1)
CAUSE_LOOKBACK = timedelta(hours=2)
#: How long before an onset a change may be taken as its cause (the demo's are 1–5 minutes).
CAUSE_LEAD = timedelta(minutes=30)
#: A change this close after an onset started with it (metrics are sampled once a minute).
SAME_TIME = timedelta(seconds=60)
#: Change kinds a question's words mean beyond their own name ("发布后": a deploy or a release).
_AFTER_KINDS: dict[str, set[str]] = {"deploy": {"deploy", "release"}}
#: Episodes stated as claims, the strongest first (a counter's steps count as one).
MAX_STATED_EPISODES = 6
#: A log burst counts as an episode from this many lines.
MIN_BURST = 3
#: Words a runbook must share with what was observed to be taken as a source of hypotheses.
MIN_SHARED_TERMS = 2
_TEMPLATE_WORD = re.compile(rf"[A-Za-z][A-Za-z_]{{2,}}|[{HAN}]{{2,}}")


class Catalogue(Protocol):
    """What the executor may know without a tool call: which series and data exist."""

    def services(self) -> list[str]: ...
    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]: ...
    def log_span(self, service: str) -> Span | None: ...
    def metric_span(self, service: str, metric: str | None = None) -> Span | None: ...


Series = tuple[ToolCallResult, MetricEvidence]
Logs = tuple[ToolCallResult, LogEvidence]
Spotted = tuple[ToolCallResult, MetricEvidence, MetricAnomaly]


@dataclass(frozen=True)
class _Episode:
    service: str
    start: datetime
    end: datetime
    weight: float
    anomaly: Spotted | None = None


@dataclass
class _Execution:
    """One execution of a plan: its calls, what they returned, and the findings."""

    request: ExecuteRequest
    catalogue: Catalogue | None
    findings: Findings
    window: tuple[datetime, datetime]
    steps: list[Step]
    services: list[str]
    surveyed: bool
    calls: int = 0
    #: The change feed's answer when it held no change in the window: worth stating as a finding.
    no_changes: tuple[ToolCallResult, ChangeEvidence] | None = None
    #: Metrics that moved, in the order they were found: their words look up runbooks.
    spotted_metrics: list[str] = field(default_factory=list)
    #: Metric reads that failed, per service: "nothing deviated" then speaks only of what was read.
    unread_metrics: Counter[str] = field(default_factory=Counter)
    #: The change the question asked what followed ("发布后报错"), when the focus was put after it.
    after_change: ChangeRecord | None = None

    # -- the flow, top to bottom ------------------------------------------------------

    def run(self) -> ExecutorEvidenceV2:
        order_id = self.request.plan.order_id
        mentions = self._order(str(order_id)) if order_id and self._has("query_logs", when="order_id") else []
        series = self._metrics(self.services) if self._has("query_metrics") else []
        log_targets = self.services if self._has("query_logs") else []
        broad = self._logs(log_targets, self.window)
        focus, chosen = self._focus(series, broad, [sample.ts for _r, sample in mentions])
        self.findings.clock = Clock(with_date=spans_days(focus))
        for result, sample in mentions:
            self.findings.order(result, str(order_id), sample)
        involved = self._involved(series, focus)
        # Services the question named are all reported on (a comparison needs the quiet one too).
        again = log_targets if not self.surveyed else (involved or log_targets)
        logs = broad if focus == self.window else self._logs(again, focus)
        logs += self._levelless(logs, focus if logs is not broad else self.window)
        changes = self._changes(focus) if self._has("query_changes") else []
        if self._has("query_logs", when="terms"):
            self._terms(self.request.plan.terms, self.window)
        self._state(series, logs, focus, changes, involved)
        self._runbooks(logs, involved)
        return self.findings.output(
            ExecutorScope(
                window=(iso(self.window[0]), iso(self.window[1])),
                focus=(iso(focus[0]), iso(focus[1])),
                chosen=chosen,
                after_change_at=iso(self.after_change.ts) if self.after_change else None,
                services=tuple(self.services),
                surveyed=self.surveyed,
                involved=tuple(involved),
            )
        )

    # -- calls ------------------------------------------------------------------------

    def _has(self, tool: str, when: str | None = None) -> bool:
        return any(step.tool == tool and step.when == when for step in self.steps)

    def _call(self, tool: str, args: Mapping[str, str | None]) -> ToolCallResult | None:
        """Run one tool. A failed call is a gap and gives None; a call that found nothing is a
        gap too — unless it is a finding: no log lines of a level, for a service that has logs."""
        runner = self.request.tools
        assert runner is not None
        self.calls += 1
        result: ToolCallResult = runner.run(tool, {k: v for k, v in args.items() if v not in (None, "")})
        if result.status == "ok" or _found_nothing(result):
            return result
        reason = (result.output.error or result.output.text or "").split("\n")[-1][:200]
        summary = ", ".join(f"{k}={v}" for k, v in args.items() if k not in ("start", "end") and v)
        self.findings.gap("error" if result.status == "error" else "no_data", tool=tool, args=summary, reason=reason)
        return result if result.status == "no_data" else None

    def _metrics(self, services: Sequence[str]) -> list[Series]:
        found: list[Series] = []
        for service in services:
            if self.catalogue is None:
                self.findings.gap("no_metrics_catalogue", service=service)
                continue
            names = [m for _s, m, _u in self.catalogue.metrics(service)]
            if not names and not self.surveyed:
                self.findings.gap("no_metrics", service=service)
            for metric in names[:MAX_METRICS]:
                result = self._call("query_metrics", {"service": service, "metric": metric, **_bounds(self.window)})
                if result is None:
                    self.unread_metrics[service] += 1
                elif result.status == "ok":
                    found += [(result, e) for e in result.output.evidence if isinstance(e, MetricEvidence)]
        return found

    def _logs(self, services: Sequence[str], window: tuple[datetime, datetime]) -> list[Logs]:
        found: list[Logs] = []
        for service in services:
            if self.catalogue is not None and self.catalogue.log_span(service) is None:
                if not self.surveyed:  # the backend says what the service has instead
                    self._call("query_logs", {"service": service, "level": "ERROR", **_bounds(window)})
                continue
            for level in ("ERROR", "WARN"):
                result = self._call("query_logs", {"service": service, "level": level, **_bounds(window)})
                if result is not None:
                    found += [(result, e) for e in result.output.evidence if isinstance(e, LogEvidence)]
        return found

    def _levelless(self, logs: list[Logs], window: tuple[datetime, datetime]) -> list[Logs]:
        """Services whose logs in the window hold no ERROR or WARN line — logs that write no level,
        or write every line as INFO — are read at every level once more: their failure-like kind
        of line is what the question is about."""
        found: list[Logs] = []
        quiet = [
            service
            for service in dict.fromkeys(e.service for _r, e in logs if e.service)
            if all(e.matched == 0 for _r, e in logs if e.service == service and e.level in ("ERROR", "WARN"))
            and any(_covers(e.span, e) for _r, e in logs if e.service == service)
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

    def _terms(self, terms: Sequence[str], window: tuple[datetime, datetime]) -> None:
        """Each term the question names, searched as written in the services it names (or in
        all): how many lines hold it and their commonest kind — or, where the service's logs
        cover the window, that none does."""
        where: list[str | None] = list(self.services) if self.services else [None]
        for term in terms:
            for service in where:
                phrase = '"' + term.replace('"', " ") + '"'
                result = self._call("query_logs", {"service": service, "query": phrase, **_bounds(window)})
                if result is None:
                    continue
                for evidence in (e for e in result.output.evidence if isinstance(e, LogEvidence)):
                    if evidence.counted is not None:  # counts of the lines read, not of the window
                        continue
                    if evidence.matched and evidence.templates:
                        self.findings.term(result, evidence, term, evidence.templates[0])
                    elif evidence.matched == 0:
                        self.findings.no_term(result, evidence, term)

    def _order(self, order_id: str) -> list[tuple[ToolCallResult, LogSample]]:
        """The log lines that name the order (at most three): they also say when to look."""
        result = self._call("query_logs", {"query": f'"order {order_id}"', **_bounds(self.window)})
        if result is None or result.status != "ok":
            return []
        samples = [s for e in result.output.evidence if isinstance(e, LogEvidence) for s in e.samples]
        return [(result, sample) for sample in samples if order_id in sample.line][:3]

    # -- where to look ------------------------------------------------------------------

    def _focus(
        self, series: list[Series], logs: list[Logs], moments: list[datetime]
    ) -> tuple[tuple[datetime, datetime], str]:
        """The period the answer is about, and how it was chosen: around the lines that name
        what was asked about (an order), else the first episode after "since …", else the most
        anomalous one."""
        episodes = [
            _Episode(s.service, a.onset, a.end, a.score, (result, s, a)) for result, s in series for a in s.anomalies
        ]
        bursts = [
            _Episode(e.service or "", b.first, b.last, float(b.count))
            for _result, e in logs
            for b in e.bursts
            if b.count >= MIN_BURST
        ]
        pool = episodes or bursts
        if not pool:
            return self.window, "question" if self.request.plan.explicit_time else "whole_window"
        explicit = self.request.plan.explicit_time
        kind = self.request.plan.time.kind
        how = "question" if explicit else "most_anomalous"
        at = self.request.plan.time.at
        if moments:  # the episode nearest the asked-about lines
            first = min(moments)
            chosen = min(pool, key=lambda e: (_distance(e, first), -e.weight))
            how = "question" if explicit else "asked_lines"
        elif explicit and isinstance(at, str):  # "at 14:00": the episode nearest that moment
            moment = _parse(at)
            chosen = min(pool, key=lambda e: (_distance(e, moment), -e.weight))
        elif explicit and kind == "since":
            chosen = min(pool, key=lambda e: e.start)
        elif (after := self._after_asked_change(pool)) is not None:  # "发布后报错": after that change
            chosen, how = after, "after_change"
        else:
            chosen = max(pool, key=lambda e: e.weight)
        start, end = chosen.start - PAD, chosen.end + PAD
        # A series that keeps coming back (a counter's rate: one pulse per restart) is one episode:
        # its own recurrences close after each other join the chosen one.
        own = sorted((e for e in pool if _same_series(e, chosen)), key=lambda e: e.start)
        for other in (e for e in own if e.start > chosen.end):
            if other.start - end > RECURRENCE:
                break
            end = other.end + PAD
        for other in (e for e in reversed(own) if e.end < chosen.start):
            if start - other.end > RECURRENCE:
                break
            start = other.start - PAD
        # Widen by the episodes that overlap that span itself — not by a chain of neighbours,
        # which would stretch one incident over the next.
        span_start, span_end = start, end
        for other in pool:
            if other.start <= span_end and other.end >= span_start:
                start, end = min(start, other.start - PAD), max(end, other.end + PAD)
        focus = (max(_floor(start), self.window[0]), min(_ceil(end), self.window[1]))
        if focus[1] <= focus[0] or (focus[1] - focus[0]) >= NARROWING * (self.window[1] - self.window[0]):
            return self.window, "question" if explicit else "whole_window"
        return focus, how

    def _after_asked_change(self, pool: list[_Episode]) -> _Episode | None:
        """The first episode that starts within ``CAUSE_LEAD`` of the latest change of the kind the
        question asked about ("发布后": a deploy) — the asked services' changes first, else any
        service's — read from the change feed; None when no such change is followed by one."""
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
        own = [c for c in changes if c.service in self.services]
        for change in sorted(own or changes, key=lambda c: c.ts, reverse=True):
            after = [e for e in pool if change.ts - SAME_TIME <= e.start <= change.ts + CAUSE_LEAD]
            if after:
                self.after_change = change
                return min(after, key=lambda e: e.start)
        return None

    def _involved(self, series: list[Series], focus: tuple[datetime, datetime]) -> list[str]:
        """Services with an anomaly in the focus, in the order they moved."""
        onsets: dict[str, datetime] = {}
        for _result, s in series:
            for a in s.anomalies:
                if a.onset < focus[1] and a.end >= focus[0]:
                    onsets[s.service] = min(onsets.get(s.service, a.onset), a.onset)
        return sorted(onsets, key=lambda name: onsets[name])[:3]

    # -- what to state ------------------------------------------------------------------

    def _state(
        self,
        series: list[Series],
        logs: list[Logs],
        focus: tuple[datetime, datetime],
        changes: list[tuple[ToolCallResult, ChangeRecord]],
        involved: list[str],
    ) -> None:
        spotted = sorted(
            [(r, s, a) for r, s in series for a in s.anomalies if a.onset < focus[1] and a.end >= focus[0]],
            key=lambda item: item[2].onset,
        )
        self.spotted_metrics = list(dict.fromkeys(s.metric for _r, s, _a in spotted))
        # What moved first, what quietly did not last: the answer leads with the news.
        self._state_anomalies(spotted, focus)
        self._state_logs(logs)
        self._state_quiet(series, spotted, focus)
        self._state_changes(changes, spotted, involved or self.services)

    def _state_anomalies(self, spotted: list[Spotted], focus: tuple[datetime, datetime]) -> None:
        """The strongest episodes; a counter shown as its increase is stated once, by its steps
        ("+1 at 12:01, 12:31, 13:00"), however many episodes its steps made."""
        self._first_mover(spotted)
        episodes: dict[int, Spotted] = {}
        for item in sorted(spotted, key=lambda item: -item[2].score):
            episodes.setdefault(id(item[1]) if item[1].increases is not None else id(item[2]), item)
        for result, series, found in list(episodes.values())[:MAX_STATED_EPISODES]:
            if series.increases is not None:
                self.findings.increases(result, series, focus)
            else:
                self.findings.anomaly(result, series, found)

    def _state_quiet(self, series: list[Series], spotted: list[Spotted], focus: tuple[datetime, datetime]) -> None:
        moved = {item[1].service for item in spotted}
        # A quiet service is said to be quiet: alone (nothing happened) or beside the one that moved
        # when the question named both; a surveyed service that did not move is left out.
        if spotted and self.surveyed:
            return
        for service in dict.fromkeys(s.service for _r, s in series if s.service not in moved):
            for result, s in [(r, s) for r, s in series if s.service == service][: 3 if not spotted else 2]:
                self.findings.normal(result, s)
            if not spotted:
                clock = self.findings.clock
                span = {"service": service, "start": clock(focus[0]), "end": clock(focus[1])}
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
                self.findings.logs(result, evidence, evidence.templates[0])
            elif evidence.matched == 0 and evidence.level == "ERROR" and _covers(evidence.span, evidence):
                # Logs that write no level hold no ERROR line whatever happened: say that instead.
                if unleveled:
                    self.findings.no_levels(result, evidence)
                else:
                    self.findings.no_logs(result, evidence)
            elif evidence.matched == 0 and evidence.level == "ERROR" and evidence.span is not None:
                span = evidence.span
                start, end = self.findings.clock.span(evidence.start, evidence.end)
                self.findings.gap(
                    "logs_elsewhere",
                    service=evidence.service or "",
                    start=start,
                    end=end,
                    first=iso(span.first),
                    last=iso(span.last),
                )
            if evidence.unparsed:
                start, end = self.findings.clock.span(evidence.start, evidence.end)
                self.findings.gap(
                    "unparsed",
                    service=evidence.service or "",
                    start=start,
                    end=end,
                    count=evidence.unparsed,
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
        lead = {id(c): _lead(c, onsets) for _r, c in changes}
        leading = [(r, c) for r, c in changes if lead[id(c)] is not None]
        ranked = sorted(leading, key=lambda rc: lead[id(rc[1])] or 0.0)
        end = max(item[2].end for item in spotted)
        during = [(r, c) for r, c in changes if min(onsets) + SAME_TIME < c.ts <= end and c.service in services]
        shown = {id(c): (r, c) for r, c in [*ranked[:2], *during[:2]]}
        for result, change in sorted(shown.values(), key=lambda rc: rc[1].ts):
            self.findings.change(result, change)
        if ranked:
            cause = ranked[0]
            effect = _effect_of(cause[1], spotted)
            self.findings.inference(cause, effect, together=cause[1].ts > effect[2].onset)

    def _first_mover(self, spotted: list[Spotted]) -> None:
        firsts: dict[str, Spotted] = {}
        for item in spotted:
            firsts.setdefault(item[1].service, item)
        if len(firsts) >= 2:
            first, second = list(firsts.values())[:2]
            if first[2].onset < second[2].onset:
                self.findings.first_mover(first, second)

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
        narrowed = involved if involved else self.services
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
        services = plan.examined_services
        surveyed = not services
        if surveyed and self.catalogue is not None:
            services = self.catalogue.services()[:MAX_SERVICES]
        if not services:
            findings.gap("no_service")
        steps = plan.runnable_steps()
        execution = _Execution(request, self.catalogue, findings, window, steps, services, surveyed)
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


def _bounds(window: tuple[datetime, datetime]) -> dict[str, str]:
    return {"start": iso(window[0]), "end": iso(window[1])}


def _floor(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0) - timedelta(minutes=moment.minute % 5)


def _ceil(moment: datetime) -> datetime:
    floored = _floor(moment)
    return floored if floored == moment else floored + timedelta(minutes=5)


def _lead(change: ChangeRecord, onsets: list[datetime]) -> float | None:
    """Seconds from the change to the nearest onset at or after it (a sample's slack allowed),
    None when no onset follows within ``CAUSE_LEAD``."""
    after = [(onset - change.ts).total_seconds() for onset in onsets if onset >= change.ts - SAME_TIME]
    nearest = min(after, default=None)
    return max(nearest, 0.0) if nearest is not None and nearest <= CAUSE_LEAD.total_seconds() else None


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


def _same_series(a: _Episode, b: _Episode) -> bool:
    return (
        a.anomaly is not None
        and b.anomaly is not None
        and (a.service, a.anomaly[1].metric) == (b.service, b.anomaly[1].metric)
    )


def _gap(a: datetime, b: datetime) -> float:
    return abs((a - b).total_seconds())


def _distance(episode: _Episode, moment: datetime) -> float:
    """Seconds from ``moment`` to the episode (0 inside it)."""
    if episode.start <= moment <= episode.end:
        return 0.0
    return min(abs((episode.start - moment).total_seconds()), abs((moment - episode.end).total_seconds()))


def _term_search(logs: LogEvidence) -> bool:
    """A search of one service's logs for a term of the question (``Plan.terms``)."""
    return logs.query is not None and logs.service is not None and _covers(logs.span, logs)


def _covers(span: Span | None, logs: LogEvidence) -> bool:
    """The service has logs on both sides of the window, or inside it: silence there means something."""
    return span is not None and span.first <= logs.end and span.last >= logs.start
