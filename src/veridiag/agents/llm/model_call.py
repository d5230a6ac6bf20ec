"""Runs one role's model once: builds the agent, retries transient failures with backoff and
jitter (tenacity), records usage and cost, and never raises — a failure comes back as
``CallOutcome.error`` so the role can fall back to the offline engine and the audit can say why."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from veridiag._retry import Backoff
from veridiag.agents.llm.providers import LLMConfigError, build_model, model_settings
from veridiag.config import LLMRoleSettings
from veridiag.contracts.audit import EngineUsage

if TYPE_CHECKING:
    from pydantic_ai import Tool
    from pydantic_ai.models import Model

ModelFactory = Callable[[LLMRoleSettings], "Model"]


@dataclass
class CallOutcome:
    text: str | None
    usage: EngineUsage = field(default_factory=EngineUsage)
    error: str | None = None


class RoleModel:
    """One role's configured model. ``retry_transient`` is off for the executor: re-running its
    agent would repeat tool calls (the SDK still retries a single failed HTTP request)."""

    def __init__(
        self,
        role: str,
        config: LLMRoleSettings,
        *,
        model_factory: ModelFactory = build_model,
        retry_transient: bool = True,
        backoff_seconds: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.role = role
        self.config = config
        self.model_factory = model_factory
        retries = config.max_retries if config.max_retries is not None else 2
        # Exponential backoff with jitter (tenacity): roles failing together do not retry together.
        self.backoff = Backoff(
            attempts=1 + retries if retry_transient else 1, first_wait=backoff_seconds, max_wait=30.0, sleep=sleep
        )
        # Retries happen in one place: here for the side-effect-free roles, in the HTTP client
        # (one request at a time, no tool re-run) for the executor — never both multiplied.
        self.client_config = config.model_copy(update={"max_retries": 0}) if retry_transient else config

    @property
    def label(self) -> str:
        return f"llm:{self.config.model or '?'}"

    def run(
        self, instructions: str, prompt: str, tools: Sequence[Tool[Any]] = (), request_limit: int = 8
    ) -> CallOutcome:
        from pydantic_ai.exceptions import UsageLimitExceeded

        usage = EngineUsage(model=self.config.model, attempts=0)
        try:
            for attempt in self.backoff.retrying(_transient):
                with attempt:
                    usage["attempts"] = attempt.retry_state.attempt_number
                    return self._once(instructions, prompt, tools, request_limit, usage)
        except LLMConfigError as exc:
            return CallOutcome(None, usage, f"configuration: {exc}")
        except UsageLimitExceeded as exc:
            return CallOutcome(None, usage, f"request limit: {exc}")
        except Exception as exc:  # the last attempt's failure, or one not worth retrying: fails closed
            return CallOutcome(None, usage, _describe(exc))
        return CallOutcome(None, usage, "not run")  # tenacity always makes one attempt

    def _once(
        self, instructions: str, prompt: str, tools: Sequence[Tool[Any]], request_limit: int, usage: EngineUsage
    ) -> CallOutcome:
        from pydantic_ai import Agent
        from pydantic_ai.usage import UsageLimits

        agent: Agent[None, str] = Agent(
            self.model_factory(self.client_config),
            instructions=instructions,
            tools=list(tools),
            model_settings=model_settings(self.config),
            output_type=str,  # raw text: the pipeline parses it; no schema retries hide a bad output
        )
        limits = UsageLimits(request_limit=request_limit)
        if _loop_running():  # a notebook, an async app, Playwright's sync API: run beside that loop
            result = _BESIDE_LOOP.submit(agent.run_sync, prompt, usage_limits=limits).result()
        else:
            result = agent.run_sync(prompt, usage_limits=limits)
        run_usage = result.usage
        usage.update(
            {
                "requests": run_usage.requests,
                "tool_calls": run_usage.tool_calls,
                "input_tokens": run_usage.input_tokens,
                "output_tokens": run_usage.output_tokens,
                "cost_usd": self._cost(run_usage.input_tokens, run_usage.output_tokens),
            }
        )
        finish = result.response.finish_reason
        usage["finish_reason"] = finish
        if finish == "length":
            return CallOutcome(None, usage, "truncated output (finish_reason=length)")
        if finish == "content_filter":
            return CallOutcome(None, usage, "refused (content filter)")
        text = result.output
        if not text or not text.strip():
            return CallOutcome(None, usage, "empty output")
        return CallOutcome(text, usage)

    def _cost(self, input_tokens: int, output_tokens: int) -> float | None:
        prices = (self.config.input_price_per_mtok, self.config.output_price_per_mtok)
        if prices[0] is None and prices[1] is None:
            return None
        return round((input_tokens * (prices[0] or 0) + output_tokens * (prices[1] or 0)) / 1_000_000, 6)


_BESIDE_LOOP = ThreadPoolExecutor(max_workers=4, thread_name_prefix="veridiag-llm")


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _transient(exc: BaseException) -> bool:
    """Timeouts, 429 and 5xx are worth another attempt; auth, bad request and refusals are not."""
    from pydantic_ai.exceptions import (
        ModelConnectionError,
        ModelRateLimitError,
        ModelServerError,
        ModelUnavailableError,
    )

    if isinstance(exc, ModelRateLimitError | ModelServerError | ModelUnavailableError | ModelConnectionError):
        return True
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in (408, 409, 429) or status >= 500
    return isinstance(exc, TimeoutError | ConnectionError)


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}{f' {status}' if status else ''}: {text}"
