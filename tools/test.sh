#!/usr/bin/env bash
# Builds cte-server and runs the whole suite: Criterion unit tests, integration tests against the
# real binary (hiredis, redis-cli, redis-py), the differential test against redis-server, the
# systemd unit check, then the unit and integration tests again under ASan+UBSan.
# Servers are started by the tests themselves on free loopback ports and stopped afterwards.
# Ends with one line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh || exit 1
jobs=$(nproc)
passed=0; failed=0
run_suite() { # name build-dir cmake-args...
  local name=$1 dir=$2; shift 2
  echo "=== $name: build ($dir)"
  if ! cmake -S . -B "$dir" "$@" >/dev/null || ! cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1; then
    tail -50 "$dir.build.log"; echo "=== $name: BUILD FAILED"; failed=$((failed+1)); return
  fi
  echo "=== $name: test"
  (cd "$dir" && ctest --output-on-failure --timeout 900) | tee "$dir.test.log"
  local p f
  # ctest closes with "100% tests passed, 0 tests failed out of 7"
  read -r p f < <(awk '/tests passed, [0-9]+ tests failed out of/ {
      for (i=1;i<=NF;i++) if ($i=="failed") f=$(i-2); print $NF-f, f }' "$dir.test.log")
  passed=$((passed+${p:-0})); failed=$((failed+${f:-1}))
}
run_suite release build -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ "${CTE_SKIP_ASAN:-0}" != 1 ]; then
  run_suite asan build-asan -DCMAKE_BUILD_TYPE=Debug -DCTE_SANITIZE=ON
fi
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
