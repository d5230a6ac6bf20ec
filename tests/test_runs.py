"""Per-run state: the pipeline is shared by concurrent diagnoses, so a run's progress, timings
and failure report live on its own ``DiagnosisRun``; the pipeline object never changes."""

from __future__ import annotations

import copy
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from veridiag.agents.engines import offline_roles
from veridiag.pipeline import DiagnosisPipeline
from veridiag.store import SessionStore
from veridiag.tools import Toolbox
from veridiag.tools.args import QueryLogsArgs, QueryMetricsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.results import ToolOutput

QUESTIONS = [
    "订单123支付失败，帮我看看是什么原因",
    "Why is checkout slow since 10:00?",
    "Why does /api/cart return 504 since 08:10?",
    "库存服务今天上午为什么报错",
]


class SlowEnvironment:
    """The demo data, each log and metric query a little slow, so concurrent runs interleave
    their tool calls (and so their progress events) instead of finishing one by one."""

    def __init__(self, env: EmbeddedEnvironment, delay: float = 0.01) -> None:
        self.env = env
        self.delay = delay

    def query_logs(self, args: QueryLogsArgs) -> ToolOutput:
        time.sleep(self.delay)
        return self.env.query_logs(args)

    def query_metrics(self, args: QueryMetricsArgs) -> ToolOutput:
        time.sleep(self.delay)
        return self.env.query_metrics(args)


def _pipeline(tmp_path: Path, env: EmbeddedEnvironment) -> DiagnosisPipeline:
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    slow = SlowEnvironment(env)
    toolbox = Toolbox(logs=slow, metrics=slow, knowledge=env, changes=env)  # type: ignore[arg-type]
    return DiagnosisPipeline(store, offline_roles(env, store), toolbox=toolbox)


def test_runs_change_no_attribute_of_the_pipeline(tmp_path: Path, demo_env: EmbeddedEnvironment) -> None:
    pipeline = _pipeline(tmp_path, demo_env)
    before = dict(pipeline.__dict__)
    values = {key: copy.deepcopy(value) for key, value in before.items() if key in ("options", "known_services")}

    def boom(_session: str) -> None:
        raise RuntimeError("setup failed")

    heard: list[str] = []
    pipeline.run(QUESTIONS[0], progress=lambda stage, _d: heard.append(stage))
    pipeline.run(QUESTIONS[1])
    failed = pipeline.run(QUESTIONS[2], on_session=boom, progress=lambda stage, _d: heard.append(stage))
    assert failed.status == "failed" and "done" in heard and heard[-1] == "failed"
    assert pipeline.__dict__.keys() == before.keys()
    assert all(pipeline.__dict__[key] is value for key, value in before.items()), "an attribute was replaced"
    assert {key: pipeline.__dict__[key] for key in values} == values, "an attribute was changed in place"


def test_threaded_runs_hear_only_their_own_events(tmp_path: Path, demo_env: EmbeddedEnvironment) -> None:
    """Eight diagnoses at once on one pipeline: every event a run's listener hears names that
    run's session, and its tool events are exactly that session's invocations."""
    pipeline = _pipeline(tmp_path, demo_env)
    barrier = threading.Barrier(8)

    def one(index: int) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
        events: list[tuple[str, dict[str, Any]]] = []
        barrier.wait()
        result = pipeline.run(
            f"{QUESTIONS[index % len(QUESTIONS)]} [t{index}]", progress=lambda s, d: events.append((s, d))
        )
        assert result.status == "completed", result.error
        return result.session_id, events

    with ThreadPoolExecutor(max_workers=8) as pool:
        runs = list(pool.map(one, range(8)))
    assert len({session for session, _ in runs}) == 8
    for session_id, events in runs:
        stages = [stage for stage, _ in events]
        assert stages[0] == "session" and stages[-1] == "done" and "tool" in stages
        foreign = [(stage, d.get("session_id")) for stage, d in events if d.get("session_id") != session_id]
        assert not foreign, f"{session_id} heard another run's events: {foreign[:3]}"
        heard = [d["invocation_id"] for stage, d in events if stage == "tool"]
        assert heard == [i.id for i in pipeline.store.list_invocations(session_id)]
