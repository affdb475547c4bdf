#!/usr/bin/env bash
# Installs the Debian packages cte-server builds, tests and benchmarks with (only what is missing).
set -euo pipefail
# libclang-rt-dev: libFuzzer's runtime for the fuzz targets (clang only recommends it);
# python3-dev: the headers python/cte (the Python module) is built against;
# liblua5.1-0-dev, lua-cjson-dev, lua-bitop-dev: scripting (EVAL, FUNCTION) with Redis's Lua 5.1
# and its cjson and bit libraries; libhdf5-dev, python3-numpy: the checkpoint benchmark
pkgs=(build-essential cmake pkg-config clang libclang-rt-dev libuv1-dev libhiredis-dev libyaml-dev
      libjemalloc-dev libcriterion-dev libpcre2-dev redis-server redis-tools python3 python3-dev python3-redis python3-pytest
      liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libhdf5-dev python3-numpy systemd procps)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The Debian redis-server package starts a system instance on 6379; we start our own when needed.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then
  systemctl stop redis-server || true
fi
# Node.js and npm, for the ioredis compatibility test (tests/integration/node). Checked by
# command, not package: a nodesource nodejs provides npm itself and conflicts with Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
