#!/usr/bin/env bash
# Start a throw-away PostgreSQL cluster on 127.0.0.1 for the store tests and print its URL.
# Usage: eval "$(.ci/postgres.sh start DIR PORT)"; .ci/postgres.sh stop DIR
set -euo pipefail
action=${1:?start|stop}; dir=${2:?data directory}; port=${3:-55432}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "$action" in
  start)
    mkdir -p "$dir"; [ "$(id -u)" = 0 ] && chown postgres "$dir"
    if [ ! -f "$dir/PG_VERSION" ]; then
      as_pg "$bin/initdb" -D "$dir" -U veridiag --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    if ! as_pg "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
      as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -k /tmp -c fsync=off -c max_connections=200" start >/dev/null
    fi
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U veridiag veridiag_test 2>/dev/null || true
    echo "export VERIDIAG_TEST_POSTGRES_URL=postgresql://veridiag@127.0.0.1:$port/veridiag_test"
    ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$dir" -m fast stop >/dev/null || true
    ;;
esac
