#!/usr/bin/env bash
# Installs everything kgym needs on a Debian/Ubuntu machine, idempotently: the C++ toolchain and
# libraries (apt), a virtual environment in .venv with torch, triton and kgym itself (pip).
#
#   KGYM_TORCH_SPEC   the torch requirement used when no torch is importable (default below:
#                     a CPU build where one is provided locally; set e.g. "torch" for CUDA).
#   --no-apt          skip the apt step (packages installed by other means).
set -euo pipefail
cd "$(dirname "$0")/.."
apt=1
for arg in "$@"; do
  case "$arg" in
    --no-apt) apt=0 ;;
    *) echo "setup.sh: unknown argument $arg (known: --no-apt)" >&2; exit 2 ;;
  esac
done

APT_PACKAGES=(cmake ninja-build g++ python3-venv python3-dev nlohmann-json3-dev libcli11-dev
              libfmt-dev libgtest-dev libgmock-dev clang-format
              libboost-dev libsqlite3-dev libssl-dev libseccomp-dev
              redis-server libhiredis-dev
              libfaketime openssl)  # tests: clock jumps without moving the clock; TLS certificates
if [[ "$apt" == 1 ]]; then
  missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    echo "setup: installing Debian packages: ${missing[*]}" >&2
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

PY=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv (it sees system packages, so a machine's own torch is reused)" >&2
  "$PY" -m venv --system-site-packages .venv
fi
VPY=.venv/bin/python
PIP=("$VPY" -m pip install -q --disable-pip-version-check)

if ! "$VPY" -c "import torch" 2>/dev/null; then
  spec=${KGYM_TORCH_SPEC:-torch==2.13.0}
  echo "setup: installing $spec" >&2
  "${PIP[@]}" "$spec"
fi
if ! "$VPY" -c "import triton" 2>/dev/null; then
  echo "setup: installing triton" >&2
  "${PIP[@]}" "triton>=3.2"
fi
"$VPY" -c "import nanobind, scikit_build_core" 2>/dev/null ||
  "${PIP[@]}" "scikit-build-core>=0.10" "nanobind>=2.4"

echo "setup: building and installing kgym (C++ core, bindings, CLI)" >&2
"${PIP[@]}" --no-build-isolation ".[test]"
echo "setup: ready ($("$VPY" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'))" >&2
