# lib_skip.sh - sourced by the integration tests: the one way to skip.
# px_skip NEED REASON says why on stdout, records "TEST NEED REASON" in
# $PX_SKIP_LOG when ctest sets it (tests/CMakeLists.txt), and exits 77, which
# ctest reports as "Skipped", never as passed. NEED names what this machine
# lacks (root, cgroup-v1, postgresql, shared, cc, iproute2, musl, browser); .ci/run
# checks each recorded NEED on its own and fails when the machine has it.
px_skip() {
  local need=$1; shift
  echo "SKIP ($need): $*"
  [ -n "${PX_SKIP_LOG:-}" ] && echo "integration/$(basename "$0" .sh) $need $*" >>"$PX_SKIP_LOG"
  exit 77
}
