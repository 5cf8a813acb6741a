#!/usr/bin/env bash
# MIG instances as typed GPUs: the agent discovers a GPU in MIG mode through
# NVML (the stand-in libnvidia-ml with FAKE_NVML_MIG: four H100s, each two
# 3g.40gb instances) and reports each instance as one of the node's GPUs,
# typed by its profile; a job asking for `gpu:3g.40gb:1` (sbatch
# --gres=gpu:3g.40gb:1) runs on one instance and sees only it, by UUID, in
# CUDA_VISIBLE_DEVICES, and its device cgroup (the driver's capability
# minors stood in by files and device nodes of those numbers, mig_dev.h)
# lets it open its parent GPU and its instance's two capabilities and
# nothing of the other instances or GPUs; an XID on a GPU takes both of its instances out of
# service and requeues the job on it. Emulated MIG layouts (`--emulate-gpus
# 14:1g.10gb`, as `phalanx dev --gpus 14:1g.10gb`) carry MIG UUIDs too.
source "$(dirname "$0")/lib_server.sh"
source "$(dirname "$0")/lib_nvml.sh"
"$PHALANX" agent --discover --emulate-gpus 14:1g.10gb --node e1 >"$T/emu.json"
jq -e '(.gpus | length) == 14 and .gpus[8].uuid == "MIG-EMU-e1-1-1" and .gpus[8].type == "1g.10gb"
       and .gpus[8].mem_mib == 10240 and .gpus[8].group == 1' "$T/emu.json" >/dev/null || fail "emulated MIG: $(cat "$T/emu.json")"
ok "emulated MIG layout: 14 x 1g.10gb on 2 GPUs, MIG UUIDs"

# The driver's view of the instances' devices, as the agent reads it
# (mig_dev.h): GPU g's instance k (GPU instance k+1, compute instance 0) has
# capability minors 10g+2k+1 and 10g+2k+2, under a character major no
# driver of this machine has, and device nodes of those numbers in $T/dev.
caps=$(for m in $(seq 234 -1 200); do grep -q "^ *$m " /proc/devices || { echo "$m"; break; }; done)
mkdir -p "$T/dev"
printf '%s nvidia-caps\n' "$caps" >"$T/devices"
for g in 0 1 2 3; do
  mknod "$T/dev/nvidia$g" c 195 "$g"
  for k in 0 1; do
    m=$((10 * g + 2 * k + 1))
    printf 'gpu%s/gi%s/access %s\ngpu%s/gi%s/ci0/access %s\n' "$g" $((k + 1)) "$m" "$g" $((k + 1)) $((m + 1)) >>"$T/mig-minors"
    mknod "$T/dev/cap-$g-$k-gi" c "$caps" "$m" && mknod "$T/dev/cap-$g-$k-ci" c "$caps" $((m + 1))
  done
done
chmod 666 "$T"/dev/*
NVML_ENV="FAKE_NVML_MIG=1 PHALANX_MIG_MINORS=$T/mig-minors PHALANX_PROC_DEVICES=$T/devices" nvml_node gpu:3g.40gb:8
node_is '.gpus == 8' || fail "n01: $(expect 200 root GET /v1/nodes/n01)"
grep -q "8 MIG instances (3g.40gb x8).*device cgroup denies" "$T/agent.log" || fail "agent log: $(cat "$T/agent.log")"

# the job also tries to open every device node: a denied one answers EPERM,
# an allowed one reaches the (absent) driver: ENXIO
submit() { expect 201 pxalice POST /v1/jobs "{\"job\":{\"name\":\"m\",\"gpus_per_node\":1,\"gpu_type\":\"$1\",\"workdir\":\"$T\",\"script\":\"#!/bin/sh\\nfor d in $T/dev/*; do cat \$d; done > $T/open.\$SLURM_JOB_ID 2>&1\\necho \$CUDA_VISIBLE_DEVICES > $T/cvd.\$SLURM_JOB_ID.\${SLURM_RESTART_COUNT:-0}\\nsleep 300\"}}" | jq -r .job_id; }
job=$(submit 3g.40gb)
wait_for "job running" job_is "$job" RUNNING
wait_for "job's environment" test -s "$T/cvd.$job.0"
idx=$(jq '.gpus[0]' "$T/agent/jobs/$job.0/launch.json")
parent=$((idx / 2))
[ "$(cat "$T/cvd.$job.0")" = "MIG-fake-$parent-$((idx % 2))" ] || fail "CUDA_VISIBLE_DEVICES $(cat "$T/cvd.$job.0") for instance $idx"
if [ -d /sys/fs/cgroup/devices ]; then
  opens=$T/open.$job
  denied() { grep -q "$T/dev/$1: Operation not permitted" "$opens"; }
  for g in 0 1 2 3; do
    if [ "$g" = "$parent" ]; then ! denied "nvidia$g" || fail "its own GPU's /dev/nvidia$g denied: $(cat "$opens")"
    else denied "nvidia$g" || fail "/dev/nvidia$g not denied: $(cat "$opens")"; fi
    for k in 0 1; do
      for c in gi ci; do
        if [ "$g-$k" = "$parent-$((idx % 2))" ]; then
          ! denied "cap-$g-$k-$c" || fail "its own instance's $c capability denied: $(cat "$opens")"
        else
          denied "cap-$g-$k-$c" || fail "instance $g-$k's $c capability not denied: $(cat "$opens")"
        fi
      done
    done
  done
  ok "device cgroup: job $job opens only GPU $parent's /dev/nvidia$parent and its instance's two capabilities"
else
  echo "# no cgroup v1 devices controller here: MIG device rules not checked"
fi
expect 400 pxalice POST /v1/jobs '{"job":{"name":"x","gpus_per_node":1,"gpu_type":"1g.10gb","script":"#!/bin/sh\ntrue"}}' |
  jq -e '.error.field == "job.gpu_type"' >/dev/null || fail "a profile no node has"
ok "job $job on MIG instance $idx sees only $(cat "$T/cvd.$job.0"); a profile no node offers is refused"

echo "xid $parent 79" >>"$T/faults"
# (each instance's fault is its own report: a job placed on the sibling
# instance between the two is requeued again, so attempt 1 or 2)
restarts() { expect 200 root GET "/v1/jobs/$job" | jq -r '.restarts // 0'; }
restarted() { [ "$(restarts)" -ge 1 ] && node_is '.gpus_out == 2'; }
wait_for "job requeued" restarted
node_is ".gpus_out == 2 and (.gpu_health | test(\"on GPU $parent\"))" || fail "after XID: $(expect 200 root GET /v1/nodes/n01)"
wait_for "job running again" job_is "$job" RUNNING
n=$(restarts)
wait_for "attempt $n's environment" test -s "$T/cvd.$job.$n"
grep -q "^MIG-fake-$parent-" "$T/cvd.$job.$n" && fail "attempt $n on the faulty GPU: $(cat "$T/cvd.$job.$n")"
ok "XID on GPU $parent: both its instances out, job $job requeued onto $(cat "$T/cvd.$job.$n")"
nvml_stop_agent
