"""Settings: defaults < ``veridiag.yaml`` (or ``$VERIDIAG_CONFIG``) < ``VERIDIAG_*`` env vars.

Nested keys use ``__`` in the environment, e.g. ``VERIDIAG_TOOLS__METRICS=prometheus``,
``VERIDIAG_PROMETHEUS__URL=http://127.0.0.1:9090``. ``VERIDIAG_DATABASE_URL`` selects the
session store (PostgreSQL via ``postgresql://…``); ``VERIDIAG_HOME`` where files live.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
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
    #: Executor + Verifier rounds at most; a LOW_CONFID round may earn one more (spec §0.6).
    max_rounds: int = Field(default=2, ge=1, le=5)


class HttpBackendSettings(BaseModel):
    url: str = ""
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    service_label: str = "service"
    bearer_token: SecretStr | None = None


class ToolsSettings(BaseModel):
    logs: Literal["embedded", "loki"] = "embedded"
    metrics: Literal["embedded", "prometheus"] = "embedded"
    knowledge: Literal["embedded"] = "embedded"
    #: A call that takes longer is recorded as an error and the session goes on.
    timeout_seconds: float = Field(default=20.0, gt=0, le=600)


class EmbeddedSettings(BaseModel):
    path: Path | None = None  # default: <home>/embedded.db
    load_demo: bool = True


class KnowledgeSettings(BaseModel):
    #: Your runbooks (Markdown with front matter); they override bundled ones by id.
    user_dir: Path | None = None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VERIDIAG_", env_nested_delimiter="__", extra="ignore")

    home: Path = Field(default_factory=default_home)
    database_url: str | None = None
    gatekeeper: GatekeeperSettings = GatekeeperSettings()
    #: Spec §22.2 switches; no combination brings back an Executor-written answer.
    structured_output_v2: SwitchSettings = SwitchSettings()
    composer: SwitchSettings = SwitchSettings()
    retry: RetrySettings = RetrySettings()
    tools: ToolsSettings = ToolsSettings()
    embedded: EmbeddedSettings = EmbeddedSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()
    prometheus: HttpBackendSettings = HttpBackendSettings()
    loki: HttpBackendSettings = HttpBackendSettings()

    @property
    def store_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.home / 'veridiag.db').expanduser()}"

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
        yaml_file = Path(os.environ.get("VERIDIAG_CONFIG", "veridiag.yaml"))
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls, yaml_file=yaml_file))


def load_settings() -> Settings:
    return Settings()
