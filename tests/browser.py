"""Chromium for the browser tests: where it is, how it is started, where screenshots go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_server

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
SHOTS = Path(os.environ.get("VERIDIAG_SCREENSHOTS") or Path(__file__).resolve().parent.parent / "build" / "screenshots")


def chromium() -> str:
    """Debian's Chromium (CI sets VERIDIAG_TEST_CHROMIUM); absent locally → skip."""
    path = os.environ.get("VERIDIAG_TEST_CHROMIUM") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else ""
    )
    if path and Path(path).exists():
        return path
    return require_server("VERIDIAG_TEST_CHROMIUM", "Chromium")


def shot(page: Any, name: str) -> None:
    """The whole page as $VERIDIAG_SCREENSHOTS/<name>.png."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@contextmanager
def launched() -> Iterator[Any]:
    """One headless Chromium for a test module (Playwright's sync API)."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    executable = chromium()
    with playwright_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            yield instance
        finally:
            instance.close()
