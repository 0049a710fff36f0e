#!/usr/bin/env bash
# GPU side of the KernelBench policy benchmark: builds kgym only when it does not import (torch,
# triton, nanobind, scikit-build-core and the C++ headers present, no network), then runs the
# level-2 subset under strict and hybrid and the two level-1 tasks at native sizes. Needs the
# KernelBench task files in .kernelbench/KernelBench (git-ignored: carry `.kernelbench`).
# Results (results-<machine>.md, results.json, pr-<machine>.png) go to $1 (default:
# bench/kernelbench_policy). Extra arguments go to run.py. The whole command stays under
# DEADLINE_S seconds (default 540, build included): run.py starts no evaluation that would end
# past it.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/kernelbench_policy}
deadline=${DEADLINE_S:-540}
mkdir -p "$out"
if ! python3 -c 'import kgym._core' 2>/dev/null; then
  bash scripts/device_build.sh
fi
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
left=$((deadline - SECONDS))
PYTHONUNBUFFERED=1 python3 bench/kernelbench_policy/run.py --kernelbench .kernelbench/KernelBench \
  --device auto --out "$out/results-$gpu.md" --json "$out/results.json" --plot "$out/pr-$gpu.png" \
  --deadline-s "$left" "${@:2}"
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv || true
