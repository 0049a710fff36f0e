#!/usr/bin/env bash
# Builds and installs kgym on a GPU machine that has torch, triton, nanobind, scikit-build-core,
# Boost/fmt/CLI11/nlohmann headers but no network and no SQLite headers. The SQLite headers come
# from a Debian package carried in .debs/ (`cd .debs && apt-get download libsqlite3-dev`) and
# unpacked into a private prefix; the runtime library is the machine's own libsqlite3.so.0.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=/tmp/kgym-sysroot
defines=()
if ! [[ -e /usr/include/sqlite3.h ]]; then
  for deb in .debs/libsqlite3-dev_*.deb; do dpkg -x "$deb" "$prefix"; done
  lib=$(ldconfig -p | awk '/libsqlite3.so.0 /{print $NF; exit}')
  defines=(-C "cmake.define.SQLite3_INCLUDE_DIR=$prefix/usr/include"
           -C "cmake.define.SQLite3_LIBRARY=$lib")
fi
python3 -m pip install -q --no-build-isolation --no-deps -C build-dir=/tmp/kgym-build \
  "${defines[@]}" . 2>&1 | tail -20
python3 -c "import kgym._core, torch, triton; print('kgym built;', torch.__version__, triton.__version__)"
