#!/usr/bin/env bash
# A/B-times two builds of the anvil tool in alternating runs, so drift in the machine's speed
# falls on both alike: for each network and thread count, `anvil bench` (median of its timed
# runs) for A, then B, then A, ... for ROUNDS rounds; prints the median of the rounds' medians
# for each build and their ratio B / A. Also prints the CPU model, its vector flags and the
# instruction set each build's kernels ran.
#
# Usage: Scripts/benchmarks/ab_anvil.sh A_BINARY B_BINARY [ROUNDS]   (ROUNDS default 5)
#        AB_CASES="shufflenet_v2_x1_0 --batch 8 --threads 1;densenet121 --threads 2" ab_anvil.sh ...
#        times those `anvil bench` arguments (separated by `;`) instead of the default cases.
# Build a base with e.g.: git worktree add /tmp/base <commit> && (cd /tmp/base && swift build -c release)
set -euo pipefail
a=${1:?usage: ab_anvil.sh A_BINARY B_BINARY [ROUNDS]}
b=${2:?usage: ab_anvil.sh A_BINARY B_BINARY [ROUNDS]}
rounds=${3:-5}
cases=("mnist --batch 64 --threads 1" "mnist --batch 1 --threads 2" "mnist --batch 64 --threads 2"
       "vgg16 --batch 1 --threads 1" "vgg16 --batch 1 --threads 2"
       "resnet50 --batch 1 --threads 1" "resnet50 --batch 1 --threads 2"
       "mobilenet_v1 --batch 1 --threads 1" "mobilenet_v1 --batch 1 --threads 2")
if [[ -n "${AB_CASES:-}" ]]; then IFS=';' read -ra cases <<< "$AB_CASES"; fi
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx|avx2|fma|avx512[a-z_]*|avx_vnni)$' | tr '\n' ' ')"
for binary in "$a" "$b"; do
  echo "$binary: $("$binary" bench mnist --iterations 1 2>&1 | grep -E '^isa:' || echo 'isa: (not reported)')"
done
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf '%-40s %10s %10s %7s\n' "case" "A ms" "B ms" "B/A"
for case in "${cases[@]}"; do
  ta=(); tb=()
  for ((r = 0; r < rounds; r++)); do
    # shellcheck disable=SC2086
    ta+=("$("$a" bench $case --iterations 10 --warmup-ms 200 2>/dev/null | awk '/^median_ms/ {print $2}')")
    # shellcheck disable=SC2086
    tb+=("$("$b" bench $case --iterations 10 --warmup-ms 200 2>/dev/null | awk '/^median_ms/ {print $2}')")
  done
  ma=$(printf '%s\n' "${ta[@]}" | median); mb=$(printf '%s\n' "${tb[@]}" | median)
  printf '%-40s %10.3f %10.3f %7.3f\n' "$case" "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN {print b / a}')"
done
