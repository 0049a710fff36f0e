#!/usr/bin/env bash
# The pool's benchmark on a GPU machine (run.py --gpu) that has neither redis-server nor the
# hiredis headers and no network: both come from Debian packages carried in .debs/
#   cd .debs && apt-get download redis-server redis-tools libjemalloc2 liblzf1 libhiredis-dev
# redis-server and redis-cli are unpacked into a private prefix and reached through wrappers
# that add the prefix's libraries (jemalloc, lzf) for them alone; scripts/device_build.sh links
# hiredis statically. Results: results-<gpu>.md, results.json, throughput-<gpu>.png in $1.
#   bash bench/pool/device.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bench/pool}
mkdir -p "$out"
if ! command -v redis-server > /dev/null; then
  prefix=/tmp/kgym-redis
  for deb in .debs/redis-server_*.deb .debs/redis-tools_*.deb .debs/libjemalloc2_*.deb \
             .debs/liblzf1_*.deb; do
    dpkg -x "$deb" "$prefix"
  done
  mkdir -p "$prefix/bin"
  for tool in redis-server redis-cli; do
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' \
      "$prefix/usr/lib/x86_64-linux-gnu" "$prefix/usr/bin/$tool" > "$prefix/bin/$tool"
    chmod +x "$prefix/bin/$tool"
  done
  export PATH="$prefix/bin:$PATH"
fi
redis-server --version
bash scripts/device_build.sh --wheel-dir /tmp/kgw > "$out/build.log" 2>&1 || {
  tail -20 "$out/build.log"; exit 1; }
kgym-gym worker --help > /dev/null || { echo "kgym-gym was built without the pool"; exit 1; }
python3 bench/pool/run.py --gpu --jobs 8 --repeats 1 --latency-jobs 4 --out-dir "$out" \
  --save "$out/results.json"
