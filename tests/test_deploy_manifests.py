"""deploy/kubernetes and deploy/helm (issue 30): each overlay renders with kustomize and each
mode of the chart with helm, every object is valid for the pinned Kubernetes versions (offline
schemas, kubernetes-validate), and the manifests stay in step with the CLI, the settings and the
image build: commands and options the CLI takes, one port, probes on a route the API serves and
a Host it answers, VERIDIAG_* names that are settings, a veridiag.yaml that loads, the image's
user, home and version. The chart renders what the overlay of its mode does (pods, containers,
volumes, Service, claims, veridiag.yaml), so neither drifts from the other."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml
from fastapi import FastAPI, Response
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from typer.core import TyperGroup
from typer.main import get_command

from veridiag.api.guards import allowed_hosts
from veridiag.api.local import LocalServer
from veridiag.api.routes import ops
from veridiag.cli.app import app
from veridiag.config import Settings

ROOT = Path(__file__).resolve().parent.parent
KUBERNETES = ROOT / "deploy" / "kubernetes"
BUILD_SCRIPT = ROOT / "deploy" / "image" / "build.sh"
CHART = ROOT / "deploy" / "helm" / "veridiag"
#: The two ways to run it: an overlay of deploy/kubernetes each, and the chart's values files
#: (its defaults are "single").
MODES = ("single", "scaled")
CHART_VALUES = {"single": (), "scaled": (CHART / "values-scaled.yaml",)}
#: The release whose objects are named as deploy/kubernetes names its own.
RELEASE = "veridiag"
TOOLS = ("kustomize", "helm")
RENDERINGS = [pytest.param(tool, mode, id=f"{tool}-{mode}") for tool in TOOLS for mode in MODES]
#: The oldest Kubernetes release still maintained when this was written and the newest whose
#: schemas kubernetes-validate ships (constraints.txt pins it): the manifests must fit both.
KUBERNETES_VERSIONS = ("1.32.0", "1.37.0")
#: Read by config.py itself (the file settings come from), not a field of Settings.
CONFIG_FILE_VARIABLE = "VERIDIAG_CONFIG"

Manifest = dict[str, Any]


def missing_tool(problem: str, provider: str) -> NoReturn:
    """A renderer this machine lacks: skipped locally, saying so; a failure in CI."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{problem}: .ci/run must provide {provider}")
    pytest.skip(f"{problem}: CI renders the manifests, with {provider}")


def kustomize_command() -> list[str]:
    """``kubectl kustomize`` when its kustomize reads today's kustomization fields (v4+: the
    ``labels`` and ``patches`` fields, directories in ``resources``); Debian bookworm's kubectl
    1.20 bundles kustomize v2.0.3, which reads none of them. Missing → skip locally, fail in CI."""
    kubectl = shutil.which("kubectl")
    problem = "kubectl not found"
    if kubectl:
        version = subprocess.run([kubectl, "version", "--client"], capture_output=True, text=True, check=False)
        found = re.search(r"Kustomize Version: v(\d+)", version.stdout)
        if found and int(found.group(1)) >= 4:
            return [kubectl, "kustomize"]
        problem = f"{kubectl} has no kustomize v4 or later ({version.stdout.strip() or version.stderr.strip()})"
    missing_tool(problem, "kubectl with kustomize v4+ to render deploy/kubernetes")


@cache
def helm_command() -> str:
    """Helm 3 or later: VERIDIAG_TEST_HELM, else the one `make helm` puts beside the venv's
    python (deploy/helm/install.py), else one on PATH. Missing → skip locally, fail in CI."""
    beside = Path(sys.executable).parent / "helm"
    binary = os.environ.get("VERIDIAG_TEST_HELM") or (str(beside) if beside.exists() else shutil.which("helm"))
    problem = f"helm not found{f' at {binary}' if binary else ''} (`make helm` installs it)"
    if binary and os.access(binary, os.X_OK):
        version = subprocess.run([binary, "version", "--short"], capture_output=True, text=True, check=False)
        found = re.match(r"v(\d+)\.", version.stdout)
        if found and int(found.group(1)) >= 3:
            return binary
        problem = f"{binary} is no helm 3 or later ({version.stdout.strip() or version.stderr.strip()})"
    missing_tool(problem, "helm (`make helm`) to render deploy/helm")


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm_command(), *args], capture_output=True, text=True, check=False)


def helm_template(values: Sequence[Path] = (), sets: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    options = [*(f"--values={v}" for v in values), *(f"--set={s}" for s in sets)]
    return helm("template", RELEASE, str(CHART), *options)


def documents(text: str) -> tuple[Manifest, ...]:
    return tuple(doc for doc in yaml.safe_load_all(text) if doc)


@cache
def _rendered(tool: str, mode: str) -> tuple[Manifest, ...]:
    if tool == "helm":
        done = helm_template(CHART_VALUES[mode])
    else:
        done = subprocess.run(
            [*kustomize_command(), str(KUBERNETES / "overlays" / mode)], capture_output=True, text=True, check=False
        )
    assert done.returncode == 0, done.stderr
    return documents(done.stdout)


def rendered(mode: str, tool: str = "kustomize") -> tuple[Manifest, ...]:
    return _rendered(tool, mode)


def of_kind(objects: tuple[Manifest, ...], kind: str) -> dict[str, Manifest]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def pod_templates(objects: tuple[Manifest, ...]) -> dict[str, Manifest]:
    """Every pod template by its workload's name: each Deployment's, and each CronJob's job's."""
    found = {name: o["spec"]["template"] for name, o in of_kind(objects, "Deployment").items()}
    jobs = of_kind(objects, "CronJob")
    return found | {name: o["spec"]["jobTemplate"]["spec"]["template"] for name, o in jobs.items()}


def containers(template: Manifest) -> Iterator[Manifest]:
    spec = template["spec"]
    yield from spec.get("initContainers", [])
    yield from spec["containers"]


def env_of(container: Manifest) -> dict[str, Manifest]:
    return {entry["name"]: entry for entry in container.get("env", [])}


def setting_exists(variable: str) -> bool:
    """A ``VERIDIAG_A__B`` name that pydantic-settings reads into Settings.a.b."""
    model: type[BaseModel] = Settings
    parts = variable.removeprefix("VERIDIAG_").lower().split("__")
    for depth, part in enumerate(parts):
        field = model.model_fields.get(part)
        if field is None:
            return False
        annotation = field.annotation
        if depth < len(parts) - 1:
            if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
                return False
            model = annotation
    return True


def build_script_value(name: str) -> str:
    found = re.search(rf"^{name}=(\S+)$", BUILD_SCRIPT.read_text(), re.MULTILINE)
    assert found, f"{name}= not in {BUILD_SCRIPT}"
    return found.group(1)


def placeholder(variable: str, source: Manifest) -> str:
    """A value of the right shape for a Secret key the manifests reference (no secret is in them)."""
    key = source["secretKeyRef"]["key"]
    return {
        "database-url": "postgresql://veridiag:secret@postgres/veridiag",
        "session-secret": "s" * 32,
    }.get(key, f"placeholder-{key}")


@pytest.mark.parametrize(("tool", "overlay"), RENDERINGS)
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_object_is_valid_for_kubernetes(tool: str, overlay: str, version: str) -> None:
    objects = rendered(overlay, tool)
    assert {o["kind"] for o in objects} >= {"Deployment", "Service", "ConfigMap", "ServiceAccount"}
    assert ("CronJob" in {o["kind"] for o in objects}) == (overlay == "scaled")
    for obj in objects:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{overlay}: {obj['kind']}/{obj['metadata']['name']} invalid for {version}: {exc.message}")


def test_the_validator_refuses_what_kubernetes_would() -> None:
    """The check above could fail: a misspelt field and a probe without a handler are refused."""
    deployment = of_kind(rendered("single"), "Deployment")["veridiag-serve"]
    spec = deployment["spec"]["template"]["spec"]
    misspelt = {**deployment, "spec": {**deployment["spec"], "replica": 2}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(misspelt, KUBERNETES_VERSIONS[0], strict=True)
    bad_port = {**spec["containers"][0], "ports": [{"containerPort": "eighty"}]}
    broken = {
        **deployment,
        "spec": {
            **deployment["spec"],
            "template": {**deployment["spec"]["template"], "spec": {**spec, "containers": [bad_port]}},
        },
    }
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSIONS[0], strict=True)


@pytest.mark.parametrize("tool", TOOLS)
def test_overlays_run_what_they_say(tool: str) -> None:
    single, scaled = rendered("single", tool), rendered("scaled", tool)
    assert set(of_kind(single, "Deployment")) == {"veridiag-serve"}
    serve = of_kind(single, "Deployment")["veridiag-serve"]
    assert serve["spec"]["replicas"] == 1 and serve["spec"]["strategy"]["type"] == "Recreate"
    home = {v["name"]: v for v in serve["spec"]["template"]["spec"]["volumes"]}["home"]
    assert home == {"name": "home", "persistentVolumeClaim": {"claimName": "veridiag-home"}}
    assert "veridiag-home" in of_kind(single, "PersistentVolumeClaim")
    assert not of_kind(single, "CronJob"), "spans in the embedded file: nothing to derive"
    for template in pod_templates(single).values():
        for container in containers(template):
            assert "VERIDIAG_DATABASE_URL" not in env_of(container)  # SQLite in the home

    deployments = of_kind(scaled, "Deployment")
    assert set(deployments) == {"veridiag-serve", "veridiag-worker"}
    assert deployments["veridiag-serve"]["spec"]["replicas"] >= 2
    assert deployments["veridiag-worker"]["spec"]["replicas"] >= 1
    # the exporter's spans derived on a schedule, one run at a time, a few runs kept
    derive = of_kind(scaled, "CronJob")["veridiag-derive-traces"]["spec"]
    assert derive["concurrencyPolicy"] == "Forbid" and len(derive["schedule"].split()) == 5
    assert 0 < derive["successfulJobsHistoryLimit"] <= 3 and 0 < derive["failedJobsHistoryLimit"] <= 5
    job = derive["jobTemplate"]["spec"]
    assert job["activeDeadlineSeconds"] > 0 and job["template"]["spec"]["restartPolicy"] == "Never"
    assert "initContainers" not in job["template"]["spec"], "it reads ClickHouse only: no store to migrate"
    assert [c["args"] for c in containers(job["template"])] == [["data", "derive-traces"]]
    assert loaded_settings(scaled).tools.traces == "clickhouse"
    for template in pod_templates(scaled).values():
        for container in containers(template):
            url = env_of(container)["VERIDIAG_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
            assert url["name"] == "veridiag" and not url.get("optional")


@pytest.mark.parametrize(("tool", "overlay"), RENDERINGS)
def test_no_secret_value_is_in_the_manifests(tool: str, overlay: str) -> None:
    objects = rendered(overlay, tool)
    assert not of_kind(objects, "Secret")
    for template in pod_templates(objects).values():
        for container in containers(template):
            for name, entry in env_of(container).items():
                if re.search(r"TOKEN|SECRET|KEY|PASSWORD|DATABASE_URL", name):
                    assert "value" not in entry, f"{name} is written into the manifest"


@pytest.mark.parametrize(("tool", "overlay"), RENDERINGS)
def test_commands_are_the_clis(tool: str, overlay: str) -> None:
    """Each container's args parse as the veridiag command line does (unknown commands or
    options fail here), and serve listens on every interface at the port the manifests use."""
    root = get_command(app)
    assert isinstance(root, TyperGroup)
    entrypoint = build_script_value("ENTRYPOINT")
    assert entrypoint == "veridiag"
    seen = set()
    for template in pod_templates(rendered(overlay, tool)).values():
        for container in containers(template):
            assert container["image"].split("/")[-1].startswith("veridiag:")
            assert "command" not in container, "the image's entrypoint (veridiag) runs the args"
            args = [str(a) for a in container["args"]]
            command: Any = root
            words = list(args)
            path: list[str] = []
            while isinstance(command, TyperGroup):
                ctx = command.make_context("veridiag", list(words), resilient_parsing=True)
                name, sub, words = command.resolve_command(ctx, words)
                assert sub is not None and name, f"{args}: no command {name}"
                command = sub
                path.append(name)
            ctx = command.make_context(" ".join(path), list(words))
            seen.add(" ".join(path))
            if path == ["serve"]:
                port = {p["name"]: p["containerPort"] for p in container["ports"]}["http"]
                assert ctx.params["host"] == "0.0.0.0" and ctx.params["port"] == port
                assert port == int(build_script_value("PORT"))
    assert {"db upgrade", "serve"} <= seen
    assert ("data derive-traces" in seen) == (overlay == "scaled")


@pytest.mark.parametrize(("tool", "overlay"), RENDERINGS)
def test_probes_reach_healthz(tool: str, overlay: str) -> None:
    """The probes ask a route the API serves, on the container's port, with a Host the API
    answers (api_allowed_hosts from the overlay's veridiag.yaml, else the defaults)."""
    objects = rendered(overlay, tool)
    settings = loaded_settings(objects)
    routes = {route.path for route in ops.routes}  # type: ignore[attr-defined]
    serve = of_kind(objects, "Deployment")["veridiag-serve"]
    container = serve["spec"]["template"]["spec"]["containers"][0]
    hosts = allowed_hosts(settings.api_allowed_hosts, "0.0.0.0")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        check = container[probe]["httpGet"]
        assert check["path"] == "/healthz" and check["path"] in routes
        assert check["port"] == "http"
        host = {h["name"]: h["value"] for h in check.get("httpHeaders", [])}.get("Host")
        assert host is not None and host_allowed(host, hosts), f"{probe}: Host {host} is refused ({hosts})"
    service = of_kind(objects, "Service")["veridiag"]
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]
    labels = serve["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def host_allowed(host: str, patterns: list[str]) -> bool:
    """As Starlette's TrustedHostMiddleware matches a Host header."""
    return any(p in ("*", host) or (p.startswith("*.") and host.endswith(p[1:])) for p in patterns)


def test_the_host_check_above_could_fail() -> None:
    assert not host_allowed("10.1.2.3", allowed_hosts(["veridiag", "*.svc"], "0.0.0.0"))
    assert host_allowed("veridiag.ops.svc", ["*.svc"])


def _stand_in() -> FastAPI:
    """200 on /healthz, 503 on /down: what a `helm test` command is run against here."""
    stand_in = FastAPI()
    stand_in.add_api_route("/healthz", lambda: Response(status_code=200))
    stand_in.add_api_route("/down", lambda: Response(status_code=503))
    return stand_in


@pytest.mark.parametrize("mode", MODES)
def test_helm_test_asks_healthz_through_the_service(mode: str) -> None:
    """`helm test`'s pod asks /healthz at the Service's name and port with a Host the API
    answers, as the image's user; its command exits 0 on a 200 and not on a 503."""
    objects = rendered(mode, "helm")
    (pod,) = (o for o in objects if is_hook(o))
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["spec"]["containers"]
    url = urlsplit(container["args"][0])
    (service,) = of_kind(objects, "Service").values()
    assert url.hostname and url.hostname.split(".")[0] == service["metadata"]["name"]
    assert url.port == service["spec"]["ports"][0]["port"] and url.path == "/healthz"
    assert url.path in {route.path for route in ops.routes}  # type: ignore[attr-defined]
    hosts = allowed_hosts(loaded_settings(objects).api_allowed_hosts, "0.0.0.0")
    assert host_allowed(url.hostname, hosts), f"{url.hostname} is refused ({hosts})"
    command = [sys.executable if word == "python3" else word for word in container["command"]]
    with LocalServer(_stand_in()) as server:
        answered = subprocess.run([*command, f"{server.url}/healthz"], capture_output=True, check=False)
        refused = subprocess.run([*command, f"{server.url}/down"], capture_output=True, check=False)
    assert answered.returncode == 0, answered.stderr
    assert refused.returncode != 0


@pytest.mark.parametrize(("tool", "overlay"), RENDERINGS)
def test_environment_names_are_settings(tool: str, overlay: str) -> None:
    for template in pod_templates(rendered(overlay, tool)).values():
        for container in containers(template):
            for name in env_of(container):
                if name.startswith("VERIDIAG_") and name != CONFIG_FILE_VARIABLE:
                    assert setting_exists(name), f"{container['name']}: {name} is no setting of veridiag.config"


def test_the_setting_check_above_could_fail() -> None:
    assert setting_exists("VERIDIAG_LLM__DEFAULT__API_KEY") and setting_exists("VERIDIAG_DATABASE_URL")
    assert not setting_exists("VERIDIAG_LLM__DEFAULT__APIKEY")
    assert not setting_exists("VERIDIAG_DATABASE__URL")
    assert not setting_exists("VERIDIAG_HOME__X")


@pytest.mark.parametrize(("tool", "overlay"), RENDERINGS)
def test_containers_share_one_environment(tool: str, overlay: str) -> None:
    """The migration, the servers, the workers and the derive's job read the same store and settings."""
    environments = [
        (container["name"], env_of(container), container.get("envFrom"), container["volumeMounts"])
        for template in pod_templates(rendered(overlay, tool)).values()
        for container in containers(template)
    ]
    first = environments[0]
    for other in environments[1:]:
        assert other[1:] == first[1:], f"{other[0]} differs from {first[0]}"


def loaded_settings(objects: tuple[Manifest, ...]) -> Settings:
    """Settings as a pod of this overlay reads them: its environment (secrets as placeholders)
    and the ConfigMap's veridiag.yaml at VERIDIAG_CONFIG."""
    serve = of_kind(objects, "Deployment")["veridiag-serve"]
    container = serve["spec"]["template"]["spec"]["containers"][0]
    (config_map,) = of_kind(objects, "ConfigMap").values()
    mount = next(m for m in container["volumeMounts"] if m["name"] == "config")["mountPath"]
    environment = {}
    for name, entry in env_of(container).items():
        environment[name] = entry["value"] if "value" in entry else placeholder(name, entry["valueFrom"])
    config_path = Path(environment[CONFIG_FILE_VARIABLE])
    assert config_path.parent == Path(mount) and config_path.name in config_map["data"]
    saved = {k: v for k, v in os.environ.items() if k.startswith("VERIDIAG_")}
    with _isolated_directory() as directory:
        config_file = directory / config_path.name
        config_file.write_text(config_map["data"][config_path.name])
        environment[CONFIG_FILE_VARIABLE] = str(config_file)
        try:
            for key in saved:
                del os.environ[key]
            os.environ.update(environment)
            return Settings()
        finally:
            for key in environment:
                os.environ.pop(key, None)
            os.environ.update(saved)


@contextmanager
def _isolated_directory() -> Iterator[Path]:
    """A working directory without a veridiag.yaml of its own."""
    before = Path.cwd()
    with tempfile.TemporaryDirectory() as directory:
        os.chdir(directory)
        try:
            yield Path(directory)
        finally:
            os.chdir(before)


@pytest.mark.parametrize(("tool", "overlay"), RENDERINGS)
def test_configuration_loads_as_the_pods_read_it(tool: str, overlay: str) -> None:
    objects = rendered(overlay, tool)
    settings = loaded_settings(objects)
    home = build_script_value("HOME_DIR")
    assert settings.home == Path(home)
    if overlay == "scaled":
        assert settings.store_url.startswith("postgresql://")
        assert (settings.tools.logs, settings.tools.metrics) == ("clickhouse", "prometheus")
        assert settings.clickhouse.url and settings.prometheus.url
        assert settings.alerts.serve_workers == 0  # the workers take the alerts
    else:
        assert settings.store_url == f"sqlite:///{home}/veridiag.db"
        assert settings.alerts.serve_workers >= 1  # no worker: the server runs the alerts


@pytest.mark.parametrize(("tool", "overlay"), RENDERINGS)
def test_pods_run_as_the_images_user_on_a_read_only_root(tool: str, overlay: str) -> None:
    uid = int(build_script_value("UID_GID"))
    home = build_script_value("HOME_DIR")
    for template in pod_templates(rendered(overlay, tool)).values():
        pod = template["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == uid == pod["securityContext"]["fsGroup"]
        assert pod["automountServiceAccountToken"] is False
        for container in containers(template):
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False
            assert context["capabilities"]["drop"] == ["ALL"]
            # What veridiag writes: its home and temporary files; both are volumes.
            mounted = {m["mountPath"] for m in container["volumeMounts"]}
            assert {home, "/tmp"} <= mounted
            assert env_of(container)["VERIDIAG_HOME"]["value"] == home
            assert container["resources"]["requests"]["memory"] and container["resources"]["limits"]["memory"]


@pytest.mark.parametrize(("tool", "overlay"), RENDERINGS)
def test_image_tag_is_the_version(tool: str, overlay: str) -> None:
    from importlib.metadata import version

    for template in pod_templates(rendered(overlay, tool)).values():
        for container in containers(template):
            assert container["image"] == f"veridiag:{version('veridiag')}"
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["version"] == chart["appVersion"] == version("veridiag")


@pytest.mark.parametrize("mode", MODES)
def test_the_chart_lints(mode: str) -> None:
    options = [f"--values={v}" for v in CHART_VALUES[mode]]
    done = helm("lint", "--strict", str(CHART), *options)
    assert done.returncode == 0, done.stdout + done.stderr


def is_hook(obj: Manifest) -> bool:
    """A `helm test` pod and the like: run on demand, no counterpart in deploy/kubernetes."""
    return "helm.sh/hook" in obj["metadata"].get("annotations", {})


def selects(selector: Manifest, labels: dict[str, str]) -> str | None:
    """The component a label selector picks, when it picks pods with these labels."""
    wanted: dict[str, str] = selector.get("matchLabels", selector)
    return wanted.get("app.kubernetes.io/component") if wanted.items() <= labels.items() else None


def workloads(objects: tuple[Manifest, ...]) -> dict[str, Any]:
    """What the objects run and how, as the chart and the overlays must both say it: each pod's
    spec (containers but their pull policy: commands, ports, probes, environment, mounts,
    resources, security; volumes with the ConfigMap unnamed), replicas and strategy, the
    Service's ports, the claims, the disruption budgets, each CronJob's schedule, policy, history
    limits and job, and veridiag.yaml. Labels and the generated ConfigMap name are the tools' own
    and left out; selectors count by what they pick."""
    kept = [o for o in objects if not is_hook(o)]
    (config_map,) = (o for o in kept if o["kind"] == "ConfigMap")
    pods: dict[str, dict[str, str]] = {}

    def pod_of(name: str, template: Manifest) -> Manifest:
        labels = pods[name] = template["metadata"]["labels"]
        pod: Manifest = copy.deepcopy(template["spec"])
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            container.pop("imagePullPolicy", None)
            container["env"] = {entry["name"]: entry for entry in container.get("env", [])}
        for volume in pod["volumes"]:
            if volume.get("configMap", {}).get("name") == config_map["metadata"]["name"]:
                volume["configMap"]["name"] = "the ConfigMap"
        for spread in pod.get("topologySpreadConstraints", []):
            spread["labelSelector"] = selects(spread["labelSelector"], labels)
        return pod

    deployments: dict[str, Any] = {}
    for name, deployment in of_kind(tuple(kept), "Deployment").items():
        spec = deployment["spec"]
        pod = pod_of(name, spec["template"])
        deployments[name] = {
            "replicas": spec["replicas"],
            "revisionHistoryLimit": spec.get("revisionHistoryLimit"),
            "strategy": spec.get("strategy", {"type": "RollingUpdate"}),
            "selector": selects(spec["selector"], pods[name]),
            "pod": pod,
        }
    cronjobs: dict[str, Any] = {}
    for name, cronjob in of_kind(tuple(kept), "CronJob").items():
        spec = copy.deepcopy(cronjob["spec"])
        cronjobs[name] = {**spec, "pod": pod_of(name, spec["jobTemplate"]["spec"].pop("template"))}

    def component(selector: Manifest) -> set[str | None]:
        return {selects(selector, labels) for labels in pods.values()} - {None}

    return {
        "objects": sorted((o["kind"], o["metadata"]["name"]) for o in kept if o is not config_map),
        "deployments": deployments,
        "cronjobs": cronjobs,
        "services": {
            name: {**service["spec"], "selector": component(service["spec"]["selector"])}
            for name, service in of_kind(tuple(kept), "Service").items()
        },
        "claims": {name: claim["spec"] for name, claim in of_kind(tuple(kept), "PersistentVolumeClaim").items()},
        "budgets": {
            name: {**budget["spec"], "selector": component(budget["spec"]["selector"])}
            for name, budget in of_kind(tuple(kept), "PodDisruptionBudget").items()
        },
        "config": yaml.safe_load(config_map["data"]["veridiag.yaml"]),
    }


def differences(left: Any, right: Any, path: str = "") -> list[str]:
    """Where two JSON-like values differ, each as ``path: left != right``."""
    if isinstance(left, dict) and isinstance(right, dict):
        return [
            found
            for key in sorted(left.keys() | right.keys(), key=str)
            for found in differences(left.get(key), right.get(key), f"{path}.{key}")
        ]
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return [
            found
            for index, pair in enumerate(zip(left, right, strict=True))
            for found in differences(*pair, f"{path}[{index}]")
        ]
    return [] if left == right else [f"{path}: {left!r} != {right!r}"]


@pytest.mark.parametrize("mode", MODES)
def test_the_chart_renders_what_the_overlay_does(mode: str) -> None:
    """helm template of the mode's values and kubectl kustomize of its overlay: the same pods,
    containers, volumes, Service, claims, CronJobs and veridiag.yaml (the chart's objects named by
    release "veridiag")."""
    chart, overlay = workloads(rendered(mode, "helm")), workloads(rendered(mode, "kustomize"))
    assert not differences(chart, overlay), "chart != overlay:\n" + "\n".join(differences(chart, overlay))


def leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path


@settings(max_examples=40, deadline=None)
@given(data=st.data(), mode=st.sampled_from(MODES))
def test_the_comparison_above_could_fail(data: st.DataObject, mode: str) -> None:
    """Any one value of a container of the chart changed (a port, an argument, an environment
    name or its Secret key, a mount, a probe, a limit), a Deployment's or a CronJob's, is a
    difference from the overlay."""
    objects = copy.deepcopy(rendered(mode, "helm"))
    pods = [template["spec"] for template in pod_templates(objects).values()]
    inside = [[*pod.get("initContainers", []), *pod["containers"]] for pod in pods]
    chosen = data.draw(st.sampled_from([c for group in inside for c in group]))
    path = data.draw(st.sampled_from([p for p in leaves(chosen) if p[0] != "imagePullPolicy"]))
    assert differences(workloads(changed(objects, chosen, path)), workloads(rendered(mode, "kustomize")))


def changed(objects: tuple[Manifest, ...], holder: Any, path: tuple[str | int, ...]) -> tuple[Manifest, ...]:
    """The objects with the value at ``path`` in ``holder`` (one of theirs) changed: a boolean
    negated, a number one more, anything else with a letter added."""
    *parents, last = path
    for step in parents:
        holder = holder[step]
    value = holder[last]
    holder[last] = (not value) if isinstance(value, bool) else value + 1 if isinstance(value, int) else f"{value}x"
    return objects


def test_every_value_of_the_derive_cronjob_is_compared() -> None:
    """The CronJob's schedule, concurrency policy, history limits, its job's deadline and retries
    and its pod's every value (but labels, annotations and the pull policy), each changed in the
    chart alone, is a difference from the overlay."""
    overlay = workloads(rendered("scaled", "kustomize"))
    original = of_kind(rendered("scaled", "helm"), "CronJob")["veridiag-derive-traces"]["spec"]
    paths = [
        path
        for path in leaves(original)
        if path[:4] != ("jobTemplate", "spec", "template", "metadata") and "imagePullPolicy" not in path
    ]
    assert {"schedule", "concurrencyPolicy", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"} <= {
        str(path[0]) for path in paths
    }
    assert len(paths) > 40, paths
    for path in paths:
        objects = copy.deepcopy(rendered("scaled", "helm"))
        spec = of_kind(objects, "CronJob")["veridiag-derive-traces"]["spec"]
        assert differences(workloads(changed(objects, spec, path)), overlay), f"{path} is not compared"


@settings(max_examples=20, deadline=None)
@given(
    postgresql=st.booleans(),
    persistence=st.booleans(),
    servers=st.integers(1, 3),
    workers=st.integers(0, 2),
    serve_workers=st.sampled_from([0, 1]),
    derive=st.booleans(),
    traces=st.sampled_from(["embedded", "clickhouse", "clickhouse in-process"]),
)
def test_the_chart_refuses_what_would_break(
    *, postgresql: bool, persistence: bool, servers: int, workers: int, serve_workers: int, derive: bool, traces: str
) -> None:
    """SQLite and a ReadWriteOnce home are one pod's; queued alerts need a process to run them;
    the derive's CronJob, spans on a ClickHouse server. Any other combination renders objects
    Kubernetes takes, with the store it names, and the ClickHouse password where spans are there."""
    pods = servers + workers
    sets = [
        f"database.postgresql={str(postgresql).lower()}",
        f"persistence.enabled={str(persistence).lower()}",
        f"serve.replicaCount={servers}",
        f"worker.enabled={str(workers > 0).lower()}",
        f"worker.replicaCount={max(workers, 1)}",
        f"config.alerts.serve_workers={serve_workers}",
        f"deriveTraces.enabled={str(derive).lower()}",
        f"config.tools.traces={traces.removesuffix(' in-process')}",
    ]
    if traces == "clickhouse":
        sets.append("config.clickhouse.url=http://clickhouse:8123")
    done = helm_template(sets=sets)
    if (
        (pods > 1 and not (postgresql and not persistence))
        or (workers == 0 and serve_workers == 0)
        or (derive and traces != "clickhouse")
    ):
        assert done.returncode != 0 and "Error: execution error" in done.stderr, done.stdout
        return
    assert done.returncode == 0, done.stderr
    objects = documents(done.stdout)
    for obj in objects:
        kubernetes_validate.validate(obj, KUBERNETES_VERSIONS[-1], strict=True)
    assert bool(of_kind(objects, "PersistentVolumeClaim")) == persistence
    assert bool(of_kind(objects, "PodDisruptionBudget")) == (servers > 1)
    assert bool(of_kind(objects, "CronJob")) == derive
    for template in pod_templates(objects).values():
        for container in containers(template):
            assert ("VERIDIAG_DATABASE_URL" in env_of(container)) == postgresql
            assert ("VERIDIAG_CLICKHOUSE__PASSWORD" in env_of(container)) == traces.startswith("clickhouse")
