"""``veridiag serve``: the HTTP API and the Trace Workbench."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from veridiag.cli.common import err, fail, settings, started_once

if TYPE_CHECKING:
    import socket

    from veridiag.config import Settings


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here rather than inside uvicorn: a port in use, a host that
    does not resolve or a port needing privileges is then one ``error:`` line, not a log record
    and exit 1 from deep inside the server."""
    import socket  # here, not at the top: `veridiag --help` loads this module

    family, kind, proto, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def bind_guarded(config: Settings, host: str, port: int, *, insecure_no_auth: bool) -> socket.socket:
    """The listening socket for an HTTP service (the API, ``veridiag mcp --transport http``); an
    open service beyond loopback is refused unless asked for: tokens are what guard it."""
    from veridiag.api.security import is_loopback

    if not is_loopback(host) and not config.tokens and not insecure_no_auth:
        raise fail(
            f"refusing to serve on {host} without API tokens: set VERIDIAG_API_TOKENS=token1,token2 "
            "(or pass --insecure-no-auth)"
        )
    try:
        return listen(host, port)
    except OSError as exc:
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def hosts_hint(config: Settings, host: str) -> None:
    """On a wildcard bind, say which Host names are answered (api_allowed_hosts) before a client
    meets a 400."""
    from veridiag.api.guards import wildcard_bind

    if wildcard_bind(host) and not config.api_allowed_hosts:
        err.print(
            "only Host localhost, 127.0.0.1 and [::1] are answered: name this machine's other host names in "
            "VERIDIAG_API_ALLOWED_HOSTS=diag.example.com,10.0.0.5"
        )


HostOption = Annotated[str, typer.Option(help="Interface to listen on.")]
PortOption = Annotated[int, typer.Option(min=1, max=65535)]
InsecureOption = Annotated[
    bool, typer.Option("--insecure-no-auth", help="Allow an open service beyond loopback (not recommended).")
]


def serve(
    host: HostOption = "127.0.0.1",
    port: PortOption = 8080,
    insecure_no_auth: InsecureOption = False,
) -> None:
    """Serve /api/v1 (chat, sessions, audit, rules, alert intake), /metrics, /healthz and the
    workbench at /; queued alert diagnoses run here too unless alerts.serve_workers=0."""
    # What start-up built is frozen before the first request (``started_once``): a full
    # collection in the server then walks only what requests made, not the ~10⁵ objects of the
    # imports and the app (a 120–220 ms pause each time otherwise: issue 15's p99s).
    with started_once(collect=True) as started:
        _serve(host, port, insecure_no_auth, started)


def _serve(host: str, port: int, insecure_no_auth: bool, started: Callable[[], None]) -> None:
    import uvicorn

    from veridiag.agents.llm import LLMConfigError
    from veridiag.api import create_app
    from veridiag.gatekeeper import RulesetError
    from veridiag.pipeline.factory import build_home_apart
    from veridiag.store import StoreError
    from veridiag.tools.factory import ConfigurationError

    config = settings()
    sock = bind_guarded(config, host, port, insecure_no_auth=insecure_no_auth)
    try:
        build_home_apart(config)
        app = create_app(config, bind_host=host)
    except (StoreError, ConfigurationError, RulesetError, LLMConfigError) as exc:
        sock.close()
        raise fail(str(exc)) from None
    except BaseException:
        sock.close()
        raise
    auth = "bearer tokens" if config.tokens else "no auth"
    err.print(f"veridiag on http://{host}:{port}/ ({auth}; engine {app.state.assembly.engine})")
    hosts_hint(config, host)
    # Forwarded headers are believed only from api_trusted_proxies (the app applies them), not
    # from whatever uvicorn trusts by default.
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", proxy_headers=False))
    # Alert diagnoses run beside the server in this process unless left to `veridiag worker`s
    # (alerts.serve_workers=0): one command is a working alert intake.
    alert_worker = None
    if config.alerts.serve_workers:
        from veridiag.alerts.posting import post_answers
        from veridiag.alerts.worker import from_settings
        from veridiag.delivery.send import DeliveryError

        try:
            after_finish = post_answers(app.state.assembly.store, config)
        except DeliveryError as exc:
            sock.close()
            raise fail(f"alerts.post_to: {exc}") from None
        queue, pipeline = app.state.alert_queue, app.state.assembly.pipeline
        alert_worker = from_settings(queue, pipeline, config.alerts, config.alerts.serve_workers, after_finish)
        alert_worker.start()
    started()
    # uvicorn handles SIGTERM while it serves and raises it again once it has shut down: the
    # start-up handler (``veridiag.__main__``) must not turn that into exit 143 (PID 1: ignored, 0)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        server.run(sockets=[sock])
    finally:
        if alert_worker is not None:
            alert_worker.stop(timeout=0)  # an unfinished diagnosis is taken again after its lease
