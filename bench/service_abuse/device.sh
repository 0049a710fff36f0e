#!/usr/bin/env bash
# GPU side of the tenants' rows: builds kgym only when it does not import, then runs
# `run.py --part tenants --gpus all` (each hostile job beside 8 honest ones on the GPU's slots,
# the other rows as on a CPU) and writes the tenants section of results-<gpu>.md in $1
# (default: bench/service_abuse). Runs as root (cgroups, tmpfs) with libfaketime where installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/service_abuse}
if ! python3 -c 'import kgym._core' 2>/dev/null; then
  bash scripts/device_build.sh
fi
PYTHONUNBUFFERED=1 timeout 540 python3 bench/service_abuse/run.py --part tenants --gpus all \
  --out-dir "$out" "${@:2}"
