# lib_skip.sh - sourced by the integration tests: the one way to skip, the
# run's number for the processes a test looks up (RUN_NO) and the test
# users (px_user), both safe with a second suite running on the machine.
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

# RUN_NO: this run's number, for the command lines a test finds its
# processes by (pgrep -f 'sleep 4741\.'$RUN_NO): a second suite on the
# machine runs the same tests at the same time (a tree's `make test` beside
# CI's fresh clone), and its processes must not count as this run's. The
# pid, seven digits wide (pid_max is at most 2^22), so that no run's number
# is a prefix of another's; as a sleep's fraction it leaves the duration be.
RUN_NO=$(printf %07d $$)

# px_user NAME USERADD-ARGS...: the system user NAME, made when missing (as
# root; others use what is there). Two suites at once both find it missing:
# one useradd then fails (the name taken, /etc/passwd locked), which is
# fine once the user is there; it tries again, 30 s at most.
px_user() {
  local name=$1 deadline=$((SECONDS + 30))
  shift
  [ "$(id -u)" = 0 ] || return 0
  until id "$name" >/dev/null 2>&1; do
    useradd "$@" "$name" 2>/dev/null && return 0
    [ $SECONDS -lt $deadline ] || { echo "cannot make the user $name" >&2; return 1; }
    sleep 0.1
  done
}
