"""Reproducibility check of the image (issue 30): builds it twice from the same commit and
compares the two archives' manifest digests.

    python3 deploy/image/reproducible.py [--variant default|clickhouse]

Each build runs deploy/image/build.sh from scratch (debootstrap, wheels, install, trim, commit)
into its own archive under build/image/reproducible/. The image is reproducible when the two
manifest digests are equal: then the config (labels, times, environment) and every byte of the
layer are. When they differ, the entries of the layer that differ (content, mode, owner, time,
link) are listed, and the config fields. Needs what build.sh needs (root, buildah, debootstrap).
Exit status 0 when the digests are equal."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class Image:
    """What an OCI archive holds, read without unpacking it to disk."""

    digest: str  # the manifest's: equal digests are equal images
    config: dict[str, Any]
    layers: list[dict[str, tuple[object, ...]]]  # per layer: path -> its entry's attributes


def _member(archive: tarfile.TarFile, name: str) -> bytes:
    member = archive.extractfile(name)
    if member is None:
        raise ValueError(f"no {name} in the archive")
    return member.read()


def _blob(archive: tarfile.TarFile, digest: str) -> bytes:
    return _member(archive, f"blobs/{digest.replace(':', '/')}")


def _entries(archive: tarfile.TarFile, digest: str) -> dict[str, tuple[object, ...]]:
    """Every entry of an (uncompressed) layer: type, mode, owner, time, link, size, content hash."""
    entries: dict[str, tuple[object, ...]] = {}
    with tarfile.open(fileobj=archive.extractfile(f"blobs/{digest.replace(':', '/')}"), mode="r:") as layer:
        for member in layer:
            content = ""
            if member.isfile():
                data = layer.extractfile(member)
                content = hashlib.sha256(data.read() if data else b"").hexdigest()
            entries[member.name] = (
                member.type,
                oct(member.mode),
                member.uid,
                member.gid,
                member.mtime,
                member.linkname,
                member.size,
                content,
            )
    return entries


def read_image(path: Path, with_layers: bool = True) -> Image:
    with tarfile.open(path, mode="r:") as archive:
        index = json.loads(_member(archive, "index.json"))
        digest = index["manifests"][0]["digest"]
        manifest = json.loads(_blob(archive, digest))
        config = json.loads(_blob(archive, manifest["config"]["digest"]))
        layers = [_entries(archive, layer["digest"]) for layer in manifest["layers"]] if with_layers else []
    return Image(digest=digest, config=config, layers=layers)


def differences(first: Image, second: Image, limit: int = 40) -> list[str]:
    """What differs between two images, one line each (at most ``limit`` layer entries)."""
    lines: list[str] = []
    for key in sorted(set(first.config) | set(second.config)):
        if key != "rootfs" and first.config.get(key) != second.config.get(key):
            lines.append(f"config {key}: {first.config.get(key)!r} != {second.config.get(key)!r}")
    if len(first.layers) != len(second.layers):
        lines.append(f"layers: {len(first.layers)} != {len(second.layers)}")
    fields = ("type", "mode", "uid", "gid", "mtime", "link", "size", "sha256")
    for number, (one, two) in enumerate(zip(first.layers, second.layers, strict=False)):
        changed = []
        for path in sorted(set(one) | set(two)):
            if path not in one or path not in two:
                changed.append(f"layer {number} {path}: only in the {'second' if path not in one else 'first'}")
            elif one[path] != two[path]:
                what = [f"{f} {a!r} != {b!r}" for f, a, b in zip(fields, one[path], two[path], strict=True) if a != b]
                changed.append(f"layer {number} {path}: {'; '.join(what)}")
        if list(one) != list(two) and not changed:
            changed.append(f"layer {number}: the same entries in another order")
        lines.extend(changed[:limit])
        if len(changed) > limit:
            lines.append(f"layer {number}: … and {len(changed) - limit} more entries")
    return lines


def build(variant: str, out: Path, log: Path) -> float:
    started = time.monotonic()
    env = {**os.environ, "PYTHON": os.environ.get("PYTHON", sys.executable)}
    with log.open("w") as sink:
        done = subprocess.run(
            [str(ROOT / "deploy/image/build.sh"), "--variant", variant, "--out", str(out)],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"error: build failed (exit {done.returncode}), see {log}")
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="default", choices=["default", "clickhouse"])
    args = parser.parse_args()
    work = ROOT / "build/image/reproducible"
    work.mkdir(parents=True, exist_ok=True)
    archives = [work / f"{args.variant}-{n}.oci.tar" for n in (1, 2)]
    images = []
    for number, archive in enumerate(archives, start=1):
        archive.unlink(missing_ok=True)
        seconds = build(args.variant, archive, work / f"{args.variant}-{number}.log")
        image = read_image(archive, with_layers=False)
        images.append(image)
        size = archive.stat().st_size / 1e6
        print(f"build {number}: {image.digest} ({size:.1f} MB archive, built in {seconds:.0f} s)", flush=True)
    if images[0].digest == images[1].digest:
        print(f"reproducible: both builds are {images[0].digest}")
        return 0
    print("NOT reproducible; what differs:")
    for line in differences(read_image(archives[0]), read_image(archives[1])):
        print(f"  {line}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
