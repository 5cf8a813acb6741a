#!/usr/bin/env bash
# The end-to-end demo: a local cluster with emulated GPUs, sample work, the
# queue moving. Until the server and agent land it runs what exists.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
px="$build/phalanx"
echo "== phalanx $($px version)"
if [ -f examples/cluster/slurm.conf ]; then
  echo "== configuration check"
  "$px" config check examples/cluster/slurm.conf || true
fi
echo "demo: the local cluster (phalanx dev) is not built yet; nothing is scheduled."
