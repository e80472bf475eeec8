#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer and ThreadSanitizer; both must be clean.
#
#   Scripts/dev/sanitize.sh [address] [thread] [-- extra `swift test` arguments, e.g. --filter Concurrency]
#
# Default: both, ASan first (CI, .ci/run, runs both). Builds go to
# .build-asan and .build-tsan, full logs to .build-{asan,tsan}/sanitize.log; each pass prints
# how long its build and its tests took.
# Exit status: 0 when every requested pass is clean.
#
# Settings (override through the environment):
# - ASan: allocator_may_return_null=1, so an impossible allocation fails the way it does
#   without ASan (malloc returns NULL and Anvil throws) instead of aborting the run;
#   detect_leaks=0, LeakSanitizer being unreliable under the Swift runtime's caches.
# - Swift's crash backtracer is off (it reads memory the sanitizers consider poisoned).
# - TSan: the suppressions written below (TSAN_SUPPRESSIONS), each with its reason.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"

SANITIZERS=()
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    address|thread) SANITIZERS+=("$1") ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "usage: $0 [address] [thread] [-- swift test arguments]" >&2; exit 2 ;;
  esac
  shift
done
[ ${#SANITIZERS[@]} -eq 0 ] && SANITIZERS=(address thread)

export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=0:handle_abort=1}"
# ThreadSanitizer suppressions: none needed so far. Add a line only with the report that
# justifies it (e.g. `race:libopenblas` if OpenBLAS's uninstrumented threads were reported).
TSAN_SUPPRESSIONS=""
mkdir -p .build-tsan
printf '%s\n' "$TSAN_SUPPRESSIONS" > .build-tsan/suppressions.txt
export TSAN_OPTIONS="${TSAN_OPTIONS:-suppressions=$REPO/.build-tsan/suppressions.txt:halt_on_error=0:second_deadlock_stack=1}"

status=0
report=()
for sanitizer in "${SANITIZERS[@]}"; do
  case "$sanitizer" in
    address) scratch=.build-asan ;;
    thread) scratch=.build-tsan ;;
  esac
  mkdir -p "$scratch"
  log="$scratch/sanitize.log"
  echo "== $sanitizer sanitizer: building into $scratch (log: $log)"
  start=$SECONDS
  # Retried when a file changed under the build (someone editing meanwhile).
  for attempt in 1 2 3 4 5; do
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" >"$log" 2>&1 && break
    grep -q "was modified during the build" "$log" || break
    echo "   a source changed during the build; retrying ($attempt)"
    sleep 20
  done
  if ! grep -q "Build complete" "$log"; then
    tail -30 "$log"
    report+=("$sanitizer: BUILD FAILED after $((SECONDS - start)) s")
    status=1
    continue
  fi
  built=$((SECONDS - start))
  echo "   built in ${built} s; testing"
  start=$SECONDS
  swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "${EXTRA[@]}" >>"$log" 2>&1
  code=$?
  tested=$((SECONDS - start))
  # A sanitizer report fails the pass even if the test that caused it passed.
  findings=$(grep -cE '^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|SUMMARY: (Address|Thread)Sanitizer)' "$log")
  summary=$(grep -E '^(✔|✘|━) Test run with' "$log" | tail -1)
  if [ "$code" -ne 0 ] || [ "$findings" -ne 0 ]; then
    status=1
    grep -m3 -A25 -E '^(==[0-9]+==ERROR|WARNING: ThreadSanitizer)' "$log"
    grep -E '^✘' "$log" | head -20
    report+=("$sanitizer: FAILED (exit $code, $findings sanitizer report lines); build ${built} s, tests ${tested} s; $summary")
  else
    report+=("$sanitizer: clean; build ${built} s, tests ${tested} s; $summary")
  fi
done

echo "== summary"
printf '%s\n' "${report[@]}"
exit $status
