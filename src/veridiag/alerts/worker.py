"""Runs queued alert diagnoses: ``veridiag worker``, and ``veridiag serve``'s in-process worker.

Each of ``concurrency`` threads claims a job, runs the diagnosis through the shared pipeline
(one ``DiagnosisRun`` per call, so threads never share state), and records on the job the
session it opened and each stage it reaches — which also renews its lease. A run that raises
(the store gone, say) is retried after a backoff; a diagnosis that ends ``failed`` is done —
its session says why, and running it again would only add a second session for one alert.
A finished job's session is then handed to ``after_finish`` (posting the answer to chat); what
that does never changes the job, which is done once its diagnosis is stored.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from veridiag._retry import Backoff
from veridiag.config import AlertSettings
from veridiag.contracts.alerts import AlertJob
from veridiag.contracts.json import JsonObject
from veridiag.contracts.plan import GivenTime
from veridiag.pipeline.service import DiagnosisPipeline
from veridiag.store.jobs import JobQueue, SqlJobQueue
from veridiag.store.repository import SessionStore

log = logging.getLogger("veridiag.alerts")


def job_queue(store: SessionStore, settings: AlertSettings) -> SqlJobQueue:
    """The queue in the store's database, with the configured attempts, lease and backoff."""
    backoff = Backoff(
        attempts=settings.max_attempts,
        first_wait=settings.retry_first_wait_seconds,
        max_wait=settings.retry_max_wait_seconds,
    )
    return SqlJobQueue(
        store.engine, max_attempts=settings.max_attempts, lease_seconds=settings.lease_seconds, backoff=backoff
    )


@dataclass
class Worker:
    """``concurrency`` threads claiming from ``queue`` until ``stop()``."""

    queue: JobQueue
    pipeline: DiagnosisPipeline
    concurrency: int = 1
    poll_seconds: float = 1.0
    #: How often a running job's lease is renewed besides at each stage: a stage that takes long
    #: (a model call, a slow backend) must not look like a dead worker. A third of the lease.
    heartbeat_seconds: float = 200.0
    name: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    #: Called with the session id of each finished job, after the job is marked done.
    after_finish: Callable[[str], None] | None = None
    _stopping: threading.Event = field(default_factory=threading.Event, init=False)
    _threads: list[threading.Thread] = field(default_factory=list, init=False)

    def run_one(self, slot: int = 0) -> AlertJob | None:
        """Claims one due job and runs it to the end; None when none was due."""
        owner = f"{self.name}:{slot}"
        job = self.queue.claim(owner)
        if job is None:
            return None

        def on_session(session_id: str) -> None:
            self.queue.heartbeat(job.id, owner, progress="session", session_id=session_id)

        def progress(stage: str, _details: JsonObject) -> None:
            self.queue.heartbeat(job.id, owner, progress=stage)

        running = threading.Event()
        beat = threading.Thread(target=self._beat, args=(job.id, owner, running), daemon=True)
        beat.start()
        try:
            result = self.pipeline.run(
                job.question,
                job.lang,
                on_session=on_session,
                progress=progress,
                given_time=GivenTime(at=job.given_at, source=job.given_source),
                source="alert",
            )
        except Exception as exc:  # the pipeline fails closed itself: this is the store or the host
            log.exception("alert job %s: attempt %d raised", job.id, job.attempts)
            return self.queue.fail(job.id, owner, f"{exc.__class__.__name__}: {exc}")
        finally:
            running.set()
            beat.join()
        self.queue.finish(job.id, owner, session_id=result.session_id)
        if self.after_finish is not None:
            try:
                self.after_finish(result.session_id)
            except Exception:  # posting records its own attempts; the diagnosis is done and stored
                log.exception("alert job %s: after-finish step failed for session %s", job.id, result.session_id)
        return self.queue.get(job.id)

    def _beat(self, job_id: str, owner: str, done: threading.Event) -> None:
        while not done.wait(self.heartbeat_seconds):
            try:
                self.queue.heartbeat(job_id, owner)
            except Exception:  # the store is briefly away: the next beat (or stage) tries again
                log.warning("alert job %s: lease renewal failed", job_id, exc_info=True)

    def _loop(self, slot: int) -> None:
        while not self._stopping.is_set():
            try:
                ran = self.run_one(slot)
            except Exception:  # a claim that failed (store unreachable): wait and try again
                log.exception("alert worker %s:%d could not claim a job", self.name, slot)
                ran = None
            if ran is None:
                self._stopping.wait(self.poll_seconds)

    def start(self) -> None:
        for slot in range(self.concurrency):
            thread = threading.Thread(target=self._loop, args=(slot,), name=f"alert-worker-{slot}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float | None = None) -> None:
        """No new claims; waits up to ``timeout`` for running diagnoses (an unfinished one is
        taken again by the next worker once its lease runs out)."""
        self._stopping.set()
        for thread in self._threads:
            thread.join(timeout)

    def wait(self) -> None:
        """Blocks until ``stop()`` (from a signal handler or another thread)."""
        self._stopping.wait()


def from_settings(
    queue: JobQueue,
    pipeline: DiagnosisPipeline,
    settings: AlertSettings,
    concurrency: int,
    after_finish: Callable[[str], None] | None = None,
) -> Worker:
    """A worker on ``queue`` as configured: its polling and a lease renewed three times a lease."""
    return Worker(
        queue,
        pipeline,
        concurrency=concurrency,
        poll_seconds=settings.poll_seconds,
        heartbeat_seconds=settings.lease_seconds / 3,
        after_finish=after_finish,
    )
