#!/usr/bin/env bash
# Installs what probkit's build and tests need on a fresh Debian 12 machine.
# Idempotent: packages already present are skipped quickly.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libhwy-dev libxxhash-dev libgtest-dev libgmock-dev
          libbenchmark-dev
          python3  # the command line's tests (tests/cli), the golden vectors' generator
          redis-server redis-tools)  # the command line's Redis interoperability tests
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
