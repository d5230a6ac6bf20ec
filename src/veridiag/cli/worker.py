"""``veridiag worker``: runs the alert intake's queued diagnoses (several may share one store)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable
from typing import Annotated

import typer

from veridiag.cli.common import err, fail, settings, started_once


def worker(
    concurrency: Annotated[
        int | None, typer.Option(min=1, max=64, help="Diagnoses at once (default: alerts.serve_workers, at least 1).")
    ] = None,
) -> None:
    """Run queued alert diagnoses until stopped (Ctrl-C / SIGTERM); an unfinished one is taken
    again by another worker once its lease runs out."""
    # Started as ``serve`` is (``started_once``): what start-up built is frozen before the first
    # diagnosis, so a full collection does not walk it (issue 15).
    with started_once(collect=True) as started:
        _work(concurrency, started)


def _work(concurrency: int | None, started: Callable[[], None]) -> None:
    from veridiag.agents.llm import LLMConfigError
    from veridiag.alerts.posting import post_answers
    from veridiag.alerts.worker import from_settings, job_queue
    from veridiag.delivery.send import DeliveryError
    from veridiag.gatekeeper import RulesetError
    from veridiag.pipeline.factory import assemble, build_home_apart
    from veridiag.store import StoreError
    from veridiag.tools.factory import ConfigurationError

    config = settings()
    try:
        build_home_apart(config)
        assembly = assemble(config)
    except (StoreError, ConfigurationError, RulesetError, LLMConfigError) as exc:
        raise fail(str(exc)) from None
    threads = concurrency or max(1, config.alerts.serve_workers)
    try:
        after_finish = post_answers(assembly.store, config)
    except DeliveryError as exc:
        raise fail(f"alerts.post_to: {exc}") from None
    queue = job_queue(assembly.store, config.alerts)
    running = from_settings(queue, assembly.pipeline, config.alerts, threads, after_finish)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: running.stop(timeout=0))
    err.print(f"veridiag worker {running.name}: {threads} at once (engine {assembly.engine})")
    started()
    running.start()
    running.wait()
    err.print("stopping: running diagnoses finish first (Ctrl-C again to leave them to the lease)")
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with contextlib.suppress(KeyboardInterrupt):
        running.stop()
