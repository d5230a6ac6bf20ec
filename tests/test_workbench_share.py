"""Share and export on the session page: the permalink, the answer as Markdown (the bytes
``veridiag ask --format markdown`` prints) and the audit JSON download — same auth as every
workbench page, zh and en labels, 404 for an unknown id, no verified answer for a failed run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from veridiag.agents import scripted_roles
from veridiag.api import create_app
from veridiag.cli.app import app as cli
from veridiag.config import Settings
from veridiag.delivery import render_markdown, session_report
from veridiag.pipeline import DiagnosisPipeline
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.pipeline.report import answer_document, stored_document

QUESTION = "Why is checkout slow since 10:00?"
WORKBENCH = "https://workbench.example.test/veridiag"


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """One ``ask --format markdown`` run: its home, session id and printed Markdown."""
    home = tmp_path_factory.mktemp("share")
    env = {"VERIDIAG_HOME": str(home), "VERIDIAG_DELIVERY__WORKBENCH_URL": WORKBENCH}
    result = CliRunner().invoke(cli, ["ask", QUESTION, "--format", "markdown"], env=env)
    assert result.exit_code == 0, result.output
    found = re.search(r"/sessions/(s-[^?]+)\?lang=en\)", result.stdout)
    assert found, result.stdout
    return home, found.group(1), result.stdout


@pytest.fixture(scope="module")
def settings(asked: tuple[Path, str, str]) -> Settings:
    return Settings(home=asked[0], delivery={"workbench_url": WORKBENCH}, api_tokens="alpha")


@pytest.fixture(scope="module")
def assembly(settings: Settings) -> Assembly:
    return assemble(settings)


@pytest.fixture(scope="module")
def client(settings: Settings, assembly: Assembly) -> TestClient:
    client = TestClient(create_app(settings, assembly=assembly), base_url="http://localhost")
    client.headers["Authorization"] = "Bearer alpha"
    return client


def test_markdown_is_what_ask_printed_and_what_delivery_renders(
    asked: tuple[Path, str, str], client: TestClient, settings: Settings, assembly: Assembly
) -> None:
    _home, session_id, printed = asked
    response = client.get(f"/sessions/{session_id}/answer.md")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    assert response.text == printed  # no ?lang=: the question's language, as ask picks it
    session = assembly.store.get_session(session_id)
    assert session is not None
    document = stored_document(session, assembly.engine)
    assert document is not None
    for lang in ("en", "zh"):
        expected = render_markdown(session_report(settings, document, QUESTION, lang)) + "\n"
        assert client.get(f"/sessions/{session_id}/answer.md?lang={lang}").text == expected
    assert f"({WORKBENCH}/sessions/{session_id}?lang=en)" in printed and "payment-service" in printed


def test_markdown_is_redacted(client: TestClient, assembly: Assembly) -> None:
    secret = "password=hunter2-very-secret"
    asked = client.post("/api/v1/chat", json={"query": f"Why is checkout slow since 10:00? {secret}"})
    assert asked.status_code == 200
    markdown = client.get(f"/sessions/{asked.json()['session_id']}/answer.md").text
    assert "hunter2" not in markdown and "[REDACTED:password]" in markdown and "checkout" in markdown


def test_audit_download_is_the_audit_api_json_as_an_attachment(
    asked: tuple[Path, str, str], client: TestClient
) -> None:
    session_id = asked[1]
    download = client.get(f"/sessions/{session_id}/audit.json")
    api = client.get(f"/api/v1/sessions/{session_id}/audit")
    assert download.status_code == api.status_code == 200
    assert download.headers["content-type"] == "application/json"
    assert download.headers["content-disposition"] == f'attachment; filename="veridiag-{session_id}-audit.json"'
    assert download.content == api.content and download.json()["session"]["id"] == session_id


def test_unknown_session_is_404_and_pages_need_the_token(asked: tuple[Path, str, str], client: TestClient) -> None:
    for path in ("/sessions/s-nope/answer.md", "/sessions/s-nope/audit.json"):
        assert client.get(path).status_code == 404
    stranger = TestClient(client.app, base_url="http://localhost")
    for path in (f"/sessions/{asked[1]}/answer.md", f"/sessions/{asked[1]}/audit.json"):
        refused = stranger.get(path, headers={"Accept": "application/json"})
        assert refused.status_code == 401 and "payment-service" not in refused.text


def test_failed_session_markdown_says_there_is_no_verified_answer(
    client: TestClient, settings: Settings, assembly: Assembly
) -> None:
    roles = scripted_roles(executor=RuntimeError("model endpoint exploded"))
    result = DiagnosisPipeline(assembly.store, roles).run(QUESTION)
    assert result.status == "failed"
    response = client.get(f"/sessions/{result.session_id}/answer.md")
    assert response.status_code == 200
    # what ``ask --format markdown`` prints for this failed run
    printed = render_markdown(session_report(settings, answer_document(result, assembly.engine), QUESTION, "en"))
    assert response.text == printed + "\n"
    assert response.text.startswith("**FAILED · the diagnosis did not finish**") and "exploded" not in response.text
    assert "Confirmed facts" not in response.text
    assert client.get(f"/sessions/{result.session_id}/audit.json").json()["session"]["status"] == "failed"
    assert "answer.md" in client.get(f"/sessions/{result.session_id}").text


def test_running_session_has_no_verified_answer_to_copy(client: TestClient, assembly: Assembly) -> None:
    session = assembly.store.create_session("订单123支付失败，帮我看看原因")  # still running: no verdict yet
    markdown = client.get(f"/sessions/{session.id}/answer.md").text
    assert markdown.startswith("**FAILED · 诊断未完成**") and "已确认的事实" not in markdown
    assert f"/sessions/{session.id}?lang=zh)" in markdown  # no ?lang=: the question is Chinese


@pytest.mark.parametrize(
    ("lang", "labels"),
    [
        ("en", ("Share and export", "Copy as Markdown", "Download audit JSON")),
        ("zh", ("分享与导出", "复制为 Markdown", "下载审计 JSON")),
    ],
)
def test_session_page_links_share_and_export(
    asked: tuple[Path, str, str], client: TestClient, lang: str, labels: tuple[str, ...]
) -> None:
    session_id = asked[1]
    page = client.get(f"/sessions/{session_id}?lang={lang}").text
    assert all(label in page for label in labels)
    assert f'value="{WORKBENCH}/sessions/{session_id}?lang={lang}"' in page  # the permalink, shown
    # without JavaScript the links work on their own; the copy buttons wait for the script
    assert f'href="/sessions/{session_id}/answer.md?lang={lang}"' in page
    assert f'href="/sessions/{session_id}/audit.json" download' in page
    assert all(" hidden " in tag for tag in re.findall(r'<button type="button" class="copy"[^>]*>', page))
