"""A free loopback port for a server a test starts in another process (probed, then released).

The port is taken below the kernel's ephemeral range, so no outgoing connection and no bind to
port 0 — another test worker's client, database pool or server — can take it between this probe
and the server's own bind; each xdist worker draws from a stretch of its own, at a random place
in it (another run on the machine), so two workers never probe the same port."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

STRETCH = 1000
FIRST = 20_000  # the lowest stretch's start; gw0 … gw11 fit below the default range (32768)


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _stretch() -> range | None:
    """This worker's ports, or None when they would reach the ephemeral range (or it is unknown)."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(name[2:]) + 1 if name.startswith("gw") and name[2:].isdigit() else 0
    start = FIRST + index * STRETCH
    return range(start, start + STRETCH) if start + STRETCH <= _ephemeral_low() else None


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    ports = _stretch()
    if ports is not None:
        offset = random.randrange(len(ports))
        for step in range(len(ports)):
            port = ports[(offset + step) % len(ports)]
            if _bindable(port):
                return port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
