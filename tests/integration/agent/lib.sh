# lib.sh - helpers for the agent's integration tests (sourced).
# Real processes, real cgroups, real users: the tests run as root and
# create the users pxtest1/pxtest2 when missing. Nothing sleeps and hopes:
# every wait is on a condition with a deadline.
set -euo pipefail

: "${PHALANX:?PHALANX must name the phalanx binary}"
PX_SRC=${PX_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
source "$(dirname "${BASH_SOURCE[0]}")/../lib_skip.sh"

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    px_skip root "needs root (users, cgroups)"
  fi
}

ensure_users() {
  for u in pxtest1 pxtest2; do px_user "$u" -M -s /bin/sh || fail "no user $u"; done
  U1=$(id -u pxtest1); G1=$(id -g pxtest1); U2=$(id -u pxtest2); G2=$(id -g pxtest2)
}

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }

# wait_for SECONDS CMD...: polls CMD every 20 ms until it succeeds or time runs out.
wait_for() {
  local limit=$1; shift
  local end=$(( $(date +%s%N) / 1000000 + limit * 1000 ))
  until "$@" 2>/dev/null; do
    [ $(( $(date +%s%N) / 1000000 )) -lt $end ] || return 1
    sleep 0.02
  done
}

# launch_json ID USER SCRIPT [jq assignments...]: a one-node, one-task batch order.
launch_json() {
  local id=$1 user=$2 script=$3; shift 3
  local uid gid; uid=$(id -u "$user"); gid=$(id -g "$user")
  local extra="."
  for a in "$@"; do extra="$extra | $a"; done
  jq -n --argjson id "$id" --arg user "$user" --argjson uid "$uid" --argjson gid "$gid" \
     --arg script "$script" --arg wd "$WORK" \
     '{job_id:$id, user:$user, uid:$uid, gid:$gid, name:"t\($id)", workdir:$wd, submit_dir:$wd,
       script:$script, nodes:["n01"], node_rank:0, ntasks:1, tasks_per_node:[1], ncpus:1}' |
    jq "$extra"
}

# field FILE KEY: a top-level field of a JSON file.
field() { jq -r ".$2" "$1"; }

# Processes whose command line contains $1 (for checking, never for killing).
procs_with() { pgrep -f -- "$1" || true; }
# gone PID: no such process, or a zombie not yet reaped (it runs no more).
gone() { [ ! -e "/proc/$1" ] || [ "$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
# zygote_of AGENT: the agent's supervisor factory (its child named px-zygote).
zygote_of() { ps -o pid=,comm= --ppid "$1" | awk '$2 == "px-zygote" { print $1 }'; }
# cmdline PID: its command line as ps shows it.
cmdline() { tr '\0' ' ' <"/proc/$1/cmdline"; }

# Kills, by pid, whatever a failed test left in the cgroups of the jobs under
# a state directory (the agent normally leaves nothing), and removes them.
kill_leftovers() {
  local st jd
  # a supervisor still starting has no state.json yet: give it a moment
  for jd in "$1"/jobs/*/; do
    [ -d "$jd" ] && [ ! -e "$jd/status.json" ] && wait_for 10 test -e "$jd/state.json" || true
  done
  for st in "$1"/jobs/*/state.json; do
    [ -e "$st" ] || continue
    local pgid; pgid=$(jq -r '.pgid' "$st")
    for cg in $(jq -r '.cgroup[]' "$st"); do
      [ -e "$cg/cgroup.procs" ] || continue
      while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$cg/cgroup.procs"
    done
    [ "$pgid" -gt 0 ] && kill -9 -- "-$pgid" 2>/dev/null || true
    for cg in $(jq -r '.cgroup[]' "$st"); do rmdir "$cg" "$(dirname "$cg")" 2>/dev/null || true; done
  done
}

# A TCP port free right now on loopback (fixed ones sit in the ephemeral range).
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The mock server (agent/mock_server.py) on ADDR:PORT, optionally in a netns.
# Sets MOCK (base URL) and MOCK_PID; IN runs a command in the netns ("" = here).
start_mock() {
  local addr=$1 port=$2 ns=${3:-}
  MOCK=http://$addr:$port
  IN=${ns:+nsenter --net=/run/netns/$ns}
  $IN python3 "$PX_SRC/tests/integration/agent/mock_server.py" "$addr" "$port" &
  MOCK_PID=$!
  wait_for 30 mock_get /test/reports >/dev/null || fail "mock server did not start"
}
mock_get() { $IN curl -sf "$MOCK$1"; }
mock_post() {
  local data=${2:-'{}'}
  $IN curl -sf -X POST -H 'Content-Type: application/json' --data-binary "$data" "$MOCK$1" >/dev/null
}
# reported JOB NODE STATE: the mock server got that report.
reported() {
  mock_get /test/reports | jq -e --argjson j "$1" --arg n "$2" --arg s "$3" \
    'any(.[]; .job_id == $j and .node == $n and .state == $s)' >/dev/null
}
registered() { mock_get /test/registrations | jq -e --arg n "$1" 'has($n)' >/dev/null; }

# A private network: namespace $NS_BR holds a bridge; each host namespace
# gets a veth on it with an address 10.77.<net>.<n>. Names carry the test's
# pid so parallel runs never share them. net_up NET HOST...; net_down.
net_up() {
  local net=$1; shift
  NS_BR=pxbr$$
  NS_ALL=($NS_BR)
  ip netns add "$NS_BR"
  ip -n "$NS_BR" link add br0 type bridge
  ip -n "$NS_BR" link set br0 up
  local i=1
  for h in "$@"; do
    local ns=px$h$$
    ip netns add "$ns"
    NS_ALL+=("$ns")
    ip link add "v$h$$" type veth peer name "b$h$$"
    ip link set "v$h$$" netns "$ns"
    ip link set "b$h$$" netns "$NS_BR"
    ip -n "$ns" link set "v$h$$" name eth0
    ip -n "$ns" addr add "10.77.$net.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip -n "$NS_BR" link set "b$h$$" master br0
    ip -n "$NS_BR" link set "b$h$$" up
    i=$((i + 1))
  done
}
net_down() {
  local ns
  for ns in "${NS_ALL[@]:-}"; do [ -n "$ns" ] && ip netns del "$ns" 2>/dev/null || true; done
}

# Fails when a sanitizer complained in any of the given logs (agents and
# supervisors write their stderr there, so the ASan build's findings count).
sanitizer_clean() {
  local f
  for f in "$@"; do
    [ -e "$f" ] || continue
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$f"; then
      grep -m1 -A12 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$f" >&2
      fail "sanitizer report in $f"
    fi
  done
  ok "no sanitizer report in the agents' logs"
}
