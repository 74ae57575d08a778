#!/bin/sh
# `make bench`: runs the micro-benchmarks and the whole-process harness on the
# given build folder and rewrites docs/performance.md (bench/harness.py).
# Extra harness flags come from BENCH_FLAGS, e.g.
#   BENCH_FLAGS="--soak-seconds 120 --short-window" make bench   (minutes, not an hour)
#   BENCH_FLAGS="--stages micro,scrape --no-soak" make bench
set -eu
build="${1:-build/release}"
root="$(cd "$(dirname "$0")/.." && pwd)"
for tool in wrk /usr/sbin/nginx /usr/bin/prometheus-node-exporter valgrind; do
  command -v "$tool" >/dev/null 2>&1 || { echo "bench: $tool is missing (make setup)" >&2; exit 1; }
done
if [ ! -x "$build/gpuscope_bench" ]; then
  echo "bench: $build/gpuscope_bench is missing (Google Benchmark not found at configure time?)" >&2
  exit 1
fi
# shellcheck disable=SC2086
exec /usr/bin/python3 "$root/bench/harness.py" "$build" \
  --out "$root/docs/performance.md" --json "$build/bench-results.json" ${BENCH_FLAGS:-}
