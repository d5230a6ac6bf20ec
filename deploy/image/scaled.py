"""Second stage of the image smoke test (issue 30): the ``scaled`` mode's pods, run from the
image exactly as the rendered manifests define them — the closest stand-in for a cluster here.

The overlay is rendered as tests/test_deploy_manifests.py renders it (``kubectl kustomize``, or
``helm template`` of the chart with values-scaled.yaml when VERIDIAG_SMOKE_RENDERER=helm), and
each pod is built from the rendered Deployment, not from a copy: its init containers first, then
its container, with the command and args over the image's entrypoint, the environment (values,
keys of the Secrets supplied as a user would create them, ``envFrom``), the volumes (emptyDir
per pod; ``medium: Memory`` a tmpfs per container, where Kubernetes shares one among a pod's
containers; the ConfigMap's files read-only where the manifest mounts them), the user and group
of the security context, a read-only root (required), no new privileges, a network namespace and
host name per pod. The pods run against a PostgreSQL of their own (the Secret's
``database-url``) on the bridge their namespaces hang from; the host reaches each pod at its own
address, as the kubelet and the Service's endpoints do (no load balancing: the checks pick the
replica). The only change to what is rendered is the evidence (no ClickHouse nor Prometheus
here): ``tools`` read the embedded demo data, printed as an override.

Checked: the init containers of all pods, at once, migrate PostgreSQL; every pod connects to
it; both ``serve`` replicas pass their startup probe, then their readiness and liveness probes;
an Alertmanager notification posted to replica A is queued, run to completion by the worker
(neither server runs alerts) and its session read from replica B; a chat on replica B is read
from replica A; every process ends with 0 on SIGTERM within its grace period. Not enforced:
resource requests and limits, capabilities beyond no-new-privileges, seccomp."""

from __future__ import annotations

import copy
import glob
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from podrun import Mount, Output, Pod, SmokeError, check, free_port, http, stop

ROOT = Path(__file__).resolve().parent.parent.parent
OVERLAY = ROOT / "deploy" / "kubernetes" / "overlays" / "scaled"
CHART = ROOT / "deploy" / "helm" / "veridiag"
TOKEN = "scaled-smoke-token"  # a throwaway token, this run's Secret only
#: How many pods of each Deployment run here (at most what the manifests ask): two servers show
#: that any replica answers for any session; one worker shows the queue is shared.
RUN_REPLICAS = {"serve": 2, "worker": 1}
#: The evidence the scaled overlay reads from in-cluster ClickHouse and Prometheus, which this
#: machine lacks: the only settings of the rendered veridiag.yaml changed here.
EVIDENCE_OVERRIDE: dict[str, dict[str, object]] = {
    "tools": {"logs": "embedded", "metrics": "embedded"},
    "embedded": {"load_demo": True},
}
#: Inside the demo day's payment incident (tests/test_alertmanager_integration.py).
STARTS_AT = "2026-07-07T10:05:00Z"
ALERT = {
    "version": "4",
    "groupKey": '{}:{alertname="PaymentLatencyHigh"}',
    "truncatedAlerts": 0,
    "status": "firing",
    "receiver": "veridiag",
    "groupLabels": {},
    "commonLabels": {},
    "commonAnnotations": {},
    "externalURL": "http://alertmanager:9093",
    "alerts": [
        {
            "status": "firing",
            "labels": {"alertname": "PaymentLatencyHigh", "service": "payment-service", "namespace": "shop"},
            "annotations": {"summary": "p99 latency above 2s", "description": "payment requests are slow"},
            "startsAt": STARTS_AT,
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus/graph",
            "fingerprint": "smoke-scaled-1",
        }
    ],
}

Manifest = dict[str, Any]


def render() -> tuple[str, list[Manifest]]:
    """The scaled mode's objects, by the renderer the manifest tests use."""
    if os.environ.get("VERIDIAG_SMOKE_RENDERER") == "helm":
        helm = Path(sys.executable).parent / "helm"
        argv = [str(helm), "template", "veridiag", str(CHART), f"--values={CHART / 'values-scaled.yaml'}"]
    else:
        argv = ["kubectl", "kustomize", str(OVERLAY)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise SmokeError(f"cannot render the scaled manifests: {exc}") from None
    if done.returncode != 0:
        raise SmokeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return " ".join(Path(a).name if "/" in a else a for a in argv), [d for d in yaml.safe_load_all(done.stdout) if d]


def named(objects: list[Manifest], kind: str, name: str) -> Manifest:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    if len(found) != 1:
        raise SmokeError(f"the rendered manifests have {len(found)} {kind} named {name!r}")
    return found[0]


def deployment(objects: list[Manifest], component: str) -> Manifest:
    found = [
        o
        for o in objects
        if o["kind"] == "Deployment"
        and o["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component") == component
    ]
    if len(found) != 1:
        raise SmokeError(f"the rendered manifests have {len(found)} Deployments of component {component!r}")
    return found[0]


def with_evidence_override(config_map: Manifest) -> Manifest:
    """The ConfigMap with veridiag.yaml's evidence pointed at the demo data (EVIDENCE_OVERRIDE)."""
    changed = copy.deepcopy(config_map)
    settings = yaml.safe_load(changed["data"]["veridiag.yaml"])
    for section, values in EVIDENCE_OVERRIDE.items():
        for key, value in values.items():
            before = settings.setdefault(section, {}).get(key)
            settings[section][key] = value
            print(f"     override (not in the manifests): {section}.{key} {before!r} -> {value!r}")
    changed["data"]["veridiag.yaml"] = yaml.safe_dump(settings, allow_unicode=True, sort_keys=False)
    return changed


@dataclass
class Cluster:
    """What the pods are given: the rendered objects (the ConfigMap overridden as said), the
    Secrets a user creates, the image's root and config, the pod network."""

    objects: list[Manifest]
    secrets: dict[str, dict[str, str]]
    root: str
    image: dict[str, Any]
    network: Network
    scratch: Path

    def env(self, container: Manifest, pod: str) -> list[str]:
        """The image's environment under ``envFrom`` under ``env``, as the kubelet merges them;
        a required Secret or key that is missing stops the pod (CreateContainerConfigError)."""
        where = f"pod {pod}, container {container['name']}"
        merged = dict(item.split("=", 1) for item in self.image.get("Env", []))
        for source in container.get("envFrom", []):
            ref = source.get("secretRef") or source.get("configMapRef")
            if ref is None:
                raise SmokeError(f"{where}: envFrom {source} is not supported here")
            data = self.source_data("secretRef" in source, ref["name"], bool(ref.get("optional")), where)
            merged.update({source.get("prefix", "") + k: v for k, v in data.items()})
        for item in container.get("env", []):
            merged_value = self.env_value(item, where)
            if merged_value is not None:
                merged[item["name"]] = merged_value
        return [f"{k}={v}" for k, v in merged.items()]

    def env_value(self, item: Manifest, where: str) -> str | None:
        if "value" in item:
            value: str = item["value"]
            if "$(" in value:
                raise SmokeError(f"{where}: $(VAR) references in {item['name']} are not expanded here")
            return value
        origin = item.get("valueFrom", {})
        ref = origin.get("secretKeyRef") or origin.get("configMapKeyRef")
        if ref is None:
            raise SmokeError(f"{where}: {item['name']} from {origin} is not supported here")
        data = self.source_data("secretKeyRef" in origin, ref["name"], bool(ref.get("optional")), where)
        if ref["key"] not in data and not ref.get("optional"):
            kind = "Secret" if "secretKeyRef" in origin else "ConfigMap"
            raise SmokeError(f"{where}: {item['name']} needs key {ref['key']!r} of the {kind} {ref['name']!r}")
        return data.get(ref["key"])

    def source_data(self, secret: bool, name: str, optional: bool, where: str) -> dict[str, str]:
        if secret:
            data = self.secrets.get(name)
        else:
            maps = [o for o in self.objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == name]
            data = maps[0].get("data") if maps else None
        if data is None and not optional:
            raise SmokeError(f"{where}: no {'Secret' if secret else 'ConfigMap'} named {name!r}")
        return data or {}

    def volumes(self, pod: Manifest, name: str) -> dict[str, Mount]:
        """Each volume of the pod as a mount source, made once for all its containers."""
        group = pod.get("securityContext", {}).get("fsGroup")
        made: dict[str, Mount] = {}
        for volume in pod.get("volumes", []):
            path = self.scratch / name / volume["name"]
            if "emptyDir" in volume:
                empty = volume["emptyDir"] or {}
                if empty.get("medium") == "Memory":
                    size = str(empty.get("sizeLimit", "64Mi")).replace("Mi", "m").replace("Gi", "g")
                    owner = f",gid={group},mode=2777" if group is not None else ",mode=1777"
                    made[volume["name"]] = Mount("", tmpfs=f"size={size}{owner}")
                    continue
                path.mkdir(parents=True)
                if group is not None:
                    os.chown(path, -1, group)
                path.chmod(0o2777 if group is not None else 0o777)
            elif "configMap" in volume:
                config_map = named(self.objects, "ConfigMap", volume["configMap"]["name"])
                path.mkdir(parents=True)
                items = volume["configMap"].get("items") or [{"key": k, "path": k} for k in config_map["data"]]
                for item in items:
                    (path / item["path"]).write_text(config_map["data"][item["key"]])
                    (path / item["path"]).chmod(0o644)
                path.chmod(0o755)
            else:
                kind = sorted(set(volume) - {"name"})
                raise SmokeError(f"pod {name}: volume {volume['name']} ({kind}) is not supported here")
            made[volume["name"]] = Mount("", path)
        return made

    def pod(self, template: Manifest, container: Manifest, name: str, volumes: dict[str, Mount], netns: str) -> Pod:
        spec = template["spec"]
        context = {**spec.get("securityContext", {}), **container.get("securityContext", {})}
        image_user, _, image_group = self.image["User"].partition(":")
        user = f"{context.get('runAsUser', image_user)}:{context.get('runAsGroup', image_group or image_user)}"
        if context.get("runAsNonRoot") and user.partition(":")[0] in ("0", "root"):
            raise SmokeError(f"pod {name}: runAsNonRoot but the user is {user}")
        if not context.get("readOnlyRootFilesystem"):
            raise SmokeError(f"pod {name}: container {container['name']} does not ask for a read-only root")
        mounts = []
        for mount in container.get("volumeMounts", []):
            if mount.get("subPath"):
                raise SmokeError(f"pod {name}: subPath mounts are not supported here")
            if mount["name"] not in volumes:
                raise SmokeError(f"pod {name}: {container['name']} mounts {mount['name']!r}, which is no volume")
            source = volumes[mount["name"]]
            read_only = bool(mount.get("readOnly")) or source.read_only
            mounts.append(Mount(mount["mountPath"], source.source, read_only, source.tmpfs))
        env = self.env(container, name)
        config_file(env, mounts, f"pod {name}, container {container['name']}")
        return Pod(
            self.root,
            user,
            env,
            container.get("workingDir") or self.image.get("WorkingDir") or "/",
            mounts,
            hostname=name,
            netns=netns,
            no_new_privs=context.get("allowPrivilegeEscalation") is False,
        )

    def argv(self, container: Manifest) -> list[str]:
        """``command`` replaces the entrypoint (and drops the image's Cmd), ``args`` the Cmd."""
        command = container.get("command")
        args = container.get("args")
        entry = command if command is not None else self.image.get("Entrypoint") or []
        rest = args if args is not None else ([] if command is not None else self.image.get("Cmd") or [])
        argv = [str(a) for a in (*entry, *rest)]
        if any("$(" in a for a in argv):
            raise SmokeError(f"container {container['name']}: $(VAR) references are not expanded here")
        return argv


def config_file(env: list[str], mounts: list[Mount], where: str) -> None:
    """VERIDIAG_CONFIG, when set, must name a file of a mounted volume: veridiag reads its
    settings from a file that is there and, without one, runs on its defaults without a word."""
    path = dict(item.split("=", 1) for item in env).get("VERIDIAG_CONFIG")
    if path is None:
        return
    for mount in mounts:
        inside = Path(path).relative_to(mount.target) if Path(path).is_relative_to(mount.target) else None
        if inside is not None and mount.source is not None and (mount.source / inside).is_file():
            return
    targets = ", ".join(m.target for m in mounts)
    raise SmokeError(f"{where}: VERIDIAG_CONFIG={path} is no file of its volumes ({targets})")


class Network:
    """A bridge on the host (the node) and a network namespace per pod on it, each with an
    address of the bridge's /24: the pods listen on the same port side by side, reach the
    database on the bridge's address, and the host reaches each pod as a kubelet or a Service
    does."""

    def __init__(self) -> None:
        tag = os.getpid() % 100000
        self.bridge = f"vdbr{tag}"
        self.prefix = f"vd{tag}"
        used = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout
        third = next(n for n in range(tag % 200, tag % 200 + 56) if f" 10.231.{n}." not in used)
        self.subnet = f"10.231.{third}"
        self.gateway = f"{self.subnet}.1"
        self.pods: list[str] = []

    def __enter__(self) -> Network:
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        return self

    def add(self) -> tuple[str, str]:
        """A new pod's network namespace and its address."""
        index = len(self.pods)
        netns, address = f"{self.prefix}-{index}", f"{self.subnet}.{10 + index}"
        host, peer = f"{self.prefix}h{index}", f"{self.prefix}p{index}"
        ip("netns", "add", netns)
        self.pods.append(netns)
        ip("link", "add", host, "type", "veth", "peer", "name", peer)
        ip("link", "set", host, "master", self.bridge, "up")
        ip("link", "set", peer, "netns", netns)
        ip("-n", netns, "link", "set", peer, "name", "eth0")
        ip("-n", netns, "addr", "add", f"{address}/24", "dev", "eth0")
        ip("-n", netns, "link", "set", "eth0", "up")
        ip("-n", netns, "link", "set", "lo", "up")
        ip("-n", netns, "route", "add", "default", "via", self.gateway)
        return netns, address

    def __exit__(self, *_: object) -> None:
        for netns in self.pods:
            subprocess.run(["ip", "netns", "del", netns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True, check=False)


def ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SmokeError(f"ip {' '.join(args)}: {done.stderr.strip()} (the pod network needs root and iproute2)")


@dataclass(frozen=True)
class Postgres:
    url: str
    psql: list[str]

    def query(self, sql: str) -> str:
        done = subprocess.run([*self.psql, "-tAc", sql], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SmokeError(f"psql {sql!r}: {done.stderr.strip()}")
        return done.stdout.strip()


@contextmanager
def postgres(network: Network, scratch: Path) -> Iterator[Postgres]:
    """A throwaway PostgreSQL listening on the bridge, a password for the pods' subnet (the
    Secret's database-url carries it), trust for the host's socket."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name.split(".")[0]))
    if not bins:
        raise SmokeError("no PostgreSQL server (apt-get install postgresql)")
    bin_dir, data = Path(bins[-1]), scratch / "postgres"
    data.mkdir()
    shutil.chown(data, "postgres")
    password = secrets.token_urlsafe(18)
    (scratch / "pw").write_text(password)
    shutil.chown(scratch / "pw", "postgres")
    port = free_port()

    def as_postgres(*argv: str) -> None:
        done = subprocess.run(["runuser", "-u", "postgres", "--", *argv], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SmokeError(f"{Path(argv[0]).name}: {done.stderr.strip() or done.stdout.strip()}")

    scratch.chmod(0o755)
    as_postgres(
        str(bin_dir / "initdb"), "-D", str(data), "-U", "veridiag", f"--pwfile={scratch / 'pw'}",
        "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8",
    )  # fmt: skip
    with (data / "pg_hba.conf").open("a") as hba:
        hba.write(f"host all all {network.subnet}.0/24 scram-sha-256\n")
    options = f"-c listen_addresses={network.gateway} -p {port} -k {data} -c fsync=off"
    as_postgres(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(data / "log"), "-w", "-o", options, "start")
    try:
        as_postgres(str(bin_dir / "createdb"), "-h", str(data), "-p", str(port), "-U", "veridiag", "veridiag")
        psql = ["runuser", "-u", "postgres", "--", str(bin_dir / "psql"), "-h", str(data), "-p", str(port)]
        yield Postgres(
            f"postgresql://veridiag:{password}@{network.gateway}:{port}/veridiag",
            [*psql, "-U", "veridiag", "-d", "veridiag", "-v", "ON_ERROR_STOP=1"],
        )
    finally:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"],
            capture_output=True,
            check=False,
        )


@dataclass
class Running:
    """A pod of a Deployment: its name, address, main container's process and output."""

    name: str
    address: str
    template: Manifest
    process: subprocess.Popen[str]
    output: Output

    def port(self, name: str | int) -> int:
        if isinstance(name, int):
            return name
        for container in self.template["spec"]["containers"]:
            for port in container.get("ports", []):
                if port.get("name") == name:
                    return int(port["containerPort"])
        raise SmokeError(f"pod {self.name}: no port named {name!r}")


@dataclass(frozen=True)
class Planned:
    """A pod about to start: every container already resolved (a missing Secret key fails here,
    before any process starts, as the kubelet refuses a container it cannot configure)."""

    name: str
    address: str
    template: Manifest
    inits: list[tuple[str, Pod, list[str]]]
    main: tuple[Pod, list[str]]


def plan(cluster: Cluster, deployments: list[tuple[Manifest, int]]) -> list[Planned]:
    planned = []
    for manifest, count in deployments:
        template = manifest["spec"]["template"]
        for index in range(count):
            name = f"{manifest['metadata']['name']}-smoke-{index}"
            netns, address = cluster.network.add()
            volumes = cluster.volumes(template["spec"], name)
            inits = [
                (c["name"], cluster.pod(template, c, name, volumes, netns), cluster.argv(c))
                for c in template["spec"].get("initContainers", [])
            ]
            containers = template["spec"]["containers"]
            if len(containers) != 1:
                raise SmokeError(f"pod {name}: {len(containers)} containers; this stand-in runs one")
            main = cluster.pod(template, containers[0], name, volumes, netns), cluster.argv(containers[0])
            planned.append(Planned(name, address, template, inits, main))
    return planned


def start_pods(planned: list[Planned]) -> list[Running]:
    """Every pod's init containers at once (pods start together), each in order within its
    pod; then each pod's container."""
    failures: list[str] = []

    def initialise(pod: Planned) -> None:
        for name, runner, argv in pod.inits:
            try:
                done = runner.run(argv, timeout=300)
            except (OSError, subprocess.SubprocessError) as exc:
                failures.append(f"{pod.name}: init container {name}: {exc}")
                return
            if done.returncode != 0:
                failures.append(f"{pod.name}: init container {name} exited {done.returncode}: {done.stderr[-800:]}")
                return

    started = time.monotonic()
    threads = [threading.Thread(target=initialise, args=(pod,)) for pod in planned]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SmokeError("; ".join(failures))
    inits = sorted({name for pod in planned for name, *_ in pod.inits})
    check(True, f"init containers {inits} of {len(planned)} pods at once: exit 0 ({time.monotonic() - started:.1f} s)")
    running: list[Running] = []
    try:
        for pod in planned:
            runner, argv = pod.main
            names = sorted(item.split("=", 1)[0] for item in runner.env)
            print(f"     {pod.name}: {shlex.join(argv)} as {runner.user}; env {', '.join(names)}")
            process = runner.start(argv)
            running.append(Running(pod.name, pod.address, pod.template, process, Output(process)))
    except OSError:
        stop_pods(running)
        raise
    return running


def probe(pod: Running, kind: str, within: float) -> float:
    """The container's ``kind`` probe (httpGet: path, port, headers) asked until it passes, for
    at most ``within`` s: the time it took."""
    (container,) = pod.template["spec"]["containers"]
    if kind not in container:
        raise SmokeError(f"{pod.name}: no {kind}")
    get = container[kind]["httpGet"]
    headers = {h["name"]: h["value"] for h in get.get("httpHeaders", [])}
    address = f"{pod.address}:{pod.port(get['port'])}"
    started = time.monotonic()
    while True:
        if pod.process.poll() is not None:
            ended = pod.process.returncode
            raise SmokeError(f"{pod.name} exited {ended} before its {kind} passed:\n{pod.output.tail()}")
        try:
            timeout = float(container[kind].get("timeoutSeconds", 1))
            if http(address, get["path"], headers=headers, timeout=timeout)[0] == 200:
                return time.monotonic() - started
        except OSError:
            pass
        if time.monotonic() - started > within:
            raise SmokeError(
                f"{pod.name}: {kind} {get['path']} did not pass within {within:.0f} s:\n{pod.output.tail()}"
            )
        time.sleep(0.5)


def service_address(objects: list[Manifest], pod: Running) -> tuple[str, str]:
    """How a client in the cluster reaches the pod through the Service: its address at the
    Service's target port, and the Service's name as the Host."""
    services = [o for o in objects if o["kind"] == "Service"]
    labels = pod.template["metadata"]["labels"]
    for service in services:
        selector = service["spec"].get("selector") or {}
        if selector and all(labels.get(k) == v for k, v in selector.items()):
            target = service["spec"]["ports"][0].get("targetPort", service["spec"]["ports"][0]["port"])
            return f"{pod.address}:{pod.port(target)}", str(service["metadata"]["name"])
    raise SmokeError(f"no Service selects {pod.name}")


def smoke(root: str, image: dict[str, Any]) -> None:
    started = time.monotonic()
    renderer, objects = render()
    print(f"---- scaled: the pods of `{renderer}` ----", flush=True)
    serve, worker = deployment(objects, "serve"), deployment(objects, "worker")
    for manifest in (serve, worker):
        check(
            manifest["spec"].get("replicas", 1) >= RUN_REPLICAS[component(manifest["spec"]["template"])],
            f"{manifest['metadata']['name']}: {manifest['spec'].get('replicas', 1)} replicas rendered, "
            f"{RUN_REPLICAS[component(manifest['spec']['template'])]} run here",
        )
    volume = next(v for v in serve["spec"]["template"]["spec"]["volumes"] if "configMap" in v)
    config_map = named(objects, "ConfigMap", volume["configMap"]["name"])
    objects = [with_evidence_override(o) if o is config_map else o for o in objects]
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="veridiag-scaled-")))
        network = stack.enter_context(Network())
        database = stack.enter_context(postgres(network, scratch))
        secret = {"api-tokens": TOKEN, "session-secret": secrets.token_urlsafe(32), "database-url": database.url}
        print(f"     Secret veridiag: keys {sorted(secret)} (database-url: PostgreSQL at {network.gateway})")
        cluster = Cluster(objects, {"veridiag": secret}, root, image, network, scratch)
        planned = plan(cluster, [(serve, RUN_REPLICAS["serve"]), (worker, RUN_REPLICAS["worker"])])
        pods = start_pods(planned)
        try:
            run_checks(objects, database, pods, worker_name=f"{worker['metadata']['name']}-smoke-0")
        except Exception as exc:
            # Whatever went wrong (a check, or a manifest without a field read here), the pods
            # stop before the network and the database go.
            stop_pods(pods)
            logs = "".join(f"\n{p.name}:\n{p.output.tail()}" for p in pods)
            what = str(exc) if isinstance(exc, SmokeError) else f"{type(exc).__name__}: {exc}"
            raise SmokeError(f"{what}\nthe pods' last lines:{logs}") from None
        bad = stop_pods(pods)
        details = "".join(f"\n{p.name}:\n{p.output.tail()}" for p in pods if p.name in bad)
        check(not bad, f"{len(pods)} pods stop on SIGTERM with exit 0{f': {bad}{details}' if bad else ''}")
    print(f"     (scaled stage: {time.monotonic() - started:.0f} s)")


def component(template: Manifest) -> str:
    """The app.kubernetes.io/component label of a pod template: serve or worker."""
    return str(template["metadata"]["labels"]["app.kubernetes.io/component"])


def run_checks(objects: list[Manifest], database: Postgres, pods: list[Running], worker_name: str) -> None:
    migrated = database.query("SELECT to_regclass('alembic_version') IS NOT NULL") == "t"
    version = database.query("SELECT version_num FROM alembic_version") if migrated else ""
    check(
        bool(version),
        f"the init containers migrated the Secret's PostgreSQL (revision {version})",
        "the init containers left the Secret's PostgreSQL empty: did they get its database-url?",
    )
    servers = [p for p in pods if component(p.template) == "serve"]
    (worker,) = [p for p in pods if component(p.template) == "worker"]
    for pod in servers:
        check(True, f"{pod.name} ({pod.address}) passes its startupProbe after {probe(pod, 'startupProbe', 180):.1f} s")
        for kind in ("readinessProbe", "livenessProbe"):
            probe(pod, kind, within=0)
        check(True, f"{pod.name} then passes its readinessProbe and livenessProbe")
    line = worker.output.wait_for(lambda line: line.startswith("veridiag worker"), within=180)
    check(line is not None, f"{worker.name} starts: {line or worker.output.tail()}")
    for pod in pods:
        connected = database.query(f"SELECT count(*) FROM pg_stat_activity WHERE client_addr = '{pod.address}'")
        check(
            connected != "0",
            f"{pod.name} is connected to the Secret's PostgreSQL ({connected} connections)",
            f"{pod.name} has no connection to the Secret's PostgreSQL: is its database-url given to it "
            "as VERIDIAG_DATABASE_URL (env names above)?",
        )
    (a, host), (b, _) = (service_address(objects, p) for p in servers)

    def api(address: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        return http(address, path, body, token=TOKEN, headers={"Host": host})

    status, receipt = api(a, "/api/v1/alerts/alertmanager", ALERT)
    jobs = receipt.get("jobs") or []
    check(status == 202 and len(jobs) == 1, f"an Alertmanager notification to {servers[0].name}: {status} {receipt}")
    started, job = time.monotonic(), dict[str, Any]()
    while time.monotonic() - started < 120 and job.get("status") not in ("done", "failed"):
        time.sleep(1)
        status, job = api(b, f"/api/v1/alerts/jobs/{jobs[0]}")
        if status != 200:
            raise SmokeError(f"{servers[1].name} does not know the job {servers[0].name} queued ({status} {job})")
        if worker.process.poll() is not None:
            raise SmokeError(f"{worker.name} exited {worker.process.returncode}:\n{worker.output.tail()}")
    check(
        job.get("status") == "done" and bool(job.get("session_id")),
        f"the job, read on {servers[1].name}, is {job.get('status')} after {time.monotonic() - started:.1f} s "
        f"({job.get('error') or 'no error'})",
    )
    owner = database.query(f"SELECT owner_host FROM diagnosis_session WHERE id = '{job['session_id']}'")
    check(
        owner == worker_name,
        f"the worker ran it (session owner {owner!r}; the servers run no alerts)",
        f"{owner!r} ran the alert, not {worker_name}: with workers, alerts.serve_workers must be 0",
    )
    status, session = api(b, f"/api/v1/sessions/{job['session_id']}")
    check(
        status == 200 and session.get("status") == "completed" and bool(session.get("final_answer")),
        f"its session from {servers[1].name}: {status} {session.get('status')} {session.get('verdict')}",
    )

    started = time.monotonic()
    status, chat = api(b, "/api/v1/chat", {"query": "why is checkout slow since 10:00?"})
    check(
        status == 200 and chat.get("status") == "completed" and bool(chat.get("final_answer")),
        f"a chat on {servers[1].name}: {status} {chat.get('verdict')} in {time.monotonic() - started:.1f} s",
    )
    status, again = api(a, f"/api/v1/sessions/{chat.get('session_id')}")
    check(status == 200 and again.get("status") == "completed", f"that chat's session from {servers[0].name}")


def stop_pods(pods: list[Running]) -> dict[str, int | str]:
    """SIGTERM to every pod at once, each given its terminationGracePeriodSeconds: the pods
    that did not end with 0, and how they ended."""
    codes: dict[str, int | str] = {}

    def terminate(pod: Running) -> None:
        if pod.process.poll() is not None:
            codes[pod.name] = pod.process.returncode
            return
        grace = float(pod.template["spec"].get("terminationGracePeriodSeconds", 30))
        try:
            codes[pod.name] = stop(pod.process, pod.name, timeout=grace)
        except SmokeError as exc:
            codes[pod.name] = str(exc)

    threads = [threading.Thread(target=terminate, args=(pod,)) for pod in pods]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {name: code for name, code in codes.items() if code != 0}
