#!/usr/bin/env bash
# On a GPU machine (see scripts/device_build.sh): build, then the judge's timing precision.
# The results file goes to $1 (default: here); further arguments go to run.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/judge_precision}
bash scripts/device_build.sh
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
PYTHONUNBUFFERED=1 python3 bench/judge_precision/run.py --out "$out/results-$gpu.md" "${@:2}"
