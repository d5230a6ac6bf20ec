"""What an SRE scrapes from ``GET /metrics``: sessions by verdict, Gatekeeper failures by rule,
answer sources, stage latencies, rejected requests. One registry per app (tests build many)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from veridiag.pipeline.service import DiagnosisResult

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class ServiceMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.sessions = Counter(
            "veridiag_sessions",
            "Diagnoses finished, by verdict and status.",
            ["verdict", "status"],
            registry=self.registry,
        )
        self.unverified_sessions = Counter(
            "veridiag_unverified_session_cookies",
            "Session cookies refused because the store could not say whether they were signed out.",
            registry=self.registry,
        )
        self.gatekeeper_failures = Counter(
            "veridiag_gatekeeper_failed_rules",
            "Gatekeeper rule failures in final rounds, by rule id.",
            ["rule"],
            registry=self.registry,
        )
        self.answer_source = Counter(
            "veridiag_answer_source",
            "Who wrote the final answer: composer, template or failure.",
            ["source"],
            registry=self.registry,
        )
        self.fallbacks = Counter(
            "veridiag_role_fallbacks",
            "Roles that fell back to the offline engine, by role.",
            ["role"],
            registry=self.registry,
        )
        self.stage_latency = Histogram(
            "veridiag_stage_latency_seconds",
            "Latency of each pipeline stage.",
            ["stage"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.rejected = Counter(
            "veridiag_rejected_requests",
            "Requests rejected before any diagnosis ran, by reason.",
            ["reason"],
            registry=self.registry,
        )

    def observe(self, result: DiagnosisResult, total_seconds: float) -> None:
        self.sessions.labels(result.verdict or "none", result.status).inc()
        self.answer_source.labels(result.answer_source).inc()
        record = result.record  # a failed run has none: only its total time is observed
        if record is not None:
            gatekeeper = record.verifier_evaluation.gatekeeper_result
            for rule in gatekeeper.failed_rules if gatekeeper else []:
                self.gatekeeper_failures.labels(rule).inc()
            for fallback in record.usage.fallbacks:
                self.fallbacks.labels(fallback.role).inc()
            for name, ms in record.timings_ms.items():
                self.stage_latency.labels(name.removesuffix("_ms")).observe(ms / 1000)
            for round_record in record.rounds:
                for name, ms in round_record.latency_ms.items():
                    self.stage_latency.labels(name.removesuffix("_ms")).observe(ms / 1000)
        self.stage_latency.labels("total").observe(total_seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
