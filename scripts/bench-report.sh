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
# --benchmark_filter regex: one run of those, each benchmark's repetitions back to back), SKIP_PEERS=1, SKIP_ACCURACY=1, SKIP_BENCH=1,
# REPS (repetitions per benchmark, default 5; the in-cache run takes 2 * REPS + 1).
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
flags, model, family, number = set(), "?", "?", "?"
for line in open("/proc/cpuinfo"):
    key, _, value = line.partition(":")
    key, value = key.strip(), value.strip()
    if key == "model name" and model == "?":
        model = value
    elif key == "cpu family" and family == "?":
        family = value
    elif key == "model" and number == "?":
        number = value
    elif key == "flags":
        flags = set(value.split())
# A virtual machine's model name is often generic ("AMD EPYC"); family and model say which generation.
model += f" (family {family} model {number})"
isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE4" if "sse4_2" in flags else "baseline"
virt = ""
try:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Hypervisor vendor"):
            virt = "virtual machine (" + line.split(":", 1)[1].strip() + ")"
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
    min_time=0.1
    [[ $mode == --quick ]] && min_time=0.02
    bench() {  # bench OUT.json ARGS...: one probkit_bench run, medians kept
      local out=$1
      shift
      "$build/bench/probkit_bench" --benchmark_min_time=$min_time --benchmark_report_aggregates_only=true \
        --benchmark_out="$out" --benchmark_out_format=json "$@" > "$build/$(basename "$out" .json).txt"
    }
    if [[ -n ${BENCH_FILTER:-} ]]; then
      echo "bench-report: probkit_bench ($BENCH_FILTER)" >&2
      bench "$data/bench.json" --benchmark_filter="$BENCH_FILTER" --benchmark_repetitions=$reps
      rm -f "$data/bench_interleaved.json"  # from an earlier run: not to be mixed with this one
    else
      # Filters larger than the cache take seconds to build (once per size: the program keeps them) and each
      # repetition pages its filter in, so they run apart, with fewer repetitions, shuffled together too
      # (--quick leaves out 1 GiB).
      large='size=(32MiB|1GiB)'
      [[ $mode == --quick ]] && large='size=32MiB'
      echo "bench-report: probkit_bench ($large, interleaved)" >&2
      bench "$data/bench.json" --benchmark_filter="$large" --benchmark_repetitions=$reps \
        --benchmark_enable_random_interleaving=true
      # Everything else sets up in moments: its repetitions are shuffled together (random interleaving), so
      # that a burst of other work on a shared machine falls on many benchmarks a little instead of deciding
      # one, and on the 1- and all-threads runs of a speed-up alike. More repetitions, as each is shorter.
      echo "bench-report: probkit_bench (the rest, interleaved)" >&2
      bench "$data/bench_interleaved.json" --benchmark_filter="-size=(32MiB|1GiB)" \
        --benchmark_repetitions=$((2 * reps + 1)) --benchmark_enable_random_interleaving=true
    fi
  fi
  if [[ -z ${SKIP_ACCURACY:-} ]]; then
    echo "bench-report: probkit_accuracy" >&2
    if [[ $mode == --quick ]]; then acc=(--scale 0.05 --max-n 10000000); else acc=(); fi
    # Each CSV says which commit and date produced it (they may be kept across
    # later runs with SKIP_ACCURACY=1: every backend gives identical results).
    # ... and which machine: the page names it, and the benchmarks' machine.json may be a later one's.
    cpu="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') (family $(grep -m1 '^cpu family' \
      /proc/cpuinfo | cut -d: -f2 | tr -d ' ') model $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' '))"
    isa=baseline
    for f in sse4_2:SSE4 avx2:AVX2 avx512f:AVX-512; do grep -qw "${f%%:*}" /proc/cpuinfo && isa=${f#*:}; done
    stamp="# commit: $(git rev-parse --short HEAD)
# date: $(date -u '+%Y-%m-%d %H:%M UTC')
# machine: ${cpu:-?} ($isa), $(nproc) cores"
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
