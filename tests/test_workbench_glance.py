"""The session page and the session list read at a glance (issue 28 item 3): the verdict and the
line that answers first, then the charts the answer cites (the others folded), the timeline, the
key facts in the answer's order with their evidence, the audit trail folded; the list shows each
session's answer line, service and source; share links name the host the page was asked on."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup, escape

from veridiag.api import create_app
from veridiag.api.evidence import EvidenceCharts, LogFigure, MetricFigure
from veridiag.api.i18n import TEXT
from veridiag.api.workbench import session_view, templates
from veridiag.config import Settings
from veridiag.contracts.json import json_object
from veridiag.pipeline import audit_chain
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.pipeline.shape import MAX_KEY_FACTS, answer_line

QUESTION = "Why is checkout slow since 10:00?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("glance")


@pytest.fixture(scope="module")
def assembly(home: Path) -> Assembly:
    return assemble(Settings(home=home))


@pytest.fixture(scope="module")
def client(home: Path, assembly: Assembly) -> TestClient:
    return TestClient(create_app(Settings(home=home), assembly=assembly), base_url="http://localhost")


@pytest.fixture(scope="module")
def session_id(client: TestClient) -> str:
    return str(client.post("/api/v1/chat", json={"query": QUESTION}).json()["session_id"])


class _Outline(HTMLParser):
    """Each element with an id, in document order, with whether it sits in a closed fold."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.folded: dict[str, bool] = {}
        self.stack: list[tuple[str, bool]] = []  # (tag, is a closed <details>)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.append(str(found["id"]))
            self.folded[str(found["id"])] = any(closed for _, closed in self.stack)
        if tag not in ("br", "hr", "img", "input", "meta", "link", "wbr", "col", "source"):  # void: no end tag
            self.stack.append((tag, tag == "details" and "open" not in found))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)  # <path/> in an SVG: opens nothing
        if found.get("id"):
            self.ids.append(str(found["id"]))
            self.folded[str(found["id"])] = any(closed for _, closed in self.stack)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break


def _outline(page: str) -> _Outline:
    outline = _Outline()
    outline.feed(page)
    return outline


def test_the_page_opens_with_the_answer_then_cited_charts_timeline_key_facts_and_a_folded_audit(
    client: TestClient, assembly: Assembly, session_id: str
) -> None:
    page = client.get(f"/sessions/{session_id}?lang=en").text
    outline = _outline(page)
    sections = ["final-answer", "evidence", "incident-timeline", "key-facts", "audit"]
    assert [i for i in outline.ids if i in sections] == sections
    for fold in ("claims", "composer-input", "gatekeeper", "timeline", "invocations"):
        assert fold in outline.ids and re.search(rf'<details id="{fold}">', page), fold  # folded, not open

    chain = audit_chain(assembly.store, session_id)
    assert chain is not None
    line = answer_line(chain.final_answer or "", str(json_object(chain.composer.input).get("scope")))
    assert line and line.startswith("Inferred") and "payment-service" in line
    shown = re.search(r'<p class="answer-line" lang="en">(.*?)</p>', page, re.S)
    assert shown and shown.group(1).strip() == str(escape(line))


def test_key_facts_are_the_answers_in_its_order_each_with_evidence_that_is_on_the_page(
    client: TestClient, assembly: Assembly, session_id: str
) -> None:
    chain = audit_chain(assembly.store, session_id)
    assert chain is not None
    view = session_view(chain)
    stored = json_object(chain.composer.input).get("key_facts")
    assert isinstance(stored, list) and 0 < len(stored) <= MAX_KEY_FACTS
    assert [f.claim_id for f in view.key_facts] == stored
    page = client.get(f"/sessions/{session_id}?lang=en").text
    listed = re.findall(r'<li data-claim="([^"]+)">', page.split('id="key-facts"', 1)[1].split('id="audit"', 1)[0])
    assert listed == stored
    refs = {int(n) for n in re.findall(r'class="evidence-ref small" href="#invocation-(\d+)"', page)}
    assert refs and all(f'id="invocation-{n}"' in page for n in refs)
    assert refs <= set(view.lead_invocations)


def test_charts_the_answer_cites_lead_and_the_others_are_folded(
    client: TestClient, assembly: Assembly, session_id: str
) -> None:
    chain = audit_chain(assembly.store, session_id)
    assert chain is not None
    view = session_view(chain)
    page = client.get(f"/sessions/{session_id}?lang=en").text
    outline = _outline(page)
    figures = [i for i in outline.ids if re.fullmatch(r"evidence-\d+", i)]
    assert figures, "the demo's answer cites charts"
    lead = [f for f in figures if not outline.folded[f]]
    folded = [f for f in figures if outline.folded[f]]
    assert lead and {int(f.split("-")[1]) for f in lead} <= set(view.lead_invocations)
    assert all(int(f.split("-")[1]) not in view.lead_invocations for f in folded)
    assert figures == lead + folded  # what the answer cites first


def _figure(kind: str, invocation_id: int) -> Any:
    common = {"invocation_id": invocation_id, "dom_id": f"e-{invocation_id}", "title": "t", "svg": Markup("")}
    if kind == "metric":
        return MetricFigure(**common, cited=[])
    return LogFigure(**common, matched=None, counted=None, rows=[])


@given(
    st.lists(st.tuples(st.sampled_from(["metric", "log"]), st.integers(1, 40)), unique_by=lambda x: x[1], max_size=12),
    st.sets(st.integers(1, 40), max_size=8),
)
@settings(max_examples=60, deadline=None)
def test_split_keeps_every_figure_once_the_lead_first(figures: list[tuple[str, int]], lead: set[int]) -> None:
    charts = EvidenceCharts(
        metrics=[_figure(k, i) for k, i in figures if k == "metric"],
        logs=[_figure(k, i) for k, i in figures if k == "log"],
    )
    first, rest = charts.split(lead)

    def ids(found: EvidenceCharts) -> list[int]:
        return [f.invocation_id for f in found.metrics] + [f.invocation_id for f in found.logs]

    assert sorted(ids(first) + ids(rest)) == sorted(ids(charts))
    if lead:
        assert all(i in lead for i in ids(first)) and all(i not in lead for i in ids(rest))
    else:
        assert not rest  # nothing cited first: every figure shows


def test_a_long_template_is_cut_and_opens_whole() -> None:
    """A log template table spans the page; a template past 240 characters shows its first 200
    and the whole one a click away."""
    long = "ERROR " + " ".join(f"field{i}=<*>" for i in range(60))
    rows = [{"template": long, "count": 3, "cited_by": []}, {"template": "short", "count": 1, "cited_by": []}]
    figure = LogFigure(invocation_id=9, dom_id="e-9", title="t", svg=Markup(""), matched=4, counted=None, rows=rows)
    html = templates.env.get_template("_evidence_charts.html").render(
        charts=EvidenceCharts(metrics=[], logs=[figure]),
        t=TEXT["en"],
        chain=SimpleNamespace(session=SimpleNamespace(id="s-1")),
        lang="en",
    )
    cut = re.search(r'<details class="long-template"><summary><code>(.*?)</code>', html, re.S)
    assert cut and cut.group(1) == str(escape(long[:200])) + "…"
    assert f"<code>{escape(long)}</code>" in html and "<code>short</code>" in html and html.count("long-template") == 1


def test_the_list_shows_answer_service_and_source(client: TestClient, assembly: Assembly, session_id: str) -> None:
    assembly.pipeline.run("订单123支付失败，帮我看看原因", source="alert")
    page = client.get("/?lang=en").text
    rows = page.split('<tbody id="rows">', 1)[1].split("</tbody>", 1)[0]
    stored = assembly.store.get_session(session_id)
    assert stored is not None and stored.source == "api" and stored.service == "payment-service"
    assert stored.answer_line and stored.answer_line[:60] in rows.replace("&#39;", "'")
    assert ">API<" in rows and ">alert<" in rows and "payment-service" in rows
    listed = client.get("/api/v1/sessions").json()["items"]
    assert {s["source"] for s in listed} >= {"api", "alert"} and all("answer_line" in s for s in listed)
    found = client.get("/?lang=en&q=payment-service").text  # the service is searchable too
    assert "payment-service" in found


def test_a_session_stored_before_the_list_columns_shows_its_question(client: TestClient, assembly: Assembly) -> None:
    from veridiag.store.models import SESSIONS

    old = assembly.pipeline.run("why is inventory-service restarting?").session_id
    with assembly.store.engine.begin() as connection:  # as stored before migration 0010
        connection.execute(
            SESSIONS.update().where(SESSIONS.c.id == old).values(source=None, answer_line=None, service=None)
        )
    rows = client.get("/?lang=en").text
    assert "why is inventory-service restarting?" in rows
    page = client.get(f"/sessions/{old}?lang=en")
    assert page.status_code == 200 and 'class="answer-line"' in page.text


def test_share_links_name_the_host_asked_unless_a_public_url_is_configured(
    home: Path, assembly: Assembly, session_id: str
) -> None:
    asked = TestClient(
        create_app(Settings(home=home, api_allowed_hosts=["wb.example.test"]), assembly=assembly),
        base_url="https://wb.example.test:8443",
    )
    page = asked.get(f"/sessions/{session_id}?lang=en").text
    assert f'value="https://wb.example.test:8443/sessions/{session_id}?lang=en"' in page
    public = Settings(home=home, delivery={"workbench_url": "https://oncall.example.test/vd"})
    configured = TestClient(create_app(public, assembly=assembly), base_url="http://localhost")
    page = configured.get(f"/sessions/{session_id}?lang=zh").text
    assert f'value="https://oncall.example.test/vd/sessions/{session_id}?lang=zh"' in page
