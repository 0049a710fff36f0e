#!/usr/bin/env bash
# kgym eval of the same candidates as device.sh on a machine without a GPU (Triton's
# interpreter, sizes scaled by 64: verdicts only, no timing), then results-cpu.md beside this
# file from the two reports. Needs KernelBench's tasks in .kernelbench/KernelBench. OUT=$1.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/kernelbench-cpu}
mkdir -p "$out"
kb=.kernelbench/KernelBench
python3 bench/kernelbench_compare/make_generations.py --out "$out/gens.jsonl"
kgym eval "$kb" --levels 2 --tasks 'level2/12_*' 'level2/14_*' 'level2/1_Conv2D*' 'level2/29_*' \
  'level2/40_*' 'level2/63_*' 'level2/76_*' 'level2/86_*' 'level2/9_Matmul*' \
  --generations "$out/gens.jsonl" --samples 3 --k 1,3 --turns 1 --device cpu --cpu-scale 64 \
  --trials 2 --jobs 2 --out "$out/level2"
kgym eval "$kb" --levels 1 --tasks level1/19_ReLU level1/23_Softmax \
  --generations "$out/gens.jsonl" --turns 1 --device cpu --cpu-scale 64 --trials 2 \
  --out "$out/level1"
{
  echo "# kgym eval on KernelBench's own files (CPU: verdicts only)"
  echo
  echo "- command: \`bash bench/kernelbench_compare/cpu.sh $out\`"
  echo "- machine: $(uname -m), $(nproc) cores, no GPU"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  for level in 2 1; do
    echo "## Level $level"
    echo
    sed 's/^#/###/' "$out/level$level/report.md"
    echo
  done
} > bench/kernelbench_compare/results-cpu.md
