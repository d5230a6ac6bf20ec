"""The Trace Workbench in a real browser (Playwright driving Debian's Chromium): ask through the
page and watch the stages stream, open a claim and check the highlighted evidence is exactly the
stored output's matched span, see a blocked claim's reason, read pages without JavaScript.
Screenshots go to $VERIDIAG_SCREENSHOTS (CI artifacts)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr
from pydantic_ai.models import Model
from pydantic_ai.models.function import FunctionModel

from tests.browser import launched, shot
from tests.builders import readable
from tests.llm_scripts import claim, evidence, executor_script
from veridiag.agents.engines import offline_roles
from veridiag.agents.llm import llm_roles
from veridiag.api import create_app
from veridiag.api.local import LocalServer
from veridiag.config import LLMRoleSettings, LLMSettings, Settings
from veridiag.pipeline import DiagnosisPipeline
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.tools.factory import embedded_environment


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Assembly, Settings]]:
    settings = Settings(home=tmp_path_factory.mktemp("workbench"))
    assembly = assemble(settings)
    with LocalServer(create_app(settings, assembly=assembly)) as server:
        yield server.url, assembly, settings


@pytest.fixture(scope="module")
def browser(served: Any) -> Iterator[Any]:
    with launched() as instance:
        yield instance


def test_ask_stream_open_claim_and_highlighted_span(served: Any, browser: Any) -> None:
    base = served[0]
    page = browser.new_page(locale="zh-CN")
    page.goto(f"{base}/?lang=zh")
    page.fill("#ask-query", "订单123支付失败，帮我看看是什么原因")
    page.click("#ask-button")
    page.wait_for_selector("#ask-result", timeout=60_000)
    stages = page.locator("#ask-stages li").all_inner_texts()
    assert any(s.startswith("plan") for s in stages) and any(s.startswith("tool #") for s in stages)
    assert any(s.startswith("gatekeeper") for s in stages) and any(s.startswith("composer") for s in stages)
    shot(page, "01-ask-streamed")

    page.click("#ask-result")
    page.wait_for_selector("#final-answer")
    session_id = page.url.split("/sessions/")[1].split("?")[0]
    order = [
        page.locator(f"#{section}").bounding_box()["y"]
        for section in ("final-answer", "evidence", "incident-timeline", "key-facts", "audit")
    ]
    assert order == sorted(order), "the answer, then the charts it cites, the timeline, the key facts, the audit"
    assert "payment-service" in page.inner_text("#final-answer .answer-line")
    # the audit trail is folded, in the chain's order
    assert page.locator("#audit > details[open]").count() == 0
    folds = page.locator("#audit > details").evaluate_all("(all) => all.map((d) => d.id)")
    assert folds == ["claims", "composer-input", "gatekeeper", "timeline", "invocations"]
    # a key fact's evidence reference opens the folds around the tool output it names
    ref = page.locator("#key-facts a.evidence-ref").first
    target = ref.get_attribute("href")
    assert target and not page.locator(target).is_visible()
    ref.click()
    page.wait_for_selector(f"{target} pre.output", state="visible")
    assert page.locator(target).evaluate("(d) => d.open")

    page.locator("a.claim-link").first.click()
    mark = page.wait_for_selector("#claim-panel mark.matched-span")
    shown = mark.inner_text()
    invocation_id = int(page.get_attribute("#claim-panel section.evidence", "data-invocation"))
    chain = page.request.get(f"{base}/api/v1/sessions/{session_id}/audit").json()
    claim_id = page.get_attribute("#claim-detail", "data-claim")
    trace = next(t for t in chain["gatekeeper"]["trace"] if t["claim_id"] == claim_id)
    span = next(c["matched_span"] for c in trace["checks"] if c.get("matched_span"))
    output = next(i["output"] for i in chain["invocations"] if i["id"] == invocation_id)
    assert span["invocation_id"] == invocation_id
    assert shown == output[span["start"] : span["end"]] == span["text"]
    shot(page, "02-claim-evidence-highlighted")
    page.close()


def test_blocked_claim_shows_why(served: Any, browser: Any) -> None:
    base, assembly, settings = served

    def final(invocation: int, line: str) -> str:
        return evidence(
            [
                claim("c1", "payment-service 出现错误日志。", invocation, line),
                claim("c2", "网关返回 ERR_FAKE_4242 共 9137 次。", 987654, "ERR_FAKE_4242 count=9137"),
            ]
        )

    def factory(config: LLMRoleSettings) -> Model:
        return FunctionModel(executor_script(final), model_name="fn-executor")

    environment = embedded_environment(settings)
    roles = llm_roles(
        LLMSettings(executor=LLMRoleSettings(model="fn-executor")),
        offline_roles(environment, assembly.store),
        environment,
        model_factory=factory,
    )
    result = DiagnosisPipeline(assembly.store, roles, toolbox=assembly.pipeline.toolbox).run(
        "订单123支付失败，帮我看看原因"
    )
    executor = next(c for c in readable(result.self_evaluation)["role_calls"] if c["role"] == "executor")
    assert executor["engine"] == "llm:fn-executor", executor  # ran beside Playwright's event loop

    page = browser.new_page(locale="en-US")
    page.goto(f"{base}/sessions/{result.session_id}?lang=en")
    page.click("#claims > summary")  # the full claim list is folded in the audit trail
    row = page.locator("#row-c2")
    assert "blocked" in row.inner_text()
    row.locator("a.claim-link").click()
    reason = page.wait_for_selector("#claim-panel .blocked-reason").inner_text()
    assert "Blocked because" in reason and "987654" in reason
    assert "ERR_FAKE_4242" not in page.inner_text("#final-answer")
    shot(page, "03-blocked-claim-reason")
    page.close()


def test_pages_read_without_javascript(served: Any, browser: Any) -> None:
    base, assembly, _settings = served
    session = assembly.store.list_sessions(limit=1)[0]
    context = browser.new_context(java_script_enabled=False, locale="en-US")
    page = context.new_page()
    page.goto(f"{base}/?lang=en")
    assert session.query[:20] in page.inner_text("table.sessions")
    page.click(f"a[href^='/sessions/{session.id}']")
    page.wait_for_selector("#final-answer")
    page.click("#claims > summary")  # a fold opens without script
    page.locator("#claims a.claim-link").first.click()  # a real link: the claim opens as its own page
    page.wait_for_selector("#claim-detail")
    assert page.locator("#claim-detail pre.output").count() >= 1
    shot(page, "04-no-javascript-claim-page")
    context.close()


def test_api_docs_render_with_no_internet(served: Any, browser: Any) -> None:
    """Swagger UI draws the API from this server alone: every other request is refused."""
    base = served[0]
    page = browser.new_page()
    outside: list[str] = []

    def only_this_server(route: Any) -> None:
        if route.request.url.startswith(base):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    page.goto(f"{base}/api/docs")
    page.wait_for_selector(".opblock-summary-path", timeout=30_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/v1/chat" in paths and "/api/v1/sessions/{session_id}/audit" in paths
    assert outside == []
    shot(page, "05-api-docs-offline")
    page.close()


def test_sign_in_ask_and_sign_out_without_javascript(served: Any, browser: Any) -> None:
    """With tokens: the login form, the ask form (its hidden CSRF token) and the logout button are
    plain forms; the session cookie is HttpOnly, so page scripts cannot read it."""
    _base, assembly, settings = served
    app = create_app(settings.model_copy(update={"api_tokens": SecretStr("wb-token")}), assembly=assembly)
    with LocalServer(app) as server:
        context = browser.new_context(java_script_enabled=False, locale="en-US")
        page = context.new_page()
        page.goto(f"{server.url}/?lang=en")
        assert page.url.startswith(f"{server.url}/login")
        page.fill("input[name=token]", "wb-token")
        page.click("form.login button")
        page.wait_for_selector("#ask-form")
        cookie = next(c for c in context.cookies() if c["name"] == "veridiag_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and "wb-token" not in cookie["value"]
        page.fill("#ask-query", "Why is checkout slow since 10:00?")
        page.click("#ask-button")
        page.wait_for_selector("#final-answer")
        assert "/sessions/" in page.url and "payment-service" in page.inner_text("#final-answer")
        shot(page, "06-signed-in-no-javascript-ask")
        page.click("#logout-button")
        page.wait_for_selector("form.login")
        assert not [c for c in context.cookies() if c["name"] == "veridiag_session"]
        page.goto(f"{server.url}/")
        assert page.url.startswith(f"{server.url}/login")
        context.close()


def test_signed_in_ask_streams_with_the_session_cookie(served: Any, browser: Any) -> None:
    _base, assembly, settings = served
    app = create_app(settings.model_copy(update={"api_tokens": SecretStr("wb-token")}), assembly=assembly)
    with LocalServer(app) as server:
        page = browser.new_page(locale="en-US")
        page.goto(f"{server.url}/login?lang=en")
        page.fill("input[name=token]", "wb-token")
        page.click("form.login button")
        page.fill("#ask-query", "Why is checkout slow since 10:00?")
        page.click("#ask-button")
        page.wait_for_selector("#ask-result", timeout=60_000)
        assert any(s.startswith("composer") for s in page.locator("#ask-stages li").all_inner_texts())
        page.close()


def test_copy_buttons_copy_the_permalink_and_the_markdown(served: Any, browser: Any) -> None:
    base, assembly, _settings = served
    session_id = assembly.pipeline.run("Why is checkout slow since 10:00?").session_id
    context = browser.new_context(locale="en-US", permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(f"{base}/sessions/{session_id}?lang=en")
    status = "#share .copy-status"
    page.click("button.copy[data-copy-url]")  # hidden until the script runs: a click proves it ran
    page.wait_for_function(f"document.querySelector('{status}').textContent !== ''")
    assert page.inner_text(status) == "Copied"
    markdown = page.request.get(f"{base}/sessions/{session_id}/answer.md?lang=en").text()
    assert page.evaluate("navigator.clipboard.readText()") == markdown and "payment-service" in markdown
    page.evaluate(f"document.querySelector('{status}').textContent = ''")
    page.click("button.copy[data-copy-text]")
    page.wait_for_function(f"document.querySelector('{status}').textContent !== ''")
    assert page.evaluate("navigator.clipboard.readText()") == page.input_value("#permalink")
    shot(page, "07-share-and-export")
    context.close()
