#!/usr/bin/env bash
# The whole test suite built with the sanitizers: AddressSanitizer and
# UndefinedBehaviorSanitizer (default), or ThreadSanitizer (--thread). Every
# CPU path runs instrumented, and so does the CUDA backend's host code under
# the simulated runtime (tests/cuda_sim); nvcc is left out (PROBKIT_CUDA=OFF).
# Any report fails the run: UBSan does not recover, ASan and TSan exit
# non-zero, LeakSanitizer runs at exit.
#
#   scripts/test-sanitize.sh                    ASan + UBSan, in build-asan/
#   scripts/test-sanitize.sh --quick            ASan + UBSan, in build-asan-quick/
#   scripts/test-sanitize.sh --thread           TSan, in build-tsan/
#   scripts/test-sanitize.sh --thread --quick   TSan, in build-tsan-quick/
#
# --quick is what scripts/test.sh (CI) runs: -O1 and one Highway target per
# x86 code family; for ASan + UBSan every test but the accuracy statistics,
# against libprobkit built as a shared library, about 5.5 minutes on two
# cores; for TSan, whose tests run 5x slower, only
# the tests of the multi-threaded machinery (the worker pool, the Bloom hash
# exchange, the multi-threaded bulk paths against one thread, const calls on
# shared objects), about 1.5 minutes. The whole runs take about 10 and 35
# minutes, which would take CI past its time budget: run them after changing
# kernels, the bulk driver, the worker pool or the CUDA backend's host code.
set -euo pipefail
cd "$(dirname "$0")/.."

flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined" build=build-asan quick="" thread=""
for arg in "$@"; do
  case $arg in
    --thread) flags="-fsanitize=thread" build=build-tsan thread=1; export PROBKIT_SANITIZER=thread ;;
    --quick) quick=1 ;;
    *) echo "usage: $0 [--thread] [--quick]" >&2; exit 2 ;;
  esac
done
select_tests=() optimize="-O2 -g" defines="" targets=() library_kind=()
if [[ -n $quick ]]; then
  build+=-quick
  # -O1 and line tables only: half the compile time of -O2 -g.
  optimize="-O1 -g1"
  # One Highway target per code family: the x86 kernels branch on AVX3 (with
  # AVX3_DL), AVX2 and SSE4 (with SSSE3), so AVX3_DL and SSSE3 are left out
  # (Highway's HWY_DISABLED_TARGETS: 1 << 7 | 1 << 12).
  [[ $(uname -m) != x86_64 ]] || defines="-DHWY_DISABLED_TARGETS=4224"
  if [[ -n $thread ]]; then
    # The tests that run threads against each other (tests/bulk_test.cc,
    # tests/worker_pool_test.cc, tests/shared_objects_test.cc, the workers'
    # string offset checks), all in probkit_tests; the identity suite's
    # threads2 runs would take TSan over 2 minutes per backend.
    targets=(--target probkit_tests)
    select_tests=(-R '^(WorkerPool|ParallelCopy|HashRing|ExchangedHashChunks|MultiThreadedAdd|MultiThreadedHllAdd|SharedObjects)\.|^BadInput\.StringOffsetsAcrossWorkers$')
  else
    # Statistics over fixed seeds, through the paths the identity tests run.
    select_tests=(-E '^Accuracy\.')
    # libprobkit.so, where the native build makes libprobkit.a: the programs
    # that use only the public API (the command line, the installed
    # package's consumer, the static-initialisation test, the byte readers'
    # fuzz replays) then run against a shared library too, at no extra
    # build, and exports.PublicApiOnly checks what it exports. The tests
    # that reach the machinery link the same objects as a static library
    # (probkit_internals, src/CMakeLists.txt).
    library_kind=(-DBUILD_SHARED_LIBS=ON)
  fi
fi
build=${PROBKIT_BUILD_DIR:-$build}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROBKIT_CUDA=OFF -DPROBKIT_BUILD_BENCH=OFF \
  "${library_kind[@]}" \
  "-DCMAKE_CXX_FLAGS=$flags $defines -fno-omit-frame-pointer" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$optimize -DNDEBUG" \
  "-DCMAKE_EXE_LINKER_FLAGS=$flags"
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-second_deadlock_stack=1}
# Skipped, with their reasons printed: tests/memory_test.cc (it reads glibc's
# heap, which the sanitizers' allocators bypass) and, under TSan, the CLI's
# signal test (TSan holds a signal for a thread blocked on a lock).
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${select_tests[@]}"
