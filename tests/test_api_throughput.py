"""What serving costs besides the diagnoses: one worker-thread hop per chat, and the memory an
idle ``veridiag serve`` keeps — no more on a first start than on a restart."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from veridiag.api import create_app
from veridiag.bench.api import serve_idle_rss
from veridiag.config import Settings
from veridiag.pipeline.factory import Assembly, assemble, new_home

BASE = "http://localhost"
TOKEN = "t" * 24


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("throughput")


@pytest.fixture(scope="module")
def assembly(home: Path) -> Assembly:
    return assemble(Settings(home=home))


def test_a_chat_leaves_the_event_loop_only_for_its_diagnosis(
    assembly: Assembly, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Auth is microseconds of work: a worker thread for it is a hop per request and, under
    load, a wait for the GIL beside the diagnoses."""
    hops: list[str] = []
    real = anyio.to_thread.run_sync

    async def counting(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(func, "__name__", type(func).__name__))
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counting)
    settings = Settings(home=Path("/nonexistent"), api_tokens=SecretStr(TOKEN))
    client = TestClient(create_app(settings, assembly=assembly), base_url=BASE)
    answered = client.post(
        "/api/v1/chat", json={"query": "订单123支付失败"}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert answered.status_code == 200 and hops == ["diagnose"]
    hops.clear()
    refused = client.post("/api/v1/chat", json={"query": "订单123支付失败"})
    assert refused.status_code == 401 and hops == []
    metrics = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert metrics.status_code == 200 and "veridiag_sessions" in metrics.text
    assert client.get("/metrics").status_code == 401


def test_a_home_is_new_until_its_store_and_embedded_file_exist(assembly: Assembly, home: Path, tmp_path: Path) -> None:
    assert not new_home(Settings(home=home))
    assert new_home(Settings(home=tmp_path))
    assert new_home(Settings(home=home, database_url=f"sqlite:///{tmp_path / 'other.db'}"))
    assert not new_home(Settings(home=home, database_url="postgresql://nowhere.invalid/veridiag"))
    assert new_home(Settings(home=tmp_path, database_url="postgresql://nowhere.invalid/veridiag"))


def test_a_first_serve_idles_no_larger_than_a_restart() -> None:
    """The first start builds the home (migrations, the demo, the runbook index) in a child
    process; before, the server kept ~25 MB of that work for good (174 against 148 MB)."""
    if not Path("/proc/self/status").exists():
        pytest.skip("resident memory is read from /proc (Linux)")
    memory = serve_idle_rss(restarts=1)
    assert memory.idle_rss_first_start_mb is not None and memory.idle_rss_mb is not None
    assert memory.idle_rss_first_start_mb <= memory.idle_rss_mb * 1.05, memory
