#!/usr/bin/env bash
# On a GPU machine: installs this tree's wheel and a baseline's into venvs of their own, then
# runs run.py with both. The wheels are built on a CPU machine for the GPU machine's Python
# (bench/README.md): CUR (default .whl/cur/kgym-*.whl) and BASE (default .whl/base/kgym-*.whl).
# The baseline's venv sees the machine's torch and triton through a .pth file: a venv made by
# the machine's python3, itself a venv, would otherwise see the base interpreter's packages only.
#   bash bench/check_cost/device.sh --label-a HEAD --label-b COMMIT --shards 4
set -euo pipefail
cd "$(dirname "$0")/../.."
cur=${CUR:-$(ls .whl/cur/kgym-*.whl)}
base=${BASE:-$(ls .whl/base/kgym-*.whl)}
bash scripts/device_build.sh --install "$cur"
venv=/tmp/kgym-base
rm -rf "$venv"
python3 -m venv "$venv"
python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" \
  > "$venv/lib/python3.12/site-packages/machine_site.pth"
"$venv/bin/python" -m pip install -q --no-deps --ignore-installed "$base"
PYTHONUNBUFFERED=1 python3 bench/check_cost/run.py --a kgym --b "$venv/bin/kgym" "$@"
