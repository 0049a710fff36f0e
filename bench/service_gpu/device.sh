#!/usr/bin/env bash
# Runs parts of the service benchmark on a GPU machine: builds kgym (leaving its wheel in the
# output folder) or installs a wheel carried in .whl/ from an earlier build, then
# `run.py PARTS`. The parts' JSON, the log and (with `report`) the results file go to $OUT when
# set (the device machine's output folder), else to /tmp/service_gpu.
#   bash bench/service_gpu/device.sh latency precision faults report
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/service_gpu}
mkdir -p "$out"
if ls .whl/kgym-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-deps --force-reinstall .whl/kgym-*.whl 2>&1 | tail -3
else
  bash scripts/device_build.sh --wheel-dir "$out/wheel"
fi
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
set -o pipefail
PYTHONUNBUFFERED=1 python3 bench/service_gpu/run.py "$@" --out-dir "$out" --results-dir "$out" \
  2>&1 | tee "$out/log.txt"
