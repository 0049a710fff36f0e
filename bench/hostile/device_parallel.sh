#!/usr/bin/env bash
# The hostile corpus and the honest set on a GPU machine in N concurrent shards (device time is
# short): builds kgym, runs `run.py --shard k/N` for k = 1..N side by side, and leaves the
# shards' json in $1. Verdicts do not depend on the other shards' GPU work; timings do, and are
# not what this run is for. Merge with `python bench/hostile/merge.py OUT/*.json --machine h200`.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?an output folder}
shards=${2:-4}
bash scripts/device_build.sh
work=$(mktemp -d)
# The device's memory every 3 s while the shards run: concurrent jobs have filled it (77 of 80
# GB with five), and an out-of-memory verdict is read against this log.
(while true; do nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader; sleep 3
 done) > "$out/gpu-memory.log" 2>&1 &
monitor=$!
for k in $(seq 1 "$shards"); do
  PYTHONUNBUFFERED=1 python3 bench/hostile/run.py --out-dir "$work" --shard "$k/$shards" \
    "${@:3}" > "$work/shard-$k.log" 2>&1 &
done
wait $(jobs -p | grep -vx "$monitor") || true
kill "$monitor" 2>/dev/null || true
echo "device memory used, peak: $(sort -n "$out/gpu-memory.log" | tail -1)"
cp "$work"/results-gpu*-*of*.json "$out"/
tail -n 3 "$work"/shard-*.log
