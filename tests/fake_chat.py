"""A local chat service for delivery tests: a real HTTP server on a free loopback port that
records every request and answers each path from a script, then with that vendor's success
reply (the path's first segment names the vendor)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Received:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """What was received, and the scripted replies still to give per path."""

    url: str = ""
    received: list[Received] = field(default_factory=list)
    script: dict[str, list[tuple[int, bytes]]] = field(default_factory=dict)

    def reply_for(self, path: str) -> tuple[int, bytes]:
        queued = self.script.get(path)
        if queued:
            return queued.pop(0)
        return 200, _SUCCESS.get(path.strip("/").split("/")[0], b"ok")


_SUCCESS = {
    "slack-hook": b"ok",
    "slack-api": b'{"ok": true, "ts": "1.2"}',
    "feishu": b'{"code": 0, "msg": "success", "data": {}}',
    "dingtalk": b'{"errcode": 0, "errmsg": "ok"}',
    "wecom": b'{"errcode": 0, "errmsg": "ok"}',
    "hook": b"",
}


@contextmanager
def running_receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            parts = urlsplit(self.path)
            state.received.append(Received(parts.path, parse_qs(parts.query), dict(self.headers), body))
            status, reply = state.reply_for(parts.path)
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "0")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
