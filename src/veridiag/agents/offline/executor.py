"""Offline executor: runs the plan's tool calls and derives claims **only from what they
returned** — metric change against its baseline (values, peak time, factor), log pattern
counts with a verbatim example line, configuration/deploy changes seen in logs; runbook
matches become hypotheses with the checks they still need; calls that found nothing become
missing information. It emits ``executor_evidence_v2`` like a model would, and its output
goes through the same parse → Gatekeeper → Verifier path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from veridiag.agents.reply import RoleReply
from veridiag.agents.roles import ExecuteRequest
from veridiag.contracts.composer import has_cjk
from veridiag.gatekeeper.entities import extract_entities
from veridiag.tools.results import ToolCallResult

_CHANGE = re.compile(
    r"config|set to|rolled out|rolled back|Deployment|release|enabled|started \(batch|maximum-pool-size|timeout set",
    re.IGNORECASE,
)
_LINE_TS = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})")
_MESSAGE = re.compile(r"^\S+\s+(?:ERROR|WARN|INFO|DEBUG)\s+\S+\s+(?:\[[^\]]*\]\s+)?(?:\S+\s+-\s+)?(.*)$")
_ANOMALY_FACTOR = 1.5


class Catalogue(Protocol):
    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]: ...


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(moment: str) -> datetime:
    return datetime.fromisoformat(moment.replace("Z", "+00:00"))


def _hhmm(moment: str) -> str:
    return moment[11:16]


def _message(line: str) -> str:
    match = _MESSAGE.match(line)
    return (match.group(1) if match else line).strip()


_TEXT = {
    "zh": {
        "log": "{service} 在 {start}–{end} 集中出现 {burst} 条 {level} 日志（查询范围内共 {matched} 条），"
        "最常见的一类出现 {count}×：{message}",
        "order": "订单 {order} 的日志记录（{time}）：{message}",
        "change": "{time} {service} 日志记录了一次变更：{message}",
        "metric": "{service} 的 {metric} 在 {start}–{end} 峰值 {peak}（{peak_at}），均值 {avg}；"
        "此前同样长度的基线均值 {base_avg}{factor}",
        "inference": "{change_time} 的变更（{message}）发生在 {metric} 异常之前，推断该变更与本次异常直接相关",
        "hypothesis": "{cause}（来自排障手册 {runbook}）",
        "basis": "排障手册《{title}》与本次观察到的现象相符，但手册内容不是本次的证据",
        "no_data": "{tool}（{args}）没有返回数据：{reason}",
        "error": "{tool}（{args}）调用失败：{reason}",
        "no_anomaly": "{service} 的指标在 {start}–{end} 没有明显偏离基线",
        "no_service": "问题中没有可识别的服务，无法定位要查询的对象",
    },
    "en": {
        "log": "{service} logged a burst of {burst} {level} lines between {start} and {end} ({matched} in the range "
        "queried); the most common kind occurred {count}×: {message}",
        "order": "Log record for order {order} ({time}): {message}",
        "change": "At {time} {service} logged a change: {message}",
        "metric": "{metric} of {service} between {start} and {end} peaked at {peak} ({peak_at}), averaging {avg}; "
        "the baseline before averaged {base_avg}{factor}",
        "inference": "The change at {change_time} ({message}) came before the {metric} anomaly; "
        "inferred to be directly related to it",
        "hypothesis": "{cause} (from runbook {runbook})",
        "basis": "Runbook '{title}' matches what was observed; the runbook itself is not evidence of this incident",
        "no_data": "{tool} ({args}) returned no data: {reason}",
        "error": "{tool} ({args}) failed: {reason}",
        "no_anomaly": "No metric of {service} deviated clearly from its baseline between {start} and {end}",
        "no_service": "The question names no service this environment knows, so nothing could be targeted",
    },
}


@dataclass
class _Evidence:
    claims: list[dict[str, Any]] = field(default_factory=list)
    #: claim id → HH:MM:SS of the change it reports (for the root-cause inference)
    change_times: dict[str, str] = field(default_factory=dict)
    hypotheses: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def claim(self, claim_type: str, text: str, result: ToolCallResult, excerpt: str, level: str = "direct") -> None:
        self.claims.append(
            {
                "claim_id": f"claim-{len(self.claims) + 1}",
                "claim_type": claim_type,
                "claim_text": text,
                "support_level": level,
                "evidence_bindings": [
                    {
                        "source_type": "tool_trace",
                        "source_id": f"invocation-{result.invocation_id}",
                        "tool_name": result.tool_name,
                        "source_invocation_ids": [result.invocation_id],
                        "evidence_excerpt": excerpt,
                    }
                ],
            }
        )


@dataclass
class _Run:
    """One execution: where tool calls go and where what they show is collected."""

    runner: Any
    slots: dict[str, str]
    evidence: _Evidence
    text: dict[str, str]


class OfflineExecutor:
    name = "offline"

    def __init__(self, catalogue: Catalogue | None = None) -> None:
        self.catalogue = catalogue

    def execute(self, request: ExecuteRequest) -> RoleReply:
        lang = "zh" if request.lang == "zh" else "en"
        text = _TEXT[lang]
        plan = request.plan
        evidence = _Evidence()
        runner = request.tools
        service = plan.get("service")
        if runner is None or not plan.get("steps"):
            evidence.missing.append(text["no_service"] if runner else "no tools are configured")
            return self._reply(evidence)
        if not service:
            evidence.missing.append(text["no_service"])
        slots = {"service": service or "", "order_id": plan.get("order_id") or "", "question": request.question}
        broad = (plan["start"], plan["end"])
        steps = [s for s in plan["steps"] if not s.get("when") or slots.get(s["when"])]
        run = _Run(runner, slots, evidence, text)

        called = [self._call(run, "query_logs", s, broad) for s in steps if s["tool"] == "query_logs"]
        logs = [result for result in called if result is not None]
        burst = self._incident_burst(logs, service, bool(plan.get("explicit_time")))
        window = self._window_around(burst, broad)
        metrics = [
            result for step in steps if step["tool"] == "query_metrics" for result in self._metrics(run, step, window)
        ]
        self._log_claims(logs, slots, evidence, text, burst)
        anomalies = self._metric_claims(metrics, evidence, text)
        if service and metrics and not anomalies:
            evidence.missing.append(
                text["no_anomaly"].format(service=service, start=_hhmm(window[0]), end=_hhmm(window[1]))
            )
        self._inference(evidence, anomalies, text)
        # Runbooks are looked up with what was seen (error codes, anomalous metrics), not only the question.
        seen = [e.text for c in evidence.claims for e in extract_entities(c["claim_text"]) if e.kind == "error_code"]
        seen += [str(a["metric"]).replace("_", " ") for a in anomalies]
        slots["question"] = " ".join(dict.fromkeys(seen)) if seen else request.question
        knowledge = [self._call(run, "lookup_knowledge", s, None) for s in steps if s["tool"] == "lookup_knowledge"]
        for result in knowledge:
            if result is not None:
                self._runbook(result, evidence, text, lang)
        return self._reply(evidence)

    # -- calls ----------------------------------------------------------------------------

    @staticmethod
    def _fill(args: dict[str, Any], slots: dict[str, str]) -> dict[str, Any]:
        filled = {}
        for key, raw in args.items():
            value = raw.format(**slots) if isinstance(raw, str) else raw
            if value not in ("", None):
                filled[key] = value
        return filled

    def _call(
        self, run: _Run, tool: str, step: dict[str, Any], window: tuple[str, str] | None
    ) -> ToolCallResult | None:
        args = self._fill(step.get("args", {}), run.slots)
        if tool != "lookup_knowledge":
            if window:
                start = _parse(window[0]) - timedelta(minutes=int(step.get("lookback_minutes") or 0))
                args.update(start=_iso(start), end=window[1])
            if "service" in step.get("args", {}) and "service" not in args:
                return None  # the step is about a service the question did not give
        result: ToolCallResult = run.runner.run(tool, args)
        if result.status != "ok":
            reason = (result.output.error or result.output.text or "").split("\n")[0][:160]
            key = "error" if result.status == "error" else "no_data"
            summary = ", ".join(f"{k}={v}" for k, v in args.items() if k not in ("start", "end"))
            run.evidence.missing.append(run.text[key].format(tool=tool, args=summary, reason=reason))
            return None
        return result

    def _metrics(self, run: _Run, step: dict[str, Any], window: tuple[str, str]) -> list[ToolCallResult]:
        if step.get("args"):
            found = self._call(run, "query_metrics", step, window)
            return [found] if found else []
        service = run.slots["service"]
        if not service:
            return []
        available = [m for _s, m, _u in self.catalogue.metrics(service)] if self.catalogue else None
        wanted = step.get("metrics")
        if wanted == "discover":
            names = available or []
        else:
            names = [m for m in wanted or [] if available is None or m in available]
        results = []
        for metric in names[:8]:
            found = self._call(run, "query_metrics", {"args": {"service": "{service}", "metric": metric}}, window)
            if found:
                results.append(found)
        return results

    @staticmethod
    def _incident_burst(logs: list[ToolCallResult], service: str | None, explicit_time: bool) -> list[Any] | None:
        """The burst of the service's ERROR/WARN lines the question is about: the first one after
        the time it names, else the largest. ``[first, last, count]``."""
        bursts: list[list[Any]] = []
        for result in logs:
            request = result.output.text.split("\n", 1)[0]
            if f"service={service}" in request.split() and re.search(r"level=(ERROR|WARN)\b", request):
                bursts += result.output.retrieval_details.get("bursts") or []
        if not bursts:
            return None
        if explicit_time:
            substantial = [b for b in bursts if b[2] >= 3] or bursts
            return min(substantial, key=lambda b: b[0])
        return max(bursts, key=lambda b: b[2])

    @staticmethod
    def _window_around(burst: list[Any] | None, broad: tuple[str, str]) -> tuple[str, str]:
        if burst is None:
            return broad
        start = _parse(burst[0]) - timedelta(minutes=5)
        start = start.replace(minute=start.minute - start.minute % 5, second=0, microsecond=0)
        end = _parse(burst[1]).replace(second=0, microsecond=0) + timedelta(minutes=2)
        return max(_iso(start), broad[0]), min(_iso(end), broad[1])

    # -- claims -----------------------------------------------------------------------------

    @staticmethod
    def _log_claims(
        logs: list[ToolCallResult],
        slots: dict[str, str],
        evidence: _Evidence,
        text: dict[str, str],
        incident: list[Any] | None,
    ) -> None:
        seen_changes: set[str] = set()
        for result in logs:
            details = result.output.retrieval_details
            request_line = result.output.text.split("\n", 1)[0]
            start = re.search(r"start=(\S+)", request_line)
            end = re.search(r"end=(\S+)", request_line)
            service = re.search(r"service=(\S+)", request_line)
            order_query = slots["order_id"] and f"order {slots['order_id']}" in request_line.replace("'", "")
            for line in [row for row in result.output.text.split("\n") if _LINE_TS.match(row) and _CHANGE.search(row)][
                :3
            ]:
                message = _message(line)
                if message in seen_changes:
                    continue
                seen_changes.add(message)
                svc = line.split()[2] if len(line.split()) > 2 else (service.group(1) if service else "")
                change_text = text["change"].format(time=line[11:19], service=svc, message=message)
                evidence.claim("change", change_text, result, message)
                evidence.change_times[evidence.claims[-1]["claim_id"]] = line[11:19]
            if order_query:
                token = re.compile(rf"(?<![\w-]){re.escape(slots['order_id'])}(?![\w-])")
                order_lines = [
                    row for row in result.output.text.split("\n") if _LINE_TS.match(row) and token.search(row)
                ]
                for line in order_lines[:3]:
                    evidence.claim(
                        "symptom",
                        text["order"].format(order=slots["order_id"], time=line[11:19], message=_message(line)),
                        result,
                        _message(line),
                    )
                continue
            patterns = details.get("patterns") or []
            levels = details.get("by_level") or {}
            if not patterns or not (set(levels) & {"ERROR", "WARN"}) or not (start and end):
                continue
            level = max(levels, key=lambda k: levels[k])
            top = patterns[0]
            message = _message(top["example"])
            if _CHANGE.search(top["example"]):
                continue
            bursts = details.get("bursts") or []
            burst = incident if incident in bursts else max(bursts, key=lambda b: b[2]) if bursts else None
            if burst is None:
                continue
            if burst[2] < 3:  # scattered lines, no real burst: describe them all
                burst = [bursts[0][0], bursts[-1][1], details["matched"]]
            claim_text = text["log"].format(
                service=service.group(1) if service else "",
                start=_hhmm(burst[0]),
                end=_hhmm(burst[1]),
                burst=burst[2],
                matched=details["matched"],
                level=level,
                count=top["count"],
                message=message,
            )
            evidence.claim("symptom", claim_text, result, message)

    @staticmethod
    def _metric_claims(
        metrics: list[ToolCallResult], evidence: _Evidence, text: dict[str, str]
    ) -> list[dict[str, Any]]:
        anomalies = []
        for result in metrics:
            lines = result.output.text.split("\n")
            details = result.output.retrieval_details
            window_line = next((row for row in lines if row.startswith("window: ")), None)
            baseline_line = next((row for row in lines if row.startswith("baseline ")), None)
            change_line = next((row for row in lines if row.startswith("change: ")), "")
            before, after = details.get("baseline_avg"), details.get("avg")
            if window_line is None or baseline_line is None or before is None or after is None:
                continue
            ratio = (after / before) if before else (float("inf") if after else 1.0)
            if 1 / _ANOMALY_FACTOR < ratio < _ANOMALY_FACTOR:
                continue
            request = lines[0]
            service = re.search(r"service=(\S+)", request)
            metric = re.search(r"metric=(\S+)", request)
            start, end = details["window"]
            stats = dict(re.findall(r"(min|max|avg|last) ([^,;(]+?)(?:,|;| \()", window_line))
            base = dict(re.findall(r"(min|max|avg|last) ([^,;(]+?)(?:,|;| \()", baseline_line.split(": ", 1)[1]))
            peak = re.search(r"peak (.+?) at \d{4}-\d{2}-\d{2}T(\d{2}:\d{2})", window_line)
            factor = re.search(r"\(×([\d.]+)\)", change_line)
            claim_text = text["metric"].format(
                service=service.group(1) if service else "",
                metric=metric.group(1) if metric else "",
                start=_hhmm(start),
                end=_hhmm(end),
                peak=peak.group(1) if peak else stats.get("max", ""),
                peak_at=peak.group(2) if peak else "",
                avg=stats.get("avg", ""),
                base_avg=base.get("avg", ""),
                factor=f"（×{factor.group(1)}）"
                if factor and text is _TEXT["zh"]
                else f" (×{factor.group(1)})"
                if factor
                else "",
            )
            evidence.claim("symptom", claim_text, result, window_line)
            anomalies.append(
                {"result": result, "metric": metric.group(1) if metric else "", "peak_at": details.get("peak_at")}
            )
        return anomalies

    @staticmethod
    def _inference(evidence: _Evidence, anomalies: list[dict[str, Any]], text: dict[str, str]) -> None:
        """A change logged before a metric anomaly: a root-cause *inference*, cited to the change line."""
        changes = [c for c in evidence.claims if c["claim_type"] == "change"]
        if not changes or not anomalies:
            return
        first = anomalies[0]
        for change in changes:
            time = evidence.change_times.get(change["claim_id"], "")
            if not time or not first["peak_at"] or time > first["peak_at"][11:19]:
                continue
            change_binding = change["evidence_bindings"][0]
            message = change_binding["evidence_excerpt"]
            result: ToolCallResult = first["result"]
            metric_binding = {
                "source_type": "tool_trace",
                "source_id": f"invocation-{result.invocation_id}",
                "tool_name": result.tool_name,
                "source_invocation_ids": [result.invocation_id],
                "evidence_excerpt": next(row for row in result.output.text.split("\n") if row.startswith("window: ")),
            }
            evidence.claims.append(
                {
                    "claim_id": f"claim-{len(evidence.claims) + 1}",
                    "claim_type": "root_cause",
                    "support_level": "indirect",
                    "claim_text": text["inference"].format(change_time=time, message=message, metric=first["metric"]),
                    "evidence_bindings": [change_binding, metric_binding],
                }
            )
            return

    @staticmethod
    def _runbook(result: ToolCallResult, evidence: _Evidence, text: dict[str, str], lang: str) -> None:
        documents = result.output.retrieval_details.get("documents") or []
        if not documents:
            return
        top = documents[0]
        body = result.output.text
        start = body.find(f"[1] {top['id']}")
        end = body.find("\n[2] ", start)
        section = body[start : end if end > 0 else len(body)]
        causes = _numbered(section, "可能原因", "Possible causes", lang)
        steps = _numbered(section, "排查步骤", "Steps", lang)
        for cause in causes[:2]:
            evidence.hypotheses.append(
                {
                    "hypothesis_text": text["hypothesis"].format(cause=cause, runbook=top["id"]),
                    "basis": text["basis"].format(title=top["title"]),
                    "needed_evidence": steps[:3] or [top["title"]],
                }
            )
        for step in steps[:3]:
            evidence.actions.append({"action_text": step, "reason": f"runbook {top['id']}", "evidence_bindings": []})

    @staticmethod
    def _reply(evidence: _Evidence) -> RoleReply:
        output = {
            "answer_version": "executor_evidence_v2",
            "claims": evidence.claims,
            "hypotheses": evidence.hypotheses,
            "recommended_actions": evidence.actions,
            "missing_info": evidence.missing,
        }
        return RoleReply(text=json.dumps(output, ensure_ascii=False), engine="offline")


def _numbered(section: str, zh_heading: str, en_heading: str, lang: str) -> list[str]:
    """The numbered lines under a runbook heading, in the answer's language when the
    runbook has it: bundled runbooks carry ``## 排查步骤`` and ``## Steps`` sections; a
    user's runbook in one language (or with one bilingual heading) serves both."""
    lines = section.split("\n")
    headings = [(i, line[3:]) for i, line in enumerate(lines) if line.startswith("## ")]
    own, other = (zh_heading, en_heading) if lang == "zh" else (en_heading, zh_heading)
    preferred = [i for i, title in headings if own in title and (lang == "zh" or not has_cjk(title))]
    fallback = [i for i, title in headings if own in title or other in title]
    start = next(iter(preferred or fallback), None)
    if start is None:
        return []
    found = []
    for line in lines[start + 1 :]:
        if line.startswith("## ") or line.startswith("[2] "):
            break
        match = re.match(r"^\s*(?:\d+\.|-)\s+(.*)$", line)
        if match:
            found.append(match.group(1).strip())
    return found
