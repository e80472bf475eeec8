#!/usr/bin/env bash
# Times VGG16's thirteen 3×3 convolutions (224×224×3 input, batch 1 by default) per layer,
# im2col + GEMM against Winograd, with `anvil bench --layers` on a generated model file
# (random weights). Not part of the test suite.
#
#   Scripts/benchmarks/bench_winograd.sh [--rounds N] [--iterations K] [--batch B] [--threads "1 2"]
#                             [--modes "im2col auto winograd4 winograd2"] [--no-build]
#
# Each mode sets ANVIL_CONVOLUTION for the run: `im2col` forces im2col + GEMM, `winograd4` /
# `winograd2` force F(4×4,3×3) / F(2×2,3×3) on every 3×3 stride-1 layer, `auto` is Anvil's own
# choice. Modes are interleaved within each round so that a noisy, shared machine hurts them
# alike; the table shows, per layer, the median over rounds of each run's per-layer median.
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds=5
iterations=5
batch=1
threads="1 2"
modes="im2col auto winograd4 winograd2"
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --iterations) iterations="$2"; shift 2 ;;
        --batch) batch="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --modes) modes="$2"; shift 2 ;;
        --no-build) build=0; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

scratch=.build-wino
if [ "$build" = 1 ]; then
    swift build -c release --scratch-path "$scratch" --product anvil >&2
fi
anvil="$scratch/release/anvil"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work/vgg16_convs.json" <<'EOF'
import json, sys
layers, previous = [], "image"
for block, (channels, count) in enumerate([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)], 1):
    for index in range(1, count + 1):
        name = f"conv{block}_{index}"
        layers.append({"name": name, "type": "Convolution", "inputs": [previous], "kernel": [3, 3],
                       "channels": channels, "padding": "same", "activation": "relu"})
        previous = name
    layers.append({"name": f"pool{block}", "type": "MaxPooling", "inputs": [previous], "kernel": [2, 2], "stride": [2, 2]})
    previous = f"pool{block}"
json.dump({"format": "anvil.model", "version": 1, "name": "vgg16-convolutions",
           "inputs": [{"name": "image", "shape": [224, 224, 3]}], "layers": layers, "outputs": [previous]},
          open(sys.argv[1], "w"), indent=1)
EOF

for t in $threads; do
    for round in $(seq "$rounds"); do
        for mode in $modes; do
            out="$work/t$t-$mode-$round.txt"
            if [ "$mode" = auto ]; then
                env -u ANVIL_CONVOLUTION "$anvil" bench "$work/vgg16_convs.json" --threads "$t" --batch "$batch" \
                    --iterations "$iterations" --layers > "$out"
            else
                ANVIL_CONVOLUTION="$mode" "$anvil" bench "$work/vgg16_convs.json" --threads "$t" --batch "$batch" \
                    --iterations "$iterations" --layers > "$out"
            fi
            echo "threads $t round $round $mode: $(grep median_ms "$out")" >&2
        done
    done
done

python3 - "$work" "$threads" "$modes" "$batch" <<'EOF'
import glob, os, re, statistics, sys
work, threads, modes, batch = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4])
shapes = {}
size, cin = 224, 3
for block, (channels, count) in enumerate([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)], 1):
    for index in range(1, count + 1):
        shapes[f"conv{block}_{index}"] = (size, cin, channels)
        cin = channels
    size //= 2
for t in threads:
    times = {}  # (layer, mode) -> [ms]
    totals = {}
    for mode in modes:
        for path in glob.glob(os.path.join(work, f"t{t}-{mode}-*.txt")):
            text = open(path).read()
            for name, ms in re.findall(r"^\s+(conv\d_\d)\s+Convolution\s+([\d.]+) ms", text, re.M):
                times.setdefault((name, mode), []).append(float(ms))
            m = re.search(r"median_ms: ([\d.]+)", text)
            if m:
                totals.setdefault(mode, []).append(float(m.group(1)))
    base = modes[0]
    header = f"{'layer':8} {'shape (HxW, in->out)':22} {'GFLOP':>6} " + " ".join(f"{m + ' ms':>13}" for m in modes)
    header += " " + " ".join(f"{'speedup ' + m:>18}" for m in modes[1:])
    print(f"\n## {t} thread(s), batch {batch}: median over rounds of per-layer medians (ms); speedup = {base} time / mode time\n")
    print(header)
    sums = {m: 0.0 for m in modes}
    for name, (s, ci, co) in shapes.items():
        gflop = 2 * s * s * 9 * ci * co * batch / 1e9
        row = [statistics.median(times[(name, m)]) for m in modes]
        for m, v in zip(modes, row):
            sums[m] += v
        line = f"{name:8} {f'{s}x{s}, {ci}->{co}':22} {gflop:6.2f} " + " ".join(f"{v:13.2f}" for v in row)
        line += " " + " ".join(f"{row[0] / v:17.2f}x" for v in row[1:])
        print(line)
    print(f"{'sum':8} {'':22} {30.69 * batch:6.2f} " + " ".join(f"{sums[m]:13.2f}" for m in modes)
          + " " + " ".join(f"{sums[base] / sums[m]:17.2f}x" for m in modes[1:]))
    print("whole network (convolutions + pools), median of medians: "
          + ", ".join(f"{m} {statistics.median(totals[m]):.1f} ms" for m in modes if m in totals))
EOF
