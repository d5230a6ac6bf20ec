"""Shared fixtures and the hypothesis profile (derandomised, more examples under CI=true)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tests.builders import METRIC_OUTPUT, invocation
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper

settings.register_profile(
    "ci", max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") == "true" else "dev")


@pytest.fixture
def store() -> InMemoryInvocations:
    return InMemoryInvocations(
        [
            invocation(394),
            invocation(395, "query_metrics", METRIC_OUTPUT, arguments={"service": "payment-service"}),
            invocation(500, session_id="s-other", output="order-service ERR_DB_LOCK lock wait timeout"),
            invocation(396, output="", status="error", error="backend down"),
            invocation(397, output="", status="no_data", output_preview="no log lines matched"),
        ]
    )


@pytest.fixture(scope="session")
def gatekeeper() -> Gatekeeper:
    return Gatekeeper()
