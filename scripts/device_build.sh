#!/usr/bin/env bash
# Builds and installs kgym on a GPU machine that has torch, triton, nanobind, scikit-build-core,
# Boost/fmt/CLI11/nlohmann headers but no network and no SQLite or OpenSSL headers. The headers
# come from Debian packages carried in .debs/ (`cd .debs && apt-get download libsqlite3-dev
# libssl-dev libseccomp-dev`) unpacked into a private prefix; the runtime libraries are the
# machine's own (libsqlite3.so.0, libcrypto.so.3, libssl.so.3, libseccomp.so.2: each keeps its ABI across
# these versions). hiredis, for the worker pool, is linked from the static archive of a carried
# libhiredis-dev (`apt-get download libhiredis-dev`) when the machine has no hiredis headers;
# without either, kgym-gym is built without the pool, as CMake says.
#
#   --wheel-dir DIR   also leave the built wheel in DIR (to install it again elsewhere with
#                     `pip install --no-deps DIR/kgym-*.whl`, without rebuilding).
#   --install F       install the wheel F (built by an earlier call, or on another machine for
#                     this Python: `pip wheel` with python3.12) instead of building: seconds
#                     instead of minutes of device time.
set -euo pipefail
cd "$(dirname "$0")/.."
wheel_dir="" install=""
while (($#)); do
  case "$1" in
    --wheel-dir) wheel_dir=$2; shift 2 ;;
    --install) install=$2; shift 2 ;;
    *) echo "device_build.sh: unknown argument $1 (known: --wheel-dir DIR, --install F)" >&2; exit 2 ;;
  esac
done
if [[ -n "$install" ]]; then
  python3 -m pip install -q --no-deps --force-reinstall "$install" 2>&1 | tail -5
  python3 -c "import kgym._core, torch, triton; print('kgym installed;', torch.__version__, triton.__version__)"
  exit 0
fi
prefix=/tmp/kgym-sysroot
defines=()
if ! [[ -e /usr/include/sqlite3.h ]]; then
  for deb in .debs/libsqlite3-dev_*.deb; do dpkg -x "$deb" "$prefix"; done
  lib=$(ldconfig -p | awk '/libsqlite3.so.0 /{print $NF; exit}')
  defines+=(-C "cmake.define.SQLite3_INCLUDE_DIR=$prefix/usr/include"
            -C "cmake.define.SQLite3_LIBRARY=$lib")
fi
if ! [[ -e /usr/include/openssl/evp.h ]]; then
  for deb in .debs/libssl-dev_*.deb; do dpkg -x "$deb" "$prefix"; done
  lib=$(ldconfig -p | awk '/libcrypto.so.3 /{print $NF; exit}')
  ssl_lib=$(ldconfig -p | awk '/libssl.so.3 /{print $NF; exit}')  # TLS on the HTTP front door
  # Debian puts opensslconf.h/configuration.h under the multiarch include directory.
  cp -rn "$prefix"/usr/include/x86_64-linux-gnu/openssl/. "$prefix/usr/include/openssl/" || true
  defines+=(-C "cmake.define.OPENSSL_INCLUDE_DIR=$prefix/usr/include"
            -C "cmake.define.OPENSSL_CRYPTO_LIBRARY=$lib"
            -C "cmake.define.OPENSSL_SSL_LIBRARY=$ssl_lib"
            -C "cmake.define.OPENSSL_ROOT_DIR=$prefix/usr")
fi
if ! [[ -e /usr/include/seccomp.h ]]; then
  for deb in .debs/libseccomp-dev_*.deb; do dpkg -x "$deb" "$prefix"; done
  lib=$(ldconfig -p | awk '/libseccomp.so.2 /{print $NF; exit}')
  defines+=(-C "cmake.define.SECCOMP_INCLUDE_DIR=$prefix/usr/include"
            -C "cmake.define.SECCOMP_LIBRARY=$lib")
fi
if ! [[ -e /usr/include/hiredis/hiredis.h ]] && compgen -G ".debs/libhiredis-dev_*.deb" > /dev/null; then
  for deb in .debs/libhiredis-dev_*.deb; do dpkg -x "$deb" "$prefix"; done
  defines+=(-C "cmake.define.HIREDIS_INCLUDE_DIR=$prefix/usr/include"
            -C "cmake.define.HIREDIS_LIBRARY=$prefix/usr/lib/x86_64-linux-gnu/libhiredis.a")
fi
if [[ -n "$wheel_dir" ]]; then
  mkdir -p "$wheel_dir"
  python3 -m pip wheel -q --no-build-isolation --no-deps -C build-dir=/tmp/kgym-build \
    "${defines[@]}" -w "$wheel_dir" . 2>&1 | tail -60
  python3 -m pip install -q --no-deps --force-reinstall "$wheel_dir"/kgym-*.whl 2>&1 | tail -5
else
  python3 -m pip install -q --no-build-isolation --no-deps -C build-dir=/tmp/kgym-build \
    "${defines[@]}" . 2>&1 | tail -60
fi
python3 -c "import kgym._core, torch, triton; print('kgym built;', torch.__version__, triton.__version__)"
