#!/usr/bin/env bash
# run.py's ablation (TRLOO vs GRPO, PRS on vs off, 3 seeds each) on an H200 machine without
# network, in under 7 minutes: installs kgym from the carried wheel (.whl/cur/kgym-*.whl, built
# on a CPU machine for python3.12 as bench/README.md says, with libfmt.so.9 beside it) where
# there is one, then runs run.py at its H200 size. Nothing else is needed: the policy is
# warm-started on the machine from the tree's files (warm_start.py, about a minute).
#   bash bench/train_gpu/ablation.sh OUT [run.py arguments, e.g. --commit abc1234 --minutes 18]
# OUT receives six files (a device machine hands back eight at most): results-h200.md (this
# benchmark's results file with its `## ablation` section), ablation-h200.png, ablation.json,
# runs.tar.gz (each run's metrics, config and log), ablation.log and install.log. All but the
# logs are rewritten every 45 s while the runs go, so a run killed from outside leaves its last
# report. Back on the CPU machine: cp OUT/results-h200.md OUT/ablation-h200.png bench/train_gpu/
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: bash bench/train_gpu/ablation.sh OUT [run.py arguments]}
shift
mkdir -p "$out"
wheel=$(ls .whl/cur/kgym-*.whl 2> /dev/null | head -1)
if [[ -n "$wheel" ]]; then
  if [[ -e .whl/cur/libfmt.so.9 ]] && ! ldconfig -p | grep -q 'libfmt\.so\.9 '; then
    cp .whl/cur/libfmt.so.9 /usr/local/lib/ && ldconfig
  fi
  bash scripts/device_build.sh --install "$wheel" > "$out/install.log" 2>&1 || {
    cat "$out/install.log"
    exit 1
  }
fi
# The trainer's issue-51 parts must be there (an older wheel would train without them).
python3 -c "import kgym._core, kgym.train.optimize" || {
  echo "kgym with kgym.train.optimize is not installed: carry .whl/cur (bench/README.md)"
  exit 1
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PYTHONUNBUFFERED=1 python3 bench/train_gpu/run.py --out "$out" --work /tmp/kgym-ablation \
  --record "$out" "$@" 2>&1 | tee -a "$out/ablation.log"
