#!/usr/bin/env bash
# Regenerates docs/BENCHMARKS.md, docs/ACCURACY.md and docs/img/*.png in one
# command: builds the benchmark programs, runs the CPU benchmarks (JSON), the
# accuracy program, the peer comparison, and bench/report.py. Raw results go
# to docs/data/. Takes about 10 minutes on a 2-core machine.
#
#   scripts/bench-report.sh            everything
#   scripts/bench-report.sh --quick    short runs (smaller sizes, fewer seeds) to check the pipeline
#   scripts/bench-report.sh --report   only rewrite the docs from docs/data/
#
# Optional: PROBKIT_BUILD_DIR (default build-bench), BENCH_FILTER (a
# --benchmark_filter regex; skips the thread speed-up pass), SKIP_PEERS=1, SKIP_ACCURACY=1, SKIP_BENCH=1,
# REPS (repetitions per benchmark, default 5; the speed-up pass runs 2 * REPS + 1).
# The peers need Python packages and Debian packages; bench/peers/install.sh
# installs them. A peer that is missing is reported as missing.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
build=${PROBKIT_BUILD_DIR:-build-bench}
data=docs/data
mkdir -p "$data" docs/img

python3 -c "import numpy, matplotlib" 2>/dev/null || {
  echo "bench-report: needs numpy and matplotlib (pip install numpy matplotlib, or bench/peers/install.sh)" >&2
  exit 1
}

if [[ $mode != --report ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROBKIT_BUILD_TESTS=OFF -DPROBKIT_CUDA=OFF \
    -DPROBKIT_BUILD_BENCH=ON > /dev/null
  ninja -C "$build" -j "$(nproc)" probkit_bench probkit_accuracy probkit_peer

  reps=${REPS:-5}  # medians of 5: the machines we run on are shared, and 3 let one burst decide
  [[ -n ${SKIP_BENCH:-} ]] || python3 - "$data/machine.json" "$mode" "$reps" <<'PY'
import json, os, subprocess, sys, datetime
flags, model = set(), "?"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name") and model == "?":
        model = line.split(":", 1)[1].strip()
    if line.startswith("flags"):
        flags = set(line.split(":", 1)[1].split())
isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE4" if "sse4_2" in flags else "baseline"
virt = ""
try:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Hypervisor vendor"):
            virt = "virtual machine (" + line.split(":", 1)[1].strip() + ")"
        if line.startswith("Model:") and model.endswith("Processor"):
            model += f" (family 6 model {line.split(':', 1)[1].strip()})"
except OSError:
    pass
mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
note = "Quick run (--quick): short, smaller, not for quoting." if sys.argv[2] == "--quick" else (
    "The machine may be shared with other work while it runs; ratios to the same-run probe are the robust figures.")
json.dump({"cpu": model, "isa": isa, "cores": os.cpu_count(), "memory_gib": mem, "virtualisation": virt,
           "commit": commit + ("+dirty" if dirty else ""), "repetitions": int(sys.argv[3]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "note": note},
          open(sys.argv[1], "w"), indent=1)
PY

  if [[ -z ${SKIP_BENCH:-} ]]; then
    filter=${BENCH_FILTER:-}
    min_time=0.1
    if [[ $mode == --quick ]]; then
      filter=${filter:-'-(size=1GiB)'}
      min_time=0.02
    fi
    echo "bench-report: probkit_bench (${filter:-all benchmarks})" >&2
    "$build/bench/probkit_bench" ${filter:+--benchmark_filter="$filter"} --benchmark_min_time=$min_time \
      --benchmark_repetitions=$reps --benchmark_report_aggregates_only=true \
      --benchmark_out="$data/bench.json" --benchmark_out_format=json > "$build/bench.txt"
    if [[ -n ${BENCH_FILTER:-} ]]; then
      rm -f "$data/scaling.json"  # a filtered run has no speed-up pass: drop the last one, not mix it in
    else
      # The thread speed-ups again, in a pass of their own: the main run measures a benchmark's repetitions
      # back to back, so a burst of other work on a shared machine can fall on the 1-thread run and miss the
      # all-threads one. Here the 1- and all-threads runs of the in-cache and HLL rows (and of hashing alone,
      # and each vCPU's speed alone) are shuffled together (random interleaving), best engine only. The 1 GiB rows stay in the main run:
      # their filters take seconds to rebuild each time the benchmark changes.
      best=$("$build/bench/probkit_bench" --benchmark_list_tests | grep -o 'engine=[A-Za-z0-9_]*' |
        grep -v '=scalar$' | head -n 1 || true)
      best=${best:-engine=scalar}
      rows='bloom_(contains|add)/layout=cacheline512/keys=u64/size=256KiB'
      rows+='|bloom_add/layout=cacheline512/keys=str16/size=256KiB'
      rows+='|hll_add/keys=(u64/hash=xxh64|prehashed/hash=none|str16/hash=xxh64)|hash/keys=(u64|str16)/hash=xxh64'
      rows+='|vcpu_speed/cpu=[0-9]+'  # each vCPU's own speed, in the same window
      echo "bench-report: probkit_bench, thread speed-ups (interleaved, $best)" >&2
      "$build/bench/probkit_bench" --benchmark_filter="^($rows)/$best/" --benchmark_min_time=$min_time \
        --benchmark_repetitions=$((2 * reps + 1)) --benchmark_enable_random_interleaving=true \
        --benchmark_report_aggregates_only=true \
        --benchmark_out="$data/scaling.json" --benchmark_out_format=json > "$build/scaling.txt"
    fi
  fi
  if [[ -z ${SKIP_ACCURACY:-} ]]; then
    echo "bench-report: probkit_accuracy" >&2
    if [[ $mode == --quick ]]; then acc=(--scale 0.05 --max-n 10000000); else acc=(); fi
    # Each CSV says which commit and date produced it (they may be kept across
    # later runs with SKIP_ACCURACY=1: every backend gives identical results).
    stamp="# commit: $(git rev-parse --short HEAD)
# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    { echo "$stamp"; "$build/bench/probkit_accuracy" bloom "${acc[@]}"; } > "$data/bloom_fpr.csv.new"
    { echo "$stamp"; "$build/bench/probkit_accuracy" hll "${acc[@]}"; } > "$data/hll_accuracy.csv.new"
    mv "$data/bloom_fpr.csv.new" "$data/bloom_fpr.csv"
    mv "$data/hll_accuracy.csv.new" "$data/hll_accuracy.csv"
  fi
  if [[ -z ${SKIP_PEERS:-} ]]; then
    echo "bench-report: peers" >&2
    quick=(); [[ $mode == --quick ]] && quick=(--quick)
    python3 bench/peers/run.py --build "$build" --out "$data/peers.json" "${quick[@]}"
  fi
fi
python3 bench/report.py --data "$data" --docs docs
echo "bench-report: wrote docs/BENCHMARKS.md, docs/ACCURACY.md, docs/img/" >&2
