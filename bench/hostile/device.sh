#!/usr/bin/env bash
# GPU side of the hostile corpus: builds kgym on a GPU machine (torch, triton, nanobind,
# scikit-build-core and the C++ headers present, no network), then runs the corpus at GPU sizes in
# one process. The run's files go to $1. Extra arguments go to run.py, e.g.
#   bash bench/hostile/device.sh "$OUT"                      # static screen on
#   bash bench/hostile/device.sh "$OUT" --no-screen --shard 1/2   # runtime layer alone, half
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?an output folder}
bash scripts/device_build.sh
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
PYTHONUNBUFFERED=1 python3 bench/hostile/run.py --out-dir "$out" "${@:2}"
