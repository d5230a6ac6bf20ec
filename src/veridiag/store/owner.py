"""Which process owns a running session, and whether it still exists.

A session is written ``running`` by one process; if that process is killed (``kill -9``, OOM,
power) nobody ever finishes it. Each session records its owner — pid, host name and the
process's start time — so another process on the same host can tell that the owner is gone.
The start time tells a reused pid from the original process.
"""

from __future__ import annotations

import functools
import os
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

_PROC = Path("/proc")
#: How far two readings of one process's start time may differ (see ``gone_reason``).
START_SLACK_SECONDS = 5.0


@dataclass(frozen=True)
class Owner:
    pid: int
    host: str
    started_at: datetime | None


@functools.cache
def _boot_time() -> float | None:
    try:
        for line in (_PROC / "stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        return None
    return None


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (which may hold spaces and parentheses)."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def process_started_at(pid: int) -> datetime | None:
    """When ``pid`` started (Linux), else None: where /proc is absent the pid alone decides."""
    fields = _stat_fields(pid)
    boot = _boot_time()
    if fields is None or boot is None or len(fields) < 20:
        return None
    ticks = int(fields[19])  # field 22 of stat: start time in clock ticks after boot
    return datetime.fromtimestamp(boot + ticks / os.sysconf("SC_CLK_TCK"), UTC)


@functools.cache
def _this_process(pid: int) -> Owner:
    return Owner(pid, socket.gethostname(), process_started_at(pid))


def this_process() -> Owner:
    """This process as a session owner (keyed by pid, so a forked child is its own owner)."""
    return _this_process(os.getpid())


def _alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    if fields is not None:
        return fields[0] not in ("Z", "X")  # a zombie was killed and only waits to be reaped
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: it exists
    return True


def gone_reason(owner: Owner) -> str | None:
    """Why ``owner`` — a process on this host — no longer runs, or None while it does (or
    when that cannot be known here: another host, or a platform without signals)."""
    if owner.host != socket.gethostname() or sys.platform == "win32":
        return None
    where = f"pid {owner.pid} on {owner.host}"
    if not _alive(owner.pid):
        return f"its process ({where}) is gone"
    if owner.started_at is not None:
        started = process_started_at(owner.pid)
        # A few seconds of slack: each process reads the boot time from /proc/stat, which the
        # kernel derives from the clock and uptime at the moment of reading, so two readers can
        # disagree by a second or more when the clock is being slewed. A reused pid started later.
        if started is not None and abs((started - owner.started_at).total_seconds()) > START_SLACK_SECONDS:
            return f"its process ({where}) is gone; the pid now belongs to another process"
    return None
