#!/usr/bin/env bash
# A/B-times one build of the anvil tool under two values of an environment setting, in
# alternating runs (A then B in even rounds, B then A in odd ones), so drift in the machine's
# speed falls on both alike: for each case, `anvil bench` (median of its timed runs) per
# round; prints the median of the rounds' medians for each value, their ratio B / A, and every
# round's figure. Also prints the CPU model, its vector flags and the instruction set the
# kernels ran. An empty value means the setting is unset (the built-in default).
#
# Usage: Scripts/benchmarks/ab_setting.sh BINARY VARIABLE A_VALUE B_VALUE ROUNDS CASE...
#   CASE: the arguments of `anvil bench` after the model, e.g. "mobilenet_v2 --batch 8 --threads 1"
# Example (batch passes off against the default budget):
#   Scripts/benchmarks/ab_setting.sh .build/release/anvil ANVIL_PASS_BUDGET_MB 0 "" 4 \
#     "mobilenet_v2 --batch 8 --threads 1" "mobilenet_v2 --batch 8 --threads 2"
set -euo pipefail
binary=${1:?usage: ab_setting.sh BINARY VARIABLE A_VALUE B_VALUE ROUNDS CASE...}
variable=${2:?}; a=${3?}; b=${4?}; rounds=${5:?}
shift 5
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx|avx2|fma|avx512[a-z_]*|avx_vnni)$' | tr '\n' ' ')"
echo "$("$binary" bench mnist --iterations 1 2>&1 | grep -E '^isa:' || echo 'isa: (not reported)')"
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# One timed `anvil bench` with the setting at $1 (unset when empty); prints its median in ms.
once() {
  local value=$1; shift
  if [ -z "$value" ]; then
    # shellcheck disable=SC2068
    env -u "$variable" "$binary" bench $@ --iterations 7 --warmup-ms 200 2>/dev/null | awk '/^median_ms/ {print $2}'
  else
    # shellcheck disable=SC2068
    env "$variable=$value" "$binary" bench $@ --iterations 7 --warmup-ms 200 2>/dev/null | awk '/^median_ms/ {print $2}'
  fi
}
printf '%-44s %10s %10s %7s\n' "case" "A ms" "B ms" "B/A"
for case in "$@"; do
  ta=(); tb=()
  for ((r = 0; r < rounds; r++)); do
    # shellcheck disable=SC2086
    if ((r % 2 == 0)); then ta+=("$(once "$a" $case)"); tb+=("$(once "$b" $case)")
    else tb+=("$(once "$b" $case)"); ta+=("$(once "$a" $case)"); fi
  done
  ma=$(printf '%s\n' "${ta[@]}" | median); mb=$(printf '%s\n' "${tb[@]}" | median)
  printf '%-44s %10.2f %10.2f %7.3f   A: %s | B: %s\n' "$case" "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN {print b / a}')" "${ta[*]}" "${tb[*]}"
done
