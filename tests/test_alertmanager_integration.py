"""A real Alertmanager (Debian's prometheus-alertmanager, which .ci/run installs) fires an alert
into ``veridiag serve``'s intake: it ends as one completed, verified session anchored at the
alert's start and one verified answer posted to a (local) Slack webhook, and Alertmanager's
repeated notifications of the same alert add nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import httpx2
import pytest
from sqlalchemy import func, select

from tests.fake_chat import Receiver, running_receiver
from tests.ports import free_port
from veridiag.alerts.posting import post_answers
from veridiag.alerts.worker import Worker
from veridiag.api import create_app
from veridiag.api.local import LocalServer
from veridiag.config import Settings
from veridiag.pipeline.factory import assemble
from veridiag.store.models import ALERT_JOBS, ALERTS

TOKEN = "am-integration-token-0123456789"
STARTS_AT = "2026-07-07T10:05:00Z"  # inside the demo day's payment incident


def alertmanager_binary() -> str:
    found = (
        os.environ.get("VERIDIAG_TEST_ALERTMANAGER")
        or shutil.which("prometheus-alertmanager")
        or shutil.which("alertmanager")
    )
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("no alertmanager binary: .ci/run must install prometheus-alertmanager")
    pytest.skip("no alertmanager binary (apt-get install prometheus-alertmanager)")


CONFIG = """
route:
  receiver: veridiag
  group_by: [alertname, service]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 2s
receivers:
  - name: veridiag
    webhook_configs:
      - url: {url}/api/v1/alerts/alertmanager
        send_resolved: true
        http_config:
          authorization:
            credentials: {token}
"""


def start(binary: str, config: Path, port: int, storage: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.path={storage}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/-/ready", timeout=1).status_code == 200:
                return process
        except httpx2.TransportError:
            pass
        if process.poll() is not None:
            raise RuntimeError(f"alertmanager exited: {process.stderr.read().decode() if process.stderr else ''}")
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("alertmanager did not become ready")


def test_an_alert_fired_through_alertmanager_ends_as_one_verified_session_and_one_chat_message(
    tmp_path: Path,
) -> None:
    binary = alertmanager_binary()
    with running_receiver() as chat:
        slack = {"name": "oncall", "kind": "slack", "url": f"{chat.url}/slack-hook/T0/B0/XYZ"}
        settings = Settings(home=tmp_path / "home", api_tokens=TOKEN, delivery={"destinations": [slack]})
        _fire_and_follow(binary, settings, tmp_path, chat)


def _fire_and_follow(binary: str, settings: Settings, tmp_path: Path, chat: Receiver) -> None:
    assembly = assemble(settings)
    app = create_app(settings, assembly=assembly)
    after_finish = post_answers(assembly.store, settings)
    worker = Worker(app.state.alert_queue, assembly.pipeline, poll_seconds=0.2, after_finish=after_finish)
    with LocalServer(app) as server:
        config = tmp_path / "alertmanager.yml"
        config.write_text(CONFIG.format(url=server.url, token=TOKEN), encoding="utf-8")
        port = free_port()
        process = start(binary, config, port, tmp_path / "am-data")
        worker.start()
        try:
            alert = {
                "labels": {"alertname": "PaymentLatencyHigh", "service": "payment-service", "instance": "pay-1:8080"},
                "annotations": {"summary": "payment p99 latency above 2s"},
                "startsAt": STARTS_AT,
            }
            fired = httpx2.post(f"http://127.0.0.1:{port}/api/v2/alerts", json=[alert], timeout=5)
            assert fired.status_code == 200, fired.text
            engine = assembly.store.engine
            deadline, job = time.monotonic() + 120, None
            while time.monotonic() < deadline:
                with engine.connect() as connection:
                    job = connection.execute(select(ALERT_JOBS)).mappings().first()
                if job is not None and job["status"] == "done":
                    break
                time.sleep(0.3)
            assert job is not None and job["status"] == "done", job
            time.sleep(5)  # repeat_interval 2s: Alertmanager has notified the same alert again
            with engine.connect() as connection:
                jobs = connection.execute(select(func.count()).select_from(ALERT_JOBS)).scalar_one()
                alerts = connection.execute(select(ALERTS)).mappings().all()
            assert jobs == 1
            assert len(alerts) == 1 and alerts[0]["job_id"] == job["id"] and alerts[0]["service"] == "payment-service"
            sessions = assembly.store.list_sessions(limit=10)
            assert [s.id for s in sessions] == [job["session_id"]]
            session = assembly.store.get_session(job["session_id"])
            assert session is not None and session.status == "completed" and session.verdict == "PASS"
            assert session.plan is not None and session.plan["start"] == "2026-07-07T09:35:00Z"
            assert "PaymentLatencyHigh" in session.query
            # One message in the team's chat: the verdict, confirmed facts, the workbench link.
            assert len(chat.received) == 1, [r.path for r in chat.received]
            message = json.dumps(chat.received[0].json(), ensure_ascii=False)
            assert "PASS" in message and "payment-service" in message and job["session_id"] in message
            assert session.deliveries is not None and [d["outcome"] for d in session.deliveries] == ["delivered"]
        finally:
            worker.stop(timeout=30)
            process.terminate()
            process.wait(timeout=10)
