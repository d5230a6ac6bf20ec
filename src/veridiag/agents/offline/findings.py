"""What the offline executor states, worded from typed records (``phrases.yaml``).

Every claim quotes the output lines of the records it rests on — the anomaly line and its peak
point, the template line with its count and one verbatim example, the change event's line — so
its numbers, times and codes are found in its own excerpts. Nothing here reads rendered text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from pydantic import model_validator

from veridiag.analysis.signatures import family_blind_to
from veridiag.contracts.executor_v2 import (
    Claim,
    EvidenceBinding,
    ExecutorEvidenceV2,
    Hypothesis,
    RecommendedAction,
    SupportLevel,
)
from veridiag.contracts.material import ExecutorScope
from veridiag.text.assertions import asserted
from veridiag.text.periods import across_days, moment_text, period_text
from veridiag.text.render import format_value, rounded, telling_part
from veridiag.text.wordfiles import Bilingual, WordModel, bundled_words
from veridiag.tools.records import (
    AskedPoint,
    ChangeEvidence,
    ChangeRecord,
    LogEvidence,
    LogSample,
    MetricAnomaly,
    MetricEvidence,
    Suspect,
    SuspectEvidence,
    SuspectSignal,
    TemplateCount,
    TraceEvidence,
)
from veridiag.tools.results import ToolCallResult
from veridiag.tools.spans import ms_text

Quote = tuple[ToolCallResult, str]
#: A span figure that grew at least this much against its baseline rose (``query_traces``);
#: one below ``STEADY`` did not.
ROSE = 1.5
STEADY = 1.2
#: Steps of a counter's increases a claim names (each quoting its point line).
MAX_LISTED_STEPS = 8


class PhraseBook(WordModel):
    """One language of ``phrases.yaml``: a ``str.format`` template per key (written beside
    ``kinds`` and ``families`` in the file), the name of each change kind and of each family of
    metric (``analysis/signatures.yaml``)."""

    templates: dict[str, str]
    kinds: dict[str, str]
    families: dict[str, str]

    @model_validator(mode="before")
    @classmethod
    def _templates_beside_kinds(cls, data: object) -> object:
        if isinstance(data, dict) and "templates" not in data:
            named = ("kinds", "families")
            return {
                **{key: data.get(key) for key in named},
                "templates": {k: v for k, v in data.items() if k not in named},
            }
        return data


@lru_cache(maxsize=1)
def _phrases() -> Bilingual[PhraseBook]:
    return bundled_words("veridiag.agents.offline", "phrases.yaml", Bilingual[PhraseBook])


@dataclass(frozen=True)
class Clock:
    """Times as claims write them: HH:MM within one day, with the date across days; a period
    as ``text/periods.py`` writes it (its ends dated when they fall on different days)."""

    with_date: bool

    def __call__(self, moment: datetime) -> str:
        return moment_text(moment, dated=self.with_date)

    def seconds(self, moment: datetime) -> str:
        return moment_text(moment, dated=self.with_date, seconds=True)

    def over(self, start: datetime, end: datetime) -> Clock:
        """The clock for the moments of a period (its ends, its peak): dated when the clock is,
        or when the period itself crosses days (a week's window read beside a one-hour focus is
        not "16:00–16:00", an episode from one evening to the next morning no "23:10–01:40")."""
        return self if self.with_date or not across_days(start, end) else Clock(with_date=True)

    def span(self, start: datetime, end: datetime) -> tuple[str, str]:
        """A period's two ends, for wording that names them apart ("from … until …")."""
        dated = self.over(start, end)
        return dated(start), dated(end)

    def period(self, start: datetime, end: datetime, lang: str) -> str:
        """A period as one phrase: ``07:15–09:30``, or ``2026-02-25 07:15 – 2026-02-27 02:45``."""
        return period_text(start, end, lang, dated=self.with_date)


#: A change whose last point is this near the period's end was still going when it ended.
STILL_GOING = timedelta(minutes=2)


def _words(survey: ToolCallResult, signal: SuspectSignal) -> list[Quote]:
    """A log template or a change's description quoted on its own, as the survey's line holds
    it: its words are the log's or the feed's, never the claim's own ("… with root cause")."""
    if signal.source == "log":
        return [(survey, signal.name)]
    if signal.source == "change" and signal.description:
        return [(survey, signal.description)]
    return []


def spans_days(window: tuple[datetime, datetime]) -> bool:
    return window[1] - window[0] >= timedelta(hours=24) or window[0].date() != (window[1] - timedelta(seconds=1)).date()


@dataclass
class Findings:
    """Claims, hypotheses, actions and gaps of one execution, in the answer's language."""

    lang: str
    clock: Clock
    claims: list[Claim] = field(default_factory=list)
    hypotheses: list[Hypothesis] = field(default_factory=list)
    actions: list[RecommendedAction] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def say(self, key: str, **values: Any) -> str:
        """``key`` filled with ``values``; ``key_one`` instead, where the language has one, when
        the ``count`` it states is 1 ("the 1 service", never "the 1 services")."""
        templates = _phrases()[self.lang].templates
        if values.get("count") == 1 and f"{key}_one" in templates:
            key = f"{key}_one"
        return templates[key].format(**values)

    def during(self, start: datetime, end: datetime) -> dict[str, str]:
        """A period's values for a phrase: ``start`` and ``end`` apart, and the ``period``."""
        first, last = self.clock.span(start, end)
        return {"start": first, "end": last, "period": self.clock.period(start, end, self.lang)}

    def words(self, written: str) -> str:
        """A log template or change note as a cause or an answer may name it: as written, unless
        it asserts a conclusion or gives orders (``text/assertions.py``) — then it is said to,
        and left to the record that quotes it (issue 27 D4: quoted, never adopted)."""
        return self.say("asserted") if asserted(written) else written

    def kind(self, kind: str) -> str:
        return _phrases()[self.lang].kinds.get(kind, kind)

    def family(self, family: str) -> str:
        return _phrases()[self.lang].families.get(family, family)

    def claim(
        self,
        claim_type: str,
        text: str,
        quotes: list[Quote],
        support: SupportLevel = "direct",
        *,
        answers: bool = False,
    ) -> Claim:
        unique = {(result.invocation_id, excerpt): result for result, excerpt in quotes if excerpt.strip()}
        bindings = [
            EvidenceBinding(
                source_type="tool_trace",
                source_id=f"invocation-{invocation_id}",
                tool_name=result.tool_name,
                source_invocation_ids=[invocation_id],
                evidence_excerpt=excerpt,
            )
            for (invocation_id, excerpt), result in unique.items()
        ]
        made = Claim(
            claim_id=f"claim-{len(self.claims) + 1}",
            claim_type=claim_type,
            claim_text=text,
            support_level=support,
            evidence_bindings=bindings,
            answers=True if answers else None,
        )
        self.claims.append(made)
        return made

    def gap(self, key: str, **values: Any) -> None:
        text = self.say(key, **values)
        if text not in self.missing:
            self.missing.append(text)

    # -- observations ------------------------------------------------------------------

    def traces(self, result: ToolCallResult, spans: TraceEvidence) -> list[Claim]:
        """What a service's spans say against its own earlier ones (issue 29): its own work grew
        (self time), its errors grew, or its duration grew while its own time did not and a
        callee's did — it waits on that callee; else its figures as they are. Then the hop that
        held its slowest trace up longest. Numbers as the quoted lines write them."""
        own, duration, errors = spans.figure("self_p90"), spans.figure("duration_p90"), spans.figure("errors")
        period = self.during(spans.start, spans.end)["period"]
        made: list[Claim] = []
        if own is not None and own.factor is not None and own.factor >= ROSE:
            text = self.say(
                "own_time_rose",
                service=spans.service,
                period=period,
                now=ms_text(own.window),
                before=ms_text(own.baseline),
                factor=f"{own.factor:.2f}",
            )
            made.append(self.claim("symptom", text, [(result, spans.line), (result, own.line)]))
        if errors is not None and errors.window is not None and errors.window > (errors.baseline or 0):
            now, before = errors.line.split(": ", 1)[1].split(" in the window, ")
            text = self.say(
                "span_errors_rose",
                service=spans.service,
                period=period,
                now=now,
                before=before.removesuffix(" in the baseline"),
            )
            made.append(self.claim("symptom", text, [(result, spans.line), (result, errors.line)]))
        callee = max(
            (c for c in spans.callees if c.factor is not None and c.factor >= ROSE),
            key=lambda c: c.factor or 0,
            default=None,
        )
        waits = (
            not made
            and own is not None
            and duration is not None
            and duration.factor is not None
            and duration.factor >= ROSE
            and (own.factor is None or own.factor < STEADY)
        )
        if waits and own is not None and duration is not None and callee is not None:
            text = self.say(
                "waits_on_callee",
                service=spans.service,
                period=period,
                duration=ms_text(duration.window),
                duration_factor=f"{duration.factor:.2f}",
                now=ms_text(own.window),
                factor=f"{own.factor:.2f}" if own.factor is not None else "—",
                callee=callee.service,
                callee_now=ms_text(callee.window),
                callee_factor=f"{callee.factor:.2f}",
            )
            quotes = [(result, spans.line), (result, duration.line), (result, own.line), (result, callee.line)]
            made.append(self.claim("observation", text, quotes))
        elif not made and own is not None and duration is not None:
            text = self.say(
                "spans_steady",
                service=spans.service,
                period=period,
                duration=ms_text(duration.window),
                duration_before=ms_text(duration.baseline),
                now=ms_text(own.window),
                before=ms_text(own.baseline),
            )
            made.append(
                self.claim("observation", text, [(result, spans.line), (result, duration.line), (result, own.line)])
            )
        slowest = spans.slowest[0] if spans.slowest else None
        if slowest is not None and slowest.heaviest is not None and slowest.heaviest_line is not None:
            hop = slowest.heaviest
            text = self.say(
                "slowest_trace",
                service=spans.service,
                period=period,
                hop=f"{hop.service}:{hop.operation}" + (f" ×{hop.spans}" if hop.spans > 1 else ""),
                critical=ms_text(hop.critical_ms),
                own=ms_text(hop.self_ms),
            )
            heading = [(result, spans.slowest_line)] if spans.slowest_line else []  # it states "slowest"
            quotes = [*heading, (result, slowest.line), (result, slowest.heaviest_line)]
            made.append(self.claim("observation", text, quotes))
        return made

    def error_trace(
        self, logs: ToolCallResult, template: TemplateCount, traced: ToolCallResult, trace: TraceEvidence
    ) -> Claim:
        """The request one of a service's error lines belongs to (its trace id), as its spans tell
        it: the services it reached, in order, and whether the service called any other — logs
        and spans of one request side by side, never a cause of their own."""
        service = trace.service
        calls = (
            self.say("error_trace_called", called=self.say("list_separator").join(trace.called))
            if trace.called
            else self.say("error_trace_alone")
        )
        text = self.say(
            "error_trace",
            service=service,
            level=template.level,
            trace=trace.trace_id,
            at=self.clock.seconds(trace.start),
            spans=trace.trace_spans,
            reached=" → ".join(trace.reached),
            calls=calls,
        )
        quotes = [(logs, template.line), (logs, template.example), (traced, trace.line)]
        quotes += [(traced, line) for line in (trace.reached_line, trace.own_line) if line]
        return self.claim("observation", text, quotes)

    def anomaly(
        self,
        result: ToolCallResult,
        series: MetricEvidence,
        found: MetricAnomaly,
        *,
        asked: AskedPoint | None = None,
        answers: bool = False,
    ) -> Claim:
        """An episode, and the value at the moment asked when that lies inside it (not its peak)."""
        unit = series.unit
        factor = self.say("factor", factor=f"{found.factor:.2f}") if found.factor is not None else ""
        # One point is an instant, not a span: "at 08:30", never "08:30–08:30".
        key = ("anomaly_up" if found.direction == "up" else "anomaly_down") + (
            "_at" if found.onset == found.end else ""
        )
        if series.history is not None and found.onset <= series.history.first:
            # Out of line from the data's first point: what is normal for it before then is not in
            # the data, so no "expected" is stated — the data begins during this period.
            key = "begins_up" if found.direction == "up" else "begins_down"
        # an episode across days dates its ends and its peak, whatever the answer's clock
        clock = self.clock.over(found.onset, found.end)
        text = self.say(
            key,
            service=series.service,
            metric=series.metric,
            onset=clock(found.onset),
            end=clock(found.end),
            period=self.clock.period(found.onset, found.end, self.lang),
            peak=format_value(found.peak, unit),
            peak_at=clock(found.peak_at),
            expected=format_value(rounded(found.expected), unit),
            factor=factor,
        )
        quotes = [(result, found.line), (result, found.peak_line)]
        if asked is not None and found.onset <= asked.at <= found.end and asked.at != found.peak_at:
            text += self.say("asked_value", at=clock(asked.at), value=format_value(asked.value, unit))
            quotes.append((result, asked.line))
        claim_type = "observation" if key.startswith("begins_") else "symptom"
        return self.claim(claim_type, text, quotes, answers=answers)

    def increases(self, result: ToolCallResult, series: MetricEvidence, focus: tuple[datetime, datetime]) -> None:
        """A counter shown as its increase per step: the steps it grew in during ``focus`` — "3
        times (+1 each)" with the output's totals line when those are all its steps and few,
        else the first few steps, each quoting its own point line."""
        found = series.increases
        steps = [step for step in found.steps if focus[0] <= step.at < focus[1]] if found else []
        if found is None or not steps:
            return
        whole = len(steps) == len(found.steps) <= MAX_LISTED_STEPS
        steps = steps[:MAX_LISTED_STEPS]
        sizes = {step.by for step in steps}
        key = "increases_at" if not whole else "increase_once" if len(steps) == 1 else "increases"
        separator = self.say("list_separator")
        text = self.say(
            "increases_each" if key == "increases" and len(sizes) == 1 else key,
            service=series.service,
            metric=series.metric,
            count=len(steps),
            times=separator.join(self.clock(step.at) for step in steps),
            each=format_value(steps[0].by, ""),
            total=format_value(found.total, ""),
            steps=separator.join(
                self.say("increase_step", time=self.clock(step.at), by=format_value(step.by, "")) for step in steps
            ),
        )
        quotes = [(result, found.line)] if whole else []
        self.claim("symptom", text, [*quotes, *((result, step.line) for step in steps)])

    def normal(
        self, result: ToolCallResult, series: MetricEvidence, *, asked: AskedPoint | None = None
    ) -> Claim | None:
        if series.baseline_line is None or series.baseline_median is None:
            return None
        unit = series.unit
        span = self.during(series.start, series.end)
        text = self.say(
            "normal",
            service=series.service,
            metric=series.metric,
            **span,
            minimum=format_value(series.minimum, unit),
            maximum=format_value(series.maximum, unit),
            median=format_value(rounded(series.baseline_median), unit),
        )
        quotes = [(result, series.window_line), (result, series.baseline_line)]
        if asked is not None:
            clock = self.clock.over(series.start, series.end)
            text += self.say("asked_value", at=clock(asked.at), value=format_value(asked.value, unit))
            quotes.append((result, asked.line))
        # The core finding of a quiet period: the symptom asked about is not there.
        return self.claim("symptom", text, quotes)

    def logs(
        self, result: ToolCallResult, logs: LogEvidence, top: TemplateCount, *, key: str = "logs", answers: bool = False
    ) -> Claim:
        """The window's count and its dominant template (``key="failure_like"``: the commonest
        failure-like one of logs that carry no level)."""
        span = self.during(logs.start, logs.end)
        text = self.say(
            key,
            service=logs.service or "",
            **span,
            matched=logs.matched,
            level=logs.level or top.level,
            count=top.count,
            when=self._between(top.first, top.last, (logs.start, logs.end)),
            template=top.template,
        )
        # The template is quoted on its own too: its words are the log's, not the claim's own.
        quotes = [(result, logs.line), (result, top.line), (result, top.template), (result, top.example)]
        return self.claim("symptom", text, quotes, answers=answers)

    def term(
        self, result: ToolCallResult, logs: LogEvidence, term: str, top: TemplateCount, *, answers: bool = False
    ) -> Claim:
        """How many lines of the window hold a term the question named, and their commonest kind:
        of one service's logs; of every log (the total, then where most are); or, after that,
        another service's commonest kind (``logs.service`` None and ``top`` not the first)."""
        span = self.during(logs.start, logs.end)
        values = {
            "term": term,
            **span,
            "matched": logs.matched,
            "count": top.count,
            "when": self._between(top.first, top.last, (logs.start, logs.end)),
            "template": top.template,
        }
        if logs.service is not None:
            key, service = "term_logs", logs.service
        elif logs.templates and top is logs.templates[0]:
            key, service = "term_logs_all", top.service or self.say("all_services")
        else:
            key, service = "term_logs_service", top.service or ""
        text = self.say(key, service=service, **values)
        quotes = [(result, top.line), (result, top.template), (result, top.example)]
        if key != "term_logs_service":
            quotes.insert(0, (result, logs.line))
        return self.claim("symptom", text, quotes, answers=answers)

    def no_term(self, result: ToolCallResult, logs: LogEvidence, term: str, *, answers: bool = False) -> Claim:
        """No line of a service's logs (of every log) in the window holds the term."""
        span = self.during(logs.start, logs.end)
        service = logs.service or self.say("all_services")
        text = self.say("no_term_logs", service=service, term=term, **span)
        return self.claim("observation", text, [(result, logs.line)], answers=answers)

    def _between(self, first: datetime, last: datetime, within: tuple[datetime, datetime]) -> str:
        """``10:01–10:31``, or one time when both read the same (a single line); dated when they
        or the window ``within`` they lie in cross days (a week's template at "11:10" is no time)."""
        clock = self.clock.over(*within).over(first, last)
        return clock(first) if clock(first) == clock(last) else clock.period(first, last, self.lang)

    def no_logs(self, result: ToolCallResult, logs: LogEvidence) -> Claim:
        span = self.during(logs.start, logs.end)
        text = self.say(
            "no_logs",
            service=logs.service or "",
            **span,
            level=logs.level or "ERROR",
        )
        return self.claim("symptom", text, [(result, logs.line)])

    def no_levels(self, result: ToolCallResult, logs: LogEvidence) -> Claim:
        """No ERROR line in logs that mostly write no level: an observation of the logs, not of
        the service — it must not read as "no errors"."""
        assert logs.unleveled is not None
        text = self.say(
            "no_levels",
            service=logs.service or "",
            unleveled=logs.unleveled.unleveled,
            lines=logs.unleveled.lines,
        )
        return self.claim("observation", text, [(result, logs.unleveled.line), (result, logs.line)])

    def no_changes(self, result: ToolCallResult, changes: ChangeEvidence, *, answers: bool = False) -> Claim:
        span = self.during(changes.start, changes.end)
        text = self.say("no_changes", **span)
        return self.claim("observation", text, [(result, changes.line)], answers=answers)

    def order(self, result: ToolCallResult, order_id: str, sample: LogSample) -> Claim:
        text = self.say("order", order=order_id, time=self.clock.seconds(sample.ts), line=sample.line[:240])
        return self.claim("symptom", text, [(result, sample.line)])

    def change(self, result: ToolCallResult, change: ChangeRecord, *, answers: bool = False) -> Claim:
        text = self.say(
            "change",
            time=self.clock.seconds(change.ts),
            service=change.service,
            kind=self.kind(change.kind),
            description=change.description,
        )
        return self.claim("change", text, [(result, change.line)], answers=answers)

    def inference(
        self,
        change: tuple[ToolCallResult, ChangeRecord],
        anomaly: tuple[ToolCallResult, MetricEvidence, MetricAnomaly],
        *,
        together: bool = False,
        answers: bool = False,
    ) -> Claim:
        """``together``: the change came within a sample of the onset, not strictly before it."""
        (change_result, record), (metric_result, series, found) = change, anomaly
        text = self.say(
            "inference_with" if together else "inference",
            change_time=self.clock.seconds(record.ts),
            changed=record.service,
            kind=self.kind(record.kind),
            description=self.words(record.description),
            service=series.service,
            metric=series.metric,
            onset=self.clock(found.onset),
        )
        quotes = [(change_result, record.line), (metric_result, found.line)]
        return self.claim("root_cause", text, quotes, support="indirect", answers=answers)

    def first_mover(
        self,
        first: tuple[ToolCallResult, MetricEvidence, MetricAnomaly],
        second: tuple[ToolCallResult, MetricEvidence, MetricAnomaly],
    ) -> Claim:
        (a_result, a_series, a_found), (b_result, b_series, b_found) = first, second
        text = self.say(
            "first_mover",
            first=a_series.service,
            first_metric=a_series.metric,
            first_onset=self.clock(a_found.onset),
            second=b_series.service,
            second_metric=b_series.metric,
            second_onset=self.clock(b_found.onset),
        )
        return self.claim("observation", text, [(a_result, a_found.line), (b_result, b_found.line)], "indirect")

    # -- what the culprit search found (rank_suspects): the answer to the question ---------

    def culprit(self, survey: ToolCallResult, evidence: SuspectEvidence, support: list[Quote]) -> Claim:
        """The service that stands out, inferred: its strongest change as the output states it,
        quoting the suspect line and the verdict line, and ``support`` (the same change as
        another tool shows it: an anomaly line, a log template, a change event)."""
        top = evidence.suspects[0]
        text = self.say("culprit", service=top.service, what=self.signal(top.signals[0]))
        quotes = [(survey, top.line), *_words(survey, top.signals[0]), (survey, evidence.verdict_line), *support]
        return self.claim("root_cause", text, quotes, support="indirect", answers=True)

    def no_standout(self, survey: ToolCallResult, evidence: SuspectEvidence) -> Claim:
        """Services changed, but none stands out: what changed most, and why that says no origin."""
        top = evidence.suspects[0]
        lead = top.signals[0]
        if top.explained_by:
            why = self.say("why_explained", others=self.say("list_separator").join(top.explained_by))
        elif lead.role != "cause":
            why = self.say("why_effect", family=self.family(lead.family))
        elif lead.nearness < 1.0 and evidence.at is not None:
            why = self.say("why_away", at=self.clock(evidence.at))
        elif evidence.close is not None:
            why = self.say("why_close", next=evidence.close)
        else:
            why = self.say("why_small")
        text = self.say("no_standout", service=top.service, what=self.signal(lead), why=why)
        quotes = [(survey, top.line), *_words(survey, lead), (survey, evidence.verdict_line)]
        second = next((s for s in evidence.suspects[1:] if s.service == evidence.close), None)
        if second is not None or len(evidence.suspects) > 1:
            quotes.append((survey, (second or evidence.suspects[1]).line))
        return self.claim("symptom", text, quotes, answers=True)

    def kind_asked(
        self,
        survey: ToolCallResult,
        evidence: SuspectEvidence,
        family: str,
        changed: tuple[Suspect, SuspectSignal] | None,
    ) -> Claim:
        """ "Is it the network?": yes when a change of that family is what changed most and stands
        out, "it changed, not most" when one is lower, no when the period has none."""
        kind = self.family(family)
        span = self.during(evidence.start, evidence.end)
        if changed is None:
            blind = family_blind_to(family)
            if blind is not None:  # what the series cannot show is a gap, never part of a fact
                self.gap("kind_blind", kind=kind, blind=blind[self.lang])
            text = self.say("kind_unseen" if blind else "kind_none", kind=kind, count=len(evidence.examined), **span)
            return self.claim(
                "observation", text, [(survey, evidence.line), (survey, evidence.verdict_line)], answers=True
            )
        suspect, signal = changed
        top = evidence.standout and suspect is evidence.suspects[0] and suspect.signals[0] is signal
        text = self.say(
            "kind_yes" if top else "kind_also", kind=kind, service=suspect.service, what=self.signal(signal)
        )
        quotes = [
            (survey, suspect.line),
            (survey, signal.line),
            *_words(survey, signal),
            (survey, evidence.verdict_line),
        ]
        return self.claim("observation", text, quotes, answers=True)

    def most_changed(self, survey: ToolCallResult, evidence: SuspectEvidence) -> Claim:
        """What is abnormal, asked as such: the service that changed most and how — no origin."""
        top = evidence.suspects[0]
        span = self.during(evidence.start, evidence.end)
        text = self.say("most_changed", service=top.service, what=self.signal(top.signals[0]), **span)
        quotes = [(survey, top.line), *_words(survey, top.signals[0]), (survey, evidence.line)]
        return self.claim("symptom", text, quotes, answers=True)

    def nothing_changed(self, survey: ToolCallResult, evidence: SuspectEvidence, *, answers: bool = True) -> Claim:
        span = self.during(evidence.start, evidence.end)
        text = self.say("nothing_changed", **span, count=len(evidence.examined))
        quotes = [(survey, evidence.line), (survey, evidence.verdict_line)]
        return self.claim("symptom", text, quotes, answers=answers)

    def without_data(self, survey: ToolCallResult, evidence: SuspectEvidence, service: str) -> Claim:
        assert evidence.without_data_line is not None
        span = self.during(evidence.start, evidence.end)
        text = self.say("without_data", service=service, **span)
        quotes = [(survey, evidence.without_data_line), (survey, evidence.line)]
        return self.claim("observation", text, quotes, answers=True)

    def levels(self, survey: ToolCallResult, evidence: SuspectEvidence, shown: int = 3) -> Claim:
        """The ranking by a measure ("哪个服务最慢"): the first ``shown`` services with their levels
        — or, errors no series measures, with their ERROR lines in the window."""
        ranked = evidence.levels[:shown]
        lines = bool(ranked) and ranked[0].source == "log"
        span = self.during(evidence.levels_start or evidence.start, evidence.levels_end or evidence.end)
        measure = self.family(evidence.by or "")
        quotes = [(survey, evidence.levels_line or evidence.line), *((survey, level.line) for level in ranked)]
        if ranked and all(level.peak == 0 for level in evidence.levels):
            # "1. inventory-service 0 restarts (peak 0)" ranks nothing: none of them had any
            text = self.say("nothing_to_rank", measure=measure, **span)
            return self.claim("symptom", text, quotes, answers=True)
        items = self.say("list_separator").join(
            self.say(
                "level_lines_item" if lines else "level_item",
                rank=level.rank,
                service=level.service,
                average=format_value(rounded(level.average), level.unit),
                peak=format_value(rounded(level.peak), level.unit),
                count=int(level.average),
            )
            for level in ranked
        )
        text = self.say("levels_lines" if lines else "levels", measure=measure, items=items, **span)
        return self.claim("symptom", text, quotes, answers=True)

    def cannot_rank(self, survey: ToolCallResult, evidence: SuspectEvidence) -> Claim:
        """A measure no service examined has: the ranking asked for cannot be made."""
        span = self.during(evidence.levels_start or evidence.start, evidence.levels_end or evidence.end)
        text = self.say("cannot_rank", measure=self.family(evidence.by or ""), **span)
        return self.claim("observation", text, [(survey, evidence.levels_line or evidence.line)], answers=True)

    def changed_count(self, survey: ToolCallResult, evidence: SuspectEvidence) -> Claim:
        """ "How many services were affected?": how many of those examined changed, and which."""
        assert evidence.changed_line is not None
        span = self.during(evidence.start, evidence.end)
        separator = self.say("list_separator")
        items = separator.join(
            self.say("changed_item", service=s.service, family=self.family(s.signals[0].family))
            for s in evidence.suspects
        )
        if evidence.changed > len(evidence.suspects):  # the output lists the first few: say so
            items += self.say("changed_more", more=evidence.changed - len(evidence.suspects))
        text = self.say("changed_count", changed=evidence.changed, count=len(evidence.examined), **span, items=items)
        quotes = [(survey, evidence.changed_line), (survey, evidence.line)]
        quotes += [(survey, suspect.line) for suspect in evidence.suspects]
        return self.claim("symptom", text, quotes, answers=True)

    def quiet_named(self, survey: ToolCallResult, evidence: SuspectEvidence, service: str) -> Claim:
        """A service the question asks about that did not change: said of it alone — never that
        nothing points at it (a fault can leave the culprit's own metrics unchanged)."""
        assert evidence.quiet_line is not None
        span = self.during(evidence.start, evidence.end)
        text = self.say("quiet_named", service=service, **span)
        return self.claim("observation", text, [(survey, evidence.quiet_line), (survey, evidence.line)], answers=True)

    def no_data_window(self, survey: ToolCallResult, evidence: SuspectEvidence) -> Claim:
        """No service has data in the window: where the data held lies instead."""
        assert evidence.held is not None and evidence.held_line is not None
        span = self.during(evidence.start, evidence.end)
        dated = Clock(with_date=True)
        text = self.say("no_data_window", **span, first=dated(evidence.held.first), last=dated(evidence.held.last))
        return self.claim("observation", text, [(survey, evidence.held_line), (survey, evidence.line)], answers=True)

    def no_change_feed(self, result: ToolCallResult, changes: ChangeEvidence) -> Claim:
        """ "What changed?" without a change feed: the changes cannot be checked."""
        return self.claim("observation", self.say("no_change_feed"), [(result, changes.line)], answers=True)

    def earliest(self, survey: ToolCallResult, evidence: SuspectEvidence, first: SuspectSignal) -> Claim:
        """When it started: the earliest change of the kind asked about, inferred as the start."""
        text = self.say("earliest", service=first.service, what=self.signal(first))
        quotes = [(survey, first.line), *_words(survey, first)]
        return self.claim("symptom", text, quotes, support="indirect", answers=True)

    def lasted(self, survey: ToolCallResult, evidence: SuspectEvidence, change: SuspectSignal) -> Claim:
        """How long it lasted ("持续了多久", "when did it recover?"): the change's first and last
        points as the survey line states them — or that it was still going when the period ended."""
        still = change.end >= evidence.end - STILL_GOING
        onset, end = self.clock.span(change.onset, evidence.end if still else change.end)
        what = self.signal(change)
        text = self.say(
            "lasted_open" if still else "lasted",
            onset=onset,
            end=end,
            service=change.service,
            what=what,
        )
        quotes = [(survey, change.line), *_words(survey, change), *([(survey, evidence.line)] if still else [])]
        return self.claim("symptom", text, quotes, answers=True)

    def signal(self, signal: SuspectSignal) -> str:
        """A suspect's change in words, every figure as the suspect line writes it."""
        if signal.source == "change":
            return self.say(
                "culprit_change",
                time=self.clock.seconds(signal.onset),
                kind=self.kind(signal.name),
                description=self.words(signal.description or ""),
            )
        if signal.source == "log":
            return self.say(
                "culprit_log",
                onset=self.clock(signal.onset),
                count=signal.count,
                level=signal.level,
                template=self.words(telling_part(signal.name)),
            )
        if signal.events is not None:
            return self.say(
                "culprit_events",
                metric=signal.name,
                total=format_value(signal.events, ""),
                period=self.clock.period(signal.onset, signal.end, self.lang),
            )
        assert signal.expected is not None and signal.peak is not None
        up = signal.peak >= signal.expected
        return self.say(
            "culprit_metric_up" if up else "culprit_metric_down",
            metric=signal.name,
            onset=self.clock(signal.onset),
            expected=format_value(rounded(signal.expected), signal.unit),
            peak=format_value(rounded(signal.peak), signal.unit),
            factor=self.say("factor", factor=f"{signal.factor:.2f}") if signal.factor is not None else "",
            limit=self.say("at_limit") if signal.saturated else "",
        )

    def output(self, scope: ExecutorScope | None) -> ExecutorEvidenceV2:
        """``executor_evidence_v2`` with the window the executor settled on (``scope``)."""
        return ExecutorEvidenceV2(
            answer_version="executor_evidence_v2",
            claims=self.claims,
            hypotheses=self.hypotheses,
            recommended_actions=self.actions,
            missing_info=self.missing,
            scope=scope.model_dump(mode="json") if scope else {},
        )
