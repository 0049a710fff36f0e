#!/usr/bin/env bash
# GPU side of the job-limits sizing: builds kgym only when it does not import, then evaluates the
# KernelBench levels given (default: 1 2 3) at native sizes through one service with four jobs
# per GPU. Needs the KernelBench task files in .kernelbench/KernelBench (git-ignored: carry
# `.kernelbench`). Results go to $1 (default: bench/job_limits) as results-h200-level<L>.md and
# .json. Extra arguments go to run.py (e.g. --levels 3 --limit 20: one level per command keeps
# each within the deadline). The whole command stays under KGYM_BENCH_DEADLINE_S seconds
# (default 540, build included): run.py submits nothing after it.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/job_limits}
deadline=${KGYM_BENCH_DEADLINE_S:-540}
mkdir -p "$out"
if ! python3 -c 'import kgym._core' 2>/dev/null; then
  bash scripts/device_build.sh
fi
left=$((deadline - SECONDS - 120))  # the jobs already submitted finish within the rest
PYTHONUNBUFFERED=1 python3 bench/job_limits/run.py --kernelbench .kernelbench/KernelBench \
  --gpus all --candidates --machine h200 --out-dir "$out" --deadline-s "$left" "${@:2}"
