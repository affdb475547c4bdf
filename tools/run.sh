#!/usr/bin/env bash
# Installs what is missing, builds cte-server and starts it on its embedded default config
# (127.0.0.1:6379, Unix socket /tmp/cte-server.sock, data under ./cte-data). Extra arguments go
# to the server, e.g. tools/run.sh --port 7000.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target cte-server
exec build/cte-server "$@"
