#!/usr/bin/env bash
# Installs what the peer comparison (bench/peers/run.py) and the report
# (bench/report.py) use. Optional: the library and its tests need none of it.
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq || true
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libbloom-dev redis-server ||
  echo "peers/install: libbloom-dev or redis-server not installed; they will be reported missing" >&2
for pkg in numpy matplotlib pandas pyarrow rbloom fastbloom-rs pyprobables datasketches duckdb chdb redis; do
  python3 -m pip install -q "$pkg" || echo "peers/install: $pkg not installed; it will be reported missing" >&2
done
