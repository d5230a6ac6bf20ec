"""What a chat costs the server besides its diagnosis: one worker-thread hop, and the load
benchmark's in-process baseline and idle-memory figures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from veridiag.api import create_app
from veridiag.config import Settings
from veridiag.pipeline.factory import Assembly, assemble

BASE = "http://localhost"
TOKEN = "t" * 24


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("throughput")))


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
