"""Alert intake: senders' payloads read into alerts (a bad one is a 4xx naming the field, never
a 500), questions and windows built from them, deduplication, resolved alerts recorded, grouped
alerts diagnosed per service, HMAC-signed deliveries, and the queue's leases and retries."""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import STARTS_AT, am_alert, am_payload
from tests.fake_chat import running_receiver
from veridiag._retry import Backoff
from veridiag.agents.offline.planner import OfflinePlanner
from veridiag.alerts.intake import group_by_service, job_for
from veridiag.alerts.payloads import AlertmanagerWebhook
from veridiag.alerts.posting import post_answers
from veridiag.alerts.signatures import stale
from veridiag.alerts.worker import Worker, job_queue
from veridiag.api import create_app
from veridiag.config import AlertSettings, Settings
from veridiag.contracts.alerts import JobSpec, ReceivedAlert
from veridiag.contracts.plan import GivenTime
from veridiag.delivery.compact import TARGET_BYTES
from veridiag.delivery.dingtalk import BODY_BYTES as DINGTALK_BODY_BYTES
from veridiag.delivery.feishu import BODY_BYTES as FEISHU_BODY_BYTES
from veridiag.delivery.markup import plain
from veridiag.delivery.send import DeliveryError
from veridiag.delivery.slack import MESSAGE_BLOCKS, MESSAGE_BYTES
from veridiag.delivery.wecom import CONTENT_BYTES
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.pipeline.report import stored_document
from veridiag.store import SessionStore
from veridiag.store.jobs import SqlJobQueue
from veridiag.tools.backends.embedded import EmbeddedEnvironment

BASE = "http://localhost"
TOKEN = "alert-token-0123456789"


def pd_payload(event_type: str = "incident.triggered", incident: str = "PGR0VU2") -> dict[str, Any]:
    return {
        "event": {
            "id": "01BZ",
            "event_type": event_type,
            "resource_type": "incident",
            "occurred_at": "2026-07-07T10:30:00Z",
            "data": {
                "id": incident,
                "type": "incident",
                "title": "Payments time out",
                "status": "triggered",
                "created_at": STARTS_AT,
                "service": {"id": "PSVC", "summary": "payment-service", "type": "service_reference"},
                "urgency": "high",
            },
        }
    }


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("alerts")))


def client_for(assembly: Assembly, **settings: Any) -> TestClient:
    return TestClient(create_app(Settings(home=Path("/nonexistent"), **settings), assembly=assembly), base_url=BASE)


@pytest.fixture()
def client(assembly: Assembly) -> TestClient:
    return client_for(assembly)


# --- payloads and questions ---------------------------------------------------------------


def test_an_alertmanager_v4_payload_reads_into_alerts() -> None:
    alerts = AlertmanagerWebhook.model_validate(am_payload(am_alert())).received()
    assert len(alerts) == 1
    alert = alerts[0]
    assert (alert.source, alert.fingerprint, alert.status, alert.alertname) == (
        "alertmanager",
        "f1",
        "firing",
        "PaymentLatencyHigh",
    )
    assert alert.starts_at == datetime(2026, 7, 7, 10, 5, tzinfo=UTC)
    assert alert.ends_at is None  # Alertmanager's zero time: not ended
    assert alert.service == "payment-service"
    claimed = {**am_payload(am_alert()), "source": "pagerduty"}  # a body cannot name another sender
    assert AlertmanagerWebhook.model_validate(claimed).received()[0].source == "alertmanager"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_question_names_alert_service_place_and_notes_and_the_window_is_given(lang: Literal["zh", "en"]) -> None:
    later = am_alert(
        "f2", startsAt="2026-07-07T10:20:00Z", labels={"alertname": "PaymentErrors", "service": "payment-service"}
    )
    alerts = AlertmanagerWebhook.model_validate(am_payload(later, am_alert())).received()
    job = job_for(alerts, "alertmanager", lang)
    for word in (
        "PaymentLatencyHigh",
        "PaymentErrors",
        "payment-service",
        "10.0.0.7:8080",
        "shop",
        "p99 latency above 2s",
        "payment requests are slow",
    ):
        assert word in job.question
    assert job.given_at == datetime(2026, 7, 7, 10, 5, tzinfo=UTC)  # the earliest startsAt
    assert ("告警" in job.question) == (lang == "zh") and job.lang == lang


def test_grouped_alerts_are_diagnosed_per_service_and_resolved_ones_set_apart() -> None:
    payload = am_payload(
        am_alert("a"), am_alert("b", service="gateway"), am_alert("c"), am_alert("d", status="resolved")
    )
    groups, resolved = group_by_service(AlertmanagerWebhook.model_validate(payload).received())
    assert [[a.fingerprint for a in g] for g in groups] == [["a", "c"], ["b"]]
    assert [a.fingerprint for a in resolved] == ["d"]


def test_a_given_time_anchors_the_window_whatever_the_words_say(demo_env: EmbeddedEnvironment) -> None:
    planner = OfflinePlanner(demo_env)
    at = datetime(2026, 7, 7, 10, 5, tzinfo=UTC)
    plan = planner.make_plan(
        "payment-service is slow since yesterday 14:00", GivenTime(at=at, source="alert's startsAt")
    )
    assert plan.start == "2026-07-07T09:35:00Z" and plan.explicit_time
    assert plan.time.kind == "given" and plan.time.phrase == "alert's startsAt"
    assert plan.time.at == "2026-07-07T10:05:00Z"
    unanchored = planner.make_plan("payment-service is slow since yesterday 14:00")
    assert unanchored.start != plan.start  # without it the words decide, as before


# --- the endpoints ------------------------------------------------------------------------


@pytest.mark.parametrize("at", [datetime(9999, 11, 29, 23, 50, tzinfo=UTC), datetime(1, 2, 2, 0, 10, tzinfo=UTC)])
def test_a_start_just_within_reach_of_the_calendars_edge_is_diagnosed(assembly: Assembly, at: datetime) -> None:
    """The intake refuses a start nearer the edge than ``GIVEN_REACH``; one just past it must run to
    an answer, not overflow in a stage's date arithmetic."""
    result = assembly.pipeline.run("payment-service alert fired", "en", given_time=GivenTime(at=at, source="alert"))
    assert result.status == "completed", result.error
    assert at.strftime("%Y-%m-%d")[-5:] in result.answer.splitlines()[0]


def test_a_firing_alert_queues_one_diagnosis_and_a_repeated_delivery_none(client: TestClient) -> None:
    payload = am_payload(am_alert("dup-1"))
    first = client.post("/api/v1/alerts/alertmanager", json=payload)
    assert first.status_code == 202
    assert len(first.json()["jobs"]) == 1 and first.json()["recorded"] == 1
    again = client.post("/api/v1/alerts/alertmanager", json=payload)
    assert again.status_code == 202 and again.json()["jobs"] == [] and again.json()["duplicates"] == 1
    job = client.get(f"/api/v1/alerts/jobs/{first.json()['jobs'][0]}").json()
    assert job["status"] == "queued" and job["fingerprints"] == ["dup-1"] and job["service"] == "payment-service"


def test_a_group_growing_queues_only_its_new_alert(client: TestClient) -> None:
    client.post("/api/v1/alerts/alertmanager", json=am_payload(am_alert("grow-1")))
    grown = client.post("/api/v1/alerts/alertmanager", json=am_payload(am_alert("grow-1"), am_alert("grow-2")))
    body = grown.json()
    assert len(body["jobs"]) == 1 and body["duplicates"] == 1
    assert client.get(f"/api/v1/alerts/jobs/{body['jobs'][0]}").json()["fingerprints"] == ["grow-2"]


def test_a_grouped_delivery_queues_one_diagnosis_per_service(client: TestClient) -> None:
    payload = am_payload(am_alert("g-1"), am_alert("g-2", service="gateway"), am_alert("g-3"))
    body = client.post("/api/v1/alerts/alertmanager", json=payload).json()
    services = sorted(client.get(f"/api/v1/alerts/jobs/{j}").json()["service"] for j in body["jobs"])
    assert services == ["gateway", "payment-service"]


def test_resolved_alerts_are_recorded_not_diagnosed(client: TestClient) -> None:
    client.post("/api/v1/alerts/alertmanager", json=am_payload(am_alert("res-1")))
    resolved = am_alert("res-1", status="resolved", endsAt="2026-07-07T10:40:00Z")
    body = client.post("/api/v1/alerts/alertmanager", json=am_payload(resolved, status="resolved")).json()
    assert body == {"jobs": [], "recorded": 1, "duplicates": 0, "resolved": 1, "refused": [], "repaired": 0}
    unseen = am_alert("res-2", status="resolved", endsAt="2026-07-07T10:40:00Z")
    body = client.post("/api/v1/alerts/alertmanager", json=am_payload(unseen, status="resolved")).json()
    assert body["jobs"] == [] and body["recorded"] == 1


def test_grafana_and_pagerduty_deliveries_queue_diagnoses(client: TestClient) -> None:
    grafana = {**am_payload(am_alert("graf-1")), "version": "1", "orgId": 1, "title": "[FIRING:1]", "state": "alerting"}
    assert len(client.post("/api/v1/alerts/grafana", json=grafana).json()["jobs"]) == 1
    body = client.post("/api/v1/alerts/pagerduty", json=pd_payload(incident="PD-1")).json()
    assert len(body["jobs"]) == 1
    job = client.get(f"/api/v1/alerts/jobs/{body['jobs'][0]}").json()
    assert job["service"] == "payment-service" and "Payments time out" in job["question"]
    resolved = client.post("/api/v1/alerts/pagerduty", json=pd_payload("incident.resolved", "PD-1")).json()
    assert resolved["jobs"] == [] and resolved["resolved"] == 1
    ping = {"event": {"event_type": "pagey.ping", "occurred_at": STARTS_AT, "data": {"message": "Hello"}}}
    assert client.post("/api/v1/alerts/pagerduty", json=ping).json()["jobs"] == []


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({**am_payload(am_alert()), "version": "3"}, "version"),
        (am_payload(am_alert(startsAt="yesterday")), "alerts.0.startsAt"),
        (am_payload({k: v for k, v in am_alert().items() if k != "fingerprint"}), "alerts.0.fingerprint"),
        (am_payload(am_alert(labels={"alertname": 3})), "alerts.0.labels.alertname"),
        ({"event": {**pd_payload()["event"], "data": {"id": "x"}}}, "event"),
    ],
)
def test_a_bad_payload_is_a_422_naming_the_field(client: TestClient, payload: dict[str, Any], field: str) -> None:
    route = "pagerduty" if "event" in payload else "alertmanager"
    response = client.post(f"/api/v1/alerts/{route}", json=payload)
    assert response.status_code == 422
    assert field in [d["field"] for d in response.json()["error"]["details"]]
    if route == "pagerduty":
        assert "data.created_at" in response.json()["error"]["message"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
_near = st.fixed_dictionaries(
    {},
    optional={
        "version": st.sampled_from(["4", "1", 4, None]),
        "status": st.sampled_from(["firing", "x"]),
        "alerts": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "status": st.sampled_from(["firing", "resolved", ""]),
                    "labels": st.dictionaries(st.text(max_size=5), st.text(max_size=5) | st.integers(), max_size=3),
                    "startsAt": st.sampled_from([STARTS_AT, "2026-13-01T00:00:00Z", "", "2026-07-07T10:00:00"]),
                    "fingerprint": st.text(max_size=3),
                    "annotations": _json,
                },
            ),
            max_size=3,
        ),
        "event": _json,
    },
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(body=_json | _near, route=st.sampled_from(["alertmanager", "grafana", "pagerduty"]))
def test_odd_payloads_get_a_4xx_naming_a_field_never_a_500(client: TestClient, body: Any, route: str) -> None:
    response = client.post(
        f"/api/v1/alerts/{route}", content=json.dumps(body), headers={"content-type": "application/json"}
    )
    assert response.status_code in (202, 422), response.text
    if response.status_code == 422:
        assert all(d["field"] for d in response.json()["error"]["details"])


#: A time at the calendar's edge whose offset takes it outside the years UTC holds (its UTC form
#: overflowed storing it: a 500 for the whole delivery).
_edge_time = st.one_of(
    st.builds(
        "9999-12-31T{:02d}:{:02d}:00-{:02d}:{:02d}".format,
        st.integers(14, 23),
        st.integers(0, 59),
        st.integers(10, 14),
        st.sampled_from([0, 30, 45]),
    ).filter(lambda t: int(t[11:13]) + int(t[20:22]) >= 24),
    st.builds(
        "0001-01-01T{:02d}:{:02d}:00+{:02d}:{:02d}".format,
        st.integers(0, 9),
        st.integers(0, 59),
        st.integers(10, 14),
        st.sampled_from([0, 30, 45]),
    ).filter(lambda t: int(t[11:13]) < int(t[20:22])),
)
#: A start UTC holds that lies too near the calendar's edge for a diagnosis's history and window
#: (its planner, then its executor, overflowed: the job failed and was retried).
_near_edge = st.one_of(
    st.datetimes(datetime(9999, 12, 1), datetime(9999, 12, 31, 23, 59), timezones=st.just(UTC)),
    st.datetimes(datetime(1, 1, 2), datetime(1, 1, 31), timezones=st.just(UTC)),
).map(lambda at: at.isoformat())
_bad_alert = st.sampled_from(
    [
        ({"startsAt": "yesterday"}, "startsAt"),
        ({"status": "burning"}, "status"),
        ({"labels": {"alertname": 3}}, "labels.alertname"),
        ({"fingerprint": ""}, "fingerprint"),
        ({"labels": "not a map"}, "labels"),
    ]
) | st.builds(lambda key, at: ({key: at}, key), st.sampled_from(["startsAt", "endsAt"]), _edge_time)
_bad_alert |= st.builds(lambda at: ({"startsAt": at}, "startsAt"), _near_edge)


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(at=_edge_time, where=st.sampled_from(["created_at", "occurred_at"]))
def test_a_pagerduty_time_utc_cannot_hold_is_a_422_never_a_500(client: TestClient, at: str, where: str) -> None:
    incident = {"id": "P1", "title": "x", "created_at": "2026-07-07T10:05:00Z", "service": {"summary": "payment"}}
    event = {"event_type": "incident.triggered", "occurred_at": "2026-07-07T10:05:00Z", "data": incident}
    (incident if where == "created_at" else event)[where] = at
    response = client.post("/api/v1/alerts/pagerduty", json={"event": event})
    assert response.status_code == 422, response.text


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    bad=st.lists(_bad_alert, min_size=1, max_size=3),
    good=st.integers(1, 3),
    seed=st.randoms(use_true_random=False),
    route=st.sampled_from(["alertmanager", "grafana"]),
)
def test_a_bad_alert_is_refused_alone_and_the_good_ones_taken(
    client: TestClient, bad: list[tuple[dict[str, Any], str]], good: int, seed: Any, route: str
) -> None:
    tag = uuid.uuid4().hex  # every example a new group: none is a repeated delivery
    alerts = [am_alert(f"good-{tag}-{i}", labels={"alertname": "A", "service": f"svc-{i}"}) for i in range(good)]
    alerts += [{**am_alert(f"bad-{tag}-{i}"), **fields} for i, (fields, _) in enumerate(bad)]
    seed.shuffle(alerts)
    payload = {**am_payload(*alerts), "version": "1" if route == "grafana" else "4"}
    response = client.post(f"/api/v1/alerts/{route}", json=payload)
    assert response.status_code == 202, response.text
    receipt = response.json()
    assert receipt["recorded"] == good and len(receipt["jobs"]) == good
    refused = {r["index"]: r for r in receipt["refused"]}
    expected = {i for i, alert in enumerate(alerts) if not str(alert["fingerprint"]).startswith("good-")}
    assert set(refused) == expected
    for index, refusal in refused.items():
        assert refusal["reason"].startswith(f"alerts.{index}.")


def test_an_alert_with_a_lone_surrogate_is_repaired_and_its_group_taken(client: TestClient) -> None:
    planted = am_alert("surrogate-1", labels={"alertname": "Lat\ud800", "service": "payment-service"})
    planted["annotations"] = {"summary": "order 88\u202e121 slow \udc00"}
    body = json.dumps(am_payload(planted, am_alert("surrogate-2", labels={"alertname": "B", "service": "order"})))
    response = client.post("/api/v1/alerts/alertmanager", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 202, response.text
    receipt = response.json()
    assert receipt["recorded"] == 2 and len(receipt["jobs"]) == 2 and receipt["refused"] == []
    assert receipt["repaired"] == 2
    job = client.get(f"/api/v1/alerts/jobs/{receipt['jobs'][0]}").json()
    assert "Lat\ufffd" in job["question"] and "88121" in job["question"] and "\u202e" not in job["question"]


def test_the_endpoints_need_the_api_token(assembly: Assembly) -> None:
    guarded = client_for(assembly, api_tokens=TOKEN)
    payload = am_payload(am_alert("auth-1"))
    assert guarded.post("/api/v1/alerts/alertmanager", json=payload).status_code == 401
    ok = guarded.post("/api/v1/alerts/alertmanager", json=payload, headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 202


def _pd_signature(body: bytes, secret: str) -> str:
    return "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_pagerduty_deliveries_may_be_signed_instead(assembly: Assembly) -> None:
    secret = "pd-secret"
    signed = client_for(assembly, alerts=AlertSettings(pagerduty_secret=secret))
    body = json.dumps(pd_payload(incident="PD-SIG")).encode()
    headers = {"content-type": "application/json"}
    rotated = f"v1=00ff,{_pd_signature(body, secret)}"
    response = signed.post(
        "/api/v1/alerts/pagerduty", content=body, headers={**headers, "X-PagerDuty-Signature": rotated}
    )
    assert response.status_code == 202
    forged = _pd_signature(body + b" ", secret)
    response = signed.post(
        "/api/v1/alerts/pagerduty", content=body, headers={**headers, "X-PagerDuty-Signature": forged}
    )
    assert response.status_code == 401 and "X-PagerDuty-Signature" in response.json()["error"]["message"]
    # With a secret set, an unsigned delivery needs a token even though this API is open.
    assert signed.post("/api/v1/alerts/pagerduty", content=body, headers=headers).status_code == 401


def test_pagerduty_rotation_header_as_documented(assembly: Assembly) -> None:
    """PagerDuty signs with every current secret while one is rotated, one ``v1=`` each."""
    old, new = "pd-old-secret", "pd-new-secret"
    body = json.dumps(pd_payload(incident="PD-ROT")).encode()
    both = f"{_pd_signature(body, old)},{_pd_signature(body, new)}"
    headers = {"content-type": "application/json", "X-PagerDuty-Signature": both}
    for secret in (old, new):
        response = client_for(assembly, alerts=AlertSettings(pagerduty_secret=secret)).post(
            "/api/v1/alerts/pagerduty", content=body, headers=headers
        )
        assert response.status_code == 202
    # Only v1 is a signature version PagerDuty defines: the right HMAC under another name is refused.
    other_version = _pd_signature(body, new).replace("v1=", "v2=")
    refused = client_for(assembly, alerts=AlertSettings(pagerduty_secret=new)).post(
        "/api/v1/alerts/pagerduty", content=body, headers={**headers, "X-PagerDuty-Signature": other_version}
    )
    assert refused.status_code == 401


def _grafana_mac(secret: str, body: bytes, timestamp: str | None = None) -> str:
    """As Grafana's docs say: hex HMAC-SHA256 of the body, or of ``timestamp + ":" + body``."""
    message = body if timestamp is None else timestamp.encode() + b":" + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def _grafana_body(fingerprint: str) -> bytes:
    return json.dumps({**am_payload(am_alert(fingerprint)), "version": "1"}).encode()


def test_grafana_deliveries_may_be_signed_with_a_timestamp(assembly: Assembly) -> None:
    secret = "grafana-secret"
    signed = client_for(assembly, alerts=AlertSettings(grafana_secret=secret))
    body, now = _grafana_body("graf-sig"), str(int(time.time()))
    headers = {"content-type": "application/json", "X-Grafana-Alerting-Signature-Timestamp": now}
    mac = _grafana_mac(secret, body, now)
    good = signed.post("/api/v1/alerts/grafana", content=body, headers={**headers, "X-Grafana-Alerting-Signature": mac})
    assert good.status_code == 202
    bad = signed.post(
        "/api/v1/alerts/grafana", content=body, headers={**headers, "X-Grafana-Alerting-Signature": "0" * 64}
    )
    assert bad.status_code == 401
    # The body's signature alone does not cover a timestamp that is sent.
    body_only = signed.post(
        "/api/v1/alerts/grafana",
        content=body,
        headers={**headers, "X-Grafana-Alerting-Signature": _grafana_mac(secret, body)},
    )
    assert body_only.status_code == 401


def test_a_signed_grafana_delivery_without_the_timestamp_header_is_refused(assembly: Assembly) -> None:
    """A signature without its time could be replayed forever: refused while a timestamp header
    is configured; with none configured ("") the body alone is signed."""
    secret = "grafana-secret"
    body = _grafana_body("graf-body")
    headers = {"content-type": "application/json", "X-Grafana-Alerting-Signature": _grafana_mac(secret, body)}
    signed = client_for(assembly, alerts=AlertSettings(grafana_secret=secret))
    refused = signed.post("/api/v1/alerts/grafana", content=body, headers=headers)
    assert refused.status_code == 401
    assert "X-Grafana-Alerting-Signature-Timestamp is missing" in refused.json()["error"]["message"]
    body_only = client_for(assembly, alerts=AlertSettings(grafana_secret=secret, grafana_timestamp_header=""))
    assert body_only.post("/api/v1/alerts/grafana", content=body, headers=headers).status_code == 202


def test_a_signed_grafana_delivery_older_than_five_minutes_is_refused(assembly: Assembly) -> None:
    secret = "grafana-secret"
    signed = client_for(assembly, alerts=AlertSettings(grafana_secret=secret))
    body = _grafana_body("graf-replay")
    for sent, expected in ((time.time() - 6 * 60, "older than 5 minutes"), (time.time() + 6 * 60, "ahead")):
        stamp = str(int(sent))
        headers = {
            "content-type": "application/json",
            "X-Grafana-Alerting-Signature-Timestamp": stamp,
            "X-Grafana-Alerting-Signature": _grafana_mac(secret, body, stamp),
        }
        response = signed.post("/api/v1/alerts/grafana", content=body, headers=headers)
        assert response.status_code == 401
        assert expected in response.json()["error"]["message"]
    recent = str(int(time.time()) - 4 * 60)
    headers = {
        "content-type": "application/json",
        "X-Grafana-Alerting-Signature-Timestamp": recent,
        "X-Grafana-Alerting-Signature": _grafana_mac(secret, body, recent),
    }
    assert signed.post("/api/v1/alerts/grafana", content=body, headers=headers).status_code == 202


@pytest.mark.parametrize(("offset", "refused"), [(0, False), (-300, False), (-301, True), (300, False), (301, True)])
def test_the_replay_window_is_five_minutes_either_way(offset: int, refused: bool) -> None:
    now = 1_800_000_000.0
    assert (stale(str(int(now) + offset), now) is not None) is refused


def test_a_timestamp_that_is_not_unix_seconds_is_refused() -> None:
    assert stale("2026-12-03T17:00:00Z", time.time()) is not None


def test_grafana_header_names_follow_the_contact_point(assembly: Assembly) -> None:
    """Both header names are the contact point's settings; the configured ones are read."""
    secret = "grafana-secret"
    settings = AlertSettings(
        grafana_secret=secret, grafana_signature_header="X-Hub-Sig", grafana_timestamp_header="X-Hub-Time"
    )
    signed = client_for(assembly, alerts=settings)
    body, now = _grafana_body("graf-named"), str(int(time.time()))
    headers = {"content-type": "application/json", "X-Hub-Time": now, "X-Hub-Sig": _grafana_mac(secret, body, now)}
    assert signed.post("/api/v1/alerts/grafana", content=body, headers=headers).status_code == 202
    default_names = {
        "content-type": "application/json",
        "X-Grafana-Alerting-Signature": _grafana_mac(secret, body),
    }
    refused = signed.post("/api/v1/alerts/grafana", content=body, headers=default_names)
    assert refused.status_code == 401 and "X-Hub-Sig" in refused.json()["error"]["message"]


# --- the queue ----------------------------------------------------------------------------


def _spec(fresh: Any) -> JobSpec:
    return job_for(fresh, "alertmanager", "en")


def _alert(fingerprint: str) -> ReceivedAlert:
    return AlertmanagerWebhook.model_validate(am_payload(am_alert(fingerprint))).received()[0]


@pytest.fixture()
def queue_store(store_url: str) -> SessionStore:
    return SessionStore(store_url)


def test_a_job_whose_worker_died_is_taken_again_after_its_lease(queue_store: SessionStore) -> None:
    queue = SqlJobQueue(queue_store.engine, lease_seconds=0.2, max_attempts=2)
    [job_id] = queue.enqueue([[_alert(f"lease-{time.time_ns()}")]], [], _spec).jobs
    first = queue.claim("worker-a")
    assert first is not None and first.id == job_id and first.attempts == 1
    assert queue.claim("worker-b") is None  # leased: nobody else takes it
    time.sleep(0.3)  # worker-a died: no heartbeat
    second = queue.claim("worker-b")
    assert second is not None and second.id == job_id and second.attempts == 2 and second.lease_owner == "worker-b"
    assert not queue.finish(job_id, "worker-a", session_id=None)  # the dead worker's late write is ignored
    time.sleep(0.3)  # worker-b died too: that was the last attempt
    assert queue.claim("worker-c") is None
    gone = queue.get(job_id)
    assert gone is not None and gone.status == "failed" and "lease expired" in (gone.error or "")


def test_a_failed_attempt_comes_back_after_a_backoff_then_fails(queue_store: SessionStore) -> None:
    queue = SqlJobQueue(queue_store.engine, max_attempts=2, backoff=Backoff(first_wait=0.2, max_wait=1.0))
    [job_id] = queue.enqueue([[_alert(f"retry-{time.time_ns()}")]], [], _spec).jobs
    assert queue.claim("w") is not None
    retried = queue.fail(job_id, "w", "OperationalError: store gone")
    assert retried is not None and retried.status == "queued" and retried.next_run_at > datetime.now(UTC)
    assert queue.claim("w") is None  # not before its backoff
    time.sleep(0.5)
    assert queue.claim("w") is not None
    final = queue.fail(job_id, "w", "OperationalError: store gone")
    assert final is not None and final.status == "failed" and final.attempts == 2 and final.error


def test_concurrent_claims_never_take_the_same_job(queue_store: SessionStore) -> None:
    queue = SqlJobQueue(queue_store.engine)
    stamp = time.time_ns()
    ids = set(queue.enqueue([[_alert(f"c-{stamp}-{i}")] for i in range(24)], [], _spec).jobs)
    claimed: list[str] = []
    lock = threading.Lock()

    def drain(name: str) -> None:
        while (job := queue.claim(name)) is not None:
            with lock:
                claimed.append(job.id)

    threads = [threading.Thread(target=drain, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claimed) == sorted(ids)  # each once


def test_the_worker_runs_a_job_to_a_completed_session_anchored_at_the_alert(assembly: Assembly) -> None:
    queue = job_queue(assembly.store, AlertSettings())
    [job_id] = queue.enqueue([[_alert(f"run-{time.time_ns()}")]], [], _spec).jobs
    worker = Worker(queue, assembly.pipeline)
    done = None
    while (ran := worker.run_one()) is not None:  # earlier tests' jobs share this store
        done = ran if ran.id == job_id else done
    assert done is not None and done.status == "done" and done.progress == "done" and done.session_id
    session = assembly.store.get_session(done.session_id)
    assert session is not None and session.status == "completed" and session.verdict
    assert session.source == "alert"  # the session list says where it came from
    assert session.plan is not None and session.plan["start"] == "2026-07-07T09:35:00Z"
    assert session.final_answer and "alert's startsAt" in session.final_answer.splitlines()[0]


def test_a_worker_killed_mid_diagnosis_loses_nothing(tmp_path: Path) -> None:
    """``veridiag worker`` is killed (-9) while its diagnosis waits on a metrics server that never
    answers; once the lease runs out another worker takes the job and completes it."""
    home = tmp_path / "home"
    assembly = assemble(Settings(home=home))
    settings = AlertSettings(lease_seconds=2, poll_seconds=0.1)
    queue = job_queue(assembly.store, settings)
    [job_id] = queue.enqueue([[_alert("killed-1")]], [], _spec).jobs
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        env = {
            **os.environ,
            "VERIDIAG_HOME": str(home),
            "VERIDIAG_TOOLS__METRICS": "prometheus",
            "VERIDIAG_PROMETHEUS__URL": f"http://127.0.0.1:{silent.getsockname()[1]}",
            "VERIDIAG_ALERTS__LEASE_SECONDS": "2",
            "VERIDIAG_ALERTS__POLL_SECONDS": "0.1",
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "veridiag", "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 120
            while (job := queue.get(job_id)) is not None and job.session_id is None and time.monotonic() < deadline:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                time.sleep(0.05)
            assert job is not None and job.status == "running" and job.session_id, job
            time.sleep(0.5)
            process.kill()
            process.wait(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
    first_session = job.session_id
    killed = queue.get(job_id)
    assert killed is not None and killed.status == "running" and killed.attempts == 1
    assert Worker(queue, assembly.pipeline).run_one() is None  # its lease still holds
    time.sleep(2.2)
    done = Worker(queue, assembly.pipeline).run_one()
    assert done is not None and done.id == job_id and done.status == "done" and done.attempts == 2
    assert done.session_id and done.session_id != first_session
    completed = assembly.store.get_session(done.session_id)
    assert completed is not None and completed.status == "completed" and completed.verdict
    abandoned = assembly.store.get_session(first_session)
    assert abandoned is not None and abandoned.status == "interrupted"  # its process is gone


def test_a_finished_jobs_answer_is_posted_and_a_failing_post_never_undoes_the_job(assembly: Assembly) -> None:
    queue = job_queue(assembly.store, AlertSettings())
    posted: list[str] = []

    def broken_post(session_id: str) -> None:
        posted.append(session_id)
        raise RuntimeError("chat is down")

    [job_id] = queue.enqueue([[_alert(f"post-{time.time_ns()}")]], [], _spec).jobs
    worker = Worker(queue, assembly.pipeline, after_finish=broken_post)
    done = None
    while (ran := worker.run_one()) is not None:
        done = ran if ran.id == job_id else done
    assert done is not None and done.status == "done" and done.session_id in posted


def test_alert_answers_go_to_the_named_destinations_only_when_configured(assembly: Assembly, tmp_path: Path) -> None:
    slack = {"name": "oncall", "kind": "slack", "url": "http://127.0.0.1:9/hook"}
    assert post_answers(assembly.store, Settings(home=tmp_path)) is None
    off = Settings(home=tmp_path, delivery={"destinations": [slack]}, alerts={"post_answers": False})
    assert post_answers(assembly.store, off) is None
    assert post_answers(assembly.store, Settings(home=tmp_path, delivery={"destinations": [slack]}))
    unknown = Settings(home=tmp_path, delivery={"destinations": [slack]}, alerts={"post_to": ["ops"]})
    with pytest.raises(DeliveryError, match="no destination named ops"):
        post_answers(assembly.store, unknown)


def test_an_alerts_answer_goes_to_each_destination_as_one_compact_message(assembly: Assembly) -> None:
    """Issue 28: the alert's diagnosis is posted once per destination, each message within its
    limits, opening with the verdict badge and the one-line answer, at most five facts, the
    culprit's sparkline and the session link — not the 8.5 KB, 26-block Slack message."""
    with running_receiver() as receiver:
        destinations = [
            {"name": "slack", "kind": "slack", "url": f"{receiver.url}/slack-hook/T/B/X"},
            {"name": "feishu", "kind": "feishu", "url": f"{receiver.url}/feishu/hook/a", "secret": "fs"},
            {"name": "dingtalk", "kind": "dingtalk", "url": f"{receiver.url}/dingtalk?access_token=t"},
            {"name": "wecom", "kind": "wecom", "url": f"{receiver.url}/wecom/send?key=k"},
        ]
        settings = Settings(
            home=Path("/nonexistent"), delivery={"destinations": destinations, "workbench_url": "https://wb.example"}
        )
        queue = job_queue(assembly.store, AlertSettings())
        [job_id] = queue.enqueue([[_alert(f"chat-{time.time_ns()}")]], [], _spec).jobs
        worker = Worker(queue, assembly.pipeline, after_finish=post_answers(assembly.store, settings))
        done = None
        while (ran := worker.run_one()) is not None:  # earlier tests' jobs share this store
            done = ran if ran.id == job_id else done
        assert done is not None and done.session_id
        link = f"https://wb.example/sessions/{done.session_id}?lang=en"
        mine = [r for r in receiver.received if link in r.body.decode()]
    assert sorted(r.path.split("/")[1] for r in mine) == ["dingtalk", "feishu", "slack-hook", "wecom"]
    session = assembly.store.get_session(done.session_id)
    assert session is not None and session.verdict
    document = stored_document(session, {})
    assert document is not None and document.headline
    headline = " ".join(document.headline.split())
    badge = {"PASS": "✅ PASS · verified", "LOW_CONFID": "⚠️ LOW_CONFID", "REJECT": "❌ REJECT"}[session.verdict]
    for sent in mine:
        payload, kind = sent.json(), sent.path.split("/")[1]
        if kind == "slack-hook":
            assert len(payload["blocks"]) <= MESSAGE_BLOCKS and len(sent.body) <= MESSAGE_BYTES
            header = payload["blocks"][0]["elements"][0]["elements"]
            assert header[0]["text"].startswith(badge) and header[-1]["text"]
            assert headline.startswith(html.unescape(header[-1]["text"]))  # the answer's first line: the headline
            assert payload["blocks"][-1]["elements"][0]["url"] == link
            texts = [e["text"] for b in payload["blocks"] for e in b.get("elements", []) if "text" in e]
            texts += [
                e["text"] for b in payload["blocks"] if b["type"] == "rich_text" for e in b["elements"][0]["elements"]
            ]
            text = "\n".join(t if isinstance(t, str) else t["text"] for t in texts)
        elif kind == "feishu":
            assert len(sent.body) <= FEISHU_BODY_BYTES
            title = payload["card"]["header"]["title"]["content"]
            assert title.startswith(f"{badge} · ") and title.removeprefix(f"{badge} · ")[:60] in plain(headline)
            text = payload["card"]["elements"][0]["content"]
        elif kind == "dingtalk":
            assert len(sent.body) <= DINGTALK_BODY_BYTES
            text = payload["markdown"]["text"]
            assert text.startswith(f"**{badge}** · **") and len(text.split("\n")[0]) > len(badge) + 12
        else:
            text = payload["markdown"]["content"]
            assert len(text.encode()) <= min(CONTENT_BYTES, TARGET_BYTES) and text.startswith(f"**{badge}")
        assert any(bar in text for bar in "▁▂▃▄▅▆▇█"), kind  # the culprit's series
        numbered = [line for line in text.split("\n") if re.match(r"\d+\. ", line)]
        assert 0 < len(numbered) <= 5, (kind, numbered)
        # the change fact shows maximum-pool-size: no hypothesis asks to check it
        assert "was `maximum-pool-size` changed" not in text and "was \\`maximum-pool-size\\` changed" not in text
