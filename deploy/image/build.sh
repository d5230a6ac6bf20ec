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
umask 022 # the modes of what the build creates must not depend on the caller's umask
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
# A build killed while its root's /proc was mounted (step 4) left it there: unmount it, and never
# delete across a mount.
if mountpoint -q "$work/rootfs/proc"; then umount "$work/rootfs/proc"; fi
rm -rf --one-file-system "$work" && mkdir -p "$work/wheels"

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
  # DEBIAN_DRIFT=warn (CI): Debian's point and security updates move the mirror under the lock
  # whatever the commit; CI still builds and smoke-tests the image and says what moved.
  level=error; [ "${DEBIAN_DRIFT:-fail}" = warn ] && level=warning
  echo "$level: $DEBIAN_MIRROR $DEBIAN_SUITE no longer resolves to $LOCK:" >&2
  cat "$work/debian-drift.diff" >&2
  echo "rebuild with UPDATE_LOCK=1 to take these versions (and commit the lock), or set DEBIAN_MIRROR" \
    "to a snapshot.debian.org date that has the locked ones" >&2
  [ "$level" = warning ] || exit 1
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

# 4. Trim what the runtime does not read. Each step's saving is measured (du of the root) and
#    logged to $work/trim.txt, so a change of inputs that makes one grow shows where.
step "trim"
rm -rf "$root/tmp/build"
site=$(echo "$root"/opt/veridiag/lib/python3.*/site-packages)
stdlib=$(echo "$root"/usr/lib/python3.*)
: >"$work/trim.txt"
root_bytes() { du -sb "$root" | cut -f1; }
last=$(root_bytes)
trimmed() {
  local now
  now=$(root_bytes)
  awk -v what="$1" -v saved="$((last - now))" 'BEGIN { printf "  %-58s -%5.1f MB\n", what, saved / 1e6 }' |
    tee -a "$work/trim.txt" >&2
  last=$now
}
# Packages that only install packages (apt, its keys and TLS stack, debconf, perl) or manage a
# machine the container is not (file systems, mounts, logins and PAM, SELinux policy, systemd,
# init scripts): this image never installs, mounts or logs in again. dpkg and its database stay,
# so image scanners still see every Debian package. What stays is checked below: every ELF file
# must still find its libraries. libuuid1 (Python's _uuid) and the shell, coreutils, grep, sed,
# findutils and tar (`kubectl exec`, `kubectl cp`) stay.
# Two rounds: the maintainer scripts of the first need debconf, perl and the init helpers.
purge=(
  apt libapt-pkg6.0 gpgv debian-archive-keyring libseccomp2 libxxhash0
  libgnutls30 libp11-kit0 libtasn1-6 libidn2-0 libunistring2 libhogweed6 libnettle8
  e2fsprogs libext2fs2 libss2 logsave util-linux util-linux-extra mount bsdutils libmount1
  libsmartcols1 libblkid1 libudev1 login passwd libpam-modules libpam-modules-bin libpam-runtime
  libpam0g libsemanage2 libsemanage-common libsepol2 libaudit1 libaudit-common libcap-ng0 libdb5.3
  libsystemd0 libgcrypt20 libgpg-error0 liblz4-1 sysvinit-utils
  libnsl2 libtirpc3 libtirpc-common libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libkeyutils1
  libcom-err2
)
for round in "${purge[*]}" "adduser debconf init-system-helpers perl-base"; do
  # shellcheck disable=SC2086 # a list of names
  chroot "$root" env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin dpkg --purge --force-remove-essential --force-depends \
    $round >>"$work/purge.log" 2>&1 || { grep -A3 'error' "$work/purge.log" >&2; exit 1; }
done
# Python's modules for the Berkeley DB (libdb5.3, gone with PAM) and the old crypt(3)/NIS
# interfaces (the only users of the Kerberos and Sun RPC libraries purged above): `dbm` falls
# back to its other back ends; nothing here imports crypt or nis.
rm -f "$stdlib"/lib-dynload/_dbm.* "$stdlib"/lib-dynload/_crypt.* "$stdlib"/lib-dynload/nis.*
trimmed "Debian packages for installing and machine admin (dpkg --purge)"
# Left by the installs and the purge: package lists and archives, debconf's database (debconf is
# gone), dpkg's backups, ldconfig's aux-cache (it records inode times, which differ every build),
# logs.
# dpkg's record of what the mirror offered (available), and the library symbol lists and debconf
# templates in its database (they serve building and configuring packages; status and the file
# lists, which scanners read, stay).
rm -rf "$root"/var/cache/apt "$root"/var/lib/apt "$root"/var/cache/debconf "$root"/var/lib/dpkg/*-old \
  "$root"/var/cache/ldconfig/aux-cache "$root"/etc/apt "$root"/var/lib/dpkg/available
find "$root/var/lib/dpkg/info" \( -name '*.symbols' -o -name '*.shlibs' -o -name '*.templates' \) -delete
find "$root/var/log" -type f -delete
trimmed "package caches, debconf database, dpkg's build data, logs"
# Docs (each package's copyright file stays), manuals, translations.
# The "right/" time zones count leap seconds, which nothing here asks for (TZ=right/…).
rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* "$root"/usr/share/lintian \
  "$root"/usr/share/bash-completion "$root"/usr/share/gdb "$root"/usr/share/gcc "$root"/usr/share/zoneinfo/right
find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
trimmed "docs, manuals, translations"
# glibc's iconv modules: Python's codecs are its own, and C.UTF-8 is built into glibc.
rm -rf "$root"/usr/lib/x86_64-linux-gnu/gconv
trimmed "glibc iconv modules (gconv)"
# The standard library's own tests and test extension modules, help() topics, 2to3 and the
# turtle demo; openssl's command-line tool (libssl's configuration, openssl.cnf, stays).
rm -rf "$stdlib"/test "$stdlib"/pydoc_data "$stdlib"/lib2to3 "$stdlib"/turtle.py "$stdlib"/turtledemo \
  "$stdlib"/idlelib "$stdlib"/tkinter "$stdlib"/ensurepip "$stdlib"/lib-dynload/_test*.so \
  "$stdlib"/lib-dynload/_ctypes_test.*.so "$stdlib"/lib-dynload/_xxtestfuzz.*.so "$stdlib"/lib-dynload/xxlimited*.so \
  "$root"/usr/bin/openssl "$root"/usr/bin/c_rehash
trimmed "python3.11 stdlib tests, pydoc_data, lib2to3; openssl CLI"
# Tests and test helpers inside wheels, and what only builds or type-checks (C sources, headers,
# Cython declarations, stubs, numpy's static library); notes for coding agents.
rm -rf "$site"/numpy/*/tests "$site"/numpy/tests "$site"/numpy/_core/include "$site"/numpy/f2py \
  "$site"/numpy/_pyinstaller "$site"/numpy/typing/tests "$site"/numpy/testing "$site"/numpy/distutils \
  "$site"/sqlalchemy/testing "$site"/alembic/testing "$site"/mako/testing "$site"/regex/tests \
  "$site"/jsonschema/tests "$site"/referencing/tests "$site"/jsonschema_specifications/tests \
  "$site"/certifi/tests "$site"/pyarrow/tests "$site"/numpy/_core/lib "$site"/*/.agents
find "$site" \( -name '*.pyi' -o -name '*.c' -o -name '*.h' -o -name '*.pxd' -o -name '*.pyx' -o -name AGENTS.md \
  -o -name CLAUDE.md \) -type f -delete
trimmed "tests, build and type-checking files in wheels"
# numpy's parts veridiag does not use: its anomaly and trace scoring (analysis/anomaly.py,
# analysis/traces.py, the embedded metrics) is array arithmetic, sorting and counting; nothing
# else in the image imports numpy (clickhouse-connect only for its numpy query results).
# _simd is numpy's SIMD test harness.
rm -rf "$site"/numpy/random "$site"/numpy/fft "$site"/numpy/polynomial "$site"/numpy/ma "$site"/numpy/_core/_simd.*
trimmed "numpy: random, fft, polynomial, ma, _simd"
# SQLAlchemy dialects whose drivers the image does not hold (it speaks SQLite and PostgreSQL),
# and pydantic-ai's durable-execution integrations (Temporal, DBOS, Prefect SDKs not installed).
rm -rf "$site"/sqlalchemy/dialects/mssql "$site"/sqlalchemy/dialects/mysql "$site"/sqlalchemy/dialects/oracle \
  "$site"/pydantic_ai/durable_exec/temporal "$site"/pydantic_ai/durable_exec/dbos \
  "$site"/pydantic_ai/durable_exec/prefect
# pydantic-ai's models and providers for SDKs the image does not hold: veridiag builds its models
# itself (agents/llm/providers.py: OpenAI-compatible, or Anthropic and Gemini after importing their
# SDK, which fails first here), and each of these fails to import without its SDK, so removing it
# changes no outcome. Checked at every build: one that imports (its SDK installed) stays.
unusable=$(chroot "$root" env -i PATH=/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1 /opt/veridiag/bin/python -c '
import importlib
for name in ("models.anthropic models.google models.google_decisions models._google_batch models.bedrock "
             "models.groq models.mistral models.cohere models.huggingface models.xai providers.anthropic "
             "providers.google providers.google_cloud providers.bedrock providers.groq providers.mistral "
             "providers.cohere providers.huggingface providers.xai").split():
    try:
        importlib.import_module("pydantic_ai." + name)
    except ImportError:
        print(name.replace(".", "/"))
')
for module in $unusable; do rm -rf "$site/pydantic_ai/$module.py" "$site/pydantic_ai/$module"; done
trimmed "SQLAlchemy dialects, pydantic-ai integrations and models without their SDKs"
# Native code without its symbol tables (wheels ship them unstripped), except what auditwheel
# rewrote with patchelf (the vendored *.libs and modules with an RPATH to them): strip corrupts
# those ("ELF load command address/offset not page-aligned" from numpy's OpenBLAS).
find "$site" \( -name '*.so' -o -name '*.so.*' \) -type f ! -path '*.libs/*' | while read -r lib; do
  readelf -d "$lib" 2>/dev/null | grep -qE 'R(UN)?PATH' || strip --strip-unneeded "$lib"
done
trimmed "symbol tables of native modules (strip)"
# Every ELF file left must still find its libraries (the purge above forced past dependencies);
# listed from the host, as the image's own find might be what lost one. The loader says "not
# found" for a library's dependency, "cannot open shared object" for an executable's.
missing=()
while IFS= read -r -d '' file; do
  listed=$(chroot "$root" /lib64/ld-linux-x86-64.so.2 --list "$file" 2>&1 || true) # fails when one is missing
  if grep -qE 'not found|cannot open shared object' <<<"$listed"; then missing+=("$file"); fi
done < <("$PYTHON" -c '
import os, sys
root = sys.argv[1]
for folder, dirs, files in os.walk(root):
    dirs[:] = sorted(d for d in dirs if os.path.join(folder, d) != os.path.join(root, "proc"))
    for name in sorted(files):
        path = os.path.join(folder, name)
        if not os.path.islink(path) and os.path.isfile(path):
            with open(path, "rb") as elf:
                if elf.read(4) == b"\x7fELF":
                    print("/" + os.path.relpath(path, root), end="\0")
' "$root")
[ ${#missing[@]} = 0 ] || { echo "error: libraries missing after the trim, for: ${missing[*]}" >&2; exit 1; }
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
# Debian's accounts were made with the build day as their last password change: the same day for
# every build of a commit instead.
awk -F: -v OFS=: -v day="$((SOURCE_DATE_EPOCH / 86400))" '$3 != "" { $3 = day } 1' "$root/etc/shadow" \
  >"$work/shadow" && cat "$work/shadow" >"$root/etc/shadow"
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
