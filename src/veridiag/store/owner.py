"""Which process owns a running session, and whether it still exists.

A session is written ``running`` by one process; if that process is killed (``kill -9``, OOM,
power) nobody ever finishes it. Each session records its owner — pid, host name, the process's
start time and its pid space — so another process that sees the same pids can tell that the
owner is gone. The start time tells a reused pid from the original process.

A host name alone does not say that: containers on one machine (``network_mode: host``, or a
``hostname:`` set alike on several machines) share a name but not their pids, and a pid unknown
in this process's view may run in another. The pid space — this kernel boot's id and the pid
namespace — is what makes two processes' pids comparable; where it differs (or a row has none
and the host name differs), only the session timeout decides.
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
    #: ``pid_space()`` of the owner; None in rows written before it was recorded (migration 0007).
    space: str | None = None


@functools.cache
def pid_space() -> str | None:
    """This process's pid space: the kernel boot (``boot_id``, random per boot, so two machines
    never share one) and the pid namespace (its inode, unique within a boot). Two processes see
    each other's pids exactly when these match. None where /proc does not say (not Linux)."""
    try:
        boot = (_PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip()
        namespace = (_PROC / "self" / "ns" / "pid").stat().st_ino
    except OSError:
        return None
    return f"{boot}/pid:{namespace}"


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
    return Owner(pid, socket.gethostname(), process_started_at(pid), pid_space())


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


def sees_pids_of(owner: Owner) -> bool:
    """Whether ``owner``'s pid means the same process here: the same pid space when both are
    known, else (an older row, or no /proc) the same host name."""
    here = pid_space()
    if owner.space is not None and here is not None:
        return owner.space == here
    return owner.host == socket.gethostname()


def gone_reason(owner: Owner) -> str | None:
    """Why ``owner`` — a process whose pids this one sees — no longer runs, or None while it
    does (or when that cannot be known here: another host or pid namespace, or a platform
    without signals)."""
    if not sees_pids_of(owner) or sys.platform == "win32":
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
