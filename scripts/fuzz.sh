#!/usr/bin/env bash
# Fuzzes the byte readers, the backends' identity and the command line's line
# splitting with libFuzzer (Clang, AddressSanitizer and
# UndefinedBehaviorSanitizer; fuzz/README.md says what each target checks).
#
#   scripts/fuzz.sh [SECONDS]           each target for SECONDS (default 60), one after another
#   scripts/fuzz.sh [SECONDS] --merge   then adds what the run kept to the committed corpora
#
# Starts from the committed corpus (fuzz/corpus/<target>/), the seeds of
# fuzz/make_seeds.cc and, for the Redis reader, the strings a real Redis wrote
# (tests/vectors/redis_hll.json). Works in build-fuzz/ (PROBKIT_BUILD_DIR to
# change it); an input that fails is saved as build-fuzz/findings/<target>/crash-*
# and fails the run: replay it with build-fuzz/fuzz/probkit_fuzz_<target> FILE,
# and once fixed, commit it under fuzz/corpus/<target>/ as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60 merge=""
for arg in "$@"; do
  case $arg in
    --merge) merge=1 ;;
    [0-9]*) seconds=$arg ;;
    *) echo "usage: $0 [SECONDS] [--merge]" >&2; exit 2 ;;
  esac
done
build=${PROBKIT_BUILD_DIR:-build-fuzz}
targets=(pkbf pkhl redis_hll backends cli_lines)

CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPROBKIT_FUZZ=ON -DPROBKIT_CUDA=OFF -DPROBKIT_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target probkit_fuzz_seeds "${targets[@]/#/probkit_fuzz_}"

work=$build/fuzz-work
rm -rf "$work/seeds"
"$build/fuzz/probkit_fuzz_seeds" "$work/seeds"
python3 - "$work/seeds/redis_hll" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for i, v in enumerate(json.load(open("tests/vectors/redis_hll.json"))["vectors"]):
    for field in ("stored_hex", "dense_hex"):
        if field in v:
            (out / f"redis_{i}_{field}").write_bytes(bytes.fromhex(v[field]))
PY

# The largest input each target needs: a dense Redis string is 12304 bytes, a
# p = 14 PKHL sketch 16408 (plus the mode byte).
declare -A max_len=([pkbf]=4096 [pkhl]=16500 [redis_hll]=12400 [backends]=4096 [cli_lines]=4096)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
status=0
for t in "${targets[@]}"; do
  mkdir -p "$work/corpus/$t" "$build/findings/$t" "fuzz/corpus/$t"
  echo "== $t: $seconds s"
  # New inputs go to the first directory, the working corpus; a failure shows
  # as a saved input, checked below.
  "$build/fuzz/probkit_fuzz_$t" "$work/corpus/$t" "fuzz/corpus/$t" "$work/seeds/$t" \
    -max_total_time="$seconds" -max_len="${max_len[$t]}" -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/findings/$t/" 2>&1 | grep -E '^Done|^stat::new_units_added|ERROR|invariant|SUMMARY' || true
  if compgen -G "$build/findings/$t/*" >/dev/null; then
    echo "== $t: FOUND $(ls "$build/findings/$t" | wc -l) failing input(s) in $build/findings/$t/"
    status=1
  fi
  if [[ -n $merge ]]; then
    "$build/fuzz/probkit_fuzz_$t" -merge=1 -max_len="${max_len[$t]}" "fuzz/corpus/$t" "$work/corpus/$t" "$work/seeds/$t" \
      2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new files' || true
  fi
done
exit $status
