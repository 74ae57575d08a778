#!/usr/bin/env bash
# The real-driver check (issue 13): on a machine with NVIDIA GPUs and
# nvidia-smi, puts gpuscope beside nvidia-smi and writes both into OUT:
#   query.csv / smi-query.csv   every --query-gpu field both tools know, from
#                               one call each, nvidia-smi read before and after
#                               gpuscope so volatile fields can be told apart
#   query-diff.txt              per field: equal, volatile (nvidia-smi changed
#                               between its own two reads) or DIFFERENT
#   metrics.prom, smi-q.txt     /metrics of `gpuscope serve` and `nvidia-smi -q`
#   summary.txt, health.txt, diagnose.txt, versions.txt
# Installs nothing: DIST is a self-contained copy from scripts/dist.sh.
#
#   scripts/real_gpu_check.sh [DIST] [OUT]    (defaults: dist/gpuscope, $OUT or real-gpu-out)
set -uo pipefail
dist=${1:-dist/gpuscope}
out=${2:-${OUT:-real-gpu-out}}
gs="$dist/gpuscope"
mkdir -p "$out"
command -v nvidia-smi >/dev/null || { echo "real_gpu_check: no nvidia-smi here" >&2; exit 1; }

{ nvidia-smi --version; "$gs" --version; uname -a; ldd --version 2>&1 | sed -n 1p; } >"$out/versions.txt" 2>&1

# Field names both tools accept: both helps quote each name at the start of a
# line (aliases follow it on the line).
nvidia-smi --help-query-gpu | grep -oE '^"[a-z0-9_.]+"' | tr -d '"' | sort -u >"$out/smi-fields.txt"
"$gs" query --help-query-gpu | grep -oE '^"[a-z0-9_.]+"' | tr -d '"' | sort -u \
  >"$out/gpuscope-fields.txt"
fields=$(comm -12 "$out/smi-fields.txt" "$out/gpuscope-fields.txt" | grep -vx timestamp | paste -sd, -)
comm -23 "$out/smi-fields.txt" "$out/gpuscope-fields.txt" >"$out/fields-only-in-smi.txt"

nvidia-smi --query-gpu="$fields" --format=csv >"$out/smi-query.csv" 2>&1
"$gs" query --query-gpu="$fields" --format=csv >"$out/query.csv" 2>"$out/query.stderr"
nvidia-smi --query-gpu="$fields" --format=csv >"$out/smi-query-after.csv" 2>&1
if command -v python3 >/dev/null; then
  python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
read = lambda name: list(csv.reader(open(f"{out}/{name}"), skipinitialspace=True))
smi, gs, smi2 = read("smi-query.csv"), read("query.csv"), read("smi-query-after.csv")
lines, counts = [], {"equal": 0, "volatile": 0, "DIFFERENT": 0}
if smi[0] != gs[0]:
    lines.append(f"HEADER DIFFERENT\n  nvidia-smi: {smi[0]}\n  gpuscope:   {gs[0]}")
for row in range(1, min(len(smi), len(gs), len(smi2))):
    for col, name in enumerate(smi[0]):
        a, b, a2 = smi[row][col], gs[row][col] if col < len(gs[row]) else "<missing>", smi2[row][col]
        kind = "equal" if a == b or a2 == b else ("volatile" if a != a2 else "DIFFERENT")
        counts[kind] += 1
        if kind != "equal":
            lines.append(f"gpu {row - 1} {name}: {kind}: nvidia-smi {a!r} then {a2!r}, gpuscope {b!r}")
if len(smi) != len(gs):
    lines.append(f"ROWS DIFFERENT: nvidia-smi {len(smi) - 1}, gpuscope {len(gs) - 1}")
open(f"{out}/query-diff.txt", "w").write(
    f"{counts}\n" + "\n".join(lines) + "\n")
print("query fields:", counts)
PY
else
  diff "$out/smi-query.csv" "$out/query.csv" >"$out/query-diff.txt"
fi

nvidia-smi -q >"$out/smi-q.txt" 2>&1
"$gs" >"$out/summary.txt" 2>&1
"$gs" health >"$out/health.txt" 2>&1
"$gs" serve --address 127.0.0.1:19400 --profile full >"$out/serve.log" 2>&1 &
serve=$!
for _ in $(seq 1 30); do
  sleep 1
  curl -sf http://127.0.0.1:19400/metrics >"$out/metrics.prom" 2>/dev/null &&
    grep -q '^DCGM_FI_DEV_POWER_USAGE' "$out/metrics.prom" && break
done
sleep 3
curl -sf http://127.0.0.1:19400/metrics >"$out/metrics.prom"
curl -sf http://127.0.0.1:19400/api/v1/diagnosis >"$out/api-diagnosis.json"
kill "$serve"; wait "$serve"
timeout 90 "$gs" diagnose --window 40s >"$out/diagnose.txt" 2>&1
echo "real_gpu_check: results in $out"
