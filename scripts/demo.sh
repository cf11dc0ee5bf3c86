#!/usr/bin/env bash
# The README's main job: builds probkit and runs `probkit bench`, which builds a
# Bloom filter and a HyperLogLog on generated data with every available backend
# and prints throughput, FPR, error and whether all backends agreed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${PROBKIT_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)" --target probkit_cli
exec "$build/tools/probkit" bench "$@"
