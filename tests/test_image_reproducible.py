"""deploy/image/reproducible.py (issue 30): reading an OCI archive's digest and telling what
differs between two images, on small archives made here (building the real image twice needs
root and minutes: `make image-reproducible`)."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import sys
import tarfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reproducible", ROOT / "deploy/image/reproducible.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


reproducible = _module()


def _tar(entries: list[tuple[str, bytes, int]]) -> bytes:
    """An uncompressed tar of (path, content, mtime), in the order given."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content, mtime in entries:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(content), mtime, 0o644
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def _archive(path: Path, entries: list[tuple[str, bytes, int]], labels: dict[str, str] | None = None) -> Path:
    """An OCI archive as buildah writes one: index.json, a manifest, a config and one layer."""
    blobs: dict[str, bytes] = {}

    def add(data: bytes) -> dict[str, object]:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return {"digest": digest, "size": len(data)}

    layer = _tar(entries)
    layer_ref = add(layer)
    config = {
        "created": "2026-12-06T09:29:53Z",
        "config": {"Labels": labels or {}},
        "rootfs": {"type": "layers", "diff_ids": [layer_ref["digest"]]},
    }
    config_ref = add(json.dumps(config, sort_keys=True).encode())
    manifest = {"schemaVersion": 2, "config": config_ref, "layers": [layer_ref]}
    manifest_ref = add(json.dumps(manifest, sort_keys=True).encode())
    index = {"schemaVersion": 2, "manifests": [manifest_ref]}
    files = {"index.json": json.dumps(index).encode()}
    files.update({f"blobs/{digest.replace(':', '/')}": data for digest, data in blobs.items()})
    path.write_bytes(_tar([(name, data, 0) for name, data in files.items()]))
    return path


ENTRIES = [("usr/bin/veridiag", b"#!/bin/sh\n", 1765013393), ("etc/shadow", b"root:*:20428:0:::\n", 1765013393)]


def test_the_same_content_is_the_same_digest_and_no_difference(tmp_path: Path) -> None:
    first = reproducible.read_image(_archive(tmp_path / "1.tar", ENTRIES))
    second = reproducible.read_image(_archive(tmp_path / "2.tar", ENTRIES))
    assert first.digest == second.digest
    assert first.digest.startswith("sha256:")
    assert reproducible.differences(first, second) == []


def test_a_file_written_at_another_time_is_named(tmp_path: Path) -> None:
    later = [ENTRIES[0], ("etc/shadow", ENTRIES[1][1], ENTRIES[1][2] + 86400)]
    first = reproducible.read_image(_archive(tmp_path / "1.tar", ENTRIES))
    second = reproducible.read_image(_archive(tmp_path / "2.tar", later))
    assert first.digest != second.digest
    assert reproducible.differences(first, second) == ["layer 0 etc/shadow: mtime 1765013393 != 1765099793"]


def test_other_content_and_extra_files_are_named(tmp_path: Path) -> None:
    changed = [ENTRIES[0], ("etc/shadow", b"root:*:20429:0:::\n", ENTRIES[1][2]), ("var/log/dpkg.log", b"x", 0)]
    first = reproducible.read_image(_archive(tmp_path / "1.tar", ENTRIES))
    second = reproducible.read_image(_archive(tmp_path / "2.tar", changed))
    lines = reproducible.differences(first, second)
    assert len(lines) == 2
    assert lines[0].startswith("layer 0 etc/shadow: sha256 ")
    assert lines[1] == "layer 0 var/log/dpkg.log: only in the second"


def test_the_order_of_entries_and_the_config_count(tmp_path: Path) -> None:
    first = reproducible.read_image(_archive(tmp_path / "1.tar", ENTRIES, {"revision": "a"}))
    second = reproducible.read_image(_archive(tmp_path / "2.tar", ENTRIES[::-1], {"revision": "b"}))
    assert first.digest != second.digest
    assert reproducible.differences(first, second) == [
        "config config: {'Labels': {'revision': 'a'}} != {'Labels': {'revision': 'b'}}",
        "layer 0: the same entries in another order",
    ]
