"""deploy/image/scaled.py (issue 30), the stand-in for a cluster that `make image-test` runs the
scaled manifests' pods with: it must build a container's command line and environment as the
kubelet does, or the smoke test would pass on pods Kubernetes never starts (running them needs
root and the image: `make image-test`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.test_deploy_manifests import rendered

ROOT = Path(__file__).resolve().parent.parent


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "deploy" / "image" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # scaled.py imports podrun by name; dataclasses look theirs up
    spec.loader.exec_module(module)
    return module


podrun = _module("podrun")
scaled = _module("scaled")

names = st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True)
words = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters="$"), max_size=8)
argvs = st.lists(words, max_size=3)


def cluster(objects: list[dict[str, Any]], secrets: dict[str, dict[str, str]], image: dict[str, Any]) -> Any:
    return scaled.Cluster(objects, secrets, "/nonexistent", image, None, Path("/nonexistent"))


@given(entrypoint=argvs, cmd=argvs, command=st.none() | argvs, args=st.none() | argvs)
def test_command_and_args_replace_the_images_as_kubernetes_does(
    entrypoint: list[str], cmd: list[str], command: list[str] | None, args: list[str] | None
) -> None:
    container: dict[str, Any] = {"name": "c"}
    if command is not None:
        container["command"] = command
    if args is not None:
        container["args"] = args
    # Kubernetes: command replaces the entrypoint and drops the image's Cmd; args replace the Cmd.
    expected = (entrypoint if command is None else command) + (
        args if args is not None else (cmd if command is None else [])
    )
    assert cluster([], {}, {"Entrypoint": entrypoint, "Cmd": cmd}).argv(container) == expected


@given(
    image=st.dictionaries(names, words, max_size=4),
    secret=st.dictionaries(names, words, max_size=4),
    prefix=st.sampled_from(["", "P_"]),
    items=st.dictionaries(
        names,
        st.one_of(
            st.tuples(st.just("value"), words, st.just(False)),
            st.tuples(st.just("key"), names, st.booleans()),  # (key of the Secret, optional)
        ),
        max_size=5,
    ),
)
def test_environment_is_the_images_under_envfrom_under_env(
    image: dict[str, str],
    secret: dict[str, str],
    prefix: str,
    items: dict[str, tuple[str, str, bool]],
) -> None:
    env: list[dict[str, Any]] = []
    for name, (kind, text, optional) in items.items():
        if kind == "value":
            env.append({"name": name, "value": text})
        else:
            env.append({"name": name, "valueFrom": {"secretKeyRef": {"name": "s", "key": text, "optional": optional}}})
    container = {"name": "c", "env": env, "envFrom": [{"secretRef": {"name": "s"}, "prefix": prefix}]}
    subject = cluster([], {"s": secret}, {"Env": [f"{k}={v}" for k, v in image.items()]})
    missing = [name for name, (kind, key, optional) in items.items() if kind == "key" and key not in secret]
    required = [name for name in missing if not items[name][2]]
    if required:
        with pytest.raises(podrun.SmokeError, match=r"needs key .* of the Secret 's'"):
            subject.env(container, "p")
        return
    expected = {**image, **{prefix + k: v for k, v in secret.items()}}
    for name, (kind, text, _) in items.items():
        if kind == "value":
            expected[name] = text
        elif text in secret:
            expected[name] = secret[text]
    assert dict(item.split("=", 1) for item in subject.env(container, "p")) == expected


def test_a_missing_secret_stops_the_pod_unless_optional() -> None:
    def container(optional: bool) -> dict[str, Any]:
        return {"name": "c", "envFrom": [{"secretRef": {"name": "chat", "optional": optional}}]}

    assert cluster([], {}, {}).env(container(True), "p") == []
    with pytest.raises(podrun.SmokeError, match="no Secret named 'chat'"):
        cluster([], {}, {}).env(container(False), "p")


@given(target=st.sampled_from(["/etc/veridiag", "/etc", "/var/lib/veridiag"]), present=st.booleans())
def test_the_config_file_must_be_a_file_of_a_volume(tmp_path_factory: Any, target: str, present: bool) -> None:
    source = tmp_path_factory.mktemp("config")
    inside = Path("/etc/veridiag/veridiag.yaml")
    if present:
        (source / "veridiag").mkdir()
        (source / "veridiag" / "veridiag.yaml").write_text("engine: auto\n")
        (source / "veridiag.yaml").write_text("engine: auto\n")
    mounts = [podrun.Mount(target, source)]
    found = inside.is_relative_to(target) and present
    if found:
        scaled.config_file([f"VERIDIAG_CONFIG={inside}"], mounts, "pod p")
    else:
        with pytest.raises(podrun.SmokeError, match=r"VERIDIAG_CONFIG=/etc/veridiag/veridiag\.yaml is no file"):
            scaled.config_file([f"VERIDIAG_CONFIG={inside}"], mounts, "pod p")


def test_the_scaled_pods_start_with_the_secret_keys_the_readme_names() -> None:
    """The README's `kubectl create secret` for scaled (api-tokens, session-secret,
    database-url) is all the rendered pods need; without database-url none starts."""
    objects = list(rendered("scaled"))
    keys = {"api-tokens": "t", "session-secret": "s" * 32, "database-url": "postgresql://u:p@db/veridiag"}
    subject = cluster(objects, {"veridiag": keys}, {"Env": ["VERIDIAG_HOME=/var/lib/veridiag"]})
    for component in ("serve", "worker"):
        spec = scaled.deployment(objects, component)["spec"]["template"]["spec"]
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            env = dict(item.split("=", 1) for item in subject.env(container, component))
            assert env["VERIDIAG_DATABASE_URL"] == keys["database-url"], container["name"]
            assert env["VERIDIAG_API_TOKENS"] == "t"
    without = cluster(objects, {"veridiag": {"api-tokens": "t"}}, {})
    with pytest.raises(podrun.SmokeError, match="VERIDIAG_DATABASE_URL needs key 'database-url'"):
        without.env(scaled.deployment(objects, "serve")["spec"]["template"]["spec"]["containers"][0], "serve")
