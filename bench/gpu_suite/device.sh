#!/usr/bin/env bash
# Builds kgym on a GPU machine that has torch, triton, nanobind, scikit-build-core and the C++
# headers but no network, then runs the suite benchmark; results go to $1 (default: here).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/gpu_suite}
bash scripts/device_build.sh
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
PYTHONUNBUFFERED=1 python3 bench/gpu_suite/run.py --out-dir "$out" --json "$out/suite.json" "${@:2}"
