"""Runs evidence tools for a session and persists each call **before** returning its id.

Every call ends as a ``tool_invocation`` row — bad arguments, an unknown tool, a backend
that is down or slow included (status ``error``, with the reason) — so the Executor can
only cite what exists, and the audit shows what was tried. Secrets are redacted right after
the backend returns (``veridiag.redaction``): the stored output *is* the redacted text, and
the records the offline engine quotes are redacted the same way.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypedDict

from pydantic import BaseModel, ValidationError

from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.contracts.parsing import MAX_DEPTH, read_json, too_deep
from veridiag.contracts.sanitize import clean_data, clean_text
from veridiag.redaction import Redactor, default_redactor
from veridiag.store import SessionStore
from veridiag.tools.args import (
    TOOL_ARGS,
    LookupKnowledgeArgs,
    QueryChangesArgs,
    QueryLogsArgs,
    QueryMetricsArgs,
    QueryTracesArgs,
    RankSuspectsArgs,
)
from veridiag.tools.backends import ChangeBackend, KnowledgeBackend, LogBackend, MetricBackend, TraceBackend
from veridiag.tools.drawn import drawn_records, stored_form
from veridiag.tools.results import ToolCallResult, ToolOutput
from veridiag.tools.spans import TraceQuery
from veridiag.tools.suspects import SuspectSearch

_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="veridiag-tool")

DESCRIPTIONS = {
    "query_logs": "Search log lines of a service in a time window: match counts, recurring patterns with a "
    "verbatim example line, and the lines themselves. 按服务、关键词、级别、时间窗口查询日志。",
    "query_metrics": "A metric series of a service in a time window with min/max/avg/last, peak time and the "
    "change against the window just before. 查询指标序列及其与基线的对比。",
    "query_changes": "Deploys, configuration changes, restarts and scaling recorded for a service in a time window "
    "(from the change feed, not from log text). 查询某服务在时间窗口内的发布、配置变更、重启与扩缩容记录。",
    "lookup_knowledge": "Search runbooks and known issues. Matches suggest hypotheses and checks; they are not "
    "evidence of what happened. 检索排障手册（结果只能作为假设）。",
    "rank_suspects": "Survey every service with data in a window (or the services given): each metric series "
    "against its own history, new ERROR/WARN log templates, recorded changes, the call graph; ranks the services by "
    "how much they changed, what it measures (own CPU/memory/pool/errors before latency) and how near the moment "
    "asked it began, and says whether one stands out. 找出窗口内变化的服务并按可能的源头排序。",
    "query_traces": "A service's spans in a time window against its own spans before it: span count, error rate, "
    "duration p50/p90/p99 and self time (its own work, less the calls it waits on) p50/p90, its callers and callees "
    "with call and error counts, and the slowest traces with their critical path. With trace_id (as a log line "
    "states it): that one trace — the services it reached in order, what the service called, its critical path. "
    "查询某服务在时间窗口内的链路数据（与其此前的链路对比）：调用量、错误率、耗时与自身耗时分位数、调用关系、最慢链路的关键路径；"
    "给出 trace_id（日志行中的 TraceID）时查看这一条链路。",
}


@dataclass(frozen=True)
class Toolbox:
    """The backends serving each tool, and the redactor their output passes through."""

    logs: LogBackend
    metrics: MetricBackend
    knowledge: KnowledgeBackend
    changes: ChangeBackend
    timeout_seconds: float = 20.0
    #: Where ``query_traces`` reads spans (None: no trace backend, the tool says so).
    traces: TraceBackend | None = None
    redactor: Redactor = field(default_factory=default_redactor)
    #: Called by ``close``: the ClickHouse backend's clients.
    closers: tuple[Callable[[], None], ...] = ()

    def close(self) -> None:
        """Close what the backends keep open beyond the embedded file (closed with its environment)."""
        for close in self.closers:
            close()

    def call(self, tool_name: str, args: BaseModel) -> ToolOutput:
        if isinstance(args, QueryLogsArgs):
            return self.logs.query_logs(args)
        if isinstance(args, QueryMetricsArgs):
            return self.metrics.query_metrics(args)
        if isinstance(args, QueryChangesArgs):
            return self.changes.query_changes(args)
        if isinstance(args, LookupKnowledgeArgs):
            return self.knowledge.lookup_knowledge(args)
        if isinstance(args, RankSuspectsArgs):
            return SuspectSearch(self.metrics, self.logs, self.changes, now=_clock(self.metrics)).run(args)
        if isinstance(args, QueryTracesArgs):
            if self.traces is None:
                return _error("query_traces: no trace backend is configured")
            return TraceQuery(self.traces, now=_clock(self.traces)).run(args)
        raise TypeError(f"no backend for {tool_name}")


class ToolSpec(TypedDict):
    name: str
    description: str
    #: The arguments' JSON Schema.
    parameters: JsonObject


def tool_specs() -> list[ToolSpec]:
    """Name, description and JSON Schema of each tool, for LLM tool calling."""
    return [
        {"name": name, "description": DESCRIPTIONS[name], "parameters": model.model_json_schema()}
        for name, model in TOOL_ARGS.items()
    ]


def _clock(backend: object) -> datetime:
    """The backend's clock (imported history ends when its data does), else the wall clock."""
    now = getattr(backend, "now", None)
    found = now() if callable(now) else None
    return found if isinstance(found, datetime) else datetime.now(UTC)


def _clean(text: str) -> str:
    """Text any database accepts: no NUL, no lone surrogates."""
    return text.replace("\x00", "\ufffd").encode("utf-8", "replace").decode("utf-8")


class ToolRunner:
    """Runs tools for one session and round."""

    def __init__(
        self,
        store: SessionStore,
        toolbox: Toolbox,
        session_id: str,
        round: int = 1,
        on_call: Callable[[ToolCallResult], None] | None = None,
        *,
        redactor: Redactor | None = None,
    ) -> None:
        self.store = store
        self.toolbox = toolbox
        self.session_id = session_id
        self.round = round
        self.on_call = on_call
        #: The session's (``Redactor.for_session``: a run's, shared by its rounds), else one of
        #: the runner's own: a value found with its key is gone from the rest of its output too.
        self.redactor = redactor or toolbox.redactor.for_session()

    def run(self, tool_name: str, arguments: Mapping[str, JsonValue] | str | None) -> ToolCallResult:
        started_at = datetime.now(UTC)
        clock = time.perf_counter()
        raw_args, output = self._execute(tool_name, arguments)
        latency = (time.perf_counter() - clock) * 1000
        raw_args, output = redact_call(self.redactor, raw_args, output)
        record = self._persist(tool_name, raw_args, output, started_at, latency)
        result = ToolCallResult(
            invocation_id=record.id, tool_name=record.tool_name, status=record.status, output=output
        )
        if self.on_call is not None:
            self.on_call(result)
        return result

    def _execute(
        self, tool_name: str, arguments: Mapping[str, JsonValue] | str | None
    ) -> tuple[JsonObject, ToolOutput]:
        """The arguments as given (JSON from a model: kept even when they are no object) and the
        tool's output, or an error output saying what was wrong."""
        given: Mapping[str, JsonValue] | JsonValue = arguments or {}
        if isinstance(given, str):
            text = given
            try:  # as strictly as a role's document: NaN, a duplicate key or deep nesting is no call
                given = read_json(text) if text.strip() else {}
            except ValueError as exc:
                return {"_raw": text[:2000]}, _error(f"arguments are not JSON: {exc}")
        if not isinstance(given, Mapping):
            return {"_raw": str(given)[:2000]}, _error("arguments must be a JSON object")
        if too_deep(given):  # a model's SDK read it; no validator, copy or store can recurse through it
            return {"_raw": "…"}, _error(f"arguments are not JSON: nesting too deep (more than {MAX_DEPTH} levels)")
        raw: JsonObject = dict(given)
        model = TOOL_ARGS.get(tool_name)
        if model is None:
            return raw, _error(f"unknown tool {tool_name!r}; tools: {', '.join(TOOL_ARGS)}")
        try:
            args = model.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            return raw, _error(f"invalid arguments for {tool_name}: {problems}")
        future = _POOL.submit(self.toolbox.call, tool_name, args)
        try:
            return raw, future.result(timeout=self.toolbox.timeout_seconds)
        except FutureTimeout:
            return raw, _error(f"{tool_name} timed out after {self.toolbox.timeout_seconds:g}s")
        except Exception as exc:  # a backend bug must not end the session: record it
            return raw, _error(f"{tool_name} failed: {exc.__class__.__name__}: {exc}")

    def _persist(
        self,
        tool_name: str,
        raw_args: JsonObject,
        output: ToolOutput,
        started_at: datetime,
        latency: float,
    ) -> InvocationRecord:
        arguments = json.loads(_clean(json.dumps(raw_args, ensure_ascii=False, default=str)))
        details = json.loads(_clean(json.dumps(output.retrieval_details, ensure_ascii=False, default=str)))
        text = _clean(output.text)
        drawn = drawn_records(tool_name, text, output.evidence, clean=_clean) if output.status == "ok" else None
        return self.store.record_invocation(
            session_id=self.session_id,
            tool_name=_clean(tool_name)[:64],
            arguments=arguments,
            status=output.status,
            output=text,
            retrieval_details=details,
            error=_clean(output.error) if output.error else None,
            round=self.round,
            started_at=started_at,
            latency_ms=round(latency, 3),
            drawn=stored_form(drawn),
        )


def redact_call(redactor: Redactor, arguments: JsonObject, output: ToolOutput) -> tuple[JsonObject, ToolOutput]:
    """The call as it may be kept and shown, at the one tool boundary (the runner's and the eval
    runner's): redacted (``_redacted``), then sanitised (``_sanitised``)."""
    return _sanitised(*_redacted(redactor, arguments, output))


def _redacted(redactor: Redactor, arguments: JsonObject, output: ToolOutput) -> tuple[JsonObject, ToolOutput]:
    """The call as it may be kept: text, model text, error, retrieval details, every string of
    the typed records and the arguments (a model may put a secret in a query), redacted.

    The replacements made in what is stored are counted into ``retrieval_details["redactions"]``
    (``{"total": n, "by_kind": {…}}``) — only when there were some: the Gatekeeper grounds a
    claim's numbers in retrieval details too, and a ``0`` on every call is no tool's fact.
    Strings that restate lines of the stored text (the model text, the records, a pattern's
    example) take those lines' redaction and are not counted again.
    """
    if not redactor.enabled:
        return arguments, output
    counts: Counter[str] = Counter()
    found = redactor.scan(output.text)
    counts.update(dict(found.counts))
    known = redactor.line_map(output.text, found)
    error = output.error
    if error is not None:
        error = redactor.redact_data(error, counts if error not in output.text else None)
    details = redactor.redact_data(output.retrieval_details, counts, known)
    arguments = redactor.redact_data(arguments, counts)
    model_text = redactor.redact_data(output.model_text, known=known)
    evidence = redactor.redact_data(output.evidence, known=known)
    if counts:
        details = {
            **details,
            "redactions": {"total": sum(counts.values()), "by_kind": dict(sorted(counts.items()))},
        }
    update = {
        "text": found.text,
        "model_text": model_text,
        "error": error,
        "retrieval_details": details,
        "evidence": evidence,
    }
    return arguments, output.model_copy(update=update)


def _sanitised(arguments: JsonObject, output: ToolOutput) -> tuple[JsonObject, ToolOutput]:
    """The call with control characters, bidi controls and lone surrogates out of every text a
    model or a person reads (``contracts/sanitize.py``); after redaction, which marks bidi
    overrides it finds as ``[REDACTED:bidi-control]``."""
    details = clean_data(output.retrieval_details)
    update = {
        "text": clean_text(output.text),
        "model_text": None if output.model_text is None else clean_text(output.model_text),
        "error": None if output.error is None else clean_text(output.error),
        "retrieval_details": details,
        "evidence": clean_data(output.evidence),
    }
    cleaned = clean_data(arguments)
    return cleaned, output.model_copy(update=update)


def _error(message: str) -> ToolOutput:
    return ToolOutput(status="error", text=f"error: {message}", error=message)
