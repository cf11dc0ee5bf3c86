#!/usr/bin/env bash
# A/B of probkit_bench binaries on the lent GPU machine's host CPU (16 cores,
# AVX-512: DESIGN.md §9), with scripts/ab-bench.py. Build each variant here
# (the build-bench configuration of scripts/bench-report.sh, in a git worktree) and
# copy its binary to .deps/ab/<name>/probkit_bench; the device call carries
# .deps/gpu (the libraries the image lacks: scripts/fetch-gpu-deps.sh) and
# .deps/ab. Arguments go to ab-bench.py; results (ab.jsonl a run at a time,
# ab.txt, lscpu.txt) land in $OUT. Keep the whole run well inside the call's
# limit (AB_TIMEOUT, default 300 s): ab.jsonl keeps the finished rounds of a
# run cut short, but a 1 GiB row takes far longer than an in-cache one.
#
#   device run, carry [".deps/gpu", ".deps/ab"]:
#   scripts/ab-device.sh --filter 'hll_add/keys=u64/hash=xxh64/engine=AVX3_DL/threads=16/' --rounds 8 --reps 7
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out/ab}
mkdir -p "$out"
deps=${DEPS_DIR:-/tmp/deps}
mkdir -p "$deps"
for f in .deps/gpu/*.deb; do [[ -e $f ]] && dpkg -x "$f" "$deps"; done
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
lscpu >"$out/lscpu.txt" 2>&1
bins=(.deps/ab/*/probkit_bench)
timeout --signal=TERM "${AB_TIMEOUT:-300}" python3 scripts/ab-bench.py --out "$out/ab.jsonl" "$@" "${bins[@]}" |
  tee "$out/ab.txt"
