#!/usr/bin/env bash
# Builds cte-server and runs the whole suite: Criterion unit tests, integration tests against the
# real binary (hiredis, redis-cli, redis-py), the differential test against redis-server, the
# systemd unit check, then the unit and integration tests again under ASan+UBSan, then the
# libFuzzer targets for a bounded time (CTE_FUZZ_SECONDS each, default 30).
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
  # -j: the unit tests run beside the long integration_python (its COST starts it first)
  (cd "$dir" && ctest --output-on-failure --timeout 900 -j"$jobs") | tee "$dir.test.log"
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
# libFuzzer targets (tests/fuzz), each a suite: built with clang in build-fuzz, run for
# CTE_FUZZ_SECONDS (default 30, 0 skips them) from a scratch copy of the committed seed corpus,
# with libFuzzer's seed CTE_FUZZ_SEED (default 1, so CI repeats itself; 0 picks a random one).
# A crash leaves its input in build-fuzz/artifacts/; add it to tests/fuzz/corpus/<target>/.
fuzz_wait() { # waits for the fuzzers in pids (names), counting each
  local i
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      tail -1 "$dir/fuzz_${names[$i]}.log"; passed=$((passed+1))
    else
      tail -40 "$dir/fuzz_${names[$i]}.log"; echo "=== fuzz: ${names[$i]} FAILED"; failed=$((failed+1))
    fi
  done
  pids=(); names=()
}
run_fuzz() {
  local secs=${CTE_FUZZ_SECONDS:-30} dir=build-fuzz t
  [ "$secs" -gt 0 ] || return
  echo "=== fuzz: build ($dir)"
  if ! CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCTE_FUZZ=ON >/dev/null ||
     ! cmake --build "$dir" -j"$jobs" --target fuzz_resp_parser fuzz_config fuzz_client_reply fuzz_acl fuzz_hll fuzz_restore fuzz_bus_msg >"$dir.build.log" 2>&1; then
    tail -50 "$dir.build.log"; echo "=== fuzz: BUILD FAILED"; failed=$((failed+1)); return
  fi
  mkdir -p "$dir/artifacts"
  # one target per core at a time, each single-threaded
  local pids=() names=()
  for t in resp_parser config client_reply acl hll restore bus_msg; do
    rm -rf "$dir/corpus-$t"; cp -r "tests/fuzz/corpus/$t" "$dir/corpus-$t"
    echo "=== fuzz: $t for ${secs}s"
    "$dir/tests/fuzz/fuzz_$t" -max_total_time="$secs" -seed="${CTE_FUZZ_SEED:-1}" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$dir/artifacts/$t-" "$dir/corpus-$t" >"$dir/fuzz_$t.log" 2>&1 &
    pids+=($!); names+=("$t")
    if [ "${#pids[@]}" -ge "$jobs" ]; then fuzz_wait; fi
  done
  fuzz_wait
}
run_fuzz
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
