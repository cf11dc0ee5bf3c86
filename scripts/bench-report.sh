#!/usr/bin/env bash
# Regenerates this machine's benchmark page (docs/benchmarks/<machine>.md),
# docs/BENCHMARKS.md (every machine's latest run side by side), docs/ACCURACY.md
# and their plots (docs/img/) in one command: builds the benchmark programs,
# runs the CPU benchmarks (JSON), the accuracy program, the peer comparison, and
# bench/report.py. Raw results go to docs/data/machines/<machine>/ (the
# accuracy CSVs, the same on every machine, to docs/data/), each file stamped
# with the run's id and commit, and only once every step has succeeded (until
# then they are in a temporary folder). <machine> is `bench/machine.py key`
# (vendor, CPU family and model, widest ISA, e.g. amd-f25-m1-avx2): a run
# replaces the files of its own kind of machine and keeps the others'. Takes
# about 10 minutes on a 2-core machine.
#
#   scripts/bench-report.sh            everything
#   scripts/bench-report.sh --quick    short runs (smaller sizes, fewer seeds) to check the pipeline
#   scripts/bench-report.sh --report   only rewrite the docs from docs/data/ (every machine's)
#
# Optional: PROBKIT_BUILD_DIR (default build-bench), BENCH_FILTER (a
# --benchmark_filter regex: one run of those, each benchmark's repetitions
# back to back), SKIP_PEERS=1, SKIP_ACCURACY=1, SKIP_BENCH=1 (keep docs/data's
# files of an earlier run on this kind of machine: the pages say which run each
# comes from), REPS
# (repetitions per benchmark, default 5; the in-cache run takes 2 * REPS + 1),
# TMPDIR (where the run's files wait).
# The peers need Python packages and Debian packages; bench/peers/install.sh
# installs them. A peer that is missing is reported as missing.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
case $mode in
  full | --quick | --report) ;;
  *) echo "usage: scripts/bench-report.sh [--quick | --report]" >&2; exit 2 ;;
esac
build=${PROBKIT_BUILD_DIR:-build-bench}
data=docs/data
mkdir -p "$data" docs/img

python3 -c "import numpy, matplotlib" 2>/dev/null || {
  echo "bench-report: needs numpy and matplotlib (pip install numpy matplotlib, or bench/peers/install.sh)" >&2
  exit 1
}

if [[ $mode == --report ]]; then
  python3 bench/report.py --data "$data" --docs docs
  echo "bench-report: wrote docs/BENCHMARKS.md, docs/benchmarks/, docs/ACCURACY.md, docs/img/" >&2
  exit 0
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROBKIT_BUILD_TESTS=OFF -DPROBKIT_CUDA=OFF \
  -DPROBKIT_BUILD_BENCH=ON > /dev/null
ninja -C "$build" -j "$(nproc)" probkit_bench probkit_accuracy probkit_peer

# Every file of this run is written to a staging folder, stamped with the run's id and commit (bench/machine.py),
# and replaces docs/data's only once every step, the report included, has succeeded: a failed run leaves
# docs/data and the pages as they were, never half of one run beside half of another. The staging folder starts
# as a copy of docs/data, so that what this run keeps (SKIP_*) is read from the earlier run's files; the report
# says where each comes from.
stage=$(mktemp -d "${TMPDIR:-/tmp}/probkit-bench-report.XXXXXX")
finish() {
  local rc=$?
  rm -rf "$stage"
  ((rc == 0)) || echo "bench-report: a step failed (exit $rc); docs/data and the pages are as they were" >&2
}
trap finish EXIT
mkdir -p "$stage/data" "$stage/docs/img"
cp -R "$data/." "$stage/data/"
run_id=$(python3 bench/machine.py run-id)
commit=$(python3 bench/machine.py commit)  # once, so that every file of the run names the same one
key=$(python3 bench/machine.py key)
mine=machines/$key  # this kind of machine's files, under docs/data
mkdir -p "$stage/data/$mine"
echo "bench-report: run $run_id, commit $commit, machine $key" >&2
made=()  # the files this run wrote (paths under docs/data): they replace docs/data's
gone=()  # docs/data's files that this run makes stale

if [[ -z ${SKIP_BENCH:-} ]]; then
  reps=${REPS:-5}  # medians of 5: the machines we run on are shared, and 3 let one burst decide
  quick=(); [[ $mode == --quick ]] && quick=(--quick)
  python3 bench/machine.py json --run-id "$run_id" --commit "$commit" --repetitions "$reps" "${quick[@]}" \
    > "$stage/data/$mine/machine.json"
  made+=("$mine/machine.json")
  min_time=0.1
  [[ $mode == --quick ]] && min_time=0.02
  bench() {  # bench NAME.json ARGS...: one probkit_bench run, medians kept, stamped with the run
    local out=$1
    shift
    "$build/bench/probkit_bench" --benchmark_min_time=$min_time --benchmark_report_aggregates_only=true \
      --benchmark_out="$stage/data/$mine/$out" --benchmark_out_format=json \
      --benchmark_context="probkit_run_id=$run_id,probkit_commit=$commit" "$@" > "$build/${out%.json}.txt"
    made+=("$mine/$out")
  }
  if [[ -n ${BENCH_FILTER:-} ]]; then
    echo "bench-report: probkit_bench ($BENCH_FILTER)" >&2
    bench bench.json --benchmark_filter="$BENCH_FILTER" --benchmark_repetitions="$reps"
    rm -f "$stage/data/$mine/bench_interleaved.json"  # from an earlier run: not to be mixed with this one
    gone+=("$mine/bench_interleaved.json")
  else
    # Filters of 32 MiB and more (bench/report_data.py's LARGE_BYTES) take seconds to build (once per size:
    # the program keeps them) and each repetition pages its filter in, so they run apart, with fewer
    # repetitions, shuffled together too (--quick leaves out 1 GiB).
    large_sizes='32MiB|128MiB|1GiB'
    large="size=($large_sizes)"
    [[ $mode == --quick ]] && large='size=(32MiB|128MiB)'
    echo "bench-report: probkit_bench ($large, interleaved)" >&2
    bench bench.json --benchmark_filter="$large" --benchmark_repetitions="$reps" \
      --benchmark_enable_random_interleaving=true
    # Everything else sets up in moments: its repetitions are shuffled together (random interleaving), so
    # that a burst of other work on a shared machine falls on many benchmarks a little instead of deciding
    # one, and on the 1- and all-threads runs of a speed-up alike. More repetitions, as each is shorter.
    echo "bench-report: probkit_bench (the rest, interleaved)" >&2
    bench bench_interleaved.json --benchmark_filter="-size=($large_sizes)" \
      --benchmark_repetitions=$((2 * reps + 1)) --benchmark_enable_random_interleaving=true
  fi
fi
if [[ -z ${SKIP_ACCURACY:-} ]]; then
  echo "bench-report: probkit_accuracy" >&2
  if [[ $mode == --quick ]]; then acc=(--scale 0.05 --max-n 10000000); else acc=(); fi
  # Each CSV says which commit, date, machine and run produced it: they may be kept across later runs with
  # SKIP_ACCURACY=1 (every backend gives identical results), and machine.json may then be a later run's.
  stamp=$(python3 bench/machine.py csv --run-id "$run_id" --commit "$commit")
  { echo "$stamp"; "$build/bench/probkit_accuracy" bloom "${acc[@]}"; } > "$stage/data/bloom_fpr.csv"
  { echo "$stamp"; "$build/bench/probkit_accuracy" hll "${acc[@]}"; } > "$stage/data/hll_accuracy.csv"
  made+=(bloom_fpr.csv hll_accuracy.csv)
fi
if [[ -z ${SKIP_PEERS:-} ]]; then
  echo "bench-report: peers" >&2
  quick=(); [[ $mode == --quick ]] && quick=(--quick)
  python3 bench/peers/run.py --build "$build" --out "$stage/data/$mine/peers.json" --run-id "$run_id" \
    --commit "$commit" "${quick[@]}"
  made+=("$mine/peers.json")
fi
python3 bench/report.py --data "$stage/data" --docs "$stage/docs"

# Every step succeeded: the run's files replace docs/data's, its pages docs/'s (every machine's page is
# rewritten from its files, the others' as they were).
for f in "${made[@]}"; do
  mkdir -p "$(dirname "$data/$f")"
  mv "$stage/data/$f" "$data/$f"
done
for f in "${gone[@]}"; do rm -f "$data/$f"; done
mkdir -p docs/benchmarks
mv "$stage/docs/BENCHMARKS.md" "$stage/docs/ACCURACY.md" docs/
mv "$stage/docs/benchmarks/"*.md docs/benchmarks/
cp -R "$stage/docs/img/." docs/img/
echo "bench-report: run $run_id: wrote ${made[*]:-nothing} into $data/; docs/BENCHMARKS.md," \
  "docs/benchmarks/, docs/ACCURACY.md, docs/img/" >&2
