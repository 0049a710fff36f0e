#!/usr/bin/env bash
# The GPU training run: builds kgym, warm-starts the small policy (warm_start.py), then trains
# 30 steps with the real gym (config.yaml). Results go to $1 (default bench/train_gpu/run).
#   bash bench/train_gpu/device.sh OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/train_gpu/run}
mkdir -p "$out"
KGYM_WHEEL_DIR=${KGYM_WHEEL_DIR:-/tmp/kgw} bash scripts/device_build.sh > "$out/build.log" 2>&1 || {
  tail -20 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
PYTHONUNBUFFERED=1 python3 bench/train_gpu/warm_start.py --out bench/train_gpu/model --hostile-per-task 3 2>&1 | tee "$out/warm_start.log"
cp bench/train_gpu/model/warm_start.json "$out/"
PYTHONUNBUFFERED=1 python3 -c "import sys; from kgym.cli import main; sys.exit(main())" \
  train bench/train_gpu/config.yaml --out "$out/train" 2>&1 | tee "$out/train.log"
