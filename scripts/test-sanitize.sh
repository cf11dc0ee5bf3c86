#!/usr/bin/env bash
# The whole test suite built with the sanitizers: AddressSanitizer and
# UndefinedBehaviorSanitizer (default), or ThreadSanitizer (--thread). Every
# CPU path runs instrumented, and so does the CUDA backend's host code under
# the simulated runtime (tests/cuda_sim); nvcc is left out (PROBKIT_CUDA=OFF).
# Any report fails the run: UBSan does not recover, ASan and TSan exit
# non-zero, LeakSanitizer runs at exit.
#
#   scripts/test-sanitize.sh            ASan + UBSan, in build-asan/
#   scripts/test-sanitize.sh --thread   TSan, in build-tsan/
#
# Not part of .ci/run: on two cores the build and run take about 11 minutes
# (35 with --thread, whose tests run 5x slower), which would take CI past its
# time budget. Run it after changing kernels, the bulk
# driver, the worker pool or the CUDA backend's host code.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case $mode in
  "") flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined"; build=build-asan ;;
  --thread) flags="-fsanitize=thread"; build=build-tsan; export PROBKIT_SANITIZER=thread ;;
  *) echo "usage: $0 [--thread]" >&2; exit 2 ;;
esac
build=${PROBKIT_BUILD_DIR:-$build}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROBKIT_CUDA=OFF -DPROBKIT_BUILD_BENCH=OFF \
  "-DCMAKE_CXX_FLAGS=$flags -fno-omit-frame-pointer" "-DCMAKE_EXE_LINKER_FLAGS=$flags"
cmake --build "$build" -j "$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-second_deadlock_stack=1}
# Skipped, with their reasons printed: tests/memory_test.cc (it reads glibc's
# heap, which the sanitizers' allocators bypass) and, under TSan, the CLI's
# signal test (TSan holds a signal for a thread blocked on a lock).
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
