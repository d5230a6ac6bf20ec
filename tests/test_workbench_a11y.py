"""The workbench as people with other screens, eyes and hands meet it, in real Chromium: every
demo incident's session page and an imported real incident's, at desktop (1280 px) and phone
(390 px) widths, light and dark, saved to $VERIDIAG_SCREENSHOTS; and on each page the
accessibility basics — controls and pictures named, headings in order, Chinese text marked as
Chinese, text contrast ≥ 4.5:1 in both schemes, every tab stop showing its focus, the ask form,
claim links and copy buttons reachable by keyboard (Enter opens a claim), and no sideways
scrolling on a phone. The checks read the page generally (tests/a11y.js), not its markup, so
sections added later are held to them too."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from pprint import pformat
from typing import Any

import pytest

from tests.browser import launched, shot
from veridiag.api import create_app
from veridiag.api.local import LocalServer
from veridiag.config import Settings
from veridiag.ingest.batch import import_metric_files
from veridiag.ingest.dependencies import import_dependencies
from veridiag.ingest.importers import import_logs
from veridiag.pipeline.factory import assemble
from veridiag.text.cjk import detect_lang
from veridiag.tools.demo.loader import bundled_environment
from veridiag.tools.factory import embedded_environment

CHECKS = Path(__file__).with_name("a11y.js")
#: An Apache 2.0 error log in its public format (tests/fixtures/incidents/NOTICE), asked about
#: as an on-call engineer who imported it would.
IMPORTED = ("imported-apache", "Why did web-frontend log errors on Dec 4 2005 at 06:00?")
#: A labelled fault of the Nezha OnlineBoutique day (tests/fixtures/nezha_days/NOTICE): CPU
#: contention injected into cartservice at 04:36:03 UTC.
NEZHA_DAY = Path(__file__).parent / "fixtures" / "nezha_days" / "onlineboutique-2022-08-22" / "metric"
NEZHA = ("nezha-cartservice-cpu", "2022-08-22 04:37 UTC 左右是哪个服务出了问题？")
WIDTHS = {"desktop": 1280, "phone": 390}
SCHEMES = ("light", "dark")
#: Roles Chromium exposes that a person must be able to name to use (WAI-ARIA "name required").
NAMED_ROLES = {
    "button",
    "link",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "checkbox",
    "radio",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "menuitem",
    "image",
    "img",
}


def _incidents() -> list[tuple[str, str]]:
    """Each demo incident with one of its questions, Chinese and English in turn."""
    return [
        (incident.id, incident.questions[index % len(incident.questions)])
        for index, incident in enumerate(bundled_environment().incidents)
    ]


@dataclass(frozen=True)
class Served:
    url: str
    sessions: dict[str, str]  # incident → session id


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One home holding the demo and the imported log, one diagnosis per incident, one server."""
    settings = Settings(home=tmp_path_factory.mktemp("a11y"))
    environment = embedded_environment(settings)
    try:
        report = import_logs(
            environment, Path(__file__).parent / "fixtures" / "incidents" / "apache_error_log", service="web-frontend"
        )
    finally:
        environment.close()
    assert report.imported > 0 and report.unparsed == 0
    environment = embedded_environment(settings)
    try:
        assert import_metric_files(environment, [NEZHA_DAY]).imported > 0
        import_dependencies(environment, NEZHA_DAY / "dependency.csv")
    finally:
        environment.close()
    assembly = assemble(settings)
    try:
        sessions = {name: assembly.pipeline.run(question).session_id for name, question in CASES}
        with LocalServer(create_app(settings, assembly=assembly)) as server:
            yield Served(server.url, sessions)
    finally:
        assembly.close()


@pytest.fixture(scope="module")
def page(served: Served) -> Iterator[Any]:
    """One browser, one page reused by every test; the checks installed on every load."""
    with launched() as browser:
        context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
        context.add_init_script(path=str(CHECKS))
        yield context.new_page()
        context.close()


def _ax_unnamed(page: Any) -> list[str]:
    """Controls, links and images without an accessible name, as Chromium computes names."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    return [
        f"{node['role']['value']} (backend node {node.get('backendDOMNodeId')})"
        for node in nodes
        if not node.get("ignored")
        and node.get("role", {}).get("value") in NAMED_ROLES
        and not str(node.get("name", {}).get("value", "")).strip()
    ]


def _structure(page: Any, lang: str) -> dict[str, Any]:
    """The scheme- and width-independent checks, and the page's language."""
    expected = "zh-CN" if lang == "zh" else "en"
    shown = page.get_attribute("html", "lang")
    return {
        "lang": [] if shown == expected else [f'html lang="{shown}", expected "{expected}"'],
        "names": _ax_unnamed(page),
        "pictures": page.evaluate("__a11y.pictures()"),
        "headings": page.evaluate("__a11y.headings()"),
        "languages": page.evaluate("__a11y.languages()"),
    }


def _contrast(page: Any) -> dict[str, Any]:
    """Text contrast in each colour scheme; the page must follow the reader's scheme."""
    found: dict[str, Any] = {}
    backgrounds = set()
    for scheme in SCHEMES:
        page.emulate_media(color_scheme=scheme)
        backgrounds.add(page.evaluate("getComputedStyle(document.body).backgroundColor"))
        found[f"contrast {scheme}"] = page.evaluate("__a11y.contrast(4.5)")
    page.emulate_media(color_scheme="light")
    found["same colours in every scheme"] = [] if len(backgrounds) == len(SCHEMES) else sorted(backgrounds)
    return found


def _phone_overflow(page: Any) -> list[str]:
    """Sideways scrolling at phone width, with every collapsed section opened."""
    page.set_viewport_size({"width": WIDTHS["phone"], "height": 844})
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    found: list[str] = page.evaluate("__a11y.overflow()")
    page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})
    return found


#: Every width in every scheme.
ALL_VIEWS = [(label, scheme) for scheme in SCHEMES for label in WIDTHS]


def _screenshots(page: Any, name: str, views: list[tuple[str, str]] = ALL_VIEWS) -> None:
    for label, scheme in views:
        page.emulate_media(color_scheme=scheme)
        page.set_viewport_size({"width": WIDTHS[label], "height": 900})
        shot(page, f"a11y-{name}-{label}-{scheme}")
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})


def _tab_stops(page: Any, wanted: str, count: int | None = None, limit: int = 400) -> list[dict[str, Any]]:
    """Tab from the top of the page until ``count`` (default: every) element matching ``wanted``
    had focus, or the focus came back round; each stop says whether its focus showed."""
    # Start before the first element: a blur alone would let Tab go on from the last focus.
    page.evaluate(
        """() => { const start = document.createElement("span"); start.tabIndex = -1;
        document.body.prepend(start); start.focus(); start.blur(); start.remove(); window.scrollTo(0, 0); }"""
    )
    remaining = count or page.evaluate(f"document.querySelectorAll({wanted!r}).length")
    stops: list[dict[str, Any]] = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = page.evaluate("(wanted) => __a11y.focused(wanted)", wanted)
        if stop is None or (stops and stop["element"] == stops[0]["element"] and stop["href"] == stops[0]["href"]):
            break
        stops.append(stop)
        remaining -= stop["wanted"]
        if remaining == 0:
            break
    return stops


def _assert_clean(problems: dict[str, Any]) -> None:
    found = {check: items for check, items in problems.items() if items}
    if found:
        pytest.fail(pformat(found, width=120))


CASES = [*_incidents(), IMPORTED, NEZHA]


@pytest.mark.parametrize(("name", "question"), CASES, ids=[name for name, _question in CASES])
def test_session_page_screens_and_accessibility(served: Served, page: Any, name: str, question: str) -> None:
    """Shown in the question's language, then the other: screenshots, then every check."""
    lang = detect_lang(question)
    page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})
    page.goto(f"{served.url}/sessions/{served.sessions[name]}?lang={lang}")
    page.wait_for_selector("#final-answer")
    page.wait_for_selector("button.copy:not([hidden])")  # the page script ran
    _screenshots(page, name)
    problems = _structure(page, lang) | _contrast(page)

    wanted = "#key-facts a.claim-link, button.copy"  # the full claim list is folded in the audit trail
    stops = _tab_stops(page, wanted)
    problems["focus not shown"] = [s for s in stops if not s["visible"]]
    reached = sum(s["wanted"] for s in stops)
    problems["not reached by Tab"] = [] if reached == page.locator(wanted).count() else [f"{reached} of {wanted}"]
    assert page.locator("#key-facts a.claim-link").count() > 0
    if name == NEZHA[0]:  # the injected culprit, named on the line that answers
        assert "cartservice" in page.inner_text("#final-answer .answer-line")

    assert _tab_stops(page, "#key-facts a.claim-link", count=1)[-1]["wanted"]
    page.keyboard.press("Enter")  # on the first claim link, reached by keyboard
    page.wait_for_selector("#claim-panel #claim-detail")
    _screenshots(page, f"{name}-claim-open", [("phone", "light"), ("desktop", "dark")])
    problems |= {f"{check} (claim open)": found for check, found in _contrast(page).items()}
    problems["headings (claim open)"] = page.evaluate("__a11y.headings()")
    problems["phone overflow"] = _phone_overflow(page)

    other = "en" if lang == "zh" else "zh"
    page.goto(f"{served.url}/sessions/{served.sessions[name]}?lang={other}")
    page.wait_for_selector("#final-answer")
    problems |= {f"{check} ({other})": found for check, found in _structure(page, other).items()}
    _assert_clean(problems)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_index_and_claim_pages_accessibility(served: Served, page: Any, lang: str) -> None:
    """The session list with the ask form, and a claim opened as its own page (no script)."""
    page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})
    page.goto(f"{served.url}/?lang={lang}")
    page.wait_for_selector("#ask-form")
    _screenshots(page, f"index-{lang}")
    problems = _structure(page, lang) | _contrast(page)
    stops = _tab_stops(page, "#ask-query, #ask-button")
    problems["focus not shown"] = [s for s in stops if not s["visible"]]
    problems["ask form not reached by Tab"] = [] if sum(s["wanted"] for s in stops) == 2 else [stops]
    problems["phone overflow"] = _phone_overflow(page)

    page.goto(f"{served.url}/sessions/{served.sessions[IMPORTED[0]]}?lang={lang}")
    page.goto(served.url + page.get_attribute("a.claim-link", "href"))
    page.wait_for_selector("#claim-detail")
    problems |= {f"{check} (claim page)": found for check, found in (_structure(page, lang) | _contrast(page)).items()}
    problems["phone overflow (claim page)"] = _phone_overflow(page)
    _assert_clean(problems)
