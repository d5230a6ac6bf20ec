"""The process entry point: ``veridiag`` (the installed script) and ``python -m veridiag``."""

import gc


def main() -> None:
    """Runs the command line with the collector paused until the command starts: loading and
    parsing it (typer, rich, pydantic, the command's modules) makes ~5·10⁴ long-lived objects and
    almost no cyclic garbage, which ~100 collector passes only walked (issue 15). The command
    resumes it (``GuardedGroup.invoke``); ``ask``, ``serve``, ``worker`` and ``bench`` then pause
    it again while they build their tools, as before (``started_once``)."""
    gc.disable()
    from veridiag.cli.app import main as run

    run(collector_paused=True)


if __name__ == "__main__":
    main()
