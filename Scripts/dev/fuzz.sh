#!/usr/bin/env bash
# Builds Anvil's libFuzzer targets (AddressSanitizer + coverage) and runs each for a bounded
# time on its seed corpus (Fuzz/corpus/<target>/).
#
#   Scripts/dev/fuzz.sh [seconds-per-target] [target ...]
#
# seconds-per-target defaults to 20 (CI); run for hours locally: Scripts/dev/fuzz.sh 3600.
# Targets: model-file blob-index graph idx image onnx (default: all).
# Builds go to .build-fuzz/<target> and are reused while no source changed; corpora grow in
# .build-fuzz/corpus/<target> (seeds are read from Fuzz/corpus/<target>, never written);
# the inputs that once crashed (Fuzz/regressions/<target>/) are replayed first; new crashes
# are saved as .build-fuzz/artifacts/<target>/crash-*; reproduce one with
#   .build-fuzz/<target> .build-fuzz/artifacts/<target>/crash-...
# Exit status: 0 when no target crashed, 1 otherwise.
#
# SwiftPM renames `main` in executable targets, so each fuzzer is built with swiftc directly:
# the library's sources and the target's entry file (which defines LLVMFuzzerTestOneInput)
# compiled as one module.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"

SECONDS_PER_TARGET="${1:-20}"
shift || true
ALL_TARGETS=(model-file blob-index graph idx image onnx)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")

OUT=.build-fuzz
mkdir -p "$OUT"
SWIFTC="${SWIFTC:-swiftc}"
CLANG="${CLANG:-$(dirname "$(command -v "$SWIFTC")")/clang}"
[ -x "$CLANG" ] || CLANG=clang

OPENBLAS_CFLAGS="$(pkg-config --cflags openblas)"
OPENBLAS_LIBS="$(pkg-config --libs openblas)"
STB_CFLAGS="$(pkg-config --cflags stb)"
COMMON_FLAGS=(-sanitize=fuzzer,address -parse-as-library -O -g -module-name AnvilFuzz -use-ld=lld)

entry_file() {
  case "$1" in
    model-file) echo Fuzz/ModelFileFuzz.swift ;;
    blob-index) echo Fuzz/BlobIndexFuzz.swift ;;
    graph) echo Fuzz/GraphFuzz.swift ;;
    idx) echo Fuzz/IDXFileFuzz.swift ;;
    image) echo Fuzz/ImageFuzz.swift ;;
    onnx) echo Fuzz/ONNXFuzz.swift ;;
    *) echo "unknown target '$1' (choose from: ${ALL_TARGETS[*]})" >&2; exit 2 ;;
  esac
}

sources_of() {
  case "$1" in
    model-file|blob-index|graph)
      find Sources/Anvil -name '*.swift' | sort
      echo Fuzz/Support/FuzzInput.swift
      echo Fuzz/Support/ModelExercise.swift ;;
    idx|image)
      find Sources/AnvilVision -name '*.swift' | sort
      echo Fuzz/Support/FuzzInput.swift ;;
    onnx)
      find Sources/Anvil Sources/AnvilONNX Sources/CAnvilKernels -type f | sort ;;
  esac
  entry_file "$1"
}

# The onnx target: AnvilONNX needs swift-protobuf, so SwiftPM builds it and its dependencies
# instrumented (--sanitize=fuzzer,address) into .build-fuzz/onnx-spm, and the entry file is
# linked against those objects.
build_onnx() {
  local binary="$OUT/onnx" spm="$OUT/onnx-spm"
  echo "== building onnx (SwiftPM, instrumented)"
  local start=$SECONDS
  (
    # Every library is built with AddressSanitizer and libFuzzer's coverage counters (inline
    # 8-bit counters, the PC table, comparison tracing), so the fuzzer is guided by the edges it
    # reaches inside the importer, not only in the entry file. (SwiftPM's --sanitize=fuzzer
    # instruments only what it links as an executable; plain `edge` coverage emits
    # trace-pc-guard, which libFuzzer refuses.) The link below adds libFuzzer itself.
    swift build --scratch-path "$spm" -c release --target AnvilONNX --sanitize=address \
      -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
      -Xcc -fsanitize=fuzzer-no-link
    local bin
    bin="$(swift build --scratch-path "$spm" -c release --show-bin-path)"
    local objects
    mapfile -t objects < <(find "$bin/Anvil.build" "$bin/AnvilONNX.build" "$bin/SwiftProtobuf.build" "$bin/CAnvilKernels.build" -name '*.o' | sort)
    # shellcheck disable=SC2086
    "$SWIFTC" -sanitize=fuzzer,address -parse-as-library -O -g -module-name ONNXFuzz -use-ld=lld \
      -I "$bin/Modules" -I Sources/COpenBLAS -I Sources/CAnvilKernels/include $OPENBLAS_CFLAGS \
      -Xcc -fmodule-map-file="$bin/CAnvilKernels.build/module.modulemap" \
      Fuzz/ONNXFuzz.swift "${objects[@]}" $OPENBLAS_LIBS -o "$REPO/$binary.new"
  ) >"$OUT/onnx.build.log" 2>&1
  [ -x "$binary.new" ] || { grep -E "error:" "$OUT/onnx.build.log" | head -20; echo "build of onnx failed (log: $OUT/onnx.build.log)" >&2; exit 3; }
  mv "$binary.new" "$binary"
  echo "   built in $((SECONDS - start)) s"
}

# Rebuilds when the binary is missing or older than any of its inputs.
build() {
  local target="$1" binary="$OUT/$1"
  local inputs
  mapfile -t inputs < <(sources_of "$target")
  if [ -x "$binary" ] && [ -z "$(find "${inputs[@]}" Scripts/dev/fuzz.sh Fuzz/Native -newer "$binary" 2>/dev/null | head -1)" ]; then
    return
  fi
  if [ "$target" = onnx ]; then
    build_onnx
    return
  fi
  echo "== building $target"
  local start=$SECONDS
  # Compile a snapshot, so that files edited meanwhile do not break the build.
  local stage="$OUT/stage/$target"
  rm -rf "$stage" "$binary.new" && mkdir -p "$stage"
  cp --parents "${inputs[@]}" Sources/COpenBLAS/* Sources/CStb/* Fuzz/Native/* "$stage/"
  (
    cd "$stage"
    case "$target" in
      model-file|blob-index|graph)
        # shellcheck disable=SC2086
        "$SWIFTC" "${COMMON_FLAGS[@]}" -I Sources/COpenBLAS $OPENBLAS_CFLAGS "${inputs[@]}" \
          $OPENBLAS_LIBS -o "$REPO/$binary.new" ;;
      idx|image)
        # stb_image itself, instrumented, replaces the uninstrumented libstb.so.
        # shellcheck disable=SC2086
        "$CLANG" -c -O1 -g -fsanitize=fuzzer-no-link,address $STB_CFLAGS Fuzz/Native/stb_image_impl.c -o stb_image_impl.o
        # shellcheck disable=SC2086
        "$SWIFTC" "${COMMON_FLAGS[@]}" -I Sources/CStb $STB_CFLAGS "${inputs[@]}" stb_image_impl.o -o "$REPO/$binary.new" ;;
    esac
  ) >"$OUT/$target.build.log" 2>&1
  [ -x "$binary.new" ] || { grep -E "error:" "$OUT/$target.build.log" | head -20; echo "build of $target failed (log: $OUT/$target.build.log)" >&2; exit 3; }
  mv "$binary.new" "$binary"
  echo "   built in $((SECONDS - start)) s"
}

for target in "${TARGETS[@]}"; do entry_file "$target" >/dev/null; done
for target in "${TARGETS[@]}"; do build "$target"; done

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}"
# Swift's own crash backtracer reads memory ASan considers poisoned; let libFuzzer report instead.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
status=0
summary=()
# Inputs that crashed once (Fuzz/regressions/<target>/) must run cleanly before fuzzing.
for target in "${TARGETS[@]}"; do
  regressions=(Fuzz/regressions/"$target"/*)
  [ -e "${regressions[0]}" ] || continue
  if ! "$OUT/$target" "${regressions[@]}" >"$OUT/$target.regressions.log" 2>&1; then
    echo "== $target: a regression input fails again (log: $OUT/$target.regressions.log)"
    grep -m1 -A12 -E '^==[0-9]+==ERROR|Fatal error|fuzz property' "$OUT/$target.regressions.log" || true
    status=1
  fi
done
for target in "${TARGETS[@]}"; do
  corpus="$OUT/corpus/$target"
  artifacts="$OUT/artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  dict=()
  [ -f "Fuzz/$target.dict" ] && dict=("-dict=Fuzz/$target.dict")
  log="$OUT/$target.log"
  before=$(find "$artifacts" -type f | wc -l)
  echo "== fuzzing $target for ${SECONDS_PER_TARGET} s (log: $log)"
  set +e
  "$OUT/$target" "$corpus" "Fuzz/corpus/$target" "${dict[@]}" -max_total_time="$SECONDS_PER_TARGET" \
    -timeout=30 -rss_limit_mb=4096 -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" >"$log" 2>&1
  code=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  after=$(find "$artifacts" -type f | wc -l)
  crashes=$((after - before))
  summary+=("$(printf '%-11s %12s executions  %d new crash(es)  exit %d' "$target" "${runs:-?}" "$crashes" "$code")")
  if [ "$code" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    grep -m1 -A12 -E '^==[0-9]+==ERROR|Fatal error|fuzz property' "$log" || tail -20 "$log"
  fi
done

echo "== summary (${SECONDS_PER_TARGET} s per target)"
printf '%s\n' "${summary[@]}"
exit $status
