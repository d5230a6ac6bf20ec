"""Settings: defaults < ``veridiag.yaml`` (or ``$VERIDIAG_CONFIG``) < ``VERIDIAG_*`` env vars.

Nested keys use ``__`` in the environment, e.g. ``VERIDIAG_TOOLS__METRICS=prometheus``,
``VERIDIAG_PROMETHEUS__URL=http://127.0.0.1:9090``. ``VERIDIAG_DATABASE_URL`` selects the
session store (PostgreSQL via ``postgresql://…``); ``VERIDIAG_HOME`` where files live.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)


def default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "veridiag"


class GatekeeperSettings(BaseModel):
    enabled: bool = True
    #: A YAML file with the same sections as the bundled rules.yaml, merged by rule id.
    rules_file: Path | None = None


class SwitchSettings(BaseModel):
    enabled: bool = True


class RetrySettings(BaseModel):
    #: Executor + Verifier rounds at most; a LOW_CONFID round may earn one more (docs/spec §0.6).
    max_rounds: int = Field(default=2, ge=1, le=5)


class HttpBackendSettings(BaseModel):
    url: str = ""
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    service_label: str = "service"
    bearer_token: SecretStr | None = None
    #: Retries of a request refused at connect or answered 429/5xx (exponential backoff + jitter);
    #: a timed-out request is not retried.
    max_retries: int = Field(default=2, ge=0, le=10)


class TraceServerSettings(BaseModel):
    """A trace server read over HTTP (``tools.traces``: ``jaeger`` — its query API, the URL of
    jaeger-query, e.g. http://jaeger:16686 — or ``tempo`` — its query frontend, e.g.
    http://tempo:3200). They return traces, not counts: ``query_traces`` reads at most
    ``max_traces`` for a window (and as many for its baseline, and for each callee), and says
    its figures are over the traces read."""

    url: str = ""
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    bearer_token: SecretStr | None = None
    #: More headers sent with every request, e.g. ``X-Scope-OrgID`` (a multi-tenant Tempo's
    #: tenant) or ``Authorization: Basic …``; values are kept secret.
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    #: Retries of a request refused at connect or answered 429/5xx; a timed-out one is not retried.
    max_retries: int = Field(default=2, ge=0, le=10)
    #: Traces one search reads at most (Tempo reads each by id, so fewer by default).
    max_traces: int = Field(default=200, ge=1, le=5000)
    #: The largest answer read; a longer one is an error saying so.
    max_response_bytes: int = Field(default=32 * 2**20, ge=2**10, le=2**30)
    #: When a window holds none of a service's spans, where they are is looked for this far back.
    lookback_hours: float = Field(default=168.0, gt=0, le=24 * 90)


class TempoSettings(TraceServerSettings):
    max_traces: int = Field(default=100, ge=1, le=5000)


#: A ClickHouse table or column name: configuration, never user input, yet checked and quoted.
_IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_.]*$"


class OtelLogColumns(BaseModel):
    """Column names of an OpenTelemetry ``otel_logs`` table (the ClickHouse exporter's by default)."""

    timestamp: str = Field(default="Timestamp", pattern=_IDENTIFIER)
    #: The exporter's second-resolution copy that leads its primary key; used when present.
    timestamp_time: str = Field(default="TimestampTime", pattern=_IDENTIFIER)
    service: str = Field(default="ServiceName", pattern=_IDENTIFIER)
    severity_text: str = Field(default="SeverityText", pattern=_IDENTIFIER)
    severity_number: str = Field(default="SeverityNumber", pattern=_IDENTIFIER)
    body: str = Field(default="Body", pattern=_IDENTIFIER)
    log_attributes: str = Field(default="LogAttributes", pattern=_IDENTIFIER)
    #: veridiag's template id per line (``data import-logs --store clickhouse`` fills it); when
    #: absent, templates are the lines with numbers and ids masked, at query time.
    template: str = Field(default="LogTemplateId", pattern=_IDENTIFIER)


class OtelTraceColumns(BaseModel):
    """Column names of an OpenTelemetry ``otel_traces`` table (the ClickHouse exporter's by default)."""

    #: When the span started (DateTime64).
    timestamp: str = Field(default="Timestamp", pattern=_IDENTIFIER)
    trace_id: str = Field(default="TraceId", pattern=_IDENTIFIER)
    span_id: str = Field(default="SpanId", pattern=_IDENTIFIER)
    parent_span_id: str = Field(default="ParentSpanId", pattern=_IDENTIFIER)
    #: The operation.
    span_name: str = Field(default="SpanName", pattern=_IDENTIFIER)
    service: str = Field(default="ServiceName", pattern=_IDENTIFIER)
    #: How long the span took, in nanoseconds (an integer).
    duration: str = Field(default="Duration", pattern=_IDENTIFIER)
    #: 'Ok' / 'Error' / 'Unset' (the exporter's; older ones wrote 'STATUS_CODE_ERROR' …); '' for
    #: a span that states no status.
    status_code: str = Field(default="StatusCode", pattern=_IDENTIFIER)


class ClickHouseSettings(BaseModel):
    """Logs (and spans) in ClickHouse: a server over HTTP (``url``), or the in-process engine (chdb, the
    ``veridiag[clickhouse]`` extra) on a local data directory when ``url`` is empty."""

    url: str = ""
    #: The in-process engine's data directory (default: <home>/clickhouse); one process at a time.
    path: Path | None = None
    database: str = Field(default="default", pattern=_IDENTIFIER)
    table: str = Field(default="otel_logs", pattern=_IDENTIFIER)
    username: str = "default"
    password: SecretStr | None = None
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    columns: OtelLogColumns = OtelLogColumns()
    #: The spans' table (``tools.traces: clickhouse``), in ``database`` like the logs'.
    traces_table: str = Field(default="otel_traces", pattern=_IDENTIFIER)
    trace_columns: OtelTraceColumns = OtelTraceColumns()


class ToolsSettings(BaseModel):
    logs: Literal["embedded", "loki", "clickhouse"] = "embedded"
    metrics: Literal["embedded", "prometheus"] = "embedded"
    #: Where ``query_traces`` reads spans: the embedded file (``data import-traces``), the
    #: ClickHouse ``otel_traces`` table of the ``clickhouse`` settings, or a Jaeger or Tempo
    #: server (``jaeger.url``, ``tempo.url``).
    traces: Literal["embedded", "clickhouse", "jaeger", "tempo"] = "embedded"
    knowledge: Literal["embedded"] = "embedded"
    #: A call that takes longer is recorded as an error and the session goes on.
    timeout_seconds: float = Field(default=20.0, gt=0, le=600)


class EmbeddedSettings(BaseModel):
    path: Path | None = None  # default: <home>/embedded.db
    load_demo: bool = True
    #: Incidents added to the demo: a folder like ``tools/demo/incidents/<id>/``, or a folder of
    #: them. Loaded with the demo, so into an empty embedded file.
    demo_incidents: Path | None = None


class KnowledgeSettings(BaseModel):
    #: Your runbooks (Markdown with front matter); they override bundled ones by id.
    user_dir: Path | None = None


class RedactionSettings(BaseModel):
    """Secrets in tool output (``password=…``, bearer tokens, cloud keys, private keys …) are
    replaced by ``[REDACTED:kind]`` before anything is stored or shown to a model."""

    enabled: bool = True
    #: Extra regexes (Python syntax), redacted as ``[REDACTED:custom]``; a group named
    #: ``secret`` limits the replacement to it, e.g. ``corp_key=(?P<secret>\w+)``.
    patterns: list[str] = Field(default_factory=list)

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"redaction pattern {pattern!r} is not a valid regex: {exc}") from None
            if compiled.fullmatch("") is not None:
                raise ValueError(f"redaction pattern {pattern!r} matches the empty string")
        return patterns


#: ``${NAME}`` as a whole value: read from the environment variable NAME, so a webhook URL or
#: signing secret never has to be written into veridiag.yaml.
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

DestinationKind = Literal["slack", "feishu", "dingtalk", "wecom", "webhook"]


class DestinationSettings(BaseModel):
    """One place answers are posted to (``veridiag ask --post-to NAME``, ``veridiag deliver``).

    ``url`` is the webhook address (Slack incoming webhook, Feishu/Lark, DingTalk or WeCom group
    bot, any JSON endpoint); Slack also takes a bot ``token`` and a ``channel`` instead
    (``chat.postMessage``; ``url`` then overrides the API address). The webhook's ``token`` is
    sent as a bearer token. ``secret`` signs requests where the receiver checks signatures
    (Feishu, DingTalk, the generic webhook). ``url``, ``secret`` and ``token`` may be written as
    ``${ENV_VAR}``; all three are credentials and never printed."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    kind: DestinationKind
    url: SecretStr | None = None
    secret: SecretStr | None = None
    token: SecretStr | None = None
    channel: str | None = None

    @field_validator("url", "secret", "token", mode="before")
    @classmethod
    def _from_environment(cls, value: Any) -> Any:
        if isinstance(value, str) and (reference := _ENV_REFERENCE.fullmatch(value.strip())):
            name = reference.group(1)
            if name not in os.environ:
                raise ValueError(f"environment variable {name} is not set")
            return os.environ[name]
        return value

    @model_validator(mode="after")
    def _addressable(self) -> DestinationSettings:
        if not self.name:
            self.name = self.kind
        if self.kind == "slack" and (self.url is None if self.token is None else not self.channel):
            raise ValueError("a slack destination needs a webhook url, or a bot token and a channel")
        if self.kind != "slack" and self.url is None:
            raise ValueError(f"a {self.kind} destination needs a url")
        return self


class DeliverySettings(BaseModel):
    """Where and how finished sessions are posted; ``VERIDIAG_DELIVERY__DESTINATIONS`` takes
    the list as JSON."""

    destinations: list[DestinationSettings] = Field(default_factory=list)
    #: The workbench address people open from chat: each message links to the session there.
    workbench_url: str = "http://127.0.0.1:8080"
    #: Attempts per destination: a 5xx, a 429, a rate-limit reply or a network error is retried
    #: with exponential backoff and jitter; any other 4xx is not.
    max_attempts: int = Field(default=4, ge=1, le=10)
    #: First backoff; doubled per attempt, jittered, at most ``max_backoff_seconds``.
    backoff_seconds: float = Field(default=1.0, ge=0, le=60)
    max_backoff_seconds: float = Field(default=30.0, ge=0, le=600)
    timeout_seconds: float = Field(default=10.0, gt=0, le=120)

    @field_validator("destinations")
    @classmethod
    def _unique_names(cls, destinations: list[DestinationSettings]) -> list[DestinationSettings]:
        names = [d.name for d in destinations]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"destination names must be unique; give each a name: {', '.join(twice)}")
        return destinations

    @field_validator("workbench_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"workbench_url must start with http:// or https://, got {value!r}")
        return value.rstrip("/")


class AlertSettings(BaseModel):
    """Alert intake (``/api/v1/alerts/*``) and the workers that run its diagnoses."""

    #: The language alert questions (and so their answers) are worded in.
    language: Literal["zh", "en"] = "en"
    #: Shared secrets of HMAC-signed deliveries (``X-PagerDuty-Signature``,
    #: ``X-Grafana-Alerting-Signature``); when set, that sender's deliveries need a valid
    #: signature or a bearer token.
    pagerduty_secret: SecretStr = SecretStr("")
    grafana_secret: SecretStr = SecretStr("")
    #: The headers of the Grafana contact point's "HMAC signature" settings. Grafana's default
    #: signature header; Grafana has no default timestamp header: set this name there too, and
    #: a signed delivery whose timestamp is more than 5 minutes old is refused as a replay
    #: ("": read no timestamp, the body alone is signed; otherwise a signed delivery without it is refused).
    grafana_signature_header: str = Field(default="X-Grafana-Alerting-Signature", min_length=1)
    grafana_timestamp_header: str = "X-Grafana-Alerting-Signature-Timestamp"
    #: Threads of the worker ``veridiag serve`` runs in its own process; 0 leaves the queue to
    #: ``veridiag worker`` processes.
    serve_workers: int = Field(default=1, ge=0, le=64)
    #: Attempts per job: a run that raises, or whose worker dies (lease expired), is tried again.
    max_attempts: int = Field(default=3, ge=1, le=20)
    #: How long a claimed job stays a worker's without news from it (renewed at each stage).
    lease_seconds: float = Field(default=600.0, gt=0, le=86_400)
    retry_first_wait_seconds: float = Field(default=30.0, ge=0, le=3600)
    retry_max_wait_seconds: float = Field(default=900.0, ge=0, le=86_400)
    #: How often an idle worker looks for due jobs.
    poll_seconds: float = Field(default=1.0, gt=0, le=60)
    #: Post each alert's verified answer to ``delivery.destinations`` when its diagnosis completes.
    post_answers: bool = True
    #: The destinations (by name) alert answers go to; empty: every configured destination.
    post_to: list[str] = Field(default_factory=list)


LLMProvider = Literal["openai", "anthropic", "google"]
LLMRole = Literal["planner", "executor", "verifier", "composer"]


class LLMRoleSettings(BaseModel):
    """One role's model. Unset fields inherit from ``llm.default``.

    ``provider=openai`` means any OpenAI-compatible endpoint: set ``base_url`` (or a preset
    name such as ``deepseek``, ``dashscope``, ``dashscope-intl``, ``ollama``, ``vllm``).
    """

    provider: LLMProvider | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    base_url: str | None = None
    timeout_seconds: float | None = Field(default=None, gt=0, le=600)
    temperature: float | None = Field(default=None, ge=0, le=2)
    #: Retries of a request that failed with a timeout, 429 or 5xx (exponential backoff).
    max_retries: int | None = Field(default=None, ge=0, le=10)
    #: USD per million tokens; when set, each role call's cost is recorded.
    input_price_per_mtok: float | None = Field(default=None, ge=0)
    output_price_per_mtok: float | None = Field(default=None, ge=0)


class LLMSettings(BaseModel):
    """``VERIDIAG_LLM__DEFAULT__MODEL=deepseek-chat``, ``VERIDIAG_LLM__VERIFIER__MODEL=…`` and so on."""

    default: LLMRoleSettings = LLMRoleSettings()
    planner: LLMRoleSettings = LLMRoleSettings()
    executor: LLMRoleSettings = LLMRoleSettings()
    verifier: LLMRoleSettings = LLMRoleSettings()
    composer: LLMRoleSettings = LLMRoleSettings()
    #: Tool calls one Executor round may make; calls beyond it are refused, not run.
    tool_call_budget: int = Field(default=12, ge=1, le=100)

    def for_role(self, role: LLMRole) -> LLMRoleSettings:
        """The role's settings over the defaults, field by field."""
        own = getattr(self, role).model_dump(exclude_none=True)
        return LLMRoleSettings.model_validate({**self.default.model_dump(exclude_none=True), **own})

    def configured(self, role: LLMRole) -> bool:
        return bool(self.for_role(role).model)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VERIDIAG_", env_nested_delimiter="__", extra="ignore")

    home: Path = Field(default_factory=default_home)
    database_url: str | None = None
    #: A session still ``running`` this long after it started is shown and stored as
    #: ``interrupted`` (a dead process on this host is noticed at once, by its pid).
    session_timeout_seconds: float = Field(default=3600.0, gt=0)
    gatekeeper: GatekeeperSettings = GatekeeperSettings()
    #: docs/spec §22.2 switches; no combination brings back an Executor-written answer.
    structured_output_v2: SwitchSettings = SwitchSettings()
    composer: SwitchSettings = SwitchSettings()
    retry: RetrySettings = RetrySettings()
    tools: ToolsSettings = ToolsSettings()
    embedded: EmbeddedSettings = EmbeddedSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()
    redaction: RedactionSettings = RedactionSettings()
    prometheus: HttpBackendSettings = HttpBackendSettings()
    loki: HttpBackendSettings = HttpBackendSettings()
    clickhouse: ClickHouseSettings = ClickHouseSettings()
    jaeger: TraceServerSettings = TraceServerSettings()
    tempo: TempoSettings = TempoSettings()
    #: ``offline`` needs no model; ``llm`` uses the configured models with the offline engine as
    #: each role's fallback; ``auto`` is ``llm`` for the roles that have a model.
    engine: Literal["auto", "offline", "llm"] = "auto"
    #: Comma-separated bearer tokens for the HTTP API (``VERIDIAG_API_TOKENS``); required when
    #: ``veridiag serve`` listens beyond loopback.
    api_tokens: SecretStr = SecretStr("")
    #: Diagnoses the HTTP service runs at once (more wait in arrival order). A model-backed
    #: engine waits on the network and can use more than the offline engine's CPU-bound default.
    api_concurrency: int = Field(default_factory=lambda: max(2, os.cpu_count() or 2), ge=1, le=256)
    #: Largest request body the HTTP service reads, in bytes: more is refused with 413 while it
    #: streams in, a larger declared Content-Length before any of it is read.
    api_max_body_bytes: int = Field(default=64 * 1024, ge=1024, le=64 * 1024 * 1024)
    #: Host names the HTTP service answers to (a guard against DNS rebinding); empty means
    #: localhost, 127.0.0.1, ::1 and the bind host. ``*.example.com`` patterns work; ``*`` turns
    #: the check off. Comma-separated in the environment.
    api_allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: Addresses or networks of reverse proxies whose ``X-Forwarded-Proto`` / ``X-Forwarded-For``
    #: are believed (https cookies, the client address the rate limit counts); empty: none.
    api_trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: Requests per bearer token (per client address when no tokens are configured), in the
    #: ``limits`` notation: ``120/minute``, ``10/second;600/hour``. ``0`` or empty turns it off.
    # Not validated when left as is: settings validate defaults, and parsing this one would
    # import the rate-limit library for every command.
    api_rate_limit: str = Field(default="120/minute", validate_default=False)
    #: Serve ``/metrics`` without a token even when tokens are configured (for scrapers).
    api_open_metrics: bool = False
    #: Key (32+ characters) that signs workbench session cookies; empty: a random key per start,
    #: so browsers sign in again after a restart. Set it when several processes serve one site.
    api_session_secret: SecretStr = SecretStr("")
    llm: LLMSettings = LLMSettings()
    #: Posting finished sessions to Slack, Feishu/Lark, DingTalk, WeCom or a JSON webhook.
    delivery: DeliverySettings = DeliverySettings()
    alerts: AlertSettings = AlertSettings()
    #: The zone people ask in (``Asia/Shanghai``): times in questions without an offset are read
    #: in it. Tool outputs and stored times stay in UTC.
    timezone: str = "UTC"

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r}; use an IANA name such as Asia/Shanghai or UTC") from None
        return value

    @field_validator("api_allowed_hosts", "api_trusted_proxies", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("api_allowed_hosts")
    @classmethod
    def _host_patterns(cls, hosts: list[str]) -> list[str]:
        """As Starlette's TrustedHostMiddleware reads them: lower case, IPv6 in brackets (as in a
        Host header), a wildcard only as a leading ``*.``."""
        patterns = []
        for host in hosts:
            pattern = host.lower()
            if "*" in pattern[1:] or (pattern.startswith("*") and pattern != "*" and not pattern.startswith("*.")):
                raise ValueError(f"bad host pattern {host!r}: use a name, an address, '*.example.com' or '*'")
            try:
                if ipaddress.ip_address(pattern.strip("[]")).version == 6:
                    pattern = f"[{pattern.strip('[]')}]"
            except ValueError:
                pass
            patterns.append(pattern)
        return patterns

    @field_validator("api_trusted_proxies")
    @classmethod
    def _proxy_addresses(cls, proxies: list[str]) -> list[str]:
        for proxy in proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise ValueError(f"bad proxy address {proxy!r}: use an IP address or a network") from None
        return proxies

    @field_validator("api_rate_limit")
    @classmethod
    def _rate(cls, value: str) -> str:
        value = value.strip()
        if value in ("", "0"):
            return ""
        from limits import parse_many

        try:
            parse_many(value)
        except ValueError:
            raise ValueError(f"bad rate limit {value!r}: write e.g. '120/minute' (or '0' to turn it off)") from None
        return value

    @field_validator("api_session_secret")
    @classmethod
    def _long_secret(cls, secret: SecretStr) -> SecretStr:
        if 0 < len(secret.get_secret_value()) < 32:
            raise ValueError("api_session_secret must be at least 32 characters (e.g. `openssl rand -hex 32`)")
        return secret

    @property
    def live_backends(self) -> bool:
        """Logs, metrics or spans come from a live system: "now" is the wall clock, not the data's end."""
        logs_live = self.tools.logs == "loki" or (self.tools.logs == "clickhouse" and bool(self.clickhouse.url))
        traces_live = self.tools.traces in ("jaeger", "tempo") or (
            self.tools.traces == "clickhouse" and bool(self.clickhouse.url)
        )
        return logs_live or traces_live or self.tools.metrics != "embedded"

    @property
    def tokens(self) -> list[str]:
        return [t.strip() for t in self.api_tokens.get_secret_value().split(",") if t.strip()]

    @property
    def store_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.home / 'veridiag.db').expanduser()}"

    @property
    def clickhouse_path(self) -> Path:
        return (self.clickhouse.path or self.home / "clickhouse").expanduser()

    @property
    def embedded_path(self) -> Path:
        return (self.embedded.path or self.home / "embedded.db").expanduser()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        named = os.environ.get("VERIDIAG_CONFIG")
        yaml_file = Path(named or "veridiag.yaml")
        if named and not yaml_file.is_file():
            # named, it is meant: a mount path or a typo would otherwise run on defaults unsaid
            raise ValueError(f"VERIDIAG_CONFIG names {named!r}, which is no file")
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls, yaml_file=yaml_file))


def load_settings() -> Settings:
    return Settings()
