"""The service on a free loopback port in a background thread: for benchmarks, browser tests
and embedding veridiag in another process's tests."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn
from fastapi import FastAPI


class LocalServer:
    """``with LocalServer(app) as server: httpx.get(server.url + "/healthz")``.

    Unless ``rate_limited``, the app's rate limit is switched off: a load benchmark or a browser
    test sends more from one address than any per-client limit allows."""

    def __init__(self, app: FastAPI, *, startup_timeout: float = 30.0, rate_limited: bool = False) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]
        self.app = app
        if not rate_limited:
            app.state.rate_limiter = None
        self.startup_timeout = startup_timeout
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="error", backlog=1024, proxy_headers=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="veridiag-local-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LocalServer:
        self._thread.start()
        deadline = time.monotonic() + self.startup_timeout
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"the server did not start on port {self.port}")
            time.sleep(0.05)
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)
