#!/usr/bin/env bash
# GPU check: on a machine with an NVIDIA GPU, configure a CUDA build, run
# every test, run the GPU benchmarks and, on the host's CPU, the CPU
# benchmarks of its best SIMD target (the lent machines' hosts have AVX-512
# and 16 cores, which ours lack; step 4b), and leave logs and a JSON summary in OUTDIR
# (default $OUT, else out/gpu-check). Meant for a lent H200 whose image
# lacks Highway, GoogleTest, Google Benchmark and xxhash (DESIGN.md §9): the
# .debs that scripts/fetch-gpu-deps.sh put in .deps/gpu/ travel with the checkout
# (device call: carry [".deps/gpu"]) and are unpacked under /tmp, never into /.
# Budget: under 8 minutes on one H200 with 16 cores (the step timeouts sum
# to 560 s; a step that runs out is killed and reported, and the steps that
# need its result are skipped).
#
#   scripts/gpu-check.sh [OUTDIR]
#
# Knobs (environment): JOBS (16), CUDA_ARCH (90), BENCH_KEYS (10^9 u64 keys),
# BENCH_FILTER (appended to each group's Google Benchmark regex, e.g. 2GiB),
# CPU_BENCH_FILTER (the CPU benchmarks' regex, default below), BUILD_DIR
# (/tmp/probkit-gpu-build), DEPS_DIR (/tmp/deps), STEP_TIMEOUT_* (seconds).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
outdir=${1:-${OUT:-$root/out/gpu-check}}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
jobs=${JOBS:-16}
arch=${CUDA_ARCH:-90}
keys=${BENCH_KEYS:-1000000000}
filter=${BENCH_FILTER:-}
build=${BUILD_DIR:-/tmp/probkit-gpu-build}
deps=${DEPS_DIR:-/tmp/deps}
t_configure=${STEP_TIMEOUT_CONFIGURE:-30}
t_build=${STEP_TIMEOUT_BUILD:-120}
t_test=${STEP_TIMEOUT_TEST:-90}
t_sanitize=${STEP_TIMEOUT_SANITIZE:-120}
t_bench=${STEP_TIMEOUT_BENCH:-110}
t_cpu_bench=${STEP_TIMEOUT_CPU_BENCH:-90}
start=$(date +%s)

log() { echo "[gpu-check +$(($(date +%s) - start))s] $*" | tee -a "$outdir/steps.log"; }
declare -A status seconds
step() {  # step NAME TIMEOUT LOGFILE COMMAND...
  local name=$1 limit=$2 logfile=$3
  shift 3
  local t0=$(date +%s)
  log "$name: $*"
  timeout --signal=TERM --kill-after=10 "$limit" "$@" >>"$outdir/$logfile" 2>&1
  local rc=$?
  seconds[$name]=$(($(date +%s) - t0))
  status[$name]=$rc
  log "$name: exit $rc after ${seconds[$name]}s (log: $logfile)"
  return $rc
}

# 1. Dependencies: unpack the carried .debs; point CMake, the loader and
#    pkg-config at them (PKG_CONFIG_SYSROOT_DIR rewrites the .pc files' /usr).
# At most 8 files come back from a device call: these are the 8.
for f in steps.log machine.txt build.log ctest.log gpu_bench.txt gpu_bench.json cpu_bench.json summary.json; do
  : >"$outdir/$f"
done
rm -f "$outdir/gpu_bench.json" "$outdir/cpu_bench.json"
if compgen -G ".deps/gpu/*.deb" >/dev/null; then
  mkdir -p "$deps"
  for f in .deps/gpu/*.deb; do dpkg -x "$f" "$deps" || log "dpkg -x $f failed"; done
  export CMAKE_PREFIX_PATH=$deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PKG_CONFIG_LIBDIR=$deps/usr/lib/x86_64-linux-gnu/pkgconfig:$deps/usr/share/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$deps
  command -v pkg-config >/dev/null || export PATH=$PATH:$deps/usr/bin
  log "unpacked $(ls .deps/gpu/*.deb | wc -l) packages into $deps"
else
  log "no .deps/gpu/*.deb: using the system's libraries (run scripts/fetch-gpu-deps.sh and carry .deps/gpu)"
fi
command -v nvcc >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
{
  echo "== nvidia-smi"; nvidia-smi 2>&1
  echo "== nvcc"; nvcc --version 2>&1
  echo "== cmake"; cmake --version 2>&1 | head -1
  echo "== c++"; c++ --version 2>&1 | head -1
  echo "== cpus"; nproc
  echo "== lscpu"; lscpu 2>&1
} >"$outdir/machine.txt" 2>&1
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
log "GPU: ${gpu_name:-none found}"

# 2. Configure and build (tests and GPU benchmarks, CUDA required).
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
step configure "$t_configure" build.log cmake -S . -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DPROBKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DPROBKIT_BUILD_TESTS=ON -DPROBKIT_BUILD_BENCH=ON
if [ "${status[configure]}" -eq 0 ]; then
  step build "$t_build" build.log cmake --build "$build" -j "$jobs"
fi

# 3. Every test (the CUDA identity tests run here; none may skip for want of a GPU).
if [ "${status[build]:-1}" -eq 0 ]; then
  step test "$t_test" ctest.log ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 80
fi

# 3b. The CUDA tests and the identity suite's Cuda0 rows once more, under
#     compute-sanitizer's memcheck: an out-of-bounds or misaligned access
#     need not change any result the identity tests compare (its log follows
#     ctest's in ctest.log). Left out:
#     DeviceOutOfMemoryIsAnAllocationError, whose 1 TiB cudaMalloc fails on
#     purpose (memcheck reports every failed API call as an error); ctest ran it.
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ "${status[build]:-1}" -eq 0 ] && [ -n "$gpu_name" ] && [ -x "$sanitizer" ]; then
  echo "== compute-sanitizer memcheck" >>"$outdir/ctest.log"
  step sanitize "$t_sanitize" ctest.log "$sanitizer" --tool memcheck --error-exitcode 1 \
    "$build/tests/probkit_tests" --gtest_filter='Cuda*:*Cuda0*:-CudaHost.DeviceOutOfMemoryIsAnAllocationError'
else
  log "sanitize: skipped (needs the build, a GPU and compute-sanitizer)"
fi

# 4. GPU benchmarks beside their speed-of-light probes, one group at a time
#    (the ones with floors first), each with what is left of the step's time,
#    so that a slow group cannot take the others' results with it.
bench_bin=$build/bench/gpu/probkit_gpu_bench
if [ -x "$bench_bin" ]; then
  bench_tmp=$(mktemp -d)
  bench_end=$(($(date +%s) + t_bench))
  t0=$(date +%s)
  status[bench]=0
  for group in BloomContains HllAdd BloomAdd BloomCount BloomAddHostKeys HllAddHostKeys; do
    left=$((bench_end - $(date +%s)))
    if [ "$left" -le 5 ]; then
      log "bench $group: skipped, out of time"
      status[bench]=124
      continue
    fi
    log "bench $group: --keys=$keys (${left}s left)"
    timeout --signal=TERM --kill-after=5 "$left" "$bench_bin" --keys="$keys" \
      --benchmark_filter="^$group/.*$filter" --benchmark_out="$bench_tmp/$group.json" \
      --benchmark_out_format=json >>"$outdir/gpu_bench.txt" 2>&1
    rc=$?
    log "bench $group: exit $rc"
    [ "$rc" -eq 0 ] || status[bench]=$rc
  done
  seconds[bench]=$(($(date +%s) - t0))
  python3 - "$bench_tmp" "$outdir/gpu_bench.json" <<'EOF' || log "merging benchmark JSON failed"
import glob, json, os, sys
merged = None
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        data = json.load(open(path))
    except Exception:
        continue  # a group killed mid-run leaves no or partial JSON
    if merged is None:
        merged = data
    else:
        merged["benchmarks"] += data.get("benchmarks", [])
if merged is not None:
    json.dump(merged, open(sys.argv[2], "w"), indent=1)
EOF
fi

# 4b. The CPU benchmarks of the host's best SIMD target, one thread (the
#     figures of the CPU issue's table and contains/add by k), and u64
#     contains, add and HLL add at all threads too (the host has 16 cores,
#     ours 2), as JSON only.
cpu_bin=$build/bench/probkit_bench
if [ -x "$cpu_bin" ]; then
  best=$("$cpu_bin" --benchmark_list_tests --benchmark_filter='^bloom_contains_k/' 2>/dev/null |
    sed -n 's#.*/engine=\([^/]*\)/.*#\1#p' | grep -v -x scalar | head -1)  # scalar, best, AVX2
  one_thread="(bloom_(contains|add|count)/layout=cacheline512/keys=(u64|str16|prehashed)/size=(256KiB|1GiB)|bloom_(contains|add)_k/.*|hll_add/.*|hash/.*)/engine=${best:-none}/threads=1/"
  all_threads="(bloom_(contains|add)/layout=cacheline512/keys=u64/size=(256KiB|1GiB)|hll_add/keys=u64/hash=xxh64)/engine=${best:-none}/threads=[0-9]+/"
  cpu_filter=${CPU_BENCH_FILTER:-"^($one_thread|$all_threads)"}
  # Its table on stdout is dropped (the JSON holds it); its errors go to steps.log.
  step cpu_bench "$t_cpu_bench" steps.log bash -c '"$@" >/dev/null' cpu_bench "$cpu_bin" \
    --benchmark_filter="$cpu_filter" --benchmark_out="$outdir/cpu_bench.json" --benchmark_out_format=json
else
  log "cpu_bench: skipped (no $cpu_bin)"
fi

# 5. Summary.
total=$(($(date +%s) - start))
python3 - "$outdir" "$total" "${gpu_name:-}" "$keys" \
  "configure=${status[configure]:-skipped}:${seconds[configure]:-0}" \
  "build=${status[build]:-skipped}:${seconds[build]:-0}" \
  "test=${status[test]:-skipped}:${seconds[test]:-0}" \
  "sanitize=${status[sanitize]:-skipped}:${seconds[sanitize]:-0}" \
  "bench=${status[bench]:-skipped}:${seconds[bench]:-0}" \
  "cpu_bench=${status[cpu_bench]:-skipped}:${seconds[cpu_bench]:-0}" <<'EOF' || log "summary: python3 failed"
import json, os, re, sys
outdir, total, gpu, keys = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
steps = {}
for arg in sys.argv[5:]:
    name, rest = arg.split("=", 1)
    rc, secs = rest.rsplit(":", 1)
    steps[name] = {"exit": int(rc) if rc.lstrip("-").isdigit() else rc, "seconds": int(secs)}
summary = {"gpu": gpu or None, "keys": keys, "total_seconds": total, "steps": steps}
log = os.path.join(outdir, "ctest.log")
text, memcheck = "", ""
if os.path.exists(log):
    text, _, memcheck = open(log, errors="replace").read().partition("== compute-sanitizer memcheck")
    # ctest writes "N% tests passed, F tests failed out of T", or, with no
    # failures, "100% tests passed out of T" (newer) / "..., 0 tests failed out of T".
    m = re.search(r"(\d+)% tests passed(?:, (\d+) tests failed)? out of (\d+)", text)
    if m:
        summary["tests"] = {"total": int(m.group(3)), "failed": int(m.group(2) or 0),
                            "skipped": len(re.findall(r"\(Skipped\)", text)),
                            "failed_names": re.findall(r"\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted)\)", text),
                            "skipped_names": re.findall(r"\d+ - (\S+) \(Skipped\)", text)}
m = re.search(r"ERROR SUMMARY: (\d+) error", memcheck)
if m:
    summary["sanitizer_errors"] = int(m.group(1))
bench = os.path.join(outdir, "gpu_bench.json")
if os.path.exists(bench):
    try:
        data = json.load(open(bench))
        rows = {}
        for b in data.get("benchmarks", []):
            if b.get("aggregate_name", "median") != "median":
                continue
            name = b.get("run_name", b["name"])
            rows[name] = {k: b[k] for k in ("real_time", "time_unit", "Gkeys/s", "probe_G/s", "ratio") if k in b}
        summary["benchmarks_median"] = rows
        # The CUDA issue's floors on one H200: contains on a 2 GiB filter and
        # HLL add (p = 14, the default sketch) at >= 70% of their probes.
        # HllAdd/p18 (the global-memory path, for sketches too big for a
        # CTA's shared memory) is measured, with no floor.
        floors = {}
        for name, row in rows.items():
            if ("BloomContains/" in name and "/2GiB" in name) or name.startswith("HllAdd/p14"):
                if "ratio" in row:
                    floors[name] = {"ratio": row["ratio"], "floor": 0.7, "met": row["ratio"] >= 0.7}
        summary["floors"] = floors
    except Exception as e:  # a benchmark killed mid-write leaves partial JSON
        summary["benchmarks_error"] = str(e)
# The host's CPU and its CPU benchmarks (M keys/s; vs_probe and
# vs_reference as bench/README.md defines them).
machine = os.path.join(outdir, "machine.txt")
if os.path.exists(machine):
    m = re.search(r"^Model name:\s*(.+)$", open(machine, errors="replace").read(), re.M)
    summary["cpu"] = {"model": m.group(1).strip() if m else None}
cpu = os.path.join(outdir, "cpu_bench.json")
if os.path.exists(cpu) and os.path.getsize(cpu) > 0:
    try:
        data = json.load(open(cpu))
        ctx = data.get("context", {})
        summary.setdefault("cpu", {}).update({k: ctx.get(k) for k in ("probkit_engines", "probkit_core_clock_ghz")})
        summary["cpu_benchmarks_median"] = {
            b["run_name"]: {"M keys/s": round(b["keys_per_s"] / 1e6, 1),
                            **{k: round(b[k], 3) for k in ("vs_probe", "vs_reference") if b.get(k)}}
            for b in data.get("benchmarks", []) if b.get("aggregate_name") == "median"}
    except Exception as e:  # killed mid-write: partial JSON
        summary["cpu_benchmarks_error"] = str(e)
json.dump(summary, open(os.path.join(outdir, "summary.json"), "w"), indent=2)
print(json.dumps(summary, indent=2))
EOF
log "done in ${total}s; summary: $outdir/summary.json"
ok=0
for s in configure build test bench cpu_bench; do
  [ "${status[$s]:-1}" -eq 0 ] || ok=1
done
[ "${status[sanitize]:-0}" -eq 0 ] || ok=1  # skipped without a GPU: not a failure
exit $ok
