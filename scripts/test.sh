#!/usr/bin/env bash
# The test command: set-up, lint, C++ tests under AddressSanitizer + UBSan, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
VPY=.venv/bin/python
JOBS=$(nproc 2>/dev/null || echo 2)

echo "== lint" >&2
"$VPY" -m ruff check python tests bench
"$VPY" -m ruff format --check python tests bench
git ls-files -- 'cpp/*.cpp' 'cpp/*.hpp' | xargs clang-format --dry-run --Werror
# The import structure (pyproject.toml, [tool.importlinter]), read from the source tree.
PYTHONPATH=python .venv/bin/lint-imports

echo "== C++ tests (ASan + UBSan)" >&2
# A unity build with line tables only (-g1: sanitizer reports keep file and line) compiles in
# about half the time of a per-file build with full debug information.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKGYM_BUILD_TESTS=ON \
  -DKGYM_SANITIZE=ON -DCMAKE_UNITY_BUILD=ON -DCMAKE_CXX_FLAGS_DEBUG=-g1 >/dev/null
cmake --build build-asan -j "$JOBS"
ctest --test-dir build-asan --output-on-failure -j "$JOBS"

echo "== Python tests" >&2
"$VPY" -m pytest -q -n "$JOBS" -p no:cacheprovider --durations=20 tests "$@"
