#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer and ThreadSanitizer; both must be clean.
#
#   Scripts/dev/sanitize.sh [address] [thread] [-- extra `swift test` arguments, e.g. --filter Concurrency]
#
# Default: both, ASan first (CI, .ci/run, runs both). Builds go to
# .build-asan and .build-tsan, full logs to .build-{asan,tsan}/sanitize.log; each pass prints
# how long its build and its tests took.
# Exit status: 0 when every requested pass is clean.
#
# What each pass covers (a sanitizer build compiles every package it links, so each pass builds
# only what it tests; with extra arguments, a pass runs those instead of its own selection):
# - ASan: every suite of the engine, the importer and the image code, built with
#   ANVIL_PACKAGE_SCOPE=engine (Package.swift), which leaves out the server, the command-line
#   tool and the HTTP/2, TLS and gRPC packages under them. The kernels, the model-file and .onnx
#   readers and the image decoders are where memory is addressed by hand. (ONNXCommandTests,
#   which run the tool as a process, are left out with it.)
# - TSan: the whole package, and the suites where threads meet: serving, the batching runner,
#   async prediction, concurrency, determinism, compile atomicity, the pools, and the kernels
#   whose work is split across threads. The suites whose threads meet run first and alone, so
#   that their servers' handlers are not queued behind the kernel tests on Swift's 2-thread
#   cooperative pool.
#
# A run that has not finished after SANITIZE_TEST_LIMIT seconds (default 2400, a few times what
# the whole ThreadSanitizer suite takes on 2 cores) is a hang: the
# stacks of every thread of the test process go into the log (gdb), the tests that started and
# did not finish are printed, and the pass fails. Output is line-buffered into the log, so what
# it shows is what had happened.
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
# The tests run fixture scripts with python3: the project venv's (Scripts/test.sh made it).
source Scripts/setup/use_venv.sh

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
# ThreadSanitizer suppressions. Add a line only with the report that justifies it.
# - grpc-swift-2 2.4.3, GRPCCore's withServerContextRPCCancellationHandle: its task's write of
#   the result after `await` (ServerContext+RPCCancellationHandle.swift:117) against the
#   continuation NIO's EventLoopFuture.get resumed on an event-loop thread: the hand-over goes
#   through the Swift concurrency runtime, which TSan does not see (no Anvil frame in either stack).
# - grpc-swift-nio-transport 2.x, GRPCChannel: two of its methods (enqueue and updateLoadBalancer)
#   each inside `state.withLock`. The lock is Synchronization.Mutex, whose contended lock and
#   unlock go through the kernel's futex in the uninstrumented runtime, so TSan sees no
#   hand-over between its holders (Anvil's own locks are TracedMutex for this reason).
#   Both stacks are the transport's own (the tests' gRPC client made the channel).
TSAN_SUPPRESSIONS="race:withServerContextRPCCancellationHandle
race:GRPCNIOTransportCore11GRPCChannel"
mkdir -p .build-tsan
printf '%s\n' "$TSAN_SUPPRESSIONS" > .build-tsan/suppressions.txt
export TSAN_OPTIONS="${TSAN_OPTIONS:-suppressions=$REPO/.build-tsan/suppressions.txt:halt_on_error=0:second_deadlock_stack=1}"

LIMIT="${SANITIZE_TEST_LIMIT:-2400}"
# The suites whose threads meet (a --filter / --skip regular expression over test identifiers).
CONCURRENT='AnvilServeTests|ServeCommandTests|RunnerTests|AsyncPredictionTests|ConcurrencyTests|DeterminismTests|FailureCompileTests|PredictionThreadsTests|WorkspacePoolTests'
# The engine-scope suites that run the command-line tool, which that scope does not build.
NEEDS_TOOL='ONNXCommandTests'
# The kernels that split their work across threads (ThreadSanitizer's second run).
THREADED='GemmTests|DirectConvolutionTests|WinogradTests|GlobalPoolingKernelTests|ReferenceLayerTests/largerTensors|ReferenceLayerTests/batchNormalizationActivationLarge'

# The tests (not test cases) of log $1 that started and did not finish.
unfinished() {
  python3 - "$1" <<'PY'
import re, sys
started, ended = [], set()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^◇ Test (.+?) started\.$", line.rstrip("\n"))
    if m and not m.group(1).startswith("case ") and m.group(1) != "run":
        started.append(m.group(1))
    m = re.match(r"^[✔✘↷] Test (.+?) (passed|failed|skipped|with \d+ test cases?)", line)
    if m:
        ended.add(m.group(1))
for name in started:
    if name not in ended:
        print("   still running:", name)
PY
}

# run_tests SANITIZER SCRATCH LOG [swift test arguments]: one `swift test` run, stopped as a
# hang after $LIMIT seconds. Returns its exit status (124 when stopped).
run_tests() {
  local sanitizer=$1 scratch=$2 log=$3
  shift 3
  stdbuf -oL -eL swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "$@" >>"$log" 2>&1 &
  local pid=$! start=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    if [ $((SECONDS - start)) -ge "$LIMIT" ]; then
      echo "   HANG: tests still running after $LIMIT s; every thread's stack is in $log"
      local test
      for test in $(pgrep -f "$scratch/.*\.xctest"); do
        echo "== stacks of process $test" >>"$log"
        timeout 300 gdb -p "$test" -batch -ex "thread apply all bt 30" >"$scratch/hang-$test.txt" 2>&1
        cat "$scratch/hang-$test.txt" >>"$log"
        # CI shows the end of the output: the frames of Anvil's own code and the tests' first.
        grep -E '^(Thread|#[0-9]+ )' "$scratch/hang-$test.txt" | grep -E '^Thread|Anvil|Runner|Serve|Test|Worker|Prediction' | cut -c1-200 | head -80
      done
      unfinished "$log"
      pkill -KILL -f "$scratch/.*\.xctest"
      wait "$pid"
      return 124
    fi
    sleep 5
  done
  wait "$pid"
}

status=0
report=()
for sanitizer in "${SANITIZERS[@]}"; do
  case "$sanitizer" in
    address) scratch=.build-asan; scope=engine ;;
    thread) scratch=.build-tsan; scope=all ;;
  esac
  export ANVIL_PACKAGE_SCOPE=$scope
  mkdir -p "$scratch"
  log="$scratch/sanitize.log"
  echo "== $sanitizer sanitizer: building into $scratch (package scope: $scope; log: $log)"
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
  if [ ${#EXTRA[@]} -gt 0 ]; then
    run_tests "$sanitizer" "$scratch" "$log" "${EXTRA[@]}"
    code=$?
  elif [ "$sanitizer" = address ]; then
    run_tests "$sanitizer" "$scratch" "$log" --skip "$NEEDS_TOOL"
    code=$?
  else
    run_tests "$sanitizer" "$scratch" "$log" --filter "$CONCURRENT"
    code=$?
    first=$((SECONDS - start))
    run_tests "$sanitizer" "$scratch" "$log" --filter "$THREADED"
    rest=$?
    [ "$code" -eq 0 ] && code=$rest
    echo "   the suites whose threads meet took ${first} s, the threaded kernels $((SECONDS - start - first)) s"
  fi
  tested=$((SECONDS - start))
  # A sanitizer report fails the pass even if the test that caused it passed.
  findings=$(grep -cE '^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|SUMMARY: (Address|Thread)Sanitizer)' "$log")
  summary=$(grep -E '^(✔|✘|━) Test run with' "$log" | tail -2 | paste -sd ';' -)
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
