#!/usr/bin/env bash
# Rewrites the configuration reference in README.md from the config table
# (`cte-server --config-doc`). With --check, exits 1 when README.md is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CTE_SERVER:-build/cte-server}
doc=$("$bin" --config-doc)
new=$(awk -v doc="$doc" '
  /<!-- config-doc:begin -->/ { print; print doc; skip=1; next }
  /<!-- config-doc:end -->/ { skip=0 }
  !skip { print }' README.md)
if [ "${1:-}" = "--check" ]; then
  if [ "$new" != "$(cat README.md)" ]; then
    echo "README.md's configuration reference is out of date: run tools/gen-config-doc.sh" >&2
    exit 1
  fi
  exit 0
fi
printf '%s\n' "$new" > README.md
