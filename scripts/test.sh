#!/usr/bin/env bash
# The README's test command: installs dependencies, builds everything (the
# CUDA backend too when nvcc is present) and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${PROBKIT_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROBKIT_WARNINGS_AS_ERRORS=ON
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

# The suite again under AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/test-sanitize.sh --quick: -O1, one Highway target per x86 code
# family, no accuracy statistics; about 5.5 minutes on two cores), then the
# tests of the multi-threaded machinery under ThreadSanitizer (--thread
# --quick, about 1.5 minutes). Any report fails them.
if [[ -n ${PROBKIT_SKIP_SANITIZE:-} ]]; then
  echo "test.sh: SKIPPED the sanitizer runs (PROBKIT_SKIP_SANITIZE is set)"
else
  scripts/test-sanitize.sh --quick
  scripts/test-sanitize.sh --thread --quick
fi

# The Arm Highway targets, under qemu (scripts/test-arm64.sh, about 9 minutes on
# two cores). A host that cannot install the cross tools or the arm64 packages
# (no network, another CPU) skips it and says so; a failing test fails.
if [[ -n ${PROBKIT_SKIP_ARM64:-} ]]; then
  echo "test.sh: SKIPPED the aarch64 tests under qemu (PROBKIT_SKIP_ARM64 is set)"
elif [[ $(uname -m) != x86_64 ]]; then
  echo "test.sh: SKIPPED the aarch64 tests under qemu (they cross-compile from x86-64; this is $(uname -m))"
elif ! scripts/test-arm64.sh --install; then
  echo "test.sh: SKIPPED the aarch64 tests under qemu: installing the cross compiler, qemu or the arm64 packages failed"
else
  scripts/test-arm64.sh
fi
