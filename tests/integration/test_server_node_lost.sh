#!/usr/bin/env bash
# A node whose agent never comes back after a server restart: within
# SlurmdTimeout of the restart it is DOWN "Not responding" and the jobs the
# journal ran there are given up as for a node that went silent: a
# requeueable gang is requeued whole (its other node is told to stop it), a
# --no-requeue job ends NODE_FAIL. Before the fix they stayed RUNNING on a
# "Not registered" node for ever.
source "$(dirname "$0")/lib_server.sh"
NODE_TIMEOUT=3
write_config
start_server
register_node n01
register_node n02
heartbeat() { for n in "$@"; do api POST /v1/agent/heartbeat "{\"node\":\"$n\"}" >/dev/null; done; }

# a 2-node gang (requeue, the default) and a 1-node job that may not requeue
gang=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"gang","nodes_min":2,"nodes_max":2,"gpus_per_node":4,"script":"#!/bin/sh\ntrue"}}' | jq -r .job_id)
solo=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"solo","gpus_per_node":1,"requeue":false,"script":"#!/bin/sh\ntrue"}}' | jq -r .job_id)
running() { heartbeat n01 n02; job_is "$gang" RUNNING && job_is "$solo" RUNNING; }
wait_for "both jobs running" running
[ "$(expect 200 root GET "/v1/jobs/$solo" | jq -r .nodelist)" = n01 ] || solo_node=n02
solo_node=${solo_node:-n01}
lost=$solo_node # the node whose agent never returns: both jobs run there
other=n01; [ "$lost" = n01 ] && other=n02
ok "gang $gang on n01+n02, job $solo on $lost"

stop_server KILL
start_server
restarted=$SECONDS
# the surviving agent comes back knowing the gang's half
known="[{\"job_id\":$gang,\"state\":\"RUNNING\",\"exit_code\":0,\"term_signal\":0}]"
register_node "$other" "$known"
requeued() { # pending again after a requeue: PENDING with Restarts=1, as Slurm shows it
  [ "$(api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -c '.jobs[0] | [.state, .restarts]')" = '["PENDING",1]' ]
}
given_up() { heartbeat "$other"; job_is "$solo" NODE_FAIL && requeued "$gang"; }
WAIT_S=30 wait_for "the lost node's jobs given up" given_up
took=$((SECONDS - restarted))
[ $took -ge 3 ] || fail "jobs given up after $took s, before SlurmdTimeout (3 s)"
node=$(expect 200 root GET /v1/nodes | jq -c --arg n "$lost" '.nodes[] | select(.name==$n) | {state, reason}')
[ "$(jq -r .state <<<"$node")" = DOWN ] || fail "$lost: $node"
[ "$(jq -r .reason <<<"$node")" = "Not responding" ] || fail "$lost reason: $node"
# the gang's other half is told to stop
work=$(expect 200 root GET "/v1/agent/work?node=$other&after=0&timeout=5")
jq -e --argjson j "$gang" '[.signal[] | select(.job_id==$j and .reason=="NODE_FAIL")] | length == 1' <<<"$work" >/dev/null || fail "no stop order for the gang on $other: $work"
ok "after ${took}s: $lost DOWN (Not responding), job $solo NODE_FAIL, gang $gang requeued whole"

# the accounting row of the NODE_FAIL job
acct=$(expect 200 pxalice GET "/v1/accounting?user=pxalice")
[ "$(jq -r --argjson j "$solo" '[.jobs[] | select(.job_id==$j)][0].state' <<<"$acct")" = NODE_FAIL ] ||
  fail "accounting row of job $solo: $acct"
# the node comes back later: it is UP and the gang runs again
register_node "$lost"
again() { heartbeat n01 n02; job_is "$gang" RUNNING; }
wait_for "gang running again" again
ok "the node registers later: UP, the gang runs again"
