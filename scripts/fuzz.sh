#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for SECONDS each, starting from
# the checked-in seeds (tests/fuzz/corpus/<target>/, read only) plus what
# earlier runs found (BUILD/runs/<target>/corpus). A crash, leak, timeout or
# out-of-memory fails the run; the input is kept in BUILD/runs/<target>/ and
# the command to reproduce it is printed. Fix the bug, then add the input to
# tests/fuzz/corpus/<target>/ so the suite replays it.
#
# Usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]
set -euo pipefail

build=${1:?usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(counters web_config scenario settings escaper otlp prom_answer agent_answer
           resource_slices snapshot_answer)
fi

failed=()
for target in "${targets[@]}"; do
  binary="$build/${target}_fuzz"
  seeds="$root/tests/fuzz/corpus/$target"
  work="$build/runs/$target"
  mkdir -p "$work/corpus"
  echo "fuzz: $target for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$seeds" \
      >"$work/log" 2>&1; then
    tail -n 40 "$work/log"
    echo "fuzz: $target FAILED; reproduce with: $binary $work/<crash-file>" >&2
    failed+=("$target")
  else
    grep -E '^stat::number_of_executed_units|^Done' "$work/log" | tr '\n' ' ' || true
    echo
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets clean for ${seconds}s each"
