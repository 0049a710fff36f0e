#!/usr/bin/env bash
# On a GPU machine (kgym installed, see scripts/device_build.sh; KernelBench's src/ and
# KernelBench/ at commit 423217d in .kernelbench/; KernelBench's evaluation's own dependencies
# as wheels in .whl/kb): kgym eval of the KernelBench subsets (make_generations.py), then
# KernelBench's own evaluation of the same candidates, then the side-by-side table. OUT=$1.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/kernelbench_compare/out}
mkdir -p "$out"
python3 -c 'import pydantic, requests, dotenv, tqdm' 2>/dev/null ||
  python3 -m pip install -q --no-index --find-links .whl/kb pydantic requests python-dotenv tqdm
kb=.kernelbench/KernelBench
python3 bench/kernelbench_compare/make_generations.py --out "$out/gens.jsonl"
python3 -m kgym.cli eval "$kb" --levels 2 --tasks 'level2/12_*' 'level2/14_*' \
  'level2/1_Conv2D*' 'level2/29_*' 'level2/40_*' 'level2/63_*' 'level2/76_*' 'level2/86_*' \
  'level2/9_Matmul*' --generations "$out/gens.jsonl" --samples 3 --k 1,3 --turns 1 \
  --jobs 8 --out "$out/kgym-level2"
python3 -m kgym.cli eval "$kb" --levels 1 --tasks level1/19_ReLU level1/23_Softmax \
  --generations "$out/gens.jsonl" --turns 1 --jobs 2 --out "$out/kgym-level1"
python3 bench/kernelbench_compare/kernelbench_eval.py --src .kernelbench/src --tasks "$kb" \
  --generations "$out/gens.jsonl" --out "$out/kernelbench.jsonl"
python3 bench/kernelbench_compare/compare.py "$out/kgym-level2" "$out/kgym-level1" \
  --kernelbench "$out/kernelbench.jsonl" --out "$out/compare"
