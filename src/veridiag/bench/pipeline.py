"""Pipeline benchmark (issue #4): the deterministic cost of one session — everything but
model calls — with 20 claims over 10 invocations, persisted to SQLite.

Roles are scripted (their replies are ready), so what is timed is: session and invocation
writes, parse, trace summary, Gatekeeper, verifier parsing, guardrails, composer input,
composer guard and the final write of the audit chain.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from veridiag.agents import scripted_roles
from veridiag.bench.gatekeeper import _log_line
from veridiag.bench.stats import percentile
from veridiag.pipeline import DiagnosisPipeline, PipelineOptions
from veridiag.store import SessionStore

OUTPUT_CHARS = 8000


def _scenario(seed: int = 11) -> tuple[list[str], str, str, str]:
    rng = random.Random(seed)
    outputs = []
    for _ in range(10):
        lines: list[str] = []
        while sum(len(line) + 1 for line in lines) < OUTPUT_CHARS:
            lines.append(_log_line(rng))
        outputs.append("\n".join(lines))
    claims, checks = [], []
    for index in range(20):
        first, second = index % 10, (index + 3) % 10
        bindings = []
        for position in (first, second):
            line = rng.choice(outputs[position].split("\n"))
            start = line.find(" ", 25) + 1
            bindings.append(
                {
                    "source_type": "tool_trace",
                    "tool_name": "query_logs",
                    "source_invocation_ids": [1 + position],
                    "evidence_excerpt": line[start : start + 70].strip(),
                }
            )
        claim_id = f"claim-{index + 1}"
        claims.append(
            {
                "claim_id": claim_id,
                "claim_type": "symptom",
                "support_level": "direct",
                "claim_text": f"日志显示：{bindings[0]['evidence_excerpt'][:50]}",
                "evidence_bindings": bindings,
            }
        )
        checks.append({"claim_id": claim_id, "verification": "direct_observation", "detail": "quoted"})
    executor = json.dumps({"answer_version": "executor_evidence_v2", "claims": claims}, ensure_ascii=False)
    verifier = json.dumps(
        {
            "verdict": "PASS",
            "groundedness_score": 0.95,
            "claim_checks": checks,
            "rationale": "每条结论都有日志原文支撑。",
        },
        ensure_ascii=False,
    )
    composer = json.dumps(
        {
            "answer_summary": "日志显示多条请求异常。",
            "recommended_actions": [],
            "user_facing_answer": claims[0]["claim_text"],
        },
        ensure_ascii=False,
    )
    return outputs, executor, verifier, composer


class PipelineBench(BaseModel):
    """Latency of one whole session (ms) over ``sessions`` runs after a warm-up, and its shape."""

    p50_ms: float
    p99_ms: float
    sessions_per_s: float
    sessions: int
    claims: int
    invocations: int
    output_chars: int
    #: Every verdict the sessions reached (``none`` for a failed one): one, when all is well.
    verdicts: list[str]


class Recorder:
    """What a session's tools do before the chain reads them: persist their invocations (counted
    in the bench too), numbered on from the last session's (``next_id``: the first id of the next)."""

    def __init__(self, store: SessionStore, outputs: list[str]) -> None:
        self._store, self._outputs = store, outputs
        self.next_id = 1

    def __call__(self, session_id: str) -> None:
        for output in self._outputs:
            self._store.record_invocation(
                session_id=session_id,
                tool_name="query_logs",
                arguments={"service": "x"},
                status="ok",
                output=output,
                invocation_id=self.next_id,
            )
            self.next_id += 1


def run(sessions: int = 60) -> PipelineBench:
    outputs, executor, verifier, composer = _scenario()
    with tempfile.TemporaryDirectory(prefix="veridiag-bench-") as tmp:
        store = SessionStore(f"sqlite:///{Path(tmp) / 'store.db'}")
        setup = Recorder(store, outputs)

        samples: list[float] = []
        verdicts: set[str | None] = set()
        for index in range(sessions + 3):
            # Each session cites the ids its own setup will get.
            base = setup.next_id - 1
            cited = _shift_ids(executor, base)
            roles = scripted_roles(executor=cited, verifier=verifier, composer=composer)
            pipeline = DiagnosisPipeline(store, roles, options=PipelineOptions(max_rounds=1))
            started = time.perf_counter()
            result = pipeline.run("为什么下单接口报错？", on_session=setup)
            elapsed = (time.perf_counter() - started) * 1000
            if index >= 3:  # warm-up
                samples.append(elapsed)
                verdicts.add(result.verdict)
        store.close()
    p50 = statistics.median(samples)
    return PipelineBench(
        p50_ms=round(p50, 3),
        p99_ms=round(percentile(samples, 0.99), 3),
        sessions_per_s=round(1000 / p50, 1),
        sessions=len(samples),
        claims=20,
        invocations=10,
        output_chars=OUTPUT_CHARS,
        verdicts=sorted(v or "none" for v in verdicts),
    )


def _shift_ids(executor: str, base: int) -> str:
    data = json.loads(executor)
    for claim in data["claims"]:
        for binding in claim["evidence_bindings"]:
            binding["source_invocation_ids"] = [base + i for i in binding["source_invocation_ids"]]
    return json.dumps(data, ensure_ascii=False)
