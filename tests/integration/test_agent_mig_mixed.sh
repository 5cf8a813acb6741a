#!/usr/bin/env bash
# MIG profiles side by side (issue 19): the stand-in NVML with
# FAKE_NVML_MIG=mixed has GPUs 0 and 2 as 7 x 1g.10gb and GPUs 1 and 3 as
# one 3g.40gb beside two 2g.20gb. slurm.conf gives n01 the three types (in
# any order: a node's GPUs of several types are numbered by type name, as
# the agent reports them): 1g.10gb 0-13, 2g.20gb 14-17, 3g.40gb 18-19.
# Jobs asking `gpu:3g.40gb:1` (sbatch --gres) and `1g.10gb` x 2 (--gpus)
# run on instances of exactly those profiles and see exactly their UUIDs;
# scontrol show node and sinfo show the typed GRES (and those in use); the device cgroup of
# the 3g.40gb job lets it open its own capabilities and not those of the
# 2g.20gb instances beside it on the same GPU; an XID on that GPU takes its
# three instances out; an agent back with another layout drains the node.
source "$(dirname "$0")/lib_server.sh"
source "$(dirname "$0")/lib_nvml.sh"

# the driver's capability minors (mig-minors' format): GPU g's GPU instance
# i (compute instance 0) has minors 100g+2i and 100g+2i+1
caps=$(for m in $(seq 234 -1 200); do grep -q "^ *$m " /proc/devices || { echo "$m"; break; }; done)
mkdir -p "$T/dev"
printf '%s nvidia-caps\n' "$caps" >"$T/devices"
for g in 0 1 2 3; do
  mknod "$T/dev/nvidia$g" c 195 "$g"
  for gi in 1 3 4 7 8 9 10 11 12 13; do
    m=$((100 * g + 2 * gi))
    printf 'gpu%s/gi%s/access %s\ngpu%s/gi%s/ci0/access %s\n' "$g" "$gi" "$m" "$g" "$gi" $((m + 1)) >>"$T/mig-minors"
  done
done
for gi in 1 3 4; do mknod "$T/dev/cap-1-$gi-gi" c "$caps" $((100 + 2 * gi)) && mknod "$T/dev/cap-1-$gi-ci" c "$caps" $((101 + 2 * gi)); done
chmod 666 "$T"/dev/*
NVML_ENV="FAKE_NVML_MIG=mixed PHALANX_MIG_MINORS=$T/mig-minors PHALANX_PROC_DEVICES=$T/devices" \
  nvml_node gpu:3g.40gb:2,gpu:1g.10gb:14,gpu:2g.20gb:4
node_is '.gpus == 20 and .gres == "gpu:1g.10gb:14,gpu:2g.20gb:4,gpu:3g.40gb:2" and .gpu_type == null' ||
  fail "n01: $(expect 200 root GET /v1/nodes/n01)"
grep -q "20 MIG instances (1g.10gb x14, 2g.20gb x4, 3g.40gb x2).*device cgroup denies" "$T/agent.log" ||
  fail "agent log: $(cat "$T/agent.log")"
grep -q "gres/gpu layout" "$T/server.log" && fail "layout mismatch reported: $(grep layout "$T/server.log")"
export PHALANX_SERVER=$SOCK
mkdir -p "$T/bin"
for c in scontrol sinfo sbatch; do ln -s "$PHALANX" "$T/bin/$c"; done
"$T/bin/scontrol" show node n01 | grep -qx '   Gres=gpu:1g.10gb:14,gpu:2g.20gb:4,gpu:3g.40gb:2' ||
  fail "scontrol show node: $("$T/bin/scontrol" show node n01)"
[ "$("$T/bin/sinfo" -h -o %G)" = "gpu:1g.10gb:14,gpu:2g.20gb:4,gpu:3g.40gb:2" ] || fail "sinfo: $("$T/bin/sinfo" -h -o %G)"
ok "n01 advertises gpu:1g.10gb:14,gpu:2g.20gb:4,gpu:3g.40gb:2 (API, scontrol show node, sinfo)"

# sbatch as pxalice; each job writes (in $T/w) what it sees and which device nodes open
W=$T/w
mkdir -m 1777 "$W"
cat >"$T/job.sh" <<SH
#!/bin/sh
echo "\$CUDA_VISIBLE_DEVICES" > $W/cvd.\$SLURM_JOB_ID
for d in $T/dev/*; do cat \$d; done > $W/open.\$SLURM_JOB_ID 2>&1
sleep 300
SH
chmod 755 "$T/job.sh"
sb() { (cd "$W" && setpriv --reuid=pxalice --regid="$(id -g pxalice)" --clear-groups env PHALANX_SERVER="$SOCK" \
  "$T/bin/sbatch" --parsable -o "$W/out.%j" "$@" "$T/job.sh"); }
j3=$(sb --gres=gpu:3g.40gb:1) && j1=$(sb --gpus=1g.10gb:2) && j2=$(sb --gres=gpu:2g.20gb:3) || fail "sbatch: $j3 $j1 $j2"
for j in $j3 $j1 $j2; do wait_for "job $j running" job_is "$j" RUNNING; wait_for "job $j's environment" test -s "$W/open.$j"; done
gpus() { jq -c '.gpus' "$T/agent/jobs/$1.0/launch.json"; }
uuids() { for i in $(jq -r '.gpus[]' "$T/agent/jobs/$1.0/launch.json"); do sed -n "$((i + 1))p" "$T/agent/gpu_uuids"; done | paste -sd,; }
# instance order: 1g.10gb GPU 0 then GPU 2; 2g.20gb GPU 1 then 3; 3g.40gb GPU 1 then 3
want_uuid() {
  local i=$1
  if [ "$i" -lt 14 ]; then echo "MIG-fake-$((i / 7 * 2))-$((i % 7))"
  elif [ "$i" -lt 18 ]; then echo "MIG-fake-$(((i - 14) / 2 * 2 + 1))-$(((i - 14) % 2 + 1))"
  else echo "MIG-fake-$(((i - 18) * 2 + 1))-0"; fi
}
for j in $j3 $j1 $j2; do
  want=$(for i in $(jq -r '.gpus[]' "$T/agent/jobs/$j.0/launch.json"); do want_uuid "$i"; done | paste -sd,)
  [ "$(cat "$W/cvd.$j")" = "$want" ] && [ "$(uuids "$j")" = "$want" ] ||
    fail "job $j on $(gpus "$j"): CUDA_VISIBLE_DEVICES $(cat "$W/cvd.$j"), want $want"
done
jq -e '.gpus | length == 1 and .[0] >= 18' "$T/agent/jobs/$j3.0/launch.json" >/dev/null || fail "3g.40gb job on $(gpus "$j3")"
jq -e '.gpus | length == 2 and all(. < 14)' "$T/agent/jobs/$j1.0/launch.json" >/dev/null || fail "1g.10gb job on $(gpus "$j1")"
jq -e '.gpus | length == 3 and all(. >= 14 and . < 18)' "$T/agent/jobs/$j2.0/launch.json" >/dev/null ||
  fail "2g.20gb job on $(gpus "$j2")"
"$T/bin/scontrol" show node n01 | grep -qx '   GresUsed=gpu:1g.10gb:2,gpu:2g.20gb:3,gpu:3g.40gb:1' ||
  fail "scontrol show node: $("$T/bin/scontrol" show node n01)"
ok "3g.40gb job $j3 sees $(cat "$W/cvd.$j3"); 1g.10gb x2 job $j1 sees $(cat "$W/cvd.$j1"); 2g.20gb x3 job $j2 sees $(cat "$W/cvd.$j2")"

# one 3g.40gb left: a second one runs, a third waits though 1g.10gb and 2g.20gb are free
j4=$(sb --gres=gpu:3g.40gb:1) && j5=$(sb --gres=gpu:3g.40gb:1) || fail "sbatch: $j4 $j5"
wait_for "job $j4 running" job_is "$j4" RUNNING
waits() { expect 200 root GET "/v1/jobs/$j5" | jq -e '.reason == "Resources"' >/dev/null; }
wait_for "job $j5 waits for Resources" waits
node_is '.gpus_alloc == 7' || fail "n01 after 4 jobs: $(expect 200 root GET /v1/nodes/n01)"
ok "a third 3g.40gb job waits (Resources) beside 13 free instances of other profiles"

# the 3g.40gb job's device cgroup (checked before the fault below ends it): GPU 1 holds it and the two 2g.20gb
if [ -d /sys/fs/cgroup/devices ] && [ "$(jq '.gpus[0]' "$T/agent/jobs/$j3.0/launch.json")" = 18 ]; then
  denied() { grep -q "$T/dev/$1: Operation not permitted" "$W/open.$j3"; }
  ! denied nvidia1 && ! denied cap-1-1-gi && ! denied cap-1-1-ci || fail "its own devices denied: $(cat "$W/open.$j3")"
  denied nvidia0 && denied nvidia2 && denied nvidia3 || fail "other GPUs open: $(cat "$W/open.$j3")"
  for gi in 3 4; do denied "cap-1-$gi-gi" && denied "cap-1-$gi-ci" || fail "2g.20gb GI $gi open: $(cat "$W/open.$j3")"; done
  ok "3g.40gb job $j3 opens /dev/nvidia1 and its own capabilities, not the 2g.20gb instances' beside it"
fi

# an XID on GPU 1 takes its three instances (3g.40gb 18, 2g.20gb 14-15) out
# of service and requeues the jobs on them
echo "xid 1 79" >>"$T/faults"
requeued() { [ "$(expect 200 root GET "/v1/jobs/$j3" | jq -r '.restarts // 0')" -ge 1 ] && node_is '.gpus_out == 3'; }
wait_for "3g.40gb job requeued" requeued
node_is '.gpu_health | test("14:UNUSABLE.*15:UNUSABLE.*18:UNUSABLE")' || fail "after XID: $(expect 200 root GET /v1/nodes/n01)"
ok "XID on GPU 1: its 3g.40gb and two 2g.20gb instances out of service, job $j3 requeued"
nvml_stop_agent

# the agent comes back with another layout (every GPU two 3g.40gb): its
# GPUs no longer match Gres= index by index, and the node is drained so
# that no job runs on an instance of the wrong profile
env FAKE_NVML_MIG=1 PHALANX_NVML_LIB="$T/libnvidia-ml.so.1" FAKE_NVML_FAULTS="$T/faults" "$PHALANX" agent \
  --server "$SOCK" --node n01 --state-dir "$T/agent" --emulate-cpus 64 --emulate-mem 524288 --kill-wait 1 \
  --kill-jobs-on-exit >>"$T/agent.log" 2>&1 &
EXTRA_PIDS+=($!)
drained() { node_is '(.state | test("DRAIN")) and .reason == "gres/gpu layout: GPU 0 is 3g.40gb, Gres= says 1g.10gb"'; }
wait_for "n01 drained for its layout" drained
grep -q "n01: gres/gpu layout: GPU 0 is 3g.40gb" "$T/server.log" || fail "server log: $(tail -5 "$T/server.log")"
ok "an agent reporting another MIG layout than Gres= drains n01: $(expect 200 root GET /v1/nodes/n01 | jq -r .reason)"
nvml_stop_agent
