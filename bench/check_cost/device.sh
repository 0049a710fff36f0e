#!/usr/bin/env bash
# On a GPU machine (see scripts/device_build.sh): builds this tree and a baseline's tree
# (BASE, default build-base/: `git archive COMMIT | tar x -C build-base`, its .debs/ beside),
# installs the baseline into a venv of its own, then runs run.py with both. Wheels go to
# $1/whl and $1/whl-base, to install again elsewhere without rebuilding.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?an output folder}
base=${BASE:-build-base}
(cd "$base" && bash scripts/device_build.sh --wheel-dir "$out/whl-base" | tail -1)
rm -rf /tmp/kgym-build
bash scripts/device_build.sh --wheel-dir "$out/whl" | tail -1
python3 -m venv --system-site-packages /tmp/kgym-base
/tmp/kgym-base/bin/python -m pip install -q --no-deps --force-reinstall "$out"/whl-base/kgym-*.whl
PYTHONUNBUFFERED=1 python3 bench/check_cost/run.py --a kgym --b /tmp/kgym-base/bin/kgym "${@:2}"
