#!/usr/bin/env bash
# Backfill the demo metrics (and tests/prometheus_histogram.py's buckets) into a real Prometheus (Debian's package) on 127.0.0.1 and
# print its URL. Usage: eval "$(.ci/prometheus.sh start DIR PORT)"; .ci/prometheus.sh stop DIR
set -euo pipefail
action=${1:?start|stop}; dir=${2:?work directory}; port=${3:-59090}
ready() { python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/-/ready', timeout=2)" >/dev/null 2>&1; }
case "$action" in
  start)
    mkdir -p "$dir"
    if ! ready; then
      rm -rf "$dir/tsdb" "$dir/home"
      VERIDIAG_HOME="$dir/home" .venv/bin/veridiag data export-openmetrics "$dir/demo.om" >&2
      # plus a latency histogram (the demo has no buckets) for histogram_quantile
      .venv/bin/python -m tests.prometheus_histogram "$dir/demo.om"
      promtool tsdb create-blocks-from openmetrics "$dir/demo.om" "$dir/tsdb" >"$dir/promtool.log" 2>&1
      printf 'global:\n  scrape_interval: 1m\nscrape_configs: []\n' >"$dir/prometheus.yml"
      nohup prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
        --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$port" \
        >"$dir/prometheus.log" 2>&1 &
      echo $! >"$dir/prometheus.pid"
      for _ in $(seq 1 60); do
        ready && break
        sleep 0.5
      done
      ready || { cat "$dir/prometheus.log" >&2; exit 1; }
    fi
    echo "export VERIDIAG_TEST_PROMETHEUS_URL=http://127.0.0.1:$port"
    ;;
  stop)
    [ -f "$dir/prometheus.pid" ] && kill "$(cat "$dir/prometheus.pid")" 2>/dev/null || true
    ;;
esac
