"""One role's settings → a pydantic-ai model. OpenAI-compatible endpoints by base URL; Anthropic
and Gemini when their extras are installed. A fresh client per call: ``run_sync`` opens a new
event loop each time and an async HTTP client must not outlive its loop."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from veridiag.config import LLMRoleSettings

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings

#: Well-known OpenAI-compatible endpoints, usable as ``base_url``.
PRESETS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "deepseek": "https://api.deepseek.com/v1",
    "dashscope": "https://dashscope.aliyuncs.com/compatible-mode/v1",
    "dashscope-intl": "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    "qwen": "https://dashscope.aliyuncs.com/compatible-mode/v1",
    "ollama": "http://127.0.0.1:11434/v1",
    "vllm": "http://127.0.0.1:8000/v1",
}

_EXTRAS = {"anthropic": "veridiag[anthropic]", "google": "veridiag[gemini]"}


class LLMConfigError(ValueError):
    """The role's model cannot be built from its settings (missing model, key or extra)."""


def resolve_base_url(base_url: str | None) -> str | None:
    if base_url is None:
        return None
    return PRESETS.get(base_url.strip().lower(), base_url.strip())


def model_settings(config: LLMRoleSettings) -> ModelSettings:
    from pydantic_ai.settings import ModelSettings

    settings = ModelSettings()
    if config.temperature is not None:
        settings["temperature"] = config.temperature
    if config.timeout_seconds is not None:
        settings["timeout"] = config.timeout_seconds
    return settings


def build_model(config: LLMRoleSettings) -> Model:
    """The configured model; raises LLMConfigError with what to set or install."""
    if not config.model:
        raise LLMConfigError("no model configured (set VERIDIAG_LLM__DEFAULT__MODEL or a role's MODEL)")
    provider = config.provider or "openai"
    key = config.api_key.get_secret_value() if config.api_key else None
    try:
        if provider == "openai":
            return _openai(config.model, key, resolve_base_url(config.base_url), config)
        if provider == "anthropic":
            return _anthropic(config.model, key, config)
        return _google(config.model, key, config)
    except ImportError as exc:
        hint = _EXTRAS.get(provider, "veridiag")
        raise LLMConfigError(f"provider {provider!r} needs an extra: pip install '{hint}': {exc}") from exc


def _timeout_and_retries(config: LLMRoleSettings) -> tuple[float, int]:
    """The SDK client's own timeout and retries: the role's settings, not the SDK's defaults
    (``RoleModel`` sets retries to 0 where it retries with back-off itself)."""
    return config.timeout_seconds or 60.0, 2 if config.max_retries is None else config.max_retries


def _anthropic(model: str, key: str | None, config: LLMRoleSettings) -> Model:
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    timeout, retries = _timeout_and_retries(config)
    client = AsyncAnthropic(
        api_key=key or os.environ.get("ANTHROPIC_API_KEY"),
        base_url=config.base_url,
        timeout=timeout,
        max_retries=retries,
    )
    return AnthropicModel(model, provider=AnthropicProvider(anthropic_client=client))


def _google(model: str, key: str | None, config: LLMRoleSettings) -> Model:
    import httpx2
    from google.genai.types import HttpRetryOptions
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    timeout, retries = _timeout_and_retries(config)
    provider = GoogleProvider(
        api_key=key,
        base_url=config.base_url,
        http_client=httpx2.AsyncClient(timeout=timeout),
        retry_options=HttpRetryOptions(attempts=1 + retries),
    )
    return GoogleModel(model, provider=provider)


def _openai(model: str, key: str | None, base_url: str | None, config: LLMRoleSettings) -> Model:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    timeout, retries = _timeout_and_retries(config)
    # Local servers (Ollama, vLLM) take any key; the SDK insists on one.
    client = AsyncOpenAI(
        api_key=key or os.environ.get("OPENAI_API_KEY") or "not-needed",
        base_url=base_url,
        timeout=timeout,
        max_retries=retries,
    )
    return OpenAIChatModel(model, provider=OpenAIProvider(openai_client=client))
