"""The process entry point: ``veridiag`` (the installed script) and ``python -m veridiag``."""

import gc
import signal
from types import FrameType


def _stop(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main() -> None:
    """Runs the command line with the collector paused until the command starts: loading and
    parsing it (typer, rich, pydantic, the command's modules) makes ~5·10⁴ long-lived objects and
    almost no cyclic garbage, which ~100 collector passes only walked (issue 15). The command
    resumes it (``GuardedGroup.invoke``); ``ask``, ``serve``, ``worker`` and ``bench`` then pause
    it again while they build their tools, as before (``started_once``)."""
    gc.disable()
    # A container's first process (PID 1) ignores a signal it does not handle: until the command
    # installs its own (serve, worker, mcp stop cleanly on SIGTERM), SIGTERM ends it here, or a
    # pod deleted while starting waits out its whole grace period (measured: 20 s and on).
    signal.signal(signal.SIGTERM, _stop)
    from veridiag.cli.app import main as run

    run(collector_paused=True)


if __name__ == "__main__":
    main()
