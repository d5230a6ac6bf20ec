"""Smoke test of the image archive `make image` wrote (issue 30), run as a pod would run it.

    python3 deploy/image/smoke.py build/image/veridiag-0.1.0.oci.tar

The archive is read back with buildah (``buildah from oci-archive:``) and each command runs the
way the manifests run it: as the image's user, on a read-only root, with the home and /tmp as
the only writable places, the image's environment and working directory. Checked: the image's
config (user, entrypoint, default command, volume, port, labels), ``--version``, ``db upgrade``,
a demo ``ask``, the default command serving ``/healthz`` and one chat (and refusing one without
a token), a ``worker`` that starts and stops on SIGTERM, and ``mcp`` answering an MCP initialize.
Needs root, buildah and util-linux's unshare. Exit status 0 when every check passed."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
QUESTION = "订单123支付失败，帮我看看是什么原因"
TOKEN = "smoke-test-token"  # a throwaway token for this run's server only
HOME = "/var/lib/veridiag"


class SmokeError(Exception):
    pass


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SmokeError(what)
    print(f"ok   {what}", flush=True)


def buildah(*args: str) -> str:
    return subprocess.run(["buildah", *args], check=True, capture_output=True, text=True).stdout.strip()


@contextmanager
def container(archive: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """A working container from the archive, mounted: its root and the image's config."""
    name = buildah("from", "--quiet", f"oci-archive:{archive}")
    try:
        mount = buildah("mount", name)
        config = json.loads(buildah("inspect", name))["OCIv1"]["config"]
        yield mount, config
    finally:
        subprocess.run(["buildah", "rm", name], check=False, capture_output=True)


class Pod:
    """Runs commands in the image's root as the manifests do: a private mount namespace with the
    root bound read-only, ``home`` (a host directory, like the PersistentVolumeClaim) on
    VERIDIAG_HOME and a fresh tmpfs on /tmp; the host's network, so a server is reachable."""

    def __init__(self, root: str, config: dict[str, Any], home: Path) -> None:
        self.root, self.config, self.home = root, config, home
        self.user = config["User"]

    def command(self, argv: list[str], extra_env: dict[str, str] | None = None) -> list[str]:
        env = [*self.config.get("Env", []), *(f"{k}={v}" for k, v in (extra_env or {}).items())]
        inner = " ".join(
            [
                "set -e; mount --make-rprivate /;",
                'r=$(mktemp -d); mount --bind "$0" "$r"; mount -o remount,bind,ro "$r";',
                f'mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"; mount --bind {shlex.quote(str(self.home))} "$r{HOME}";',
                'mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev";',
                f'exec chroot --userspec={shlex.quote(self.user)} "$r" env -i',
                *(shlex.quote(e) for e in env),
                'sh -c \'cd "$0" && exec "$@"\'',
                shlex.quote(self.config.get("WorkingDir") or "/"),
                *(shlex.quote(a) for a in argv),
            ]
        )
        return ["unshare", "--mount", "--pid", "--fork", "sh", "-c", inner, self.root]

    def run(self, argv: list[str], timeout: float = 300, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(argv), input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )

    def start(self, argv: list[str], extra_env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(argv, extra_env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )


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
    port: int, path: str, body: dict[str, Any] | None = None, token: str | None = None
) -> tuple[int, dict[str, Any]]:
    headers = {"Host": "localhost", "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def wait_healthy(process: subprocess.Popen[str], port: int, within: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < within:
        if process.poll() is not None:
            raise SmokeError(f"serve exited {process.returncode}: {process.stderr.read() if process.stderr else ''}")
        try:
            status, body = http(port, "/healthz")
            if status == 200 and body.get("status") == "ok":
                return time.monotonic() - started
        except OSError:
            pass
        time.sleep(0.5)
    raise SmokeError(f"/healthz did not answer 200 within {within:.0f} s")


def smoke(archive: Path) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with container(archive) as (root, config), tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        uid, gid = (int(part) for part in config["User"].split(":"))
        os.chown(home, uid, gid)
        labels = config.get("Labels") or {}
        check(uid != 0 and gid != 0, f"runs as a non-root user ({config['User']})")
        check(config["Entrypoint"] == ["veridiag"], "entrypoint is veridiag")
        cmd = config["Cmd"]
        check(cmd[:3] == ["serve", "--host", "0.0.0.0"] and cmd[3] == "--port", f"default command {shlex.join(cmd)}")
        check(HOME in (config.get("Volumes") or {}), f"{HOME} is a volume")
        check(f"VERIDIAG_HOME={HOME}" in config.get("Env", []), "VERIDIAG_HOME is the volume")
        check(f"{cmd[4]}/tcp" in (config.get("ExposedPorts") or {}), f"port {cmd[4]} exposed")
        check(labels.get("org.opencontainers.image.version") == version, f"label version {version}")
        check(labels.get("org.opencontainers.image.licenses") == "Apache-2.0", "label licenses Apache-2.0")
        check(bool(labels.get("org.opencontainers.image.revision")), "label revision")
        pod = Pod(root, config, home)
        commands(pod, version)
        check(not list(Path(root).glob("var/lib/veridiag/*")), "the image's own home stays empty (a volume)")
        serve(pod, cmd)
        worker(pod)
        mcp(pod)


def commands(pod: Pod, version: str) -> None:
    started = time.monotonic()
    done = pod.run(["veridiag", "--version"])
    check(done.returncode == 0 and done.stdout.strip() == version, f"--version prints {version}")
    print(f"     ({time.monotonic() - started:.1f} s)")

    done = pod.run(["veridiag", "db", "upgrade"])
    check(done.returncode == 0 and "→" in done.stdout, f"db upgrade: {done.stdout.strip() or done.stderr}")

    started = time.monotonic()
    done = pod.run(["veridiag", "ask", QUESTION, "--json"])
    answer = json.loads(done.stdout) if done.returncode == 0 else {}
    check(
        answer.get("status") == "completed" and answer.get("verdict") in ("PASS", "LOW_CONFID", "REJECT"),
        f"demo ask on a read-only root: {answer.get('verdict')}, {answer.get('status') or done.stderr[-500:]}",
    )
    print(f"     ({time.monotonic() - started:.1f} s, first run builds the home)")


def serve(pod: Pod, cmd: list[str]) -> None:
    port = free_port()
    server = pod.start(["veridiag", *cmd[:4], str(port)], {"VERIDIAG_API_TOKENS": TOKEN})
    try:
        ready = wait_healthy(server, port, within=120)
        check(True, f"serve (the default command) answers /healthz after {ready:.1f} s")
        status, _ = http(port, "/api/v1/chat", {"query": QUESTION})
        check(status == 401, f"chat without a token is refused ({status})")
        started = time.monotonic()
        status, body = http(port, "/api/v1/chat", {"query": "why is checkout slow since 10:00?"}, token=TOKEN)
        check(
            status == 200 and body.get("status") == "completed" and bool(body.get("final_answer")),
            f"one chat: {status} {body.get('verdict')} in {time.monotonic() - started:.1f} s",
        )
    finally:
        code = stop(server, "serve")
    check(code == 0, f"serve stops on SIGTERM (exit {code})")


def worker(pod: Pod) -> None:
    process = pod.start(["veridiag", "worker"])
    try:
        line = process.stderr.readline() if process.stderr else ""
        check(line.startswith("veridiag worker"), f"worker starts: {line.strip()}")
    finally:
        code = stop(process, "worker")
    check(code == 0, f"worker stops on SIGTERM (exit {code})")


def mcp(pod: Pod) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "smoke", "version": "0"},
        },
    }
    process = pod.start(["veridiag", "mcp"])
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(initialize) + "\n")
        process.stdin.flush()
        reply = json.loads(process.stdout.readline() or "{}")
        server_info = reply.get("result", {}).get("serverInfo", {})
        check(bool(server_info.get("name")), f"mcp (stdio) answers initialize: {server_info}")
        process.stdin.close()  # how a client ends a stdio server
        try:
            code = process.wait(30)
        except subprocess.TimeoutExpired:
            code = None
        check(code == 0, f"mcp ends when its client closes stdin (exit {code})")
    finally:
        if process.poll() is None:
            stop(process, "mcp")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    archive = Path(sys.argv[1])
    if not archive.is_file():
        print(f"error: no image archive at {archive} (make image)", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        smoke(archive)
    except (SmokeError, subprocess.SubprocessError, OSError) as exc:
        print(f"FAIL {exc}", file=sys.stderr)
        return 1
    print(f"image smoke test passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
