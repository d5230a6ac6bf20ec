"""The Trace Workbench: server-rendered pages (Jinja2) that read top-down like the audit chain,
enhanced by htmx where JavaScript runs and complete without it."""

from __future__ import annotations

import contextlib
import logging
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape
from pydantic import BaseModel, ConfigDict, ValidationError

from veridiag.api.bodies import CleanRoute
from veridiag.api.evidence import evidence_charts
from veridiag.api.i18n import TEXT, pick_lang
from veridiag.api.incident import incident_timeline
from veridiag.api.routes import audit_or_404, diagnose_async
from veridiag.api.schemas import BLANK_QUERY, MAX_OFFSET, MAX_QUERY_CHARS, ChatRequest, is_blank
from veridiag.api.security import COOKIE, Session, Sessions, identify, require_csrf, require_same_origin, require_token
from veridiag.config import Settings
from veridiag.contracts.alerts import AlertJob, ReceivedAlert
from veridiag.contracts.audit import AuditChain, EngineUse
from veridiag.contracts.composer import AllowedClaim
from veridiag.contracts.delivery import DeliveryAttempt, read_attempts
from veridiag.contracts.json import JsonObject, JsonValue, json_object, json_objects
from veridiag.contracts.material import ClaimView, ExecutorMaterial
from veridiag.delivery import render_markdown, session_link, session_report
from veridiag.delivery.answer import confirming_needs
from veridiag.pipeline.report import shown_document
from veridiag.pipeline.shape import MAX_KEY_FACTS, answer_line, stated_by
from veridiag.store.jobs import SqlJobQueue
from veridiag.text.cjk import detect_lang

log = logging.getLogger("veridiag.api")
templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
#: Sign-in and logout are open; every other page needs a token (header or the /login session).
signin = APIRouter(route_class=CleanRoute, include_in_schema=False)
workbench = APIRouter(route_class=CleanRoute, include_in_schema=False, dependencies=[Depends(require_token)])
Lang = Literal["zh", "en"] | None
#: The hidden form field that carries the session's CSRF token.
CSRF_FIELD = "csrf_token"
CsrfField = Annotated[str, Form(alias=CSRF_FIELD)]


def _page(request: Request, name: str, lang: str, **context: Any) -> Response:
    """A page, with the CSRF token its forms post back; a visitor allowed in without a session
    (an open service, a bearer header) gets one, so the forms work without JavaScript."""
    sessions: Sessions = request.app.state.sessions
    identity = identify(request)
    session, cookie = identity.session, None
    if session is None and identity.via in ("open", "bearer"):
        fingerprint = identity.key.removeprefix("token:") if identity.via == "bearer" else None
        session, cookie = sessions.issue(fingerprint)
    extra = {
        "csrf_field": CSRF_FIELD,
        "csrf_token": sessions.csrf(session) if session else "",
        "signed_in": identity.via == "session",
    }
    response = templates.TemplateResponse(request, name, {"t": TEXT[lang], "lang": lang, **extra, **context})
    if cookie:
        sessions.set_cookie(response, request, cookie)
    return response


@signin.get("/login", response_class=HTMLResponse)
def login_form(request: Request, lang: Lang = None, failed: bool = False) -> Response:
    return _page(request, "login.html", pick_lang(request, lang), failed=failed)


@signin.post("/login")
def login(request: Request, token: Annotated[str, Form()] = "") -> Response:
    """Browsers cannot send a bearer header: a valid token starts a signed session (a fresh id:
    a session planted before sign-in is never promoted). No CSRF token yet — the post must come
    from this site's page, and the cookie is SameSite=Strict."""
    require_same_origin(request)
    sessions: Sessions = request.app.state.sessions
    fingerprint = sessions.token_fingerprint(token)
    if fingerprint is None:
        request.app.state.metrics.rejected.labels("auth").inc()
        return RedirectResponse("/login?failed=true", status_code=303)
    if (previous := identify(request).session) is not None:
        _revoke(request, previous)
    _session, cookie = sessions.issue(fingerprint)
    response = RedirectResponse("/", status_code=303)
    sessions.set_cookie(response, request, cookie)
    return response


@signin.post("/logout")
def logout(request: Request, csrf: CsrfField = "") -> Response:
    """Ends the session in the store (revoked, so a copied cookie stops working on every server)
    and in the browser. A signed cookie the store could not vouch for (unreadable, or already
    revoked) is revoked all the same: a sign-out during an outage must not leave it valid after."""
    sessions: Sessions = request.app.state.sessions
    session = identify(request).session or sessions.signed(request.cookies.get(COOKIE))
    if session is not None:  # nothing to protect without one: just clear the cookie
        require_csrf(request, csrf, session)
        _revoke(request, session)
    response = RedirectResponse("/login" if sessions.tokens else "/", status_code=303)
    sessions.clear_cookie(response, request)
    return response


def _revoke(request: Request, session: Session) -> None:
    """Records the sign-out in the store, or answers 503 with the cookie left in place: a
    browser told it signed out while a copy of its cookie still works elsewhere would be worse
    than a sign-out to try again."""
    try:
        request.app.state.sessions.revoke(session)
    except Exception as exc:
        log.warning("sign-out not recorded: the store refused it (%s)", type(exc).__name__)
        raise HTTPException(503, detail="sign-out could not be recorded (store unavailable): try again") from None


@workbench.get("/", response_class=HTMLResponse)
def index(
    request: Request,
    lang: Lang = None,
    verdict: Literal["PASS", "LOW_CONFID", "REJECT", ""] = "",
    q: Annotated[str, Query(max_length=200)] = "",
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Response:
    chosen = pick_lang(request, lang)
    store = request.app.state.assembly.store
    rows = store.list_sessions(limit=50, offset=offset, verdict=verdict or None, search=q or None)
    total = store.count_sessions(verdict=verdict or None, search=q or None)
    context = {"rows": rows, "total": total, "verdict": verdict, "q": q, "offset": offset}
    if request.headers.get("hx-request") and request.headers.get("hx-target") == "rows":
        return _page(request, "_rows.html", chosen, **context)
    return _page(request, "index.html", chosen, **context)


@workbench.post("/ask")
async def ask(
    request: Request,
    query: Annotated[str, Form()] = "",
    lang: Annotated[str, Form()] = "",
    csrf: CsrfField = "",
) -> Response:
    """The no-JavaScript ask: run the diagnosis, then show its session page."""
    require_csrf(request, csrf)
    chosen = pick_lang(request, lang if lang in ("zh", "en") else None)
    if len(query) > MAX_QUERY_CHARS or is_blank(query):
        request.app.state.metrics.rejected.labels("invalid").inc()
        problem = BLANK_QUERY if is_blank(query) else f"the question is longer than {MAX_QUERY_CHARS} characters"
        raise HTTPException(422, detail=problem)
    document = await diagnose_async(request, ChatRequest(query=query.strip()), source="web")
    return RedirectResponse(f"/sessions/{document.session_id}?lang={chosen}", status_code=303)


@workbench.get("/sessions/{session_id}", response_class=HTMLResponse)
def session_page(request: Request, session_id: str, lang: Lang = None) -> Response:
    chain = audit_or_404(request, session_id)
    chosen = pick_lang(request, lang)
    origin = alert_origin(request.app.state.alert_queue, session_id)
    link = session_link(public_base(request), session_id, chosen)
    context = {"view": session_view(chain), "chain": chain, "origin": origin, "permalink": link}
    return _page(request, "session.html", chosen, incident=incident_timeline(chain, chosen), **context)


def public_base(request: Request) -> str:
    """Where people open this workbench: the configured ``delivery.workbench_url`` when one is
    set (behind a proxy, the address others reach), else the scheme, host and port this page was
    asked on (forwarded ones only from ``api_trusted_proxies``) — never a default that is wrong
    for every other host."""
    delivery = request.app.state.settings.delivery
    if "workbench_url" in delivery.model_fields_set:
        return str(delivery.workbench_url)
    return str(request.base_url).rstrip("/")


@workbench.get("/sessions/{session_id}/answer.md")
def answer_markdown(request: Request, session_id: str, lang: Lang = None) -> Response:
    """The verified answer as ``veridiag ask --format markdown`` printed it (same bytes, the
    configured workbench link, redacted); a session without one says so. Without ``?lang=`` the
    language is the question's, as ``ask`` picks it."""
    session = audit_or_404(request, session_id).session
    settings: Settings = request.app.state.settings
    shown = lang or detect_lang(session.query)
    document = shown_document(session, request.app.state.assembly.engine, shown)
    text = render_markdown(session_report(settings, document, session.query, shown)) + "\n"
    return Response(text, media_type="text/markdown; charset=utf-8")


@workbench.get("/sessions/{session_id}/audit.json")
def audit_download(request: Request, session_id: str) -> Response:
    """The audit API's JSON (``GET /api/v1/sessions/{id}/audit``) as a file to keep."""
    chain = audit_or_404(request, session_id)
    name = f"veridiag-{dom_id(session_id)}-audit.json"
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    # Dumped as FastAPI dumps the API's response model (JSON mode, by alias): the same bytes.
    return JSONResponse(chain.model_dump(mode="json", by_alias=True), headers=headers)


@workbench.get("/sessions/{session_id}/claims/{claim_id}", response_class=HTMLResponse)
def claim_page(request: Request, session_id: str, claim_id: str, lang: Lang = None) -> Response:
    """A claim with each cited invocation and the Gatekeeper's matched span highlighted; a
    fragment for htmx, a whole page otherwise."""
    chain = audit_or_404(request, session_id)
    view = session_view(chain)
    claim = next((c for c in view.claims if c.claim_id == claim_id), None)
    if claim is None:
        raise HTTPException(404, detail=f"no claim {claim_id!r} in session {session_id!r}")
    chosen = pick_lang(request, lang)
    name = "_claim.html" if request.headers.get("hx-request") else "claim.html"
    return _page(request, name, chosen, claim=claim, view=view, chain=chain)


class EvidenceView(BaseModel):
    """One cited invocation of a claim, its matched span highlighted."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    invocation_id: int
    tool_name: str
    excerpt: str
    #: The invocation as the audit chain shows it; None when the session has no such invocation.
    invocation: JsonObject | None
    span: JsonObject | None
    highlighted: Markup | None


class ClaimRow(BaseModel):
    """A claim as the session page lists it, with everything that allowed or blocked it."""

    claim_id: str
    claim_type: str
    claim_text: str
    allowed: bool
    verification: str | None
    detail: str | None
    #: Gatekeeper errors, verifier corrections and checks about this claim, as the chain stores them.
    errors: list[JsonObject]
    corrections: list[JsonObject]
    checks: list[JsonObject]
    evidence: list[EvidenceView]


class StageRow(BaseModel):
    """One line of the timeline: a stage, its latency, who answered and at what token cost."""

    stage: str
    ms: float | None
    engine: str | None
    tokens: int | None
    fallback: str | None


class KeyFact(BaseModel):
    """A key fact as the page lists it under the answer: an allowed claim and where it was seen."""

    claim_id: str
    claim_text: str
    verification: str | None
    invocation_ids: list[int]


class HypothesisRow(BaseModel):
    """A hypothesis under the key facts, with what would confirm it — each need once, none a
    confirmed fact already shows (``delivery.answer.confirming_needs``, as chat shows them)."""

    text: str
    needs: list[str]


class SessionView(BaseModel):
    """What the session page shows, derived from the audit chain only."""

    #: The answer's line that answers (the first after the scope); empty without an answer.
    answer_line: str = ""
    #: At most five allowed claims, in the order the answer lists them.
    key_facts: list[KeyFact] = []
    #: The claims the answer line states and the key facts: theirs come first (charts, timeline).
    lead_claims: list[str] = []
    #: The invocations those claims cite: their charts come first.
    lead_invocations: list[int] = []
    #: Shown as the answer shows them: for a LOW_CONFID verdict (PASS rests on its facts).
    hypotheses: list[HypothesisRow] = []
    claims: list[ClaimRow]
    gatekeeper: JsonObject
    composer_input: JsonObject
    timeline: list[StageRow]
    invocations: list[JsonObject]
    #: Each attempt to post the answer to chat, oldest first.
    deliveries: list[DeliveryAttempt]
    #: Stored attempts that no longer read as one (counted on the page, never a 500).
    unreadable_deliveries: int = 0


class AlertOrigin(BaseModel):
    """Where a session an alert started came from: its queued job and the alerts it diagnoses."""

    job: AlertJob
    alerts: list[ReceivedAlert]


def alert_origin(queue: SqlJobQueue, session_id: str) -> AlertOrigin | None:
    job = queue.for_session(session_id)
    return AlertOrigin(job=job, alerts=queue.alerts(job.id)) if job is not None else None


def session_view(chain: AuditChain) -> SessionView:
    """The audit chain (stored JSON, as ``veridiag audit --json`` shows it) read into the page's
    view: claims with their checks, corrections and cited evidence, the timeline."""
    material = ExecutorMaterial.read(json_object(chain.executor.structured_output))
    composer_input = json_object(chain.composer.input)
    gatekeeper = json_object(chain.gatekeeper.result)
    traces = {t.get("claim_id"): t for t in json_objects(chain.gatekeeper.trace)}
    checks = {c.get("claim_id"): c for c in json_objects(chain.verifier.claim_checks)}
    allowed = {c.get("claim_id") for c in json_objects(composer_input.get("allowed_claims"))}
    invocations = {i.id: i.model_dump(mode="json") for i in chain.invocations}
    claims = []
    for claim in material.claims:
        claim_id = claim.claim_id
        trace_checks = json_objects(json_object(traces.get(claim_id)).get("checks"))
        errors = [e for e in json_objects(gatekeeper.get("errors")) if _names_claim(str(e.get("target")), claim.index)]
        # A per-claim correction targets exactly the claim's id: "claim-1" is not "claim-11".
        corrections = [c for c in json_objects(chain.verifier.corrections) if c.get("target") == claim_id]
        check = checks.get(claim_id) or {}
        claims.append(
            ClaimRow(
                claim_id=claim_id,
                claim_type=claim.claim_type,
                claim_text=claim.claim_text,
                allowed=claim_id in allowed,
                verification=_text(check.get("verification")),
                detail=_text(check.get("detail")),
                errors=errors,
                corrections=corrections,
                checks=trace_checks,
                evidence=_evidence(claim, trace_checks, invocations),
            )
        )
    deliveries, unreadable = read_attempts(chain.session.deliveries)
    line = answer_line(chain.session.final_answer or "", str(composer_input.get("scope") or ""))
    facts = _key_facts(composer_input, claims)
    stated = {c.claim_id for c in _allowed(composer_input) if line and stated_by(line, c)}
    cited = [c.claim_id for c in claims if c.claim_id in stated] + [f.claim_id for f in facts]
    lead = sorted({e.invocation_id for c in claims if c.claim_id in cited for e in c.evidence})
    return SessionView(
        answer_line=line,
        key_facts=facts,
        lead_claims=list(dict.fromkeys(cited)),
        lead_invocations=lead,
        hypotheses=_hypotheses(composer_input) if chain.session.verdict == "LOW_CONFID" else [],
        claims=claims,
        gatekeeper=gatekeeper,
        composer_input=composer_input,
        timeline=_timeline(chain),
        invocations=list(invocations.values()),
        deliveries=deliveries,
        unreadable_deliveries=unreadable,
    )


def _allowed(composer_input: JsonObject) -> list[AllowedClaim]:
    """The allowed claims as stored; one this version cannot read is left out (the page still shows)."""
    allowed = []
    for item in json_objects(composer_input.get("allowed_claims")):
        with contextlib.suppress(ValidationError):
            allowed.append(AllowedClaim.model_validate(item))
    return allowed


def _key_facts(composer_input: JsonObject, claims: list[ClaimRow]) -> list[KeyFact]:
    """The key facts in the answer's order (``ComposerInput.key_facts``); a session stored
    before they were ranked lists its first allowed claims."""
    allowed = {c.claim_id: c for c in _allowed(composer_input)}
    stored = composer_input.get("key_facts")
    ids = [i for i in stored if isinstance(i, str)] if isinstance(stored, list) else list(allowed)[:MAX_KEY_FACTS]
    rows = {c.claim_id: c for c in claims}
    return [
        KeyFact(
            claim_id=claim_id,
            claim_text=allowed[claim_id].claim_text,
            verification=allowed[claim_id].verification,
            invocation_ids=list(dict.fromkeys(e.invocation_id for e in rows[claim_id].evidence))
            if claim_id in rows
            else [],
        )
        for claim_id in ids
        if claim_id in allowed
    ]


def _hypotheses(composer_input: JsonObject) -> list[HypothesisRow]:
    pairs = []
    for item in json_objects(composer_input.get("allowed_hypotheses")):
        needs = item.get("needed_evidence")
        listed = [n for n in needs if isinstance(n, str)] if isinstance(needs, list) else []
        pairs.append((str(item.get("hypothesis_text") or ""), listed))
    confirmed = [c.claim_text for c in _allowed(composer_input) if c.verification == "direct_observation"]
    return [
        HypothesisRow(text=text, needs=needs)
        for (text, _), needs in zip(pairs, confirming_needs(pairs, confirmed), strict=True)
        if text
    ]


def _text(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


def _names_claim(target: str, index: int) -> bool:
    """A Gatekeeper target inside claim ``index``: ``claims[1]`` and ``claims[1].x``, not ``claims[10]``."""
    own = f"claims[{index}]"
    return target == own or target.startswith((own + ".", own + "["))


_BINDING = re.compile(r"\.evidence_bindings\[(\d+)\]")


def _evidence(claim: ClaimView, checks: list[JsonObject], invocations: dict[int, JsonObject]) -> list[EvidenceView]:
    """Each binding's excerpt with the span the Gatekeeper matched for *that* binding: two
    excerpts of one invocation (an anomaly line and its peak point) each highlight their own."""
    spans: dict[tuple[int | None, JsonValue, JsonValue], JsonObject] = {}
    for check in checks:
        matched = json_object(check.get("matched_span"))
        if matched and matched.get("source") == "output":
            found = _BINDING.search(str(check.get("target") or ""))
            key = (int(found.group(1)) if found else None, matched.get("invocation_id"), matched.get("source"))
            spans[key] = matched
    items = []
    for index, binding in enumerate(claim.bindings):
        for invocation_id in binding.source_invocation_ids:
            invocation = invocations.get(invocation_id)
            span = spans.get((index, invocation_id, "output")) or spans.get((None, invocation_id, "output"))
            items.append(
                EvidenceView(
                    invocation_id=invocation_id,
                    tool_name=binding.tool_name,
                    excerpt=binding.evidence_excerpt,
                    invocation=invocation,
                    span=span,
                    highlighted=_highlight(str(invocation.get("output") or ""), span) if invocation else None,
                )
            )
    return items


def _highlight(output: str, span: JsonObject | None, context: int = 1500) -> Markup:
    """The output around the matched span, the span in ``<mark>``; all of it escaped."""
    start, end = (span.get("start"), span.get("end")) if span else (None, None)
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(output)):
        return Markup(escape(output[: context * 2]))
    head = max(0, start - context)
    tail = min(len(output), end + context)
    return Markup(
        ("…" if head else "")
        + escape(output[head:start])
        + Markup('<mark class="matched-span">')
        + escape(output[start:end])
        + Markup("</mark>")
        + escape(output[end:tail])
        + ("…" if tail < len(output) else "")
    )


def _timeline(chain: AuditChain) -> list[StageRow]:
    """Stage, latency and token usage, in the order the stages ran."""
    timings = json_object(chain.timings_ms)
    usage = {(c.get("role"), c.get("round")): c for c in json_objects(chain.role_calls)}
    rows = [_stage("planner", timings.get("planner_ms"), usage.get(("planner", None)))]
    for record in json_objects(chain.rounds):
        latency = json_object(record.get("latency_ms"))
        number = record.get("round")
        rows.append(_stage(f"executor · {number}", latency.get("executor_ms"), usage.get(("executor", number))))
        rows.append(_stage(f"gatekeeper · {number}", latency.get("hook_ms"), None))
        rows.append(_stage(f"verifier · {number}", latency.get("verifier_ms"), usage.get(("verifier", number))))
    rows.append(_stage("composer", timings.get("composer_ms"), usage.get(("composer", None))))
    return [row for row in rows if row.ms is not None]


def _stage(name: str, ms: JsonValue, call: JsonObject | None) -> StageRow:
    call = call or {}
    usage = json_object(call.get("usage"))
    # Sessions stored before ``engine_use`` existed kept the failure in ``usage.fallback``.
    fallback = EngineUse.model_validate(call["engine_use"]).failure if "engine_use" in call else usage.get("fallback")
    tokens = sum(n for n in (usage.get("input_tokens"), usage.get("output_tokens")) if isinstance(n, int))
    return StageRow(
        stage=name,
        ms=ms if isinstance(ms, int | float) else None,
        engine=_text(call.get("engine")),
        tokens=tokens or None,
        fallback=_text(fallback),
    )


_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


def dom_id(value: str) -> str:
    return _SAFE_ID.sub("-", value)


templates.env.filters["dom_id"] = dom_id


def lang_of(text: object) -> str:
    """The ``lang`` of a piece of session text (a question, an answer, a claim, a tool output),
    which need not be the page's: screen readers switch voice by it. Any Han character makes it
    Chinese, as it does for the answer's language (``detect_lang``)."""
    return "zh-CN" if detect_lang(str(text or "")) == "zh" else "en"


templates.env.filters["lang_of"] = lang_of
templates.env.globals["evidence_charts"] = evidence_charts
