"""Smoke test of the image archive `make image` wrote (issue 30), run as a pod would run it.

    python3 deploy/image/smoke.py build/image/veridiag-0.1.0.oci.tar

The archive is read back with buildah (``buildah from oci-archive:``) and each command runs the
way the manifests run it: as the image's user, on a read-only root, with the home and /tmp as
the only writable places, the image's environment and working directory. Checked: the image's
config (user, entrypoint, default command, volume, port, labels), ``--version``, ``db upgrade``,
a demo ``ask``, the default command serving ``/healthz`` and one chat (and refusing one without
a token), a ``worker`` that starts and stops on SIGTERM, and ``mcp`` answering an MCP initialize.
Then the second stage (scaled.py): the pods of the rendered ``scaled`` manifests, two ``serve``
replicas and a ``worker`` on a PostgreSQL, sharing one alert queue. ``--stage image`` or
``--stage scaled`` runs one of them. Needs root, buildah, util-linux's unshare, iproute2,
kubectl (kustomize v4+) and PostgreSQL's server binaries. Exit status 0 when every check passed."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import scaled
from podrun import Mount, Pod, SmokeError, check, free_port, http, stop

ROOT = Path(__file__).resolve().parent.parent.parent
QUESTION = "订单123支付失败，帮我看看是什么原因"
TOKEN = "smoke-test-token"  # a throwaway token for this run's server only
HOME = "/var/lib/veridiag"


def image_pod(root: str, config: dict[str, Any], home: Path) -> Pod:
    """The image run as the manifests run it: its user, environment and working directory, the
    home (a host directory, like the PersistentVolumeClaim) on VERIDIAG_HOME and a fresh tmpfs
    on /tmp; the host's network, so a server is reachable."""
    return Pod(
        root,
        config["User"],
        config.get("Env", []),
        config.get("WorkingDir") or "/",
        [Mount("/tmp"), Mount(HOME, home)],
    )


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


def buildah(*args: str) -> str:
    return subprocess.run(["buildah", *args], check=True, capture_output=True, text=True).stdout.strip()


def wait_healthy(process: subprocess.Popen[str], port: int, within: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < within:
        if process.poll() is not None:
            raise SmokeError(f"serve exited {process.returncode}: {process.stderr.read() if process.stderr else ''}")
        try:
            status, body = http(f"127.0.0.1:{port}", "/healthz")
            if status == 200 and body.get("status") == "ok":
                return time.monotonic() - started
        except OSError:
            pass
        time.sleep(0.5)
    raise SmokeError(f"/healthz did not answer 200 within {within:.0f} s")


def smoke(archive: Path, stages: Sequence[str]) -> None:
    with container(archive) as (root, config):
        if "image" in stages:
            image(root, config)
        if "scaled" in stages:
            scaled.smoke(root, config)


def image(root: str, config: dict[str, Any]) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with tempfile.TemporaryDirectory() as scratch:
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
        pod = image_pod(root, config, home)
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
        status, _ = http(f"127.0.0.1:{port}", "/api/v1/chat", {"query": QUESTION})
        check(status == 401, f"chat without a token is refused ({status})")
        started = time.monotonic()
        question = {"query": "why is checkout slow since 10:00?"}
        status, body = http(f"127.0.0.1:{port}", "/api/v1/chat", question, token=TOKEN)
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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", type=Path)
    parser.add_argument("--stage", choices=("image", "scaled", "all"), default="all")
    options = parser.parse_args()
    archive: Path = options.archive
    stages = ("image", "scaled") if options.stage == "all" else (options.stage,)
    if not archive.is_file():
        print(f"error: no image archive at {archive} (make image)", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        smoke(archive, stages)
    except (SmokeError, subprocess.SubprocessError, OSError) as exc:
        print(f"FAIL {exc}", file=sys.stderr)
        return 1
    print(f"image smoke test passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
