#!/usr/bin/env bash
# Accounting of node events (issue 21; sacctmgr show event, as Slurm's
# event table) against a real server, on SQLite and then on PostgreSQL:
#  - an operator's drain opens a DRAIN row (reason, user) and the resume
#    ends it; a node gone silent opens a DOWN row ("Not responding", by the
#    server) that its return ends; a drained node that goes silent has its
#    drain's row ended by the DOWN row, and reopened once it is back;
#  - sacctmgr's default listing, -n -P, Nodes=, Start= and End= filters;
#  - a restart (the journal replayed) writes no row twice;
#  - a bad Start= or start= is refused with the field named.
# Nodes stay alive through a loop of registrations (a fake agent per node
# named in $T/alive); SlurmdTimeout is 3 s.
source "$(dirname "$0")/lib_server.sh"
NODE_TIMEOUT=3
write_config
mkdir -p "$T/bin"
ln -s "$PHALANX" "$T/bin/sacctmgr"
export PATH="$T/bin:$PATH" PHALANX_SERVER=$SOCK
store=()
store_name=SQLite

node_state() { expect 200 root GET "/v1/nodes/$1" | jq -r .state; }
state_is() { node_state "$1" | grep -q "$2"; }
state_not() { ! node_state "$1" | grep -q "$2"; }
events() { sacctmgr -n -P show event "$@" </dev/null; }
# node|state|reason|open-or-closed, one per row
rows() { events "$@" | awk -F'|' '{ print $2 "|" $5 "|" $6 "|" ($4 == "Unknown" ? "open" : "closed") }'; }
alive() { echo "$*" >"$T/alive"; }
# registers the nodes in $T/alive every 0.3 s (a heartbeat), with the
# reports made once (an error in the loop must not end it)
keepalive() {
  for n in n01 n02; do node_report "$n" >"$T/report.$n"; done
  while :; do
    for n in $(cat "$T/alive" 2>/dev/null); do
      curl -s -o /dev/null --unix-socket "$SOCK" -H 'Content-Type: application/json' \
        --data-binary "@$T/report.$n" http://x/v1/agent/register || true
    done
    sleep 0.3
  done
}

scenario() {
  start_server "${store[@]}"
  alive n01 n02
  keepalive &
  EXTRA_PIDS+=($!)
  wait_for "n01 and n02 up" bash -c "! curl -s --unix-socket '$SOCK' http://x/v1/nodes | jq -e '.nodes[] | select(.name == \"n01\" or .name == \"n02\") | select(.state | test(\"DOWN\"))'"
  [ -z "$(events)" ] || fail "events before any: $(events)"

  expect 200 pxoper POST /v1/nodes/n01/drain '{"reason":"bad fan"}' >/dev/null
  alive n01
  wait_for "n02 DOWN" state_is n02 DOWN
  alive n01 n02
  wait_for "n02 back" state_not n02 DOWN
  expect 200 pxoper POST /v1/nodes/n01/resume >/dev/null
  want=$'n01|DRAIN|bad fan|closed\nn02|DOWN|Not responding|closed'
  [ "$(rows | sort)" = "$want" ] || fail "after a drain and an outage ($store_name): $(events)"
  events | grep -q "^test|n01|.*|DRAIN|bad fan|pxoper($(id -u pxoper))$" || fail "n01's row: $(events)"
  events | grep -q "^test|n02|.*|DOWN|Not responding|$(id -un)($(id -u))$" || fail "n02's row: $(events)"
  ok "a drain and an outage, each one row, ended when over ($store_name)"

  # a drained node goes silent: its drain's row ends, the DOWN row opens,
  # and once it is back its drain goes on in a row of its own
  expect 200 pxoper POST /v1/nodes/n01/drain '{"reason":"psu"}' >/dev/null
  alive n02
  wait_for "n01 DOWN" state_is n01 DOWN
  alive n01 n02
  wait_for "n01 back" state_not n01 DOWN
  want=$'n01|DRAIN|psu|closed\nn01|DOWN|Not responding|closed\nn01|DRAIN|psu|open'
  [ "$(rows Nodes=n01 | tail -3)" = "$want" ] || fail "a drained node's outage ($store_name): $(events Nodes=n01)"
  [ "$(rows Nodes=n02)" = "n02|DOWN|Not responding|closed" ] || fail "Nodes=n02: $(events Nodes=n02)"
  [ "$(rows 'Nodes=n[01-02]' | wc -l)" = 5 ] || fail "Nodes=n[01-02]: $(events)"
  ok "a drained node's outage: drain, down, drain again; Nodes= filters ($store_name)"

  # Start= in the future: only what is still open; End= before all: nothing
  [ "$(rows Start=now+1hour)" = "n01|DRAIN|psu|open" ] || fail "Start=now+1hour: $(events Start=now+1hour)"
  [ -z "$(events End=2000-01-01T00:00:00)" ] || fail "End=2000-01-01: $(events End=2000-01-01T00:00:00)"
  header=$(sacctmgr show event </dev/null | head -2)
  want=$'   Cluster NodeName                  TimeStart             TimeEnd  State                         Reason       User \n---------- --------------- ------------------- ------------------- ------ ------------------------------ ---------- '
  [ "$header" = "$want" ] || fail "header: $header"
  sacctmgr show event </dev/null | sed 's/^/  /'
  ok "Slurm's table; Start= and End= ($store_name)"

  out=$(sacctmgr show event Start=bogus 2>&1 </dev/null) && fail "Start=bogus accepted: $out"
  grep -q 'Invalid time specification (pos=0): bogus' <<<"$out" || fail "Start=bogus: $out"
  out=$(expect 400 root GET '/v1/accounting/events?start=yesterday')
  grep -q '"start: expected a Unix time"' <<<"$out" || fail "start=yesterday: $out"
  ok "a bad time refused, the field named ($store_name)"

  # a restart replays the journal: the drain is not written again
  before=$(events)
  stop_server TERM
  start_server "${store[@]}"
  wait_for "n01 registered again" state_is n01 DRAIN
  wait_for "n02 registered again" state_not n02 DOWN
  [ "$(events)" = "$before" ] || fail "after a restart ($store_name): $(events), before: $before"
  ok "a restart writes no row twice ($store_name)"
  kill "${EXTRA_PIDS[-1]}" && wait "${EXTRA_PIDS[-1]}" 2>/dev/null || true
  unset 'EXTRA_PIDS[-1]'
  stop_server TERM
}

scenario
# the same on PostgreSQL
again_on_postgresql
scenario
