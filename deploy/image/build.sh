#!/usr/bin/env bash
# Builds veridiag's OCI image without any image registry (issue 30): a Debian root made by
# debootstrap, the project's wheels (pinned by constraints.txt) installed offline into a venv in
# it, trimmed, and committed by buildah to an OCI archive.
#
#   deploy/image/build.sh [--variant default|clickhouse] [--out FILE]
#
# Inputs are pinned: the Debian suite and the package versions it must resolve to
# (deploy/image/debian-packages.lock; point DEBIAN_MIRROR at a snapshot.debian.org date to
# rebuild an older lock), every wheel by constraints.txt, pip (used from its wheel, never
# installed) by PIP_VERSION, and all times by SOURCE_DATE_EPOCH (default: the last commit's).
# Needs root, buildah, debootstrap and python3 with pip (the project's .venv).
set -euo pipefail
cd "$(dirname "$0")/../.."

variant=default
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --variant) variant="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--variant default|clickhouse] [--out FILE]" >&2; exit 2 ;;
  esac
done
case "$variant" in default | clickhouse) ;; *) echo "error: unknown variant $variant" >&2; exit 2 ;; esac

PYTHON=${PYTHON:-.venv/bin/python}
DEBIAN_SUITE=${DEBIAN_SUITE:-bookworm}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PIP_VERSION=${PIP_VERSION:-26.3}
UID_GID=10001
HOME_DIR=/var/lib/veridiag
PORT=8080
ENTRYPOINT=veridiag
LOCK=deploy/image/debian-packages.lock
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}

for tool in buildah debootstrap; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found (apt-get install $tool)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "error: run as root (debootstrap and buildah mount need it)" >&2; exit 2; }
"$PYTHON" -m pip --version >/dev/null || { echo "error: $PYTHON has no pip (run make setup)" >&2; exit 2; }

version=$("$PYTHON" - <<'EOF'
import tomllib
print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])
EOF
)
suffix=$([ "$variant" = default ] && echo "" || echo "-$variant")
tag="veridiag:${version}${suffix}"
work=build/image/$variant
out=${out:-build/image/veridiag-${version}${suffix}.oci.tar}
rm -rf "$work" && mkdir -p "$work/wheels"

started=$(date +%s)
step() { echo "[$(($(date +%s) - started))s] $*" >&2; }

# 1. Wheels, on the host, pinned: the runtime dependencies, the PostgreSQL driver and the
#    ClickHouse HTTP client (the scaled overlay keeps logs in a ClickHouse server); the
#    clickhouse variant adds the in-process engine (chdb-core, ~540 MB).
extras="postgres"
extra_packages=(clickhouse-connect)
[ "$variant" = clickhouse ] && extras="postgres,clickhouse"
step "wheels ($tag)"
"$PYTHON" -m pip wheel --quiet --disable-pip-version-check -c constraints.txt -w "$work/wheels" \
  ".[$extras]" "${extra_packages[@]}"
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps -d "$work/pip" "pip==$PIP_VERSION"

# 2. Debian: minbase plus python3 (the interpreter and its standard library) and the CA list.
step "debootstrap $DEBIAN_SUITE from $DEBIAN_MIRROR"
root=$work/rootfs
debootstrap --variant=minbase --include=python3,ca-certificates "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR" \
  >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
chroot "$root" dpkg-query -W -f='${Package} ${Version}\n' | LC_ALL=C sort >"$work/debian-packages.txt"
if [ "${UPDATE_LOCK:-0}" = 1 ]; then
  { echo "# Debian $DEBIAN_SUITE packages of the image (deploy/image/build.sh; UPDATE_LOCK=1 rewrites it)."
    cat "$work/debian-packages.txt"; } >"$LOCK"
elif ! diff <(grep -v '^#' "$LOCK") "$work/debian-packages.txt" >"$work/debian-drift.diff"; then
  echo "error: $DEBIAN_MIRROR $DEBIAN_SUITE no longer resolves to $LOCK:" >&2
  cat "$work/debian-drift.diff" >&2
  echo "rebuild with UPDATE_LOCK=1 to take these versions (and commit the lock), or set DEBIAN_MIRROR" \
    "to a snapshot.debian.org date that has the locked ones" >&2
  exit 1
fi

# 3. veridiag in a venv of Debian's python3, installed offline from the wheels by pip run
#    from its own wheel: pip is not left in the image.
step "install"
mkdir -p "$root/tmp/build"
cp -r "$work/wheels" "$work/pip" constraints.txt "$root/tmp/build/"
chroot "$root" env -i PATH=/usr/bin:/bin /usr/bin/python3 -m venv --without-pip /opt/veridiag
pip_wheel=$(cd "$work/pip" && ls pip-*.whl)
packages=("veridiag[$extras]" "${extra_packages[@]}")
chroot "$root" env -i PATH=/usr/bin:/bin HOME=/root PIP_NO_CACHE_DIR=1 /opt/veridiag/bin/python "/tmp/build/pip/$pip_wheel/pip" install \
  --quiet --no-index --find-links /tmp/build/wheels -c /tmp/build/constraints.txt --no-compile \
  --disable-pip-version-check "${packages[@]}"

# 4. Trim what the runtime does not read: Debian's package lists and archives, docs (each
#    package's copyright file stays), manuals, translations; tests shipped inside wheels.
step "trim"
rm -rf "$root/tmp/build" "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/var/cache/debconf/*-old \
  "$root"/var/lib/dpkg/*-old "$root"/var/cache/ldconfig/aux-cache "$root"/usr/share/man/* \
  "$root"/usr/share/info/* "$root"/usr/share/locale/* "$root"/usr/share/lintian "$root"/usr/share/bash-completion
find "$root/var/log" -type f -delete
find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
site=$(echo "$root"/opt/veridiag/lib/python3.*/site-packages)
rm -rf "$site"/numpy/*/tests "$site"/numpy/tests "$site"/numpy/_core/include "$site"/numpy/f2py \
  "$site"/numpy/_pyinstaller "$site"/numpy/typing/tests
find "$site" -name '*.pyi' -delete
# apt and perl only install packages, which this image never does again.
chroot "$root" env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin dpkg --purge --force-remove-essential --force-depends \
  apt libapt-pkg6.0 perl-base debconf libgnutls30 >/dev/null 2>&1
# Native code without its symbol tables (wheels ship them unstripped), except what auditwheel
# rewrote with patchelf (the vendored *.libs and modules with an RPATH to them): strip corrupts
# those ("ELF load command address/offset not page-aligned" from numpy's OpenBLAS).
find "$site" -name '*.so*' -type f ! -path '*.libs/*' | while read -r lib; do
  readelf -d "$lib" 2>/dev/null | grep -qE 'R(UN)?PATH' || strip --strip-unneeded "$lib"
done
# Byte code for what a start imports, compiled here with hashes instead of times (reproducible;
# a read-only root could not cache it): the modules `ask` on the demo and the server's, worker's
# and MCP server's start-up load, found by running them once; the rest (~2/3 of the library code,
# e.g. the SDKs' unused types) compiles in memory if it is ever imported.
find "$root" -name __pycache__ -type d -prune -exec rm -rf {} +
mkdir -p "$root/tmp/home"
mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
chroot "$root" env -i PATH=/opt/veridiag/bin:/usr/bin:/bin HOME=/tmp/home VERIDIAG_HOME=/tmp/home LANG=C.UTF-8 \
  sh -c 'veridiag --version && veridiag ask "订单123支付失败，帮我看看是什么原因" && veridiag ask "why is checkout slow since 10:00?" --json &&
    python -c "from veridiag.api import create_app; from veridiag.alerts import worker; import veridiag.mcp_server, uvicorn, psycopg, clickhouse_connect, sqlalchemy.dialects.postgresql.psycopg"' \
  >"$work/warm.log" 2>&1 || { tail -20 "$work/warm.log" >&2; exit 1; }
umount "$root/proc"
trap - EXIT
rm -rf "$root/tmp/home"
imported=$work/imported.txt
find "$root" -path '*/__pycache__/*.pyc' -printf '%h/%f\n' |
  sed -E 's#/__pycache__/([^/.]+)\.cpython-311\.pyc$#/\1.py#' | LC_ALL=C sort >"$imported"
find "$root" -name __pycache__ -type d -prune -exec rm -rf {} +
# (The host's python compiles: the same 3.11 byte code, and the paths recorded are the image's.)
"$PYTHON" -m compileall -q --invalidation-mode unchecked-hash -s "$root" -p / -i "$imported" >/dev/null
echo "byte code for $(wc -l <"$imported") modules" >&2

# 5. The runtime user (fixed ids, so the manifests' runAsUser matches) and its home, a volume.
echo "veridiag:x:$UID_GID:$UID_GID:veridiag:$HOME_DIR:/usr/sbin/nologin" >>"$root/etc/passwd"
echo "veridiag:x:$UID_GID:" >>"$root/etc/group"
echo "veridiag:!:$((SOURCE_DATE_EPOCH / 86400))::::::" >>"$root/etc/shadow"
mkdir -p "$root$HOME_DIR"
chown "$UID_GID:$UID_GID" "$root$HOME_DIR"
rm -f "$root/etc/machine-id" "$root/etc/hostname" "$root/etc/resolv.conf"
: >"$root/etc/hostname"

# 6. The image: one layer, every time SOURCE_DATE_EPOCH.
step "commit"
revision=$(git rev-parse HEAD)
source=${IMAGE_SOURCE:-$(git config --get remote.origin.url || true)}
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
ctr=$(buildah from --quiet scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
mnt=$(buildah mount "$ctr")
tar -C "$root" --numeric-owner -cf - . | tar -C "$mnt" --numeric-owner -xpf -
buildah umount "$ctr" >/dev/null
labels=(
  --label "org.opencontainers.image.title=veridiag"
  --label "org.opencontainers.image.description=A diagnosis assistant that answers only with what the evidence supports."
  --label "org.opencontainers.image.version=$version"
  --label "org.opencontainers.image.revision=$revision"
  --label "org.opencontainers.image.licenses=Apache-2.0"
  --label "org.opencontainers.image.created=$created"
  --label "org.opencontainers.image.base.name=debian:$DEBIAN_SUITE"
  --label "io.veridiag.image.variant=$variant"
)
[ -n "$source" ] && labels+=(--label "org.opencontainers.image.source=$source")
buildah config "${labels[@]}" \
  --env PATH=/opt/veridiag/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env LANG=C.UTF-8 --env PYTHONDONTWRITEBYTECODE=1 --env PYTHONUNBUFFERED=1 \
  --env VERIDIAG_HOME=$HOME_DIR \
  --user "$UID_GID:$UID_GID" --workingdir $HOME_DIR --volume $HOME_DIR --port $PORT/tcp \
  --entrypoint "[\"$ENTRYPOINT\"]" --cmd "[\"serve\", \"--host\", \"0.0.0.0\", \"--port\", \"$PORT\"]" "$ctr"
mkdir -p "$(dirname "$out")"
rm -f "$out"
buildah commit --quiet --omit-history --identity-label=false --timestamp "$SOURCE_DATE_EPOCH" \
  "$ctr" "oci-archive:$out:$tag" >/dev/null
buildah commit --quiet --omit-history --identity-label=false --timestamp "$SOURCE_DATE_EPOCH" \
  "$ctr" "localhost/$tag" >"$work/image-id"

size=$(du -sb "$root" | cut -f1)
step "done: $out ($(du -h "$out" | cut -f1) archive, $((size / 1000000)) MB unpacked), localhost/$tag"
echo "$out"
