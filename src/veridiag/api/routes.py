"""``/api/v1``: chat (plain and streamed), sessions, audit chain, rules; ``/healthz``, ``/metrics``."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Annotated, Literal

import anyio.to_thread
from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from fastapi.responses import Response, StreamingResponse

from veridiag.api.bodies import CleanRoute
from veridiag.api.errors import request_id
from veridiag.api.schemas import (
    MAX_OFFSET,
    ChatRequest,
    ChatResponse,
    ErrorBody,
    Health,
    RuleSetDocument,
    SessionPage,
    SessionSummary,
)
from veridiag.api.security import require_token
from veridiag.contracts.answer import AnswerDocument
from veridiag.contracts.audit import AuditChain
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.contracts.session import SessionProgress, SessionRecord, SessionSource
from veridiag.pipeline import audit_chain
from veridiag.pipeline.factory import Assembly
from veridiag.pipeline.progress import Progress
from veridiag.pipeline.report import answer_document, shown_document
from veridiag.store import session_cursor

#: Statuses every ``/api/v1`` route documents with the one error body (OpenAPI).
ERROR_STATUSES = (400, 401, 404, 413, 422, 429, 500)
log = logging.getLogger("veridiag.api")

api = APIRouter(
    route_class=CleanRoute,
    prefix="/api/v1",
    dependencies=[Depends(require_token)],
    responses={code: {"model": ErrorBody} for code in ERROR_STATUSES},
)
ops = APIRouter(route_class=CleanRoute)


async def diagnose_async(
    request: Request, body: ChatRequest, progress: Progress | None = None, source: SessionSource = "api"
) -> AnswerDocument:
    """A diagnosis in a worker thread, at most ``api_concurrency`` at once: the work is CPU-bound,
    so more threads only share the cores and every queued request finishes late; this way they
    finish in arrival order."""
    limiter = request.app.state.diagnosis_limiter
    return await anyio.to_thread.run_sync(diagnose, request, body, progress, source, limiter=limiter)


def diagnose(
    request: Request, body: ChatRequest, progress: Progress | None = None, source: SessionSource = "api"
) -> AnswerDocument:
    """One diagnosis through the app's pipeline; metrics observed; the stable answer document."""
    assembly: Assembly = request.app.state.assembly
    started = time.perf_counter()
    result = assembly.pipeline.run(body.query, body.lang, progress=progress, source=source)
    request.app.state.metrics.observe(result, time.perf_counter() - started)
    return answer_document(result, assembly.engine)


@api.post("/chat", response_model=ChatResponse, summary="Diagnose a question")
async def chat(body: ChatRequest, request: Request) -> AnswerDocument:
    return await diagnose_async(request, body)


@api.post(
    "/chat/stream",
    summary="Diagnose a question, streaming each stage as Server-Sent Events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def chat_stream(body: ChatRequest, request: Request) -> StreamingResponse:
    """Events: ``session``, ``plan``, ``tool`` (one per call), ``gatekeeper``, ``verifier``,
    ``composer``, then ``done`` carrying the answer document, or ``error`` with a generic message,
    the request id and the session id (the details are in the server log under the request id).
    A client that goes away does not stop the diagnosis: it completes and is stored. The
    workbench's ask box says so in ``X-Veridiag-Client`` (a label in the session list only)."""
    source: SessionSource = "web" if request.headers.get("x-veridiag-client") == "workbench" else "api"
    queue: asyncio.Queue[tuple[str, JsonObject] | None] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    rid = request_id(request.scope)
    session_id: JsonValue = None

    def progress(stage: str, details: JsonObject) -> None:
        nonlocal session_id
        if stage == "session":
            session_id = details.get("session_id")
        if stage != "done":  # the final event carries the whole document instead
            loop.call_soon_threadsafe(queue.put_nowait, (stage, details))

    async def run() -> None:
        try:
            document = await diagnose_async(request, body, progress, source)
            queue.put_nowait(("done", document.model_dump(mode="json")))
        except Exception:  # the pipeline fails closed itself; this is the store being gone
            log.exception("chat stream failed [request_id=%s session_id=%s]", rid, session_id)
            message = "the diagnosis failed on the server; its log has the details under this request id"
            queue.put_nowait(("error", {"message": message, "request_id": rid, "session_id": session_id}))
        finally:
            queue.put_nowait(None)

    task = asyncio.create_task(run())
    request.app.state.background.add(task)
    task.add_done_callback(request.app.state.background.discard)

    async def events() -> AsyncIterator[str]:
        while (item := await queue.get()) is not None:
            yield server_event(*item)

    return _event_stream(events())


def server_event(stage: str, data: JsonObject, event_id: int | None = None) -> str:
    """One Server-Sent Event: the stage names it, its JSON is the data."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {stage}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def _event_stream(events: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


#: How often a follower of a running session looks for its new events (one small read each).
FOLLOW_POLL_SECONDS = 0.25
#: Stored events a follower does not replay: it ends with them as the stored session states them.
_ENDINGS = frozenset({"done", "failed"})


@api.get(
    "/sessions/{session_id}/events",
    summary="Follow a session's stages as Server-Sent Events, whichever server runs it",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def session_events(
    session_id: str,
    request: Request,
    last_event_id: Annotated[
        str | None, Header(description="The `id` of the last event received: the stream resumes after it.")
    ] = None,
) -> StreamingResponse:
    """The events of ``POST /chat/stream``, read from the session store, so any server on the
    store streams a session another process runs (or ran): the events stored so far, each new
    one as it is stored, and — once the session is no longer ``running`` — its end as stored:
    ``failed`` or ``interrupted`` with the error for one that did not complete, then ``done``
    with the answer document. Stored events carry an ``id``; ``Last-Event-ID`` resumes after it."""
    store = request.app.state.assembly.store
    after = _resumed_after(last_event_id)
    first: SessionProgress | None = await anyio.to_thread.run_sync(store.session_progress, session_id, after)
    if first is None:
        raise HTTPException(404, detail=f"no session {session_id!r}")
    engine: dict[str, str] = request.app.state.assembly.engine

    async def events() -> AsyncIterator[str]:
        progress = first
        while True:
            number = progress.read - len(progress.events)
            for event in progress.events:
                number += 1
                if event.stage not in _ENDINGS:
                    yield server_event(event.stage, event.details, number)
            if progress.session.status != "running":
                break
            await asyncio.sleep(FOLLOW_POLL_SECONDS)
            following = await anyio.to_thread.run_sync(store.session_progress, session_id, progress.read)
            if following is None:  # deleted meanwhile: nothing more to say
                return
            progress = following
        session: SessionRecord | None = await anyio.to_thread.run_sync(store.get_session, session_id)
        if session is None:
            return
        if session.status != "completed":
            yield server_event(session.status, {"error": session.error, "session_id": session.id})
        document = shown_document(session, engine, "zh" if session.lang == "zh" else "en")
        yield server_event("done", document.model_dump(mode="json"))

    return _event_stream(events())


#: More events than any session stores: a ``Last-Event-ID`` of more digits resumes after them all.
_EVENT_ID_DIGITS = 18


def _resumed_after(last_event_id: str | None) -> int:
    """The events a ``Last-Event-ID`` says were received: a number in ASCII digits (``str.isdigit``
    takes "²" too, and ``int`` refuses one of over 4300 digits), one too long for any session
    being past them all; anything else is none."""
    if not last_event_id or not (last_event_id.isascii() and last_event_id.isdigit()):
        return 0
    return int(last_event_id) if len(last_event_id) <= _EVENT_ID_DIGITS else 10**_EVENT_ID_DIGITS


def _summary(session: SessionRecord) -> SessionSummary:
    return SessionSummary(
        id=session.id,
        created_at=session.created_at.isoformat(),
        query=session.query,
        lang=session.lang,
        status=session.status,
        verdict=session.verdict,
        rounds=session.rounds,
        source=session.source,
        answer_line=session.answer_line,
        service=session.service,
    )


@api.get("/sessions", response_model=SessionPage, summary="List sessions, newest first")
def sessions(
    request: Request,
    *,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    verdict: Literal["PASS", "LOW_CONFID", "REJECT"] | None = None,
    q: Annotated[str | None, Query(max_length=200, description="Text in the question or answer.")] = None,
    cursor: Annotated[
        str | None, Query(max_length=100, description="`next_cursor` of the page before: the page after it.")
    ] = None,
) -> SessionPage:
    store = request.app.state.assembly.store
    try:  # one more than asked: whether there is a next page
        items = store.list_sessions(limit=limit + 1, offset=offset, verdict=verdict, search=q, cursor=cursor)
    except ValueError as exc:
        raise HTTPException(422, detail=str(exc)) from None
    total = store.count_sessions(verdict=verdict, search=q)
    page, more = items[:limit], len(items) > limit
    next_cursor = session_cursor(page[-1]) if more else None
    summaries = [_summary(s) for s in page]
    return SessionPage(items=summaries, total=total, limit=limit, offset=offset, next_cursor=next_cursor)


@api.get("/sessions/{session_id}", response_model=SessionRecord, summary="One session as stored")
def session(session_id: str, request: Request) -> SessionRecord:
    found = request.app.state.assembly.store.get_session(session_id)
    if found is None:
        raise HTTPException(404, detail=f"no session {session_id!r}")
    return found  # type: ignore[no-any-return]


def audit_or_404(request: Request, session_id: str) -> AuditChain:
    """The session's audit chain; an unknown id is a 404 (the API and the workbench alike)."""
    chain = audit_chain(request.app.state.assembly.store, session_id)
    if chain is None:
        raise HTTPException(404, detail=f"no session {session_id!r}")
    return chain


@api.get("/sessions/{session_id}/audit", summary="The audit chain (as `veridiag audit --json`)")
def audit(session_id: str, request: Request) -> AuditChain:
    return audit_or_404(request, session_id)


@api.get("/rules", summary="The Gatekeeper rules in force")
def rules(request: Request) -> RuleSetDocument:
    assembly: Assembly = request.app.state.assembly
    return RuleSetDocument(
        enabled=assembly.pipeline.gatekeeper is not None,
        rules=[rule.public_dict() for rule in assembly.gatekeeper.ruleset],
    )


@ops.get("/healthz", summary="Liveness and store reachability")
def healthz(request: Request) -> Health:
    store = request.app.state.assembly.store
    try:
        store.reachable()
    except Exception as exc:
        raise HTTPException(503, detail=f"store unavailable: {exc.__class__.__name__}") from None
    return Health(status="ok", engine=request.app.state.assembly.engine)


async def metrics_access(request: Request) -> None:
    """Behind the API's auth unless ``api_open_metrics`` leaves it to scrapers."""
    if not request.app.state.open_metrics:
        await require_token(request)


@ops.get("/metrics", summary="Prometheus metrics", response_class=Response, dependencies=[Depends(metrics_access)])
def metrics(request: Request) -> Response:
    return Response(request.app.state.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")
