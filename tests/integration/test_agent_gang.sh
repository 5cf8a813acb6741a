#!/usr/bin/env bash
# A three-host cluster in network namespaces (server and two agents, each
# with its own address on a veth bridge): a 2-node gang sees the right node
# list, ranks, MASTER_ADDR and CUDA_VISIBLE_DEVICES on both hosts, and both
# tasks really run (rank 1 reaches rank 0 at MASTER_ADDR:MASTER_PORT). Then a
# gang is cancelled on both hosts and nothing is left behind on either.
# The server is the protocol stand-in (agent/mock_server.py).
source "$(dirname "$0")/agent/lib.sh"
need_root
ensure_users
command -v ip >/dev/null || px_skip iproute2 "no ip command (Debian package iproute2)"
T=$(mktemp -d /tmp/pxgang.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  [ -n "${MOCK_PID:-}" ] && kill "$MOCK_PID" 2>/dev/null
  for h in a b; do kill_leftovers "$T/$h"; done
  net_down
  rm -rf "$T"
}
trap cleanup EXIT
WORK=$T/w; mkdir -p "$WORK" && chown pxtest1 "$WORK"
net_up 1 srv a b              # srv 10.77.1.1, a 10.77.1.2, b 10.77.1.3
start_mock 10.77.1.1 43300 "pxsrv$$"
n=0
for h in a b; do
  n=$((n + 1))
  # nsenter, not `ip netns exec`: that one remounts /sys, hiding the cgroup mounts
  nsenter --net="/run/netns/px$h$$" "$PHALANX" agent --server "$MOCK" --node "n0$n" --addr "10.77.1.$((n + 1))" \
    --state-dir "$T/$h" --emulate-gpus 4:h100 --kill-wait 1 --cluster nsnet 2>>"$T/agent-$h.log" &
  PIDS+=($!)
done
wait_for 30 registered n01 && wait_for 30 registered n02 || fail "agents did not register"
addr=$(mock_get /test/registrations | jq -r '.n02[0].addr')
[ "$addr" = 10.77.1.3 ] || fail "n02 registered address $addr"

# rank 0 listens on MASTER_PORT; rank 1 connects from the other host and says hello
task='env | sort > '"$WORK"'/env.$SLURM_PROCID
exec python3 - <<PY
import os, socket, time
rank, port = int(os.environ["RANK"]), int(os.environ["MASTER_PORT"])
if rank == 0:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(1); s.settimeout(20)
    c, peer = s.accept()
    open("'"$WORK"'/hello", "w").write(c.recv(100).decode() + " from " + peer[0] + "\n")
else:
    for i in range(400):
        try:
            socket.create_connection((os.environ["MASTER_ADDR"], port), 1).sendall(b"rank1"); break
        except OSError: time.sleep(0.05)
PY'
gang() { # gang JOBID RANK GPUS SCRIPT: the order for node RANK of a 2-node gang
  launch_json "$1" pxtest1 x 'del(.script)' ".argv = [\"/bin/bash\", \"-c\", $(jq -Rs . <<<"$4")]" \
    '.nodes = ["n01","n02"]' '.node_addrs = ["10.77.1.2","10.77.1.3"]' ".node_rank = $2" \
    '.ntasks = 2' '.tasks_per_node = [1,1]' ".gpus = $3" '.gpus_per_node = [2,2]' \
    '.cpus_per_task = 1' '.master_port = 43399' '.account = "llm"' '.partition = "gpu"'
}
mock_post "/test/launch?node=n01" "$(gang 31 0 '[0,1]' "$task")"
mock_post "/test/launch?node=n02" "$(gang 31 1 '[2,3]' "$task")"
wait_for 45 reported 31 n01 COMPLETED && wait_for 45 reported 31 n02 COMPLETED ||
  fail "gang 31 did not complete: $(mock_get /test/reports) $(cat "$T"/agent-*.log | tail -5)"
grep -q "rank1 from 10.77.1.3" "$WORK/hello" || fail "rank 1 did not reach rank 0: $(cat "$WORK/hello" 2>&1)"
want() { grep -qxF -- "$2" "$WORK/env.$1" || fail "rank $1: want $2, got $(grep "^${2%%=*}=" "$WORK/env.$1")"; }
for r in 0 1; do
  want $r SLURM_JOB_NODELIST='n[01-02]'; want $r SLURM_NNODES=2; want $r SLURM_NTASKS=2
  want $r SLURM_TASKS_PER_NODE='1(x2)'; want $r SLURM_PROCID=$r; want $r SLURM_NODEID=$r
  want $r SLURM_LOCALID=0; want $r MASTER_ADDR=10.77.1.2; want $r MASTER_PORT=43399
  want $r WORLD_SIZE=2; want $r RANK=$r; want $r LOCAL_RANK=0; want $r SLURM_GPUS_ON_NODE=2
  want $r SLURM_JOB_ACCOUNT=llm; want $r SLURM_CLUSTER_NAME=nsnet; want $r PHALANX_PROCID=$r
  want $r USER=pxtest1
done
want 0 CUDA_VISIBLE_DEVICES=0,1; want 0 SLURMD_NODENAME=n01
want 1 CUDA_VISIBLE_DEVICES=2,3; want 1 SLURMD_NODENAME=n02
ok "2-node gang across namespaces: node list, ranks, MASTER_ADDR, GPUs right on both; rank 1 reached rank 0"

# Job steps (srun inside a batch job): the batch script holds node 0, node 1
# holds the allocation; a step order to both starts 2 + 1 tasks in the job's
# cgroup as the job's user with the step's ranks and each node's GPUs, its
# output in per-task files; each node reports the worst exit of its tasks
# with the step id. A step-only signal ends step 1 and leaves the job running.
mkdir -p "$WORK/s0" "$WORK/s1" && chown pxtest1 "$WORK/s0" "$WORK/s1"
bj() { # the batch job 33 for node $1 with GPUs $2
  launch_json 33 pxtest1 $'#!/bin/sh\nexec sleep 4741.'"$RUN_NO" '.nodes = ["n01","n02"]' \
    '.node_addrs = ["10.77.1.2","10.77.1.3"]' ".node_rank = $1" '.ntasks = 2' '.tasks_per_node = [1,1]' \
    ".gpus = $2" '.gpus_per_node = [2,2]' '.master_port = 43398'
}
mock_post "/test/launch?node=n01" "$(bj 0 '[0,1]')"
mock_post "/test/launch?node=n02" "$(bj 1 '[2,3]')"
wait_for 30 sh -c "pgrep -f 'slee[p] 4741\\.$RUN_NO' >/dev/null" || fail "batch job 33 did not start"
step_json() { # step_json ID OUTDIR NODES TPN NTASKS COMMAND
  jq -nc --argjson id "$1" --arg out "$2" --argjson nodes "$3" --argjson tpn "$4" --argjson n "$5" --arg cmd "$6" \
    '{job_id:33, step_id:$id, argv:["/bin/bash","-c",$cmd], out_dir:$out, nodes:$nodes, tasks_per_node:$tpn, ntasks:$n}'
}
probe='env | sort > '"$WORK"'/s0/env.$SLURM_PROCID; cat /proc/self/cgroup > '"$WORK"'/s0/cg.$SLURM_PROCID; echo out $SLURM_PROCID; exit $SLURM_PROCID'
s0=$(step_json 0 "$WORK/s0" '["n01","n02"]' '[2,1]' 3 "$probe")
mock_post "/test/step?node=n01" "$s0"
mock_post "/test/step?node=n02" "$s0"
step_reported() { # JOB STEP NODE STATE EXIT
  mock_get /test/reports | jq -e --argjson j "$1" --argjson s "$2" --arg n "$3" --arg st "$4" --argjson e "$5" \
    'any(.[]; .job_id == $j and .step_id == $s and .node == $n and .state == $st and .exit_code == $e)' >/dev/null
}
wait_for 30 step_reported 33 0 n01 FAILED 1 && wait_for 30 step_reported 33 0 n02 FAILED 2 ||
  fail "step 0 reports: $(mock_get /test/reports | jq -c 'map(select(.job_id == 33))')"
swant() { grep -qxF -- "$2" "$WORK/s0/env.$1" || fail "step rank $1: want $2, got $(grep "^${2%%=*}=" "$WORK/s0/env.$1")"; }
for r in 0 1 2; do
  swant $r SLURM_PROCID=$r; swant $r RANK=$r; swant $r SLURM_STEP_ID=0; swant $r SLURM_STEP_NUM_TASKS=3
  swant $r WORLD_SIZE=3; swant $r MASTER_ADDR=10.77.1.2; swant $r USER=pxtest1; swant $r SLURM_JOB_NODELIST='n[01-02]'
  [ "$(stat -c %U "$WORK/s0/$r.out")" = pxtest1 ] || fail "step rank $r output not written as pxtest1"
  [ "$(cat "$WORK/s0/$r.out")" = "out $r" ] || fail "step rank $r output: $(cat "$WORK/s0/$r.out")"
  # a step runs where its job runs: in the memory cgroup its node's
  # supervisor made for the job (state.json; none without writable cgroups)
  h=a; [ "$r" = 2 ] && h=b
  memcg=$(jq -r '.cgroup.memory // empty' "$T/$h/jobs/33.0/state.json")
  if [ -n "$memcg" ]; then
    grep -q ":memory:.*/${memcg##*/}\$" "$WORK/s0/cg.$r" || fail "step rank $r not in the job's cgroup $memcg: $(cat "$WORK/s0/cg.$r")"
  fi
done
swant 0 SLURM_LOCALID=0; swant 1 SLURM_LOCALID=1; swant 2 SLURM_LOCALID=0
swant 0 SLURM_NODEID=0; swant 1 SLURM_NODEID=0; swant 2 SLURM_NODEID=1
swant 0 CUDA_VISIBLE_DEVICES=0,1; swant 1 CUDA_VISIBLE_DEVICES=0,1; swant 2 CUDA_VISIBLE_DEVICES=2,3
swant 0 SLURMD_NODENAME=n01; swant 2 SLURMD_NODENAME=n02; swant 2 LOCAL_WORLD_SIZE=1; swant 0 LOCAL_WORLD_SIZE=2
s1=$(step_json 1 "$WORK/s1" '["n01","n02"]' '[1,1]' 2 "exec sleep 4742.$RUN_NO")
mock_post "/test/step?node=n01" "$s1"
mock_post "/test/step?node=n02" "$s1"
wait_for 30 sh -c "[ \$(pgrep -fc 'slee[p] 4742\\.$RUN_NO') = 2 ]" || fail "step 1 did not start on both nodes"
for node in n01 n02; do
  mock_post "/test/signal?node=$node" '{"job_id":33,"signal":15,"grace_s":1,"reason":"CANCELLED","step_id":1}'
done
wait_for 30 step_reported 33 1 n01 FAILED 143 && wait_for 30 step_reported 33 1 n02 FAILED 143 ||
  fail "step 1 not ended by its signal: $(mock_get /test/reports | jq -c 'map(select(.job_id == 33))')"
[ -n "$(procs_with "sleep 4741\\.$RUN_NO")" ] || fail "a step's signal ended the job"
reported 33 n01 CANCELLED && fail "the job ended with its step"
for node in n01 n02; do
  mock_post "/test/signal?node=$node" '{"job_id":33,"signal":15,"grace_s":1,"reason":"CANCELLED"}'
done
wait_for 30 reported 33 n01 CANCELLED && wait_for 30 reported 33 n02 CANCELLED || fail "job 33 not cancelled"
ok "a job step on both hosts: ranks, GPUs, user, cgroup, output files, per-node ends; a step signal spares the job"

# A step, or a cancel, in the same answer as the job's launch reaches a
# supervisor that has not opened its control FIFO yet (salloc's first srun,
# scancel right after sbatch): the agent holds it until the supervisor
# listens, so the step runs and the cancel cancels (no FAILED, no lost job).
sj() { launch_json "$1" pxtest1 $'#!/bin/sh\nexec sleep '"$2.$RUN_NO"; }
s2=$(jq -nc --arg out "$WORK/s2" '{job_id:34, step_id:0, argv:["/bin/true"], out_dir:$out, nodes:["n01"], tasks_per_node:[1], ntasks:1}')
mkdir -p "$WORK/s2" && chown pxtest1 "$WORK/s2"
mock_post "/test/work?node=n01" "$(jq -nc --argjson l "$(sj 34 4751)" --argjson s "$s2" '{launch:[$l], step:[$s]}')"
mock_post "/test/work?node=n01" "$(jq -nc --argjson l "$(sj 35 4752)" \
  '{launch:[$l], signal:[{job_id:35, signal:15, grace_s:1, reason:"CANCELLED"}]}')"
wait_for 30 step_reported 34 0 n01 COMPLETED 0 ||
  fail "a step sent with its job's launch: $(mock_get /test/reports | jq -c 'map(select(.job_id == 34))')"
wait_for 30 reported 35 n01 CANCELLED ||
  fail "a cancel sent with its job's launch: $(mock_get /test/reports | jq -c 'map(select(.job_id == 35))')"
mock_post "/test/signal?node=n01" '{"job_id":34,"signal":15,"grace_s":1,"reason":"CANCELLED"}'
wait_for 30 reported 34 n01 CANCELLED || fail "job 34 not cancelled"
ok "a step and a cancel sent with the launch wait for the supervisor"

# Cancel a running gang on both hosts: nothing is left on either.
hold='echo up > '"$WORK"'/up.$SLURM_PROCID; trap "" TERM; setsid sleep 4731.'"$RUN_NO"' & sleep 4732.'"$RUN_NO"
mock_post "/test/launch?node=n01" "$(gang 32 0 '[0,1]' "$hold")"
mock_post "/test/launch?node=n02" "$(gang 32 1 '[2,3]' "$hold")"
wait_for 30 test -e "$WORK/up.0" && wait_for 30 test -e "$WORK/up.1" || fail "gang 32 did not start"
for node in n01 n02; do
  mock_post "/test/signal?node=$node" '{"job_id":32,"signal":15,"grace_s":1,"reason":"CANCELLED"}'
done
wait_for 30 reported 32 n01 CANCELLED && wait_for 30 reported 32 n02 CANCELLED ||
  fail "gang 32 not cancelled: $(mock_get /test/reports)"
[ -z "$(procs_with "sleep 473[12]\\.$RUN_NO")" ] || fail "processes left after cancel: $(procs_with "sleep 473[12]\\.$RUN_NO")"
ok "gang cancelled on both hosts; no process left behind"
sanitizer_clean "$T"/agent-*.log
