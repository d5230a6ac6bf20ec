"""Builds the toolbox the settings ask for: one backend per tool."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from veridiag._retry import Backoff
from veridiag.config import HttpBackendSettings, Settings, TraceServerSettings
from veridiag.redaction import build_redactor
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.runner import Toolbox

if TYPE_CHECKING:
    from veridiag.tools.backends import TraceBackend
    from veridiag.tools.backends.clickhouse import ClickHouseLogs
    from veridiag.tools.backends.clickhouse_traces import ClickHouseTraces
    from veridiag.tools.backends.jaeger import JaegerBackend
    from veridiag.tools.backends.loki import LokiBackend
    from veridiag.tools.backends.prometheus import PrometheusBackend
    from veridiag.tools.backends.tempo import TempoBackend


class ConfigurationError(ValueError):
    """Settings that cannot make a working toolbox."""


def _headers(http: HttpBackendSettings | TraceServerSettings) -> dict[str, str]:
    found = {"Authorization": f"Bearer {http.bearer_token.get_secret_value()}"} if http.bearer_token else {}
    if isinstance(http, TraceServerSettings):
        found |= {name: value.get_secret_value() for name, value in http.headers.items()}
    return found


def trace_backend(settings: Settings) -> JaegerBackend | TempoBackend:
    """The Jaeger or Tempo server ``tools.traces`` names (``ConfigurationError`` without its URL)."""
    kind = settings.tools.traces
    server = settings.jaeger if kind == "jaeger" else settings.tempo
    if not server.url:
        raise ConfigurationError(f"tools.traces is {kind!r} but {kind}.url (VERIDIAG_{kind.upper()}__URL) is not set")
    # HTTP client: only when configured
    from veridiag.tools.backends.jaeger import JaegerBackend
    from veridiag.tools.backends.tempo import TempoBackend

    backend = JaegerBackend if kind == "jaeger" else TempoBackend
    return backend(
        server.url,
        timeout=server.timeout_seconds,
        headers=_headers(server),
        max_traces=server.max_traces,
        max_response_bytes=server.max_response_bytes,
        lookback=timedelta(hours=server.lookback_hours),
        backoff=Backoff(attempts=1 + server.max_retries),
    )


def embedded_environment(settings: Settings, *, importing: bool = False) -> EmbeddedEnvironment:
    """The embedded backend of ``settings``. ``importing`` (``data import-…``): a new file gets
    the demo only when the settings ask for it by name (``embedded.load_demo: true``, demo
    incidents), so a user's first import makes a home of their data alone."""
    return EmbeddedEnvironment(
        settings.embedded_path,
        load_demo=_demo_asked_for(settings) if importing else settings.embedded.load_demo,
        demo_incidents=settings.embedded.demo_incidents,
        runbook_dir=settings.knowledge.user_dir,
        redactor=build_redactor(settings),
    )


def _demo_asked_for(settings: Settings) -> bool:
    """The demo named in the settings (not merely their default)."""
    embedded = settings.embedded
    if "load_demo" in embedded.model_fields_set:
        return embedded.load_demo
    return embedded.demo_incidents is not None


def clickhouse_logs(settings: Settings, embedded: EmbeddedEnvironment | None = None) -> ClickHouseLogs:
    """The ClickHouse log backend; over the in-process engine, relative times anchor to the
    embedded environment's clock (imported history), over a server to the wall clock."""
    from veridiag.tools.backends.clickhouse import ClickHouseLogs  # client library: only when configured

    clock = embedded.now if embedded is not None and not settings.clickhouse.url else None
    return ClickHouseLogs(settings.clickhouse, settings.clickhouse_path, clock=clock)


def clickhouse_traces(settings: Settings, embedded: EmbeddedEnvironment | None = None) -> ClickHouseTraces:
    """The ClickHouse trace backend (``clickhouse.traces_table``), its clock as the log backend's."""
    from veridiag.tools.backends.clickhouse_traces import ClickHouseTraces  # client library: only when configured

    clock = embedded.now if embedded is not None and not settings.clickhouse.url else None
    return ClickHouseTraces(settings.clickhouse, settings.clickhouse_path, clock=clock)


def build_toolbox(settings: Settings, embedded: EmbeddedEnvironment | None = None) -> Toolbox:
    """The toolbox; ``embedded`` is the environment to serve from (default: a new one)."""
    embedded = embedded or embedded_environment(settings)
    logs: LokiBackend | ClickHouseLogs | EmbeddedEnvironment = embedded
    metrics: PrometheusBackend | EmbeddedEnvironment = embedded
    if settings.tools.logs == "loki":
        from veridiag.tools.backends.loki import LokiBackend  # HTTP client: only when configured

        if not settings.loki.url:
            raise ConfigurationError("tools.logs is 'loki' but loki.url (VERIDIAG_LOKI__URL) is not set")
        logs = LokiBackend(
            settings.loki.url,
            timeout=settings.loki.timeout_seconds,
            service_label=settings.loki.service_label,
            headers=_headers(settings.loki),
            backoff=Backoff(attempts=1 + settings.loki.max_retries),
        )
    closers: tuple[Callable[[], None], ...] = ()
    if settings.tools.logs == "clickhouse":
        logs = clickhouse_logs(settings, embedded)
        closers = (logs.close,)
    if settings.tools.metrics == "prometheus":
        from veridiag.tools.backends.prometheus import PrometheusBackend

        if not settings.prometheus.url:
            raise ConfigurationError("tools.metrics is 'prometheus' but prometheus.url is not set")
        metrics = PrometheusBackend(
            settings.prometheus.url,
            timeout=settings.prometheus.timeout_seconds,
            service_label=settings.prometheus.service_label,
            headers=_headers(settings.prometheus),
            backoff=Backoff(attempts=1 + settings.prometheus.max_retries),
        )
    traces: TraceBackend = embedded
    if settings.tools.traces == "clickhouse":
        table = clickhouse_traces(settings, embedded)
        traces, closers = table, (*closers, table.close)
    elif settings.tools.traces != "embedded":
        server = trace_backend(settings)
        traces, closers = server, (*closers, server.close)
    return Toolbox(
        logs=logs,
        metrics=metrics,
        knowledge=embedded,
        changes=embedded,
        traces=traces,
        timeout_seconds=settings.tools.timeout_seconds,
        redactor=embedded.redactor,
        closers=closers,
    )
