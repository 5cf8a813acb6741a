#!/usr/bin/env bash
# The end-to-end demo (`make demo`): a local cluster with emulated GPUs
# (`phalanx dev`: a server and 4 agents as separate processes, jobs really
# running under cgroups), sample work submitted with the Slurm commands, the
# queue moving with pending reasons, then fair share and a usage report.
# Nothing is simulated: every job is scheduled by the server and run by an agent.
# The web dashboard's address is printed as soon as the cluster is up (open it
# to watch the GPU map and the queue move); DEMO_KEEP=1 keeps the cluster up
# at the end, until Ctrl-C, to look around in it.
# Until the server is built it shows what exists (node discovery and a job
# run under isolation by the agent alone) and says what is coming.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
px="$PWD/$build/phalanx"
root=$PWD
echo "== phalanx $($px version)"

tmp=$(mktemp -d /tmp/phalanx-demo.XXXXXX)
chmod 755 "$tmp"
dev_pid=
cleanup() {
  if [ -n "${agent4_pid:-}" ]; then kill "$agent4_pid" 2>/dev/null || true; fi
  if [ -n "$dev_pid" ]; then kill -TERM "$dev_pid" 2>/dev/null || true; wait "$dev_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

server_built() {
  local out
  out=$("$px" server --help 2>&1 || true)
  [[ $out != *"not built yet"* ]]
}

if ! server_built; then
  echo "== this node, as the agent sees it (4 emulated GPUs in 2 NVLink groups)"
  "$px" agent --discover --emulate-gpus 4:h100:2 --node demo1 | jq -c '{node, cpus, mem_mib, gpus: [.gpus[] | {index, uuid, group}]}'
  echo "== a job run by the agent alone, under its cgroup (256 MiB, GPU 1 of 4)"
  jq -n --arg wd "$tmp" '{job_id:1, user:"root", uid:0, gid:0, name:"demo", workdir:$wd, submit_dir:$wd,
      script:"#!/bin/sh\nenv | grep -E \"^(SLURM_JOB_ID|SLURM_JOB_NODELIST|CUDA_VISIBLE_DEVICES|MASTER_ADDR)=\" | sort\n",
      nodes:["demo1"], node_rank:0, ntasks:1, tasks_per_node:[1], gpus:[1], mem_mib:256}' >"$tmp/launch.json"
  cgflag=--allow-root; [ "$(id -u)" -eq 0 ] || cgflag="--allow-root --no-cgroup"
  "$px" agent --run-local "$tmp/launch.json" --state-dir "$tmp/state" --emulate-gpus 4:h100:2 $cgflag 2>/dev/null | jq -c .
  cat "$tmp/slurm-1.out"
  echo "demo: the server is not built yet, so nothing is scheduled; once it is, this demo runs"
  echo "      'phalanx dev' (a server and 4 agents) and submits a gang, GPU jobs and an array."
  rm -rf "$tmp"
  exit 0
fi

bin=$tmp/bin; mkdir -p "$bin"
for c in sbatch squeue scancel sinfo sacct sshare sprio scontrol srun sdiag sacctmgr sstat; do ln -s "$px" "$bin/$c"; done
export PATH=$bin:$PATH

# a tiny OCI image from this machine's busybox, for the container part (docs/containers.md)
images=()
if bash "$root/tests/integration/ctr/make_image.sh" "$tmp/images" >/dev/null 2>&1; then
  mv "$tmp/images/oci" "$tmp/images/bb" && images=(--container-image-dir "$tmp/images")
fi
echo "== starting a local cluster: phalanx dev (server + 4 agents, 8 emulated h100 each)"
"$px" dev --nodes 4 --state-dir "$tmp/cluster" --ready-file "$tmp/ready" "${images[@]}" &
dev_pid=$!
for _ in $(seq 1 900); do [ -s "$tmp/ready" ] && break; kill -0 "$dev_pid" || exit 1; sleep 0.1; done
[ -s "$tmp/ready" ] || { echo "demo: the cluster did not come up" >&2; exit 1; }
set -a; source "$tmp/ready"; set +a

work=$tmp/work; mkdir -p "$work"; cd "$work"
echo; echo "== sinfo"; sinfo
echo; echo "== the agents reach the server over TLS (its throwaway CA: $tmp/cluster/tls/ca.pem); the CLI can too"
grep -o "listening on 127.0.0.1:[0-9]* (TLS)" "$tmp/cluster/server.log" || true
tls_port=$(sed -n 's/^Listen=127\.0\.0\.1://p' "$tmp/cluster/slurm.conf")
tls_token=$("$px" token) # over the socket, before PHALANX_SERVER points at TCP
PHALANX_SERVER=https://127.0.0.1:$tls_port PHALANX_CA_FILE=$tmp/cluster/tls/ca.pem PHALANX_TOKEN=$tls_token \
  sinfo -s || echo "(sinfo over https failed: see the message above)"
echo; echo "== the web dashboard (phalanx ui prints a sign-in link for you; docs/dashboard.md)"
"$px" ui || echo "(phalanx ui failed: see the message above)"

echo; echo "== submitting: a 2-node gang (16 GPUs, account vision), 8 two-GPU jobs and an"
echo "   array of 4 (speech), one more vision job (over vision's 16-GPU limit while the gang runs)"
cat >gang.sh <<'SH'
#!/bin/bash
#SBATCH -J gang -N 2 --ntasks-per-node=1 --gres=gpu:8 -A vision -t 5
echo "nodes=$SLURM_JOB_NODELIST tasks=$SLURM_TASKS_PER_NODE gpus=$CUDA_VISIBLE_DEVICES master=$MASTER_ADDR:$MASTER_PORT"
srun -l bash -c 'echo "step rank $SLURM_PROCID of $SLURM_STEP_NUM_TASKS on $SLURMD_NODENAME"'
sleep 6
SH
sbatch gang.sh
for i in 1 2 3 4 5 6 7 8; do sbatch -J pair$i --gres=gpu:2 -A speech -t 5 --wrap "sleep $((2 + i % 3))"; done
sbatch -J vision2 --gres=gpu:1 -A vision -t 5 --wrap 'srun bash -c "echo vision got its turn"'
sbatch -J arr --array=0-3 --gres=gpu:1 -A speech -t 5 --wrap 'echo task $SLURM_ARRAY_TASK_ID; sleep 1'

echo; echo "== the queue, as it moves (32 GPUs: some jobs wait for Resources, vision2 for its account)"
quiet=0
for _ in $(seq 1 90); do
  date +%T; squeue
  # done when nothing has run for three looks in a row
  if [ "$(squeue -h -t RUNNING | wc -l)" -eq 0 ]; then quiet=$((quiet + 1)); else quiet=0; fi
  [ "$quiet" -ge 3 ] && break
  sleep 1
done

echo; echo "== the gang's output (its srun step ran one task on each node)"; cat slurm-*.out | grep -E 'nodes=|step rank' || true
api() { curl -sf --unix-socket "$PHALANX_SERVER" "http://localhost$1"; }
echo; echo "== sacct (batch steps and srun steps, journaled: the gang's ran on both nodes through the agents,"
echo "   vision2's one-node step was run by srun itself in the batch script and recorded by the server)"
sacct -o JobID,JobName,Account,AllocCPUS,State,ExitCode,NNodes,MaxRSS,TotalCPU || { echo "(from the API instead)"; api '/v1/accounting?since=1d' |
  jq -r '.jobs[] | "\(.job_id)\t\(.spec.name)\t\(.spec.account)\t\(.state)"'; }
echo; echo "== fair share (sshare -a)"; sshare -a || echo "(sshare failed: see the message above)"
echo; echo "== the accounts as sacctmgr shows them, and the scheduler's statistics as sdiag does"
sacctmgr show assoc format=Account,User,Share,QOS || echo "(sacctmgr failed: see the message above)"
echo; echo "== accounts changed online, as sacctmgr does it (journaled, in effect at the next cycle):"
echo "   a new account and its user, then a new share"
{ sacctmgr -i add account robotics parent=root fairshare=10 && sacctmgr -i add user "$(id -un)" account=robotics &&
  sacctmgr -i modify account robotics set fairshare=40 &&
  sacctmgr show assoc where account=robotics format=Account,User,Share; } || echo "(sacctmgr failed: see the message above)"
sdiag | sed -n '1,/^Main schedule statistics/p;/^Main schedule statistics/,/^$/p' | head -30 || true
echo; echo "== slurmrestd's API (v0.0.39) on the same server: a submit and the job's state, as tools written for Slurm do"
rest_job=$(curl -s --unix-socket "$PHALANX_SERVER" -H 'Content-Type: application/json' http://localhost/slurm/v0.0.39/job/submit \
  -d "{\"job\":{\"name\":\"rest\",\"account\":\"ops\",\"current_working_directory\":\"$work\",\"environment\":[\"PATH=/usr/bin:/bin\"]},\"script\":\"#!/bin/sh\\necho from slurmrestd\"}" |
  jq -r '.job_id // empty')
for _ in $(seq 1 50); do
  state=$(curl -s --unix-socket "$PHALANX_SERVER" "http://localhost/slurm/v0.0.39/job/$rest_job" | jq -r '.jobs[0].job_state // empty')
  [ "$state" = COMPLETED ] && break; sleep 0.2
done
echo "job $rest_job: $state"

echo; echo "== shared GPUs: two --gpus=0.5 jobs pack onto one GPU, a third opens another (docs/gpus.md)"
for i in 1 2 3; do sbatch -J half$i --gpus=0.5 -t 5 --wrap 'echo "$CUDA_VISIBLE_DEVICES $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE% ($PHALANX_GPU_SHARE_ENFORCED)"; sleep 3' >/dev/null; done
for _ in $(seq 1 50); do [ "$(squeue -h -n half1,half2,half3 -t R | wc -l)" = 3 ] && break; sleep 0.2; done
squeue -n half1,half2,half3 -o '%.8i %.8j %.8T %.14b %N'
scontrol show node "$(squeue -h -n half1 -o %N)" | grep -o 'GpusShared=[^ ]* GpuSharesUsed=[^ ]*' || true
for _ in $(seq 1 50); do [ -z "$(squeue -h -n half1,half2,half3)" ] && break; sleep 0.2; done

if [ ${#images[@]} -gt 0 ]; then
  echo; echo "== a job in an OCI image (--container-image, pyxis' spelling; crun, the job's own cgroup and GPUs)"
  ctr=$(sbatch --parsable --container-image=bb:v1 --container-mounts="$work:/w" --gres=gpu:1 -t 5 \
    --wrap 'grep ^NAME= /etc/os-release; echo "uid $(id -u), job $SLURM_JOB_ID sees GPU $CUDA_VISIBLE_DEVICES"; ls /w | head -2')
  for _ in $(seq 1 50); do [ "$(sacct -X -n -P -o State -j "$ctr")" = COMPLETED ] && break; sleep 0.2; done
  cat "slurm-$ctr.out"
  bad=$(sbatch --parsable --container-image=/nope -t 5 --wrap true)
  for _ in $(seq 1 50); do [ "$(squeue -h -t all -j "$bad" -o %T)" = FAILED ] && break; sleep 0.2; done
  squeue -t all -j "$bad" -o '%.8i %.8T %r'
else
  echo; echo "(no container image: busybox or crun is missing; make deps installs them)"
fi
echo; echo "== inside a running job: phalanx exec (srun --pty gives a terminal the same way: docs/interactive.md), then sstat"
wid=$(sbatch --parsable -J work -t 5 --wrap 'python3 -c "b = bytearray(48 << 20); b[::4096] = bytes(len(b) // 4096); import time; time.sleep(30)"')
for _ in $(seq 1 50); do [ "$(squeue -h -j "$wid" -o %T)" = RUNNING ] && break; sleep 0.2; done
echo "hello from the demo" | "$px" exec "$wid" -- sh -c 'cat; echo "(in job $SLURM_JOB_ID on $SLURMD_NODENAME)"' ||
  echo "(exec failed: see the message above)"
for _ in $(seq 1 50); do
  [ "$(sstat -n -P -j "$wid" -o MaxRSS 2>/dev/null | tr -d K)" -gt 40000 ] 2>/dev/null && break; sleep 0.2
done
sstat -j "$wid" -o JobID,MaxRSS,MaxRSSNode,AveCPU,NTasks || echo "(sstat failed: see the message above)"
scancel "$wid"
echo; echo "== a web session: a small HTTP server as a job, at an authenticated URL on the server (phalanx session)"
sout=$("$px" session start -t 5 --idle 0:30 -- sh -c 'exec python3 -m http.server --bind 127.0.0.1 $PORT' 2>&1)
sed 's/phalanx_token=[^ ]*/phalanx_token=.../' <<<"$sout"
surl=$(grep -o 'https\?://[^ ]*' <<<"$sout" | tail -1)
if [ -n "$surl" ]; then
  curl -s --cacert "$tmp/cluster/tls/ca.pem" -o /dev/null -w "with the link's token: HTTP %{http_code}\n" "$surl"
  curl -s --cacert "$tmp/cluster/tls/ca.pem" -o /dev/null -w "without it: HTTP %{http_code}\n" "${surl%%\?*}"
  scancel "$(grep -o 'job [0-9]*' <<<"$sout" | head -1 | cut -d' ' -f2)"
fi
echo; echo "== a maintenance reservation, made and removed as a Slurm site does"
scontrol create reservation ReservationName=maint Nodes=dev4 StartTime=now+1hour Duration=60 Flags=MAINT &&
  scontrol delete ReservationName=maint && echo "Reservation maint deleted"

echo; echo "== Slurm's job verbs: a dry run, a running job's limit raised, a requeue (sacct -D keeps each attempt)"
echo "\$ sbatch --test-only -N 2 --gres=gpu:8 -t 10 --wrap true   (nothing queued)"
sbatch --test-only -N 2 --gres=gpu:8 -t 10 --wrap true || true
rq=$(sbatch --parsable -J rq -t 1 --wrap 'sleep 300')
for _ in $(seq 1 100); do [ "$(squeue -h -j "$rq" -o %T)" = RUNNING ] && break; sleep 0.1; done
rqnode=$(squeue -h -j "$rq" -o %N)
echo "\$ sbatch --test-only -w $rqnode --exclusive -t 10 --wrap true   (waits for job $rq: its start + 1 min)"
sbatch --test-only -w "$rqnode" --exclusive -t 10 --wrap true || true
echo "\$ scontrol update JobId=$rq TimeLimit=+10"
scontrol update JobId="$rq" TimeLimit=+10 && scontrol show job "$rq" | grep -o 'TimeLimit=[^ ]*' || true
echo "\$ sbatch --test-only -w $rqnode --exclusive -t 10 --wrap true   (ten minutes later now)"
sbatch --test-only -w "$rqnode" --exclusive -t 10 --wrap true || true
echo "\$ scontrol requeue $rq"
scontrol requeue "$rq" || true
for _ in $(seq 1 100); do scontrol show job "$rq" | grep -q 'Restarts=1' && break; sleep 0.1; done
scontrol show job "$rq" | grep -oE '(JobState|Restarts)=[^ ]*' | paste -sd' '
scancel "$rq"
for _ in $(seq 1 100); do [ -z "$(squeue -h -j "$rq")" ] && break; sleep 0.1; done
sacct -D -X -j "$rq" -o JobID,JobName,State,Restarts,ExitCode || true
done_job=$(sbatch --parsable -J again -t 1 --wrap 'echo run $SLURM_RESTART_COUNT')
for _ in $(seq 1 100); do [ -z "$(squeue -h -j "$done_job")" ] && break; sleep 0.1; done
echo "\$ scontrol requeue $done_job   (finished: it runs again, as in Slurm; SLURM_RESTART_COUNT=1)"
scontrol requeue "$done_job" || true
for _ in $(seq 1 100); do sacct -n -X -j "$done_job" -o State | grep -q COMPLETED && \
  scontrol show job "$done_job" | grep -q 'Restarts=1' && [ -z "$(squeue -h -j "$done_job")" ] && break; sleep 0.1; done
scontrol show job "$done_job" | grep -oE '(JobState|Restarts)=[^ ]*' | paste -sd' '
sacct -D -X -j "$done_job" -o JobID,JobName,State,Restarts || true

echo; echo "== usage report"
"$px" usage || { echo "(from the API instead)"; api '/v1/usage?since=30d' | jq -c '.usage[]'; }
echo; echo "== what-if on this cluster's own history: export the finished jobs, replay them under FIFO (docs/simulator.md)"
# a singleton pair first (-d singleton: one job of a user's name at a time): the export keeps names and
# dependencies, and the replay holds the second until the first ends, as the server did
for _ in 1 2; do sbatch -J pair -d singleton -t 5 --wrap 'sleep 2' >/dev/null; done
for _ in $(seq 1 100); do [ -z "$(squeue -h -n pair)" ] && break; sleep 0.2; done
"$px" export --since 1h --output history.csv && head -3 history.csv
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["name"] == "pair" {
  printf "  singleton pair: job %s ran %s-%s s (%s)\n", $c["job_id"], $c["start_s"], $c["end_s"], $c["dependency"] }' history.csv
# the report's main rows, what FIFO would change for each account (wait, GPU time, fair-share
# position; in brackets against the record) and how close each replay came; pictures in plots/
"$px" sim --from-accounting history.csv --config "$tmp/cluster/slurm.conf" --policy "$root/examples/policies/fifo.conf" \
  --plots plots 2>&1 | awk '/^(policy|jobs done|GPU utilisation|Jain index|fidelity)/ { print; next }
    /^per account, each policy/ { blk = 1 } blk && /^$/ { blk = 0 } blk' || echo "(the replay failed: see the message above)"
ls plots 2>/dev/null | grep -E '^acct_.*\.svg$|^fairshare_.*\.svg$' | head -4 | sed 's/^/  plots\//'
echo; echo "== a service: 2 replicas of a small HTTP server behind HAProxy (phalanx proxy; docs/proxy.md)"
if [ -n "${PHALANX_PROXY:-}" ]; then
  cp "$root/tests/integration/svc/replica.py" "$work/"
  cat >web.yaml <<YAML
name: web
account: ops
replicas: 2
resources: {cpus: 1}
command: ["python3", "replica.py"]
workdir: $work
env: {VERSION: v1}
ports: [http]
health: {http: /healthz, port: http, interval_s: 1}
spread: true
update: {max_surge: 1, max_unavailable: 0}
YAML
  cat web.yaml
  "$px" service apply web.yaml
  for _ in $(seq 1 100); do
    [ "$("$px" service show web --json | jq -r .ready)" = 2 ] && curl -sf "$PHALANX_PROXY/web/who" >/dev/null && break
    sleep 0.3
  done
  "$px" service list
  "$px" service show web | sed -n '/^INDEX/,/^Decision/p' | grep -v '^Decision' # spread: one node each
  echo "\$ curl $PHALANX_PROXY/web/who   (four times: the replicas take turns; the reply is VERSION REPLICA)"
  for _ in 1 2 3 4; do curl -s "$PHALANX_PROXY/web/who"; done
  echo; echo "== a rolling update to v2 under a client loop: new replicas first, old ones drained, no request fails"
  sed -i 's/VERSION: v1/VERSION: v2/' web.yaml
  "$px" service apply web.yaml
  ok=0 failed=0
  for _ in $(seq 1 300); do
    if reply=$(curl -sf "$PHALANX_PROXY/web/who"); then ok=$((ok + 1)); else failed=$((failed + 1)); fi
    [ "$("$px" service show web --json | jq -r '"\(.state) \(.ready)"')" = "Running 2" ] && [[ $reply == v2* ]] && break
    sleep 0.1
  done
  echo "requests during the update: $ok answered, $failed failed; now: $(curl -s "$PHALANX_PROXY/web/who")"
  "$px" service delete web
else
  echo "(no proxy: HAProxy is not installed; make deps installs it)"
fi
echo; echo "== a GPU fails under a running 2-node gang (an injected XID 79; docs/gpus.md)"
sbatch -J big -N 2 --ntasks-per-node=1 --gres=gpu:6 -t 5 --wrap 'sleep 600' >/dev/null
for _ in $(seq 1 100); do [ "$(squeue -h -n big -o %T)" = RUNNING ] && break; sleep 0.1; done
gnode=$(scontrol show hostnames "$(squeue -h -n big -o %N)" | head -1)
squeue -n big
echo "\$ phalanx dev inject ... $gnode 0 xid 79 'fallen off the bus'"
"$px" dev inject "$tmp/cluster" "$gnode" 0 xid 79 "fallen off the bus" || echo "(inject failed: see above)"
for _ in $(seq 1 100); do [ "$(scontrol show job "$(squeue -h -n big -o %i)" | grep -o 'Restarts=[0-9]*')" = Restarts=1 ] && break; sleep 0.1; done
squeue -n big; scontrol show job "$(squeue -h -n big -o %i)" | grep -o 'Restarts=[0-9]*'
echo "\$ scontrol update NodeName=dev4 State=DRAIN Reason=\"bad fan\"   (an operator's drain beside the server's: who and when)"
scontrol update NodeName=dev4 State=DRAIN Reason="bad fan" || true
sinfo -R
echo "each drain knows its cause (a check lifts only its own, never an operator's worded like it):"
api /v1/nodes | jq -r '.nodes[] | select((.drain_cause // "") != "") | "  \(.name): \(.drain_cause)"' || true
scontrol update NodeName=dev4 State=RESUME || true
scontrol show node "$gnode" | grep -E 'Gpu|State=' || true
scontrol update NodeName="$gnode" GpuResume=0 && echo "GPU 0 of $gnode back in service (scontrol update GpuResume=0)"
scancel -n big

echo; echo "== dev4's agent comes back from maintenance with 6 of its 8 GPUs: drained with Slurm's reason until all are back"
apid=$(pgrep -f "agent .*--node dev4 " | head -1)
if [ -n "$apid" ] && mapfile -d '' agent_cmd <"/proc/$apid/cmdline"; then
  kill "$apid"; for _ in $(seq 1 100); do kill -0 "$apid" 2>/dev/null || break; sleep 0.1; done
  "${agent_cmd[@]/8:h100:2/6:h100:2}" >"$tmp/dev4-short.log" 2>&1 & short_pid=$!
  for _ in $(seq 1 100); do sinfo -R -h | grep -q dev4 && break; sleep 0.1; done
  sinfo -R; sinfo -n dev4; scontrol show node dev4 | grep -E "State=|Reason="
  kill "$short_pid"; wait "$short_pid" || true
  "${agent_cmd[@]}" >"$tmp/dev4-full.log" 2>&1 & agent4_pid=$!
  for _ in $(seq 1 100); do [ "$(sinfo -h -n dev4 -p batch -o %t)" = idle ] && break; sleep 0.1; done
  echo "all 8 back:"; sinfo -n dev4
fi
echo; echo "== the nodes' drains and outages are kept in accounting (sacctmgr show event); an export writes"
echo "   them beside the jobs and a what-if replays them (docs/simulator.md, 'The nodes' outages')"
sacctmgr show event || true

if [ -n "${DEMO_KEEP:-}" ] && [ "$DEMO_KEEP" != 0 ]; then
  echo; echo "== DEMO_KEEP=$DEMO_KEEP: the cluster stays up; Ctrl-C stops it. Dashboard:"
  "$px" ui || true
  echo "   CLI: export PHALANX_SERVER=$PHALANX_SERVER"
  trap 'echo; echo "demo: stopping"' INT
  wait "$dev_pid" || true
  trap - INT
fi
echo; echo "== stopping the cluster"
[ -n "${agent4_pid:-}" ] && { kill "$agent4_pid"; wait "$agent4_pid" || true; agent4_pid=; } # dev4's restarted agent is ours
kill -TERM "$dev_pid"; wait "$dev_pid" || true; dev_pid=

echo; echo "== MIG: a node whose GPU 0 is 7 x 1g.10gb and GPU 1 is 3g.40gb + 2 x 2g.20gb (emulated; typed GRES)"
"$px" dev --nodes 1 --gpus 7:1g.10gb,1:3g.40gb,2:2g.20gb --state-dir "$tmp/mig" --ready-file "$tmp/mig.ready" --quiet &
dev_pid=$!
for _ in $(seq 1 300); do [ -s "$tmp/mig.ready" ] && break; kill -0 "$dev_pid" || exit 1; sleep 0.1; done
[ -s "$tmp/mig.ready" ] || { echo "demo: the MIG cluster did not come up" >&2; exit 1; }
(
  set -a; source "$tmp/mig.ready"; set +a
  sbatch -J mig3g --gres=gpu:3g.40gb:1 -t 5 -o "$tmp/mig3g.out" --wrap 'echo "3g.40gb job: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"'
  sbatch -J mig1g --gpus=1g.10gb:2 -t 5 -o "$tmp/mig1g.out" --wrap 'echo "2 x 1g.10gb job: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"'
  sbatch -J nosuch --gres=gpu:4g.40gb:1 -t 5 --wrap true || true
  for _ in $(seq 1 60); do [ "$(squeue -h | wc -l)" -eq 0 ] && break; sleep 1; done
  cat "$tmp/mig3g.out" "$tmp/mig1g.out" 2>/dev/null || echo "(the MIG jobs' output is missing)"
  scontrol show node dev1 | grep -E 'Gres|GresUsed' || true
)
kill -TERM "$dev_pid"; wait "$dev_pid" || true; dev_pid=

echo; echo "== at scale: 2,000 nodes emulated by one agent process (simulated jobs), the same server"
start=$SECONDS
"$px" dev --nodes 2000 --emulate-jobs sim --state-dir "$tmp/big" --ready-file "$tmp/big.ready" --quiet &
dev_pid=$!
for _ in $(seq 1 900); do [ -s "$tmp/big.ready" ] && break; kill -0 "$dev_pid" || exit 1; sleep 0.1; done
[ -s "$tmp/big.ready" ] || { echo "demo: the large cluster did not come up" >&2; exit 1; }
set -a; source "$tmp/big.ready"; set +a
echo "2,000 nodes registered in $((SECONDS - start)) s; server threads: $(grep Threads "/proc/$(cat "$tmp/big/server.pid")/status" | cut -f2)"
sinfo -s
sbatch -J many --array=1-2000 --gres=gpu:1 -t 5 --wrap "sleep 2" >/dev/null
for i in $(seq 1 20); do sbatch -J gang16 -N 16 --gres=gpu:8 -t 5 --wrap "sleep 3" >/dev/null; done
for _ in $(seq 1 120); do [ "$(squeue -h | wc -l)" -eq 0 ] && break; sleep 1; done
echo "2,000 array tasks and 20 16-node gangs, all ended after $((SECONDS - start)) s from the cold start:"
api '/v1/jobs?state=all&fields=state&limit=100000' | jq -r '[.jobs[].state] | group_by(.) | map("\(.[0]) \(length)") | .[]'
kill -TERM "$dev_pid"; wait "$dev_pid" || true; dev_pid=
rm -rf "$tmp"
echo "demo: done"
