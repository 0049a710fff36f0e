#!/usr/bin/env bash
# The GPU training run of bench/train_gpu: builds kgym, warm-starts the small policy (warm_start.py,
# with three hacks per task from the hostile corpus), picks the learning rate with the stand-in
# gym on the GPU (stand_in.py: the rate with the highest mean chance of a known solution over the
# second half of the stand-in steps, so that a rate that rises fast and then drifts is not
# preferred), then trains 30 steps with the real gym (config.yaml, that rate), and measures the
# chance of a known solution before and after (exact_chance.py).
#   bash bench/train_gpu/device.sh OUT_DIR
# Environment: MODEL=DIR starts from that policy instead of a new warm start; OPTIMIZER=sgd
# (default adamw); LRS="5e-6 1e-5" the rates to try (default 5e-6 1e-5 2e-5 for AdamW, 0.01
# 0.03 0.1 for SGD); STAND_IN_STEPS (default 12); STEPS the training steps (default config.yaml's);
# TIMING_BUDGET_MS the gym's timing window per evaluation (default config.yaml's).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/train_gpu/run}
mkdir -p "$out"
bash scripts/device_build.sh --wheel-dir /tmp/kgw > "$out/build.log" 2>&1 || {
  tail -20 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
model=${MODEL:-bench/train_gpu/model}
if [[ -z "${MODEL:-}" ]]; then
  PYTHONUNBUFFERED=1 python3 bench/train_gpu/warm_start.py --out "$model" --hostile-per-task 3 \
    2>&1 | tee "$out/warm_start.log"
fi
cp "$model/warm_start.json" "$out/"
optimizer=${OPTIMIZER:-adamw}
if [[ $optimizer == sgd ]]; then default_lrs="0.01 0.03 0.1"; else default_lrs="5e-6 1e-5 2e-5"; fi
# shellcheck disable=SC2086 # LRS is a list
PYTHONUNBUFFERED=1 python3 bench/train_gpu/stand_in.py --model "$model" --lr ${LRS:-$default_lrs} \
  --optimizer "$optimizer" --steps "${STAND_IN_STEPS:-12}" --samples 8 --device cuda \
  --out "$out/stand_in.json" 2> "$out/stand_in.log" | tee "$out/stand_in.txt"
python3 - "$out" "$model" "$optimizer" <<'PY'
import json, os, sys
import yaml
out, model, optimizer = sys.argv[1:]
runs = json.load(open(f"{out}/stand_in.json"))
def late_mean(steps):
    late = steps[len(steps) // 2 :]
    return sum(s["exact_chance"] for s in late) / len(late)
lr = max(runs, key=lambda k: late_mean(runs[k]))
print(f"learning rate chosen by the stand-in gym: {lr}")
config = yaml.safe_load(open("bench/train_gpu/config.yaml"))
config["model"]["path"] = model
config["optim"].update(lr=float(lr), name=optimizer)
if os.environ.get("STEPS"):  # a longer run; `kgym train OUT/config.yaml --out OUT/train` resumes it
    config["run"]["steps"] = int(os.environ["STEPS"])
if os.environ.get("TIMING_BUDGET_MS"):  # each correct evaluation's timing window holds the GPU
    config["gym"]["options"]["timing_budget_ms"] = float(os.environ["TIMING_BUDGET_MS"])
yaml.safe_dump(config, open(f"{out}/config.yaml", "w"))
PY
PYTHONUNBUFFERED=1 python3 -c "import sys; from kgym.cli import main; sys.exit(main())" \
  train "$out/config.yaml" --out "$out/train" 2>&1 | tee "$out/train.log"
# What the run did to the policy, without the sampling draw: the chance of a known solution at
# the start and at the last checkpoint.
python3 bench/train_gpu/exact_chance.py --model "$model" --checkpoint "$out/train/checkpoint.pt" \
  --device cuda --out "$out/exact_chance.json" 2> "$out/exact_chance.log"
