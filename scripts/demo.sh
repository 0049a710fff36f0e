#!/usr/bin/env bash
# The main job: set-up, then check every built-in solution and the deliberately wrong candidates.
# Extra arguments go to `kgym demo` (e.g. --json, --tasks 01_relu,06_softmax, --baseline both).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/kgym demo "$@"
