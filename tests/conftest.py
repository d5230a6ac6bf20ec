"""Shared fixtures and the hypothesis profile (derandomised, more examples under CI=true)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.builders import METRIC_OUTPUT, invocation
from tests.pg import own_database, own_schema, worker
from veridiag.config import Settings
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.tools.backends.embedded import EmbeddedEnvironment

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


def require_server(env_var: str, what: str) -> str:
    """The URL of a real server the CI starts; absent locally → skip, absent under CI → fail."""
    url = os.environ.get(env_var)
    if url:
        return url
    if os.environ.get("CI") == "true":
        pytest.fail(f"{env_var} is not set: .ci/run must start {what} for this test")
    pytest.skip(f"{env_var} not set: no {what} on this machine (CI starts one)")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The CI PostgreSQL's database of this test process, made new for the run: xdist's workers
    run at once, and in one shared database one worker's store would interrupt, list and claim
    the other's sessions and jobs."""
    with own_database(require_server("VERIDIAG_TEST_POSTGRES_URL", "PostgreSQL"), worker()) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def empty_url(store_url: str) -> Iterator[str]:
    """A database with no tables: a fresh SQLite file, or a PostgreSQL schema of its own."""
    if store_url.startswith("sqlite"):
        yield store_url
        return
    with own_schema(store_url) as url:
        yield url


@pytest.fixture(scope="session")
def demo_env(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedEnvironment:
    """The bundled demo environment, loaded once for the test session (read-only use)."""
    return EmbeddedEnvironment(tmp_path_factory.mktemp("demo") / "embedded.db")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Assembly]:
    """The demo wired as ``veridiag ask`` wires it, in a home of its own for each test module."""
    assembly = assemble(Settings(home=tmp_path_factory.mktemp("home")))
    yield assembly
    assembly.close()


@pytest.fixture(scope="session")
def chdb_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The in-process ClickHouse engine's data directory, one for the whole run: chdb opens one
    directory per process and refuses another ("EmbeddedServer already initialized with path"),
    so every module that uses it (logs, traces) shares this one, each with tables of its own."""
    return tmp_path_factory.mktemp("chdb") / "data"
