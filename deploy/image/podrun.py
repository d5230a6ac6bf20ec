"""What both stages of the image smoke test (smoke.py, scaled.py) run pods with: a process in
the image's root as a container runtime starts one, SIGTERM to stop it, HTTP to reach it."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class SmokeError(Exception):
    pass


def check(condition: bool, what: str, otherwise: str | None = None) -> None:
    """Prints ``what`` when ``condition`` holds; else fails with ``otherwise`` (or ``what``)."""
    if not condition:
        raise SmokeError(otherwise or what)
    print(f"ok   {what}", flush=True)


@dataclass(frozen=True)
class Mount:
    """A volume in the pod: ``source`` (a host directory) bound at ``target``, or a tmpfs with
    ``tmpfs`` options when there is no source."""

    target: str
    source: Path | None = None
    read_only: bool = False
    tmpfs: str = "mode=1777"

    def shell(self) -> str:
        at = f'"$r"{shlex.quote(self.target)}'
        if self.source is None:
            return f"mount -t tmpfs -o {shlex.quote(self.tmpfs)} tmpfs {at};"
        bind = f"mount --bind {shlex.quote(str(self.source))} {at};"
        return bind + (f" mount -o remount,bind,ro {at};" if self.read_only else "")


@dataclass(frozen=True)
class Pod:
    """Runs commands in the image's root as a runtime does: private mount and pid namespaces,
    the root bound read-only, ``mounts`` on it (their mount points made in the container's own
    writable layer, as runc makes them), /proc and /dev, then ``user`` in a clean environment.
    ``netns`` (a name of ``ip netns``) gives the pod a network of its own, ``hostname`` its own
    host name, ``no_new_privs`` forbids gaining privileges (setuid and file capabilities); without a
    netns it shares the host's network."""

    root: str
    user: str
    env: Sequence[str]
    workdir: str
    mounts: Sequence[Mount]
    hostname: str | None = None
    netns: str | None = None
    no_new_privs: bool = False

    def __post_init__(self) -> None:
        for mount in self.mounts:
            Path(self.root, mount.target.lstrip("/")).mkdir(parents=True, exist_ok=True)

    def command(self, argv: Sequence[str], extra_env: dict[str, str] | None = None) -> list[str]:
        env = [*self.env, *(f"{k}={v}" for k, v in (extra_env or {}).items())]
        privileges = "setpriv --no-new-privs" if self.no_new_privs else ""
        inner = " ".join(
            [
                "set -e; mount --make-rprivate /;",
                f"hostname {shlex.quote(self.hostname)};" if self.hostname else "",
                'r=$(mktemp -d); mount --bind "$0" "$r"; mount -o remount,bind,ro "$r";',
                *(mount.shell() for mount in self.mounts),
                'mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev";',
                f'exec {privileges} chroot --userspec={shlex.quote(self.user)} "$r" env -i',
                *(shlex.quote(e) for e in env),
                'sh -c \'cd "$0" && exec "$@"\'',
                shlex.quote(self.workdir),
                *(shlex.quote(a) for a in argv),
            ]
        )
        namespaces = ["--mount", "--pid", "--fork", *(["--uts"] if self.hostname else [])]
        enter = ["nsenter", f"--net=/run/netns/{self.netns}"] if self.netns else []
        return [*enter, "unshare", *namespaces, "sh", "-c", inner, self.root]

    def run(self, argv: list[str], timeout: float = 300, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(argv), input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )

    def start(self, argv: Sequence[str], extra_env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(argv, extra_env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )


@dataclass
class Output:
    """A long-running process's stdout and stderr, read as they come (a full pipe would stop
    it), kept to show when a step fails."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, found: Callable[[str], bool], within: float) -> str | None:
        """The first line ``found`` accepts, waiting up to ``within`` s; None if the process ends
        or the time runs out first."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            line = next((line for line in list(self.lines) if found(line)), None)
            if line is not None or self.process.poll() is not None:
                return line
            time.sleep(0.2)
        return None

    def tail(self, count: int = 15) -> str:
        return "\n".join(f"     | {line}" for line in self.lines[-count:])


def stop(process: subprocess.Popen[str], name: str, timeout: float = 30) -> int:
    """SIGTERM to the command (the pid namespace's first process forwards nothing, so the whole
    group gets it, as a kubelet's stop reaches the container's processes)."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise SmokeError(f"{name} did not stop within {timeout:.0f} s of SIGTERM") from None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def http(
    address: str,
    path: str,
    body: dict[str, Any] | None = None,
    *,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 300,
) -> tuple[int, dict[str, Any]]:
    """A JSON request to ``address`` (host:port), naming the host ``localhost`` unless
    ``headers`` say otherwise."""
    sent = {"Host": "localhost", "Content-Type": "application/json", **(headers or {})}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://{address}{path}", data=data, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
