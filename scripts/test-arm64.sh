#!/usr/bin/env bash
# Cross-compiles probkit and probkit_tests for aarch64 (Debian's GCC cross
# compiler, cmake/aarch64-linux-gnu.cmake) and runs the tests under qemu-user
# on several emulated CPUs, so that the NEON and SVE Highway targets are held
# to the scalar backend at several SVE vector lengths (DESIGN.md §6).
#
# Usage: scripts/test-arm64.sh [--install]   (--install: install, then stop)
#
# Installs what it needs, skipping what is there: the cross compiler and qemu
# (apt), and Debian's arm64 Highway, GoogleTest and libxxhash packages, which
# are downloaded and unpacked with `dpkg -x` into .deps/arm64-sysroot (nothing
# arm64 is installed on the host; dpkg only learns the arm64 architecture so
# that apt can download them). Builds into build-arm64 (PROBKIT_ARM64_BUILD_DIR).
#
# Left out of the cross build: CUDA, the benchmarks (Google Benchmark), the
# command line and its Python/Redis tests, the install test and the simulated
# CUDA runtime's test program (none of them runs Highway kernels of its own).
#
# The runs, two at a time (emulation is slow: the full suite takes minutes):
#   max             SVE 512-bit: SVE2, SVE, NEON; the whole gtest suite except
#                   Accuracy.* (statistics over fixed seeds, independent of
#                   the backend: 2+ minutes emulated, proves nothing about Arm)
#                   and ForkedChild.* (qemu-user aborts in a forked child that
#                   starts a thread: qemu_plugin_vcpu_init_hook, assertion
#                   failed; the emulator's limit, not the library's)
#   max,sve128=on   SVE 128-bit: adds SVE2_128; kernel tests, and the identity
#                   and bulk-hash suites for SVE2_128 (1 and 2 threads)
#   max,sve256=on   SVE 256-bit: adds SVE_256; likewise for SVE_256
#   max,sve384=on   SVE 384-bit (not a power of two; Highway uses 256 of it):
#                   kernel tests, identity and bulk hash for SVE2 (1 thread)
#   max,sve2048=on  SVE 2048-bit (wider than any capped tag): kernel tests,
#                   identity and bulk hash for SVE (1 thread)
#   max,sve=off     a NEON-only CPU: kernel and dispatch tests
#   max             the backend fuzz target's corpus (fuzz/README.md): a
#                   thousand-odd shapes and key batches, each SIMD target
#                   against the scalar backend
# Each run prints the targets it saw ("probkit SIMD targets supported: ...")
# and fails if one it should cover is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# Host tools.
host_packages=(cmake ninja-build pkg-config g++-aarch64-linux-gnu qemu-user)
missing=()
for p in "${host_packages[@]}"; do installed "$p" || missing+=("$p"); done
if ((${#missing[@]})); then
  $SUDO apt-get update -qq
  echo "== installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# arm64 libraries, unpacked into a private tree. The stamp records the packages
# unpacked; the tree is made again when it is missing or the list changed
# (delete .deps/arm64-sysroot to pick up newer package versions).
arm_packages=(libhwy-dev libhwy1 libgtest-dev libxxhash-dev libxxhash0)
sysroot=$root/.deps/arm64-sysroot
debs=$root/.deps/arm64-debs
stamp=$sysroot/.probkit-packages
want=$(printf '%s\n' "${arm_packages[@]}")
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
  apt-cache show libhwy-dev:arm64 >/dev/null 2>&1 || $SUDO apt-get update -qq
  rm -rf "$debs" "$sysroot"
  mkdir -p "$debs" "$sysroot"
  (cd "$debs" && apt-get download -qq -o APT::Sandbox::User=root "${arm_packages[@]/%/:arm64}")
  for f in "$debs"/*.deb; do dpkg -x "$f" "$sysroot"; done
  echo "$want" >"$stamp"
fi
export PROBKIT_ARM64_SYSROOT=$sysroot
# --install: only the installation above (scripts/test.sh tells a failed
# installation, which it reports as a skip, from failed tests).
[[ ${1:-} != --install ]] || exit 0
echo "== arm64 packages: $(cd "$debs" 2>/dev/null && ls *.deb 2>/dev/null | tr '\n' ' ')"

# Configure and build (the test list is discovered under qemu's default CPU).
build=${PROBKIT_ARM64_BUILD_DIR:-build-arm64}
unset QEMU_CPU
mkdir -p "$build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
  -DPROBKIT_CUDA=OFF -DPROBKIT_BUILD_BENCH=OFF -DPROBKIT_BUILD_TOOLS=OFF -DPROBKIT_BUILD_TESTS=ON \
  >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target probkit_tests probkit_fuzz_replay_backends
built=$(date +%s)

tests=$build/tests/probkit_tests
logs=$build/qemu-logs
rm -rf "$logs"
mkdir -p "$logs"

# require_targets LOG NAME SEEN TARGETS...: fails, and says so in LOG, if a
# target is missing from SEEN (the targets a run printed that it covered).
require_targets() {
  local log=$1 name=$2 seen=$3 rc=0
  shift 3
  for t in "$@"; do
    if [[ " $seen " != *" $t "* ]]; then
      echo "run $name: target $t did not run (saw:$seen)" >>"$log"
      rc=1
    fi
  done
  return $rc
}

# run NAME QEMU_CPU GTEST_FILTER REQUIRED_TARGETS...: one emulated run, logged.
run() {
  local name=$1 cpu=$2 filter=$3
  shift 3
  local log=$logs/$name.log t0=$(date +%s) rc=0
  echo "QEMU_CPU=$cpu --gtest_filter=$filter" >"$log"
  QEMU_CPU=$cpu qemu-aarch64 -L /usr/aarch64-linux-gnu "$tests" --gtest_color=no \
    --gtest_filter="$filter" >>"$log" 2>&1 || rc=$?
  require_targets "$log" "$name" "$(sed -n 's/^probkit SIMD targets supported://p' "$log")" "$@" || rc=1
  echo "$rc $(($(date +%s) - t0))" >"$log.rc"
}

# replay_backends NAME QEMU_CPU REQUIRED_TARGETS...: the backend fuzz target
# over its committed corpus, logged.
replay_backends() {
  local name=$1 cpu=$2
  shift 2
  local log=$logs/$name.log t0=$(date +%s) rc=0
  echo "QEMU_CPU=$cpu fuzz/corpus/backends" >"$log"
  QEMU_CPU=$cpu qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/fuzz/probkit_fuzz_replay_backends" \
    fuzz/corpus/backends >>"$log" 2>&1 || rc=$?
  require_targets "$log" "$name" "$(sed -n 's/^backends fuzz: SIMD targets//p' "$log")" "$@" || rc=1
  echo "$rc $(($(date +%s) - t0))" >"$log.rc"
}

kernels='SimdTargets.*:SimdKernels.*'
suites() {  # the identity and bulk-hash suites for these configurations (TARGET_threadsN)
  local f=Backends/*.AutoServes* c
  for c in "$@"; do f+=":Backends/*/$c"; done
  echo "$f"
}
{
  run sve512 max "-Accuracy.*:ForkedChild.*" SVE2 SVE NEON
} &
{
  run sve128 max,sve128=on "$kernels:$(suites SVE2_128_threads1 SVE2_128_threads2)" \
    SVE2_128 SVE2 SVE NEON
  run sve256 max,sve256=on "$kernels:$(suites SVE_256_threads1 SVE_256_threads2)" \
    SVE_256 SVE2 SVE NEON
  run sve384 max,sve384=on "$kernels:$(suites SVE2_threads1)" SVE2 SVE NEON
  run sve2048 max,sve2048=on,sve-default-vector-length=256 "$kernels:$(suites SVE_threads1)" \
    SVE2 SVE NEON
  run neon max,sve=off "$kernels:Dispatch.*" NEON
  replay_backends fuzz_backends max SVE2 SVE NEON
} &
wait

# Summary: per run the targets, the vector length and gtest's counts.
status=0 passed=0 failed=0 skipped=0
for name in sve512 sve128 sve256 sve384 sve2048 neon; do
  log=$logs/$name.log
  read -r rc secs <"$log.rc"
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\./\1/p' "$log")
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\?, listed below:/\1/p' "$log")
  k=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?, listed below:/\1/p' "$log")
  p=${p:-0} f=${f:-0} k=${k:-0}
  [ "$rc" = 0 ] || { [ "$f" != 0 ] || f=1; }
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
  printf '== %-8s %4ss  rc %s  passed %s failed %s skipped %s |%s |%s\n' "$name" "$secs" "$rc" \
    "$p" "$f" "$k" \
    "$(sed -n 's/^probkit SIMD targets supported://p' "$log")" \
    "$(sed -n 's/^SVE vector length: //p' "$log")"
  if [ "$rc" != 0 ]; then
    status=1
    grep -E "^\[  FAILED  \]|Failure|did not run" "$log" | head -40 || true
    echo "   (full log: $log)"
  fi
done
log=$logs/fuzz_backends.log
read -r rc secs <"$log.rc"
printf '== %-8s %4ss  rc %s  %s |%s\n' fuzz "$secs" "$rc" "$(grep -E '^replay:' "$log" || echo "no summary")" \
  "$(sed -n 's/^backends fuzz: SIMD targets//p' "$log")"
if [ "$rc" != 0 ]; then
  status=1 failed=$((failed + 1))
  tail -20 "$log"
  echo "   (full log: $log)"
fi
echo "== compiled:$(sed -n 's/^probkit SIMD targets compiled://p' "$logs/sve512.log")"
echo "== build $((built - start))s, tests $(($(date +%s) - built))s, total $(($(date +%s) - start))s"
echo "arm64: $passed passed, $failed failed, $skipped skipped"
exit $status
