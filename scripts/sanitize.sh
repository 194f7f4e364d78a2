#!/usr/bin/env bash
# The sanitizer builds and the fuzz pass (docs/testing.md, "Sanitizers and
# fuzzing"). Steps, all by default, or the ones named:
#
#   asan   clang build with AddressSanitizer, UndefinedBehaviorSanitizer and the
#          fuzzer's coverage (build-asan, RTSQL_FUZZ=ON); runs the unit tests, the
#          SQL logic tests and the fuzz corpus replays in it. Not the end-to-end
#          tests: they measure real processes at full speed. Nor the benchmark
#          drivers (RTSQL_BENCH=OFF): nothing runs them under a sanitizer.
#   fuzz   each fuzz target of build-asan for RTSQL_FUZZ_SECONDS (default 60) or
#          RTSQL_FUZZ_RUNS executions (default 100000), whichever comes first,
#          from its seed corpus, RTSQL_JOBS targets at a time. A crash fails the
#          step; the input that caused it is kept in RTSQL_FUZZ_ARTIFACTS
#          (default build-asan/fuzz-artifacts).
#   tsan   clang build with ThreadSanitizer (build-tsan) of the executor and
#          server unit tests only, and runs them.
#
# Environment: RTSQL_JOBS (default 2), RTSQL_CXX (default clang++-14).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${RTSQL_JOBS:-2}"
CXX_CLANG="${RTSQL_CXX:-clang++-14}"
ASAN_BUILD="${ROOT}/build-asan"
TSAN_BUILD="${ROOT}/build-tsan"
FUZZ_SECONDS="${RTSQL_FUZZ_SECONDS:-60}"
FUZZ_RUNS="${RTSQL_FUZZ_RUNS:-100000}"
FUZZ_ARTIFACTS="${RTSQL_FUZZ_ARTIFACTS:-${ASAN_BUILD}/fuzz-artifacts}"
SUPP="${ROOT}/tests/sanitizers"

# ASan's memmem wrapper checks the whole haystack on every call, which makes a
# search loop over a large value quadratic (minutes for the tests of long
# values). Only memmem's own reads go unchecked; every range rtsql passes it
# is a std::string or string_view that the rest of the code checks.
# Halt at the first report of any sanitizer, with a stack trace. LeakSanitizer
# runs at every exit; its suppressions (third-party leaks only) say why each is
# there.
export ASAN_OPTIONS="detect_leaks=1:intercept_memmem=0:abort_on_error=0:detect_stack_use_after_return=0:strict_init_order=1"
export LSAN_OPTIONS="suppressions=${SUPP}/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="suppressions=${SUPP}/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
# The sanitizer runs use the embedded broker only.
unset RTSQL_KAFKA_BOOTSTRAP

configure() {  # build dir, extra cmake arguments...
  local dir="$1"
  shift
  if [ ! -f "${dir}/build.ninja" ]; then
    # -O1 and line tables: what the sanitizers' own documentation recommends
    # for readable reports, and about 15% less compile time than -O2 -g.
    cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$CXX_CLANG" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" "$@"
  fi
}

asan() {
  echo "sanitize: ASan+UBSan build (${ASAN_BUILD})"
  configure "$ASAN_BUILD" -DRTSQL_FUZZ=ON -DRTSQL_BENCH=OFF
  cmake --build "$ASAN_BUILD" -j "$JOBS"
  echo "sanitize: unit, SQL logic and fuzz replay tests under ASan+UBSan"
  ctest --test-dir "$ASAN_BUILD" --output-on-failure -j "$JOBS" -R '^(unit|sql|fuzz)\.'
}

fuzz_one() {  # fuzz target binary; returns non-zero on a crash
  local bin="$1" name work log status=0
  name="$(basename "$bin" _fuzz)"
  log="${FUZZ_ARTIFACTS}/${name}.log"
  # New inputs go to a scratch directory, never into the seed corpus.
  work="$(mktemp -d)"
  if "$bin" -max_total_time="$FUZZ_SECONDS" -runs="$FUZZ_RUNS" -print_final_stats=1 \
      -artifact_prefix="${FUZZ_ARTIFACTS}/${name}-" "$work" "${ROOT}/tests/fuzz/corpus/${name}" \
      >"$log" 2>&1; then
    echo "sanitize: fuzz ${name}: $(awk '/^stat::number_of_executed_units/ {print $2}' "$log") runs, no crash"
  else
    echo "sanitize: fuzz ${name} FAILED; the log and the input are in ${FUZZ_ARTIFACTS}:"
    tail -n 60 "$log"
    status=1
  fi
  rm -rf "$work"
  return "$status"
}

fuzz() {
  echo "sanitize: fuzz pass, ${FUZZ_SECONDS} s or ${FUZZ_RUNS} runs per target, ${JOBS} at a time"
  configure "$ASAN_BUILD" -DRTSQL_FUZZ=ON -DRTSQL_BENCH=OFF
  cmake --build "$ASAN_BUILD" -j "$JOBS"
  mkdir -p "$FUZZ_ARTIFACTS"
  local failed=0 bin pid
  local -a batch=()
  for bin in "$ASAN_BUILD"/tests/fuzz/*_fuzz; do
    fuzz_one "$bin" &
    batch+=("$!")
    if [ ${#batch[@]} -ge "$JOBS" ]; then
      for pid in "${batch[@]}"; do wait "$pid" || failed=1; done
      batch=()
    fi
  done
  for pid in "${batch[@]}"; do wait "$pid" || failed=1; done
  return "$failed"
}

tsan() {
  echo "sanitize: TSan build of the executor and server tests (${TSAN_BUILD})"
  configure "$TSAN_BUILD" -DRTSQL_TSAN=ON
  cmake --build "$TSAN_BUILD" -j "$JOBS" --target rtsql_executor_tests rtsql_server_tests
  # privileges_test and cluster_group_test are left out: the Kafka clients
  # they create crash inside TSan's own allocator on a librdkafka thread
  # (Debian's librdkafka is not built with TSan). They run in the plain and
  # ASan builds.
  ctest --test-dir "$TSAN_BUILD" --output-on-failure -j "$JOBS" -R '^unit\.(executor|server)\.' \
    -E '^unit\.server\.(privileges_test|cluster_group_test)$'
}

steps=("$@")
if [ ${#steps[@]} -eq 0 ]; then steps=(asan fuzz tsan); fi
for step in "${steps[@]}"; do
  case "$step" in
    asan | fuzz | tsan) "$step" ;;
    *) echo "sanitize: unknown step '${step}' (asan, fuzz, tsan)" >&2; exit 2 ;;
  esac
done
