"""The Trace Workbench: server-rendered pages (Jinja2) that read top-down like the audit chain,
enhanced by htmx where JavaScript runs and complete without it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from veridiag.api.i18n import TEXT, pick_lang
from veridiag.api.routes import audit_or_404, diagnose_async
from veridiag.api.schemas import BLANK_QUERY, MAX_QUERY_CHARS, ChatRequest, is_blank
from veridiag.api.security import Sessions, identify, require_csrf, require_same_origin, require_token
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.material import ClaimView, ExecutorMaterial

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
#: Sign-in and logout are open; every other page needs a token (header or the /login session).
signin = APIRouter(include_in_schema=False)
workbench = APIRouter(include_in_schema=False, dependencies=[Depends(require_token)])
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
        sessions.revoke(previous)
    _session, cookie = sessions.issue(fingerprint)
    response = RedirectResponse("/", status_code=303)
    sessions.set_cookie(response, request, cookie)
    return response


@signin.post("/logout")
def logout(request: Request, csrf: CsrfField = "") -> Response:
    """Ends the session here (revoked, so a copied cookie stops working too) and in the browser."""
    sessions: Sessions = request.app.state.sessions
    session = identify(request).session
    if session is not None:  # nothing to protect without one: just clear the cookie
        require_csrf(request, csrf)
        sessions.revoke(session)
    response = RedirectResponse("/login" if sessions.tokens else "/", status_code=303)
    sessions.clear_cookie(response, request)
    return response


@workbench.get("/", response_class=HTMLResponse)
def index(
    request: Request,
    lang: Lang = None,
    verdict: Literal["PASS", "LOW_CONFID", "REJECT", ""] = "",
    q: Annotated[str, Query(max_length=200)] = "",
    offset: Annotated[int, Query(ge=0)] = 0,
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
    document = await diagnose_async(request, ChatRequest(query=query.strip()))
    return RedirectResponse(f"/sessions/{document.session_id}?lang={chosen}", status_code=303)


@workbench.get("/sessions/{session_id}", response_class=HTMLResponse)
def session_page(request: Request, session_id: str, lang: Lang = None) -> Response:
    chain = audit_or_404(request, session_id)
    chosen = pick_lang(request, lang)
    return _page(request, "session.html", chosen, view=session_view(chain), chain=chain)


@workbench.get("/sessions/{session_id}/claims/{claim_id}", response_class=HTMLResponse)
def claim_page(request: Request, session_id: str, claim_id: str, lang: Lang = None) -> Response:
    """A claim with each cited invocation and the Gatekeeper's matched span highlighted; a
    fragment for htmx, a whole page otherwise."""
    chain = audit_or_404(request, session_id)
    view = session_view(chain)
    claim = next((c for c in view["claims"] if c["claim_id"] == claim_id), None)
    if claim is None:
        raise HTTPException(404, detail=f"no claim {claim_id!r} in session {session_id!r}")
    chosen = pick_lang(request, lang)
    name = "_claim.html" if request.headers.get("hx-request") else "claim.html"
    return _page(request, name, chosen, claim=claim, view=view, chain=chain)


def session_view(chain: dict[str, Any]) -> dict[str, Any]:
    """What the session page shows, derived from the audit chain only."""
    material = ExecutorMaterial.read((chain.get("executor") or {}).get("structured_output"))
    verifier = chain.get("verifier") or {}
    composer_input = (chain.get("composer") or {}).get("input") or {}
    gatekeeper = (chain.get("gatekeeper") or {}).get("result") or {}
    traces = {t["claim_id"]: t for t in (chain.get("gatekeeper") or {}).get("trace") or []}
    checks = {c["claim_id"]: c for c in verifier.get("claim_checks") or []}
    allowed = {c["claim_id"] for c in composer_input.get("allowed_claims") or []}
    invocations = {i["id"]: i for i in chain.get("invocations") or []}
    claims = []
    for claim in material.claims:
        claim_id = claim.claim_id
        trace = traces.get(claim_id) or {"checks": []}
        errors = [e for e in gatekeeper.get("errors") or [] if _names_claim(e["target"], claim.index)]
        # A per-claim correction targets exactly the claim's id: "claim-1" is not "claim-11".
        corrections = [c for c in verifier.get("corrections") or [] if c.get("target") == claim_id]
        check = checks.get(claim_id) or {}
        claims.append(
            {
                "claim_id": claim_id,
                "claim_type": claim.claim_type,
                "claim_text": claim.claim_text,
                "allowed": claim_id in allowed,
                "verification": check.get("verification"),
                "detail": check.get("detail"),
                "errors": errors,
                "corrections": corrections,
                "checks": trace["checks"],
                "evidence": _evidence(claim, trace["checks"], invocations),
            }
        )
    return {
        "claims": claims,
        "gatekeeper": gatekeeper,
        "composer_input": composer_input,
        "timeline": _timeline(chain),
        "invocations": list(invocations.values()),
    }


def _names_claim(target: str, index: int) -> bool:
    """A Gatekeeper target inside claim ``index``: ``claims[1]`` and ``claims[1].x``, not ``claims[10]``."""
    own = f"claims[{index}]"
    return target == own or target.startswith((own + ".", own + "["))


def _evidence(
    claim: ClaimView, checks: list[dict[str, Any]], invocations: dict[int, dict[str, Any]]
) -> list[dict[str, Any]]:
    spans = {
        (c["matched_span"]["invocation_id"], c["matched_span"]["source"]): c["matched_span"]
        for c in checks
        if c.get("matched_span")
    }
    items = []
    for binding in claim.bindings:
        for invocation_id in binding.source_invocation_ids:
            invocation = invocations.get(invocation_id)
            span = spans.get((invocation_id, "output"))
            items.append(
                {
                    "invocation_id": invocation_id,
                    "tool_name": binding.tool_name,
                    "excerpt": binding.evidence_excerpt,
                    "invocation": invocation,
                    "span": span,
                    "highlighted": _highlight(invocation["output"], span) if invocation else None,
                }
            )
    return items


def _highlight(output: str, span: dict[str, Any] | None, context: int = 1500) -> Markup:
    """The output around the matched span, the span in ``<mark>``; all of it escaped."""
    if span is None or not (0 <= span["start"] <= span["end"] <= len(output)):
        return Markup(escape(output[: context * 2]))
    start, end = span["start"], span["end"]
    head = max(0, start - context)
    tail = min(len(output), end + context)
    return Markup(
        ("…" if head else "")
        + escape(output[head:start])
        + Markup('<mark id="matched-span">')
        + escape(output[start:end])
        + Markup("</mark>")
        + escape(output[end:tail])
        + ("…" if tail < len(output) else "")
    )


def _timeline(chain: dict[str, Any]) -> list[dict[str, Any]]:
    """Stage, latency and token usage, in the order the stages ran."""
    timings = chain.get("timings_ms") or {}
    usage = {(c["role"], c.get("round")): c for c in chain.get("role_calls") or []}
    rows = [_stage("planner", timings.get("planner_ms"), usage.get(("planner", None)))]
    for record in chain.get("rounds") or []:
        latency = record.get("latency_ms") or {}
        number = record.get("round")
        rows.append(_stage(f"executor · {number}", latency.get("executor_ms"), usage.get(("executor", number))))
        rows.append(_stage(f"gatekeeper · {number}", latency.get("hook_ms"), None))
        rows.append(_stage(f"verifier · {number}", latency.get("verifier_ms"), usage.get(("verifier", number))))
    rows.append(_stage("composer", timings.get("composer_ms"), usage.get(("composer", None))))
    return [row for row in rows if row["ms"] is not None]


def _stage(name: str, ms: float | None, call: dict[str, Any] | None) -> dict[str, Any]:
    call = call or {}
    usage = call.get("usage") or {}
    # Sessions stored before ``engine_use`` existed kept the failure in ``usage.fallback``.
    fallback = EngineUse.model_validate(call["engine_use"]).failure if "engine_use" in call else usage.get("fallback")
    return {
        "stage": name,
        "ms": ms,
        "engine": call.get("engine"),
        "tokens": (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0) or None,
        "fallback": fallback,
    }


_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


def dom_id(value: str) -> str:
    return _SAFE_ID.sub("-", value)


templates.env.filters["dom_id"] = dom_id
