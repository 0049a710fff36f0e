#!/usr/bin/env bash
# GPU side of the job-limits sizing in one command within a budget (default 200 s): the
# KernelBench levels carried in .kernelbench/KernelBench (git-ignored: carry `.kernelbench`),
# each level's 6 heaviest tasks and 2 others at native sizes through one service with four jobs
# per GPU, and beside it the limits' probe in CPU mode. kgym must be installed already (`bash
# scripts/device_build.sh --install WHEEL`). Writes results-<gpu>.md and .json to $1 (default:
# bench/job_limits); further arguments go to run.py and override these (e.g. --budget-s 180,
# --levels 1 2, --heaviest 4).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/job_limits}
if ! python3 -c 'import kgym._core' 2>/dev/null; then
  echo "device.sh: kgym does not import: bash scripts/device_build.sh --install WHEEL first" >&2
  exit 2
fi
PYTHONUNBUFFERED=1 python3 bench/job_limits/run.py --gpus all --heaviest 6 --spread 2 \
  --budget-s 200 --probe --out-dir "$out" "${@:2}"
