#!/usr/bin/env bash
# On a GPU machine (see scripts/device_build.sh): kgym eval of the built-in generations twice
# (fresh measurements each time), then the share of Fast@1.2 verdicts that differ. OUT=$1.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/eval_gpu/out}
mkdir -p "$out"
python3 -c 'import kgym._core' 2>/dev/null || bash scripts/device_build.sh
python3 bench/eval_gpu/make_generations.py --out "$out/gens.jsonl"
for run in a b; do
  python3 -m kgym.cli eval builtin --generations "$out/gens.jsonl" --turns 3 --jobs 8 \
    --out "$out/run-$run" "${@:2}"
done
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed "s/NVIDIA //; s/ .*//" | tr "A-Z" "a-z")
python3 bench/eval_gpu/flips.py "$out/run-a" "$out/run-b" --p 1.2 --results "$out/results-$gpu.md"
cp -r "$out/run-a/plots" "$out/plots-$gpu"
