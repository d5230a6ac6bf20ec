"""The incident timeline on the session page (issue 17 item 2): for each demo incident the
markers come in time order, each resting on an invocation of the same session whose stored output
writes its time and its number; labels are told apart; what was blocked is never placed as
confirmed; runs without evidence render; times are shown in the session's zone and come from
the evidence, never from a claim's words."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from tests.builders import audit_chain_of, binding, claim, v2
from tests.conftest import require_server
from veridiag.agents import scripted_roles
from veridiag.api import create_app
from veridiag.api.i18n import TEXT
from veridiag.api.incident import LANE_GAP, LANE_STEP, LANE_TOP, Marker, Segment, TimePoint, incident_timeline
from veridiag.api.local import LocalServer
from veridiag.api.workbench import templates
from veridiag.config import Settings
from veridiag.pipeline import DiagnosisPipeline
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.tools.demo.loader import load_environment

INCIDENTS = sorted(p.name for p in (Path(__file__).parents[1] / "src/veridiag/tools/demo/incidents").iterdir())


class TimelinePage(HTMLParser):
    """The ``#incident-timeline`` section read into rows, marks, facts and unplaced items."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []
        self.unplaced: list[dict[str, str | None]] = []
        self.ids: set[str] = set()
        self._depth = 0
        self._when: dict[str, Any] | None = None
        self._folded = False  # inside the fold of the claims the answer does not cite
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if a.get("id") == "incident-timeline":
            self._depth = 1
            return
        if not self._depth:
            return
        self._depth += tag not in ("path", "circle", "rect", "line")
        classes = (a.get("class") or "").split()
        if tag == "details" and "tl-more" in classes:
            self._folded = True
        if tag == "li" and "tl-row" in classes:
            self.rows.append({**a, "points": [], "facts": [], "evidence": [], "when": "", "folded": self._folded})
        elif tag == "a" and "tl-point" in classes:
            self.rows[-1]["points"].append(a)
        elif tag == "li" and "tl-fact" in classes:
            self.rows[-1]["facts"].append(a)
        elif tag == "a" and "tl-evidence" in classes:
            self.rows[-1]["evidence"].append(a.get("href"))
        elif tag == "strong" and "tl-when" in classes:
            self._when = self.rows[-1]
        elif tag == "li" and a.get("data-label") and "tl-row" not in classes:
            self.unplaced.append(a)

    def handle_endtag(self, tag: str) -> None:
        if self._depth and tag not in ("path", "circle", "rect", "line"):
            self._depth -= 1
        self._when = None

    def handle_data(self, data: str) -> None:
        if self._when is not None:
            self._when["when"] += data.strip()


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("timeline")))


@pytest.fixture(scope="module")
def client(assembly: Assembly) -> TestClient:
    return TestClient(create_app(Settings(home=Path("/nonexistent")), assembly=assembly), base_url="http://localhost")


@pytest.fixture(scope="module")
def questions() -> dict[str, list[str]]:
    return {incident.id: list(incident.questions) for incident in load_environment().incidents}


def _ask(client: TestClient, query: str) -> tuple[str, dict[str, Any]]:
    session_id = client.post("/api/v1/chat", json={"query": query}).json()["session_id"]
    return session_id, client.get(f"/api/v1/sessions/{session_id}/audit").json()


@pytest.mark.parametrize("incident", INCIDENTS)
def test_each_demo_incident_places_its_claims_in_time_on_their_own_evidence(
    client: TestClient, questions: dict[str, list[str]], incident: str
) -> None:
    session_id, audit = _ask(client, questions[incident][-1])  # the English question
    outputs = {i["id"]: i["output"] or "" for i in audit["invocations"]}
    page = client.get(f"/sessions/{session_id}?lang=en").text
    timeline = TimelinePage(page)
    rows = timeline.rows
    assert len(rows) >= 3, f"{incident}: {len(rows)} markers"
    # the claims the answer cites first, the others folded below them: each in time order
    for folded in (False, True):
        starts = [datetime.fromisoformat(row["data-at"]) for row in rows if row["folded"] == folded]
        assert starts == sorted(starts), "markers in time order"
    assert not rows[0]["folded"] and [r["folded"] for r in rows] == sorted(r["folded"] for r in rows)
    kinds = {fact["data-kind"] for row in rows for fact in row["facts"]}
    assert {"change", "anomaly"} <= kinds and kinds & {"template", "burst"}, kinds
    assert any(row["data-label"] == "inferred" for row in rows), "the inferred cause is placed, as inferred"
    for row in rows:
        claim_page = f"/sessions/{session_id}/claims/{row['data-claim']}?lang=en"
        assert row["points"], row
        for point in row["points"]:
            output = outputs[int(point["data-invocation"])]  # an invocation of this very session
            assert point["data-stamp"] in output, (row["data-claim"], point)
            if point.get("data-value"):
                assert f"{point['data-value']} at {point['data-stamp']}" in output or (
                    f"{point['data-stamp']} {point['data-value']}" in output
                ), point
            assert point["href"] == claim_page
        for fact in row["facts"]:
            if fact.get("data-count"):
                count = fact["data-count"]
                assert (
                    f"  {count}× " in outputs[int(fact["data-invocation"])]
                    or f"({count} lines)" in outputs[int(fact["data-invocation"])]
                )
        for href in row["evidence"]:
            assert href.startswith("#invocation-") and href[1:] in timeline.ids
    first = rows[0]
    evidence_page = client.get(f"/sessions/{session_id}/claims/{first['data-claim']}?lang=en").text
    assert '<mark class="matched-span">' in evidence_page, "one click from a marker to its highlighted excerpt"


def test_hypotheses_and_inferences_are_styled_apart_from_confirmed_claims(
    client: TestClient, questions: dict[str, list[str]]
) -> None:
    session_id, _audit = _ask(client, questions["payment-pool-exhaustion"][-1])
    timeline = TimelinePage(client.get(f"/sessions/{session_id}?lang=zh").text)
    labels = {row["data-label"] for row in timeline.rows}
    assert labels == {"confirmed", "inferred"}
    hypotheses = [u for u in timeline.unplaced if u["data-label"] == "hypothesis"]
    assert hypotheses and all("tl-hypothesis" in str(u["class"]) for u in hypotheses), "listed apart, time unknown"
    css = client.get("/static/workbench.css").text
    rules = {label: re.findall(rf"\.tl-{label}[^{{]*\{{([^}}]*)\}}", css) for label in ("inferred", "hypothesis")}
    assert any("fill: var(--tl-bg)" in r for r in rules["inferred"]), "inferred marks are hollow"
    assert any("dotted" in r for r in rules["hypothesis"]), "hypotheses carry a dotted tag"


def test_a_blocked_claim_is_never_a_confirmed_marker(assembly: Assembly, client: TestClient) -> None:
    """A claim quoting a real change line of another session: the Gatekeeper blocks it, and the
    timeline lists it struck through, with no marker."""
    _other, audit = _ask(client, "Why did order errors spike at 14:00?")
    change = next(i for i in audit["invocations"] if i["tool_name"] == "query_changes")
    line = next(x for x in change["output"].split("\n") if "rolled out" in x)
    executor = json.dumps(v2([claim("c1", "order-service v2.3.1 was deployed", [binding([change["id"]], line)])]))
    roles = scripted_roles(executor=executor, fallback_verifier=assembly.pipeline.roles.verifier)
    result = DiagnosisPipeline(assembly.store, roles).run("What changed on order-service?")
    timeline = TimelinePage(client.get(f"/sessions/{result.session_id}?lang=en").text)
    assert timeline.rows == []
    assert [(u["data-label"], u["class"]) for u in timeline.unplaced] == [("unverified", "tl-unverified")]


@pytest.mark.parametrize("executor", ["{}", "not json at all", RuntimeError("executor crashed")])
def test_a_run_without_usable_evidence_renders(assembly: Assembly, client: TestClient, executor: Any) -> None:
    result = DiagnosisPipeline(assembly.store, scripted_roles(executor=executor)).run("why is it slow?")
    response = client.get(f"/sessions/{result.session_id}?lang=zh")
    assert response.status_code == 200
    timeline = TimelinePage(response.text)
    assert timeline.rows == [] and TEXT["zh"]["tl_empty"] in response.text


def test_times_are_shown_in_the_sessions_zone(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, timezone="Asia/Shanghai")
    client = TestClient(create_app(settings, assembly=assemble(settings)), base_url="http://localhost")
    session_id, _audit = _ask(client, "Why does inventory-service keep restarting?")
    page = client.get(f"/sessions/{session_id}?lang=en").text
    timeline = TimelinePage(page)
    restarts = next(row for row in timeline.rows if any(f["data-kind"] == "steps" for f in row["facts"]))
    stamps = [p["data-stamp"] for p in restarts["points"]]
    assert stamps[0] == "2026-07-07T12:01:00Z" and restarts["when"] == "20:01", "UTC 12:01 is 20:01 in Shanghai"
    assert "Time zone: <strong>Asia/Shanghai</strong>" in page


LINES = "\n".join(
    [
        "query_changes service=payment-service",
        "1 changes",
        "2026-07-07T09:58:03Z payment-service config: applied config v42: maximum-pool-size=50 (was 100)",
    ]
)


def _chain(claims: list[dict[str, Any]], allowed: dict[str, str], *, trace: list[Any] | None = None) -> Any:
    invocation = {"id": 7, "session_id": "s-1", "tool_name": "query_changes", "status": "ok", "output": LINES}
    return audit_chain_of(
        executor={"structured_output": v2(claims)},
        composer={
            "input": {
                "allowed_claims": [{"claim_id": k, "verification": v} for k, v in allowed.items()],
                "allowed_hypotheses": [{"hypothesis_text": "the pool is too small"}],
            }
        },
        gatekeeper={"trace": trace},
        invocations=[invocation],
    )


def test_the_time_is_the_evidence_line_not_the_claim_text() -> None:
    """Without a Gatekeeper trace the excerpt is looked up verbatim; the claim's own "at 08:00"
    places nothing, the line's 09:58:03 does; a blocked claim on the same line is not placed."""
    excerpt = "applied config v42"  # part of the line: the whole line states the time
    claims = [
        claim("c1", "At 08:00 the pool was halved", [binding([7], excerpt, "query_changes")], "change"),
        claim("c2", "At 08:00 the pool was halved", [binding([7], excerpt, "query_changes")], "change"),
        claim("c3", "The pool was 100 before", [binding([7], "1 changes", "query_changes")], "change"),
        claim("c4", "Cited from nowhere", [binding([99], excerpt, "query_changes")], "change"),
    ]
    chain = _chain(claims, {"c1": "direct_observation", "c3": "direct_observation", "c4": "reasonable_inference"})
    timeline = incident_timeline(chain, "en")
    (marker,) = timeline.markers
    assert (marker.claim_id, marker.label, marker.shown) == ("c1", "confirmed", "09:58:03")
    assert [u.ref for u in timeline.unverified] == ["c2"]
    assert [(u.ref, u.label) for u in timeline.time_unknown] == [
        ("c3", "confirmed"),
        ("c4", "inferred"),
        ("H1", "hypothesis"),
    ]
    html = templates.get_template("_incident_timeline.html").render(incident=timeline, t=TEXT["en"])
    (row,) = TimelinePage(html).rows
    assert row["when"] == "09:58:03" and [p["data-stamp"] for p in row["points"]] == ["2026-07-07T09:58:03Z"]
    assert ">08:00<" not in html, "no time is taken from the claim's words"


def test_with_a_trace_only_the_gatekeepers_span_places_a_claim() -> None:
    """When the Gatekeeper ran, a binding it found no span for places nothing, even if the
    excerpt happens to occur in the output."""
    claims = [claim("c1", "a change", [binding([7], "applied config v42", "query_changes")], "change")]
    check: dict[str, Any] = {"target": "claims[0].evidence_bindings[0].evidence_excerpt"}
    trace = [{"claim_id": "c1", "checks": [check]}]
    timeline = incident_timeline(_chain(claims, {"c1": "direct_observation"}, trace=trace), "en")
    assert timeline.markers == [] and [u.ref for u in timeline.time_unknown] == ["c1", "H1"]
    start = LINES.index("applied")
    span = {"invocation_id": 7, "source": "output", "start": start, "end": start + 10}
    check["matched_span"] = span
    timeline = incident_timeline(_chain(claims, {"c1": "direct_observation"}, trace=trace), "en")
    assert [m.claim_id for m in timeline.markers] == ["c1"]


@pytest.fixture(scope="module")
def chromium(assembly: Assembly) -> Iterator[tuple[Any, str]]:
    """A real Chromium with JavaScript off, and the app served on loopback."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    path = os.environ.get("VERIDIAG_TEST_CHROMIUM") or "/usr/bin/chromium"
    executable = path if Path(path).exists() else require_server("VERIDIAG_TEST_CHROMIUM", "Chromium")
    app = create_app(Settings(home=Path("/nonexistent")), assembly=assembly)
    with LocalServer(app) as server, playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"], headless=True)
        yield browser, server.url
        browser.close()


def test_in_chromium_a_marker_is_one_click_from_its_highlighted_excerpt(
    client: TestClient, questions: dict[str, list[str]], chromium: tuple[Any, str]
) -> None:
    browser, base = chromium
    session_id, _audit = _ask(client, questions["payment-pool-exhaustion"][-1])
    context = browser.new_context(java_script_enabled=False, locale="en-US")
    page = context.new_page()
    page.goto(f"{base}/sessions/{session_id}?lang=en")
    style = "el => getComputedStyle(el).fill"
    confirmed = page.locator("li.tl-confirmed a.tl-point circle").first.evaluate(style)
    inferred = page.locator("li.tl-inferred a.tl-point circle").first.evaluate(style)
    assert confirmed != inferred, "an inferred mark does not look like a confirmed one"
    tags = page.locator("li.tl-hypothesis .tl-tag").first.evaluate("el => getComputedStyle(el).borderStyle")
    assert tags == "dotted"
    page.emulate_media(media="print")
    assert page.locator("li.tl-row").first.is_visible(), "printable"
    page.emulate_media(media="screen")
    change = page.locator("li.tl-inferred a.tl-point.tl-change").first
    claim_id = change.evaluate("el => el.closest('li').dataset.claim")
    change.click()
    page.wait_for_selector("#claim-detail")
    assert page.url.endswith(f"/claims/{claim_id}?lang=en")
    assert page.locator("#claim-detail mark.matched-span").first.is_visible()
    context.close()


def test_an_allowed_claim_without_a_stored_label_takes_the_verifiers() -> None:
    claims = [claim("c1", "a change", [binding([7], "applied config v42", "query_changes")], "change")]
    chain = _chain(claims, {"c1": ""})
    assert [u.ref for u in incident_timeline(chain, "en").unverified] == ["c1"], "no label: never placed"
    chain.verifier.claim_checks = [{"claim_id": "c1", "verification": "reasonable_inference"}]
    assert [(m.claim_id, m.label) for m in incident_timeline(chain, "en").markers] == [("c1", "inferred")]


@given(st.lists(st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=4), min_size=1, max_size=5))
def test_points_too_close_to_tell_apart_are_stacked_so_none_hides_another(rows: list[list[float]]) -> None:
    """A change a minute before an anomaly's onset sat under the onset's glyph and could not be
    clicked: points of one row within a glyph of each other take separate lanes."""
    moment = datetime(2026, 7, 7, 10, 0)
    segments = [
        Segment(
            invocation_id=index,
            tool="t",
            kind="point",
            points=[TimePoint(at=moment, role="line", stamp="s", x=round(x, 2)) for x in xs],
        )
        for index, xs in enumerate(rows)
    ]
    marker = Marker(claim_id="c", claim_type="symptom", claim_text="", label="confirmed", segments=segments, link="/")
    marker.stack()
    points = [p for s in segments for p in s.points]
    for a in points:
        for b in points:
            if a is not b and a.y == b.y:
                assert abs(a.x - b.x) >= LANE_GAP, (a.x, b.x, a.y)
    lanes = {p.y for p in points}
    assert min(lanes) == LANE_TOP
    assert marker.height == 2 * LANE_TOP + LANE_STEP * (len(lanes) - 1)
    if all(abs(a.x - b.x) >= LANE_GAP for a in points for b in points if a is not b):
        assert lanes == {LANE_TOP}, "points far apart stay on one line"
