"""One retry policy for every call to another system (a metrics or logs server, a model's API):
exponential backoff with jitter, through tenacity, so concurrent callers that failed together
do not come back together. Callers say what is worth another attempt; everything else, and
the last failure, is raised as it was."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tenacity


@dataclass(frozen=True)
class Backoff:
    """``attempts`` in all (1: no retry); waits ``first_wait`` · 2ⁿ plus up to ``first_wait`` of
    jitter, at most ``max_wait`` seconds; ``sleep`` is injectable so tests wait for nothing."""

    attempts: int = 3
    first_wait: float = 0.2
    max_wait: float = 5.0
    sleep: Callable[[float], None] = time.sleep

    def retrying(self, transient: Callable[[BaseException], bool]) -> tenacity.Retrying:
        import tenacity  # imported on first use: `veridiag --help` need not load it

        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(max(1, self.attempts)),
            wait=tenacity.wait_exponential_jitter(initial=self.first_wait, max=self.max_wait, jitter=self.first_wait),
            retry=tenacity.retry_if_exception(transient),
            sleep=self.sleep,
            reraise=True,
        )

    def wait(self, attempt: int) -> float:
        """The wait after failed attempt ``attempt`` (1-based) as a number, for a caller that
        stores when to come back instead of sleeping (a queued job's ``next_run_at``): the curve
        ``retrying`` sleeps, as tenacity's ``wait_exponential_jitter`` computes it."""
        exponent = min(max(0, attempt - 1), 60)  # 2**60 s is already past any max_wait
        wait: float = self.first_wait * 2**exponent + random.uniform(0, self.first_wait)
        return min(wait, self.max_wait)
