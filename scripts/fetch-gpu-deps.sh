#!/usr/bin/env bash
# Downloads the Debian packages that the GPU machine lacks (Highway,
# GoogleTest, Google Benchmark, xxhash) into .deps/gpu/ (git-ignored), for
# scripts/gpu-check.sh to unpack there: the device call carries .deps/gpu.
# Needs apt's package lists (apt-get update) but no root.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps/gpu
cd .deps/gpu
# pkgconf (+ its library) only serves images without pkg-config.
apt-get download libhwy-dev libhwy1 libxxhash-dev libxxhash0 libgtest-dev googletest \
  libbenchmark-dev libbenchmark1debian pkgconf pkgconf-bin libpkgconf3
ls -l ./*.deb
