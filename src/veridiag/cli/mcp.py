"""``veridiag mcp``: the diagnosis, audit, evidence tools and Gatekeeper for MCP clients."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Annotated, Literal

import typer

from veridiag.cli.common import err, settings, started_once
from veridiag.cli.serve import HostOption, InsecureOption, PortOption, bind_guarded, hosts_hint

Transport = Literal["stdio", "http"]


def mcp(
    transport: Annotated[
        Transport,
        typer.Option(help="stdio (a client starts this command) or http (streamable HTTP at /mcp)."),
    ] = "stdio",
    host: HostOption = "127.0.0.1",
    port: PortOption = 8090,
    insecure_no_auth: InsecureOption = False,
) -> None:
    """Serve the MCP tools: diagnose, get_audit, query_logs, query_metrics, query_changes,
    lookup_knowledge, check_claims. Over HTTP the API's bearer tokens (VERIDIAG_API_TOKENS) guard it."""
    # What start-up built is frozen before the first request, as ``serve`` does (``started_once``).
    with started_once(collect=True) as started:
        _mcp(transport, host, port, insecure_no_auth, started)


def _mcp(transport: Transport, host: str, port: int, insecure_no_auth: bool, started: Callable[[], None]) -> None:
    # The SDK, the store and the pipeline load here, not for ``veridiag --help``.
    from veridiag.pipeline.factory import assemble, build_home_apart

    config = settings()
    sock = bind_guarded(config, host, port, insecure_no_auth=insecure_no_auth) if transport == "http" else None
    try:
        build_home_apart(config)
        assembly = assemble(config)  # a failure is one ``error:`` line (GuardedGroup)
    except BaseException:
        if sock is not None:
            sock.close()
        raise
    if sock is None:  # stdout is the protocol channel from here on: nothing else may print there
        from veridiag.mcp_server import build_server
        from veridiag.mcp_server.stdio import run_stdio

        server = build_server(assembly, concurrency=config.api_concurrency)
        started()
        # As a container's first process (PID 1) a process ignores SIGTERM unless it handles it:
        # `docker stop` / a pod's termination would wait out its grace period, then kill it.
        signal.signal(signal.SIGTERM, _stop)
        with contextlib.suppress(KeyboardInterrupt):
            run_stdio(server)
        return

    import uvicorn

    from veridiag.mcp_server import http_app

    app = http_app(assembly, config, host=host, port=port)
    auth = "bearer tokens" if config.tokens else "no auth"
    err.print(f"veridiag MCP on http://{host}:{port}/mcp ({auth}; engine {assembly.engine})")
    hosts_hint(config, host)
    uvicorn_server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", proxy_headers=False))
    started()
    uvicorn_server.run(sockets=[sock])


def _stop(_signum: int, _frame: FrameType | None) -> None:
    """SIGTERM ends the stdio server at once. An orderly unwind is not possible: the SDK reads
    stdin in a worker thread that no cancellation reaches, so the process would wait for the
    client's next line. Nothing is lost: what was answered was written, and a diagnosis cut
    short reads as ``interrupted`` (its owner process is gone)."""
    sys.stdout.flush()
    os._exit(0)
