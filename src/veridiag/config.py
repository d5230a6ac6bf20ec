"""Settings: defaults < ``veridiag.yaml`` (or ``$VERIDIAG_CONFIG``) < ``VERIDIAG_*`` env vars.

Nested keys use ``__`` in the environment: ``VERIDIAG_GATEKEEPER__RULES_FILE=rules.local.yaml``.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)


class GatekeeperSettings(BaseModel):
    enabled: bool = True
    #: A YAML file with the same sections as the bundled rules.yaml, merged by rule id.
    rules_file: Path | None = None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VERIDIAG_", env_nested_delimiter="__", extra="ignore")

    gatekeeper: GatekeeperSettings = GatekeeperSettings()

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
