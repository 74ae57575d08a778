#!/usr/bin/env bash
# The main job: the GPU status table, then `gpuscope serve` on :9400.
# Uses the real driver when one answers, else a simulated node.
set -euo pipefail
build=${1:-build/release}
bin="$build/gpuscope"
sim=()
if ! "$bin" >/dev/null 2>&1; then
  echo "run: no NVIDIA driver answered; using a simulated node (scenario training-8xh100)"
  sim=(--simulate training-8xh100)
fi
"$bin" "${sim[@]}"
address=${GPUSCOPE_ADDRESS:-:9400}
port=${address##*:}
echo
echo "run: starting gpuscope serve on $address (Ctrl-C stops it); look at"
echo "run:   web page: http://127.0.0.1:$port/   live cards, charts, diagnosis and health"
echo "run:   metrics:  http://127.0.0.1:$port/metrics   Prometheus metrics (dcgm-exporter names + gpuscope_*)"
echo "run:   health:   http://127.0.0.1:$port/health    200 while at least one GPU has fresh data"
echo "run:   $bin query --query-gpu=utilization.gpu,memory.used,temperature.gpu,power.draw --format=csv -l 2 ${sim[*]}"
exec "$bin" serve "${sim[@]}" --address "$address"
