# lib_nvml.sh - one node n01 behind the stand-in NVML (agent/fake_nvml.c),
# for the tests of the GPU health watch and MIG (sourced after
# lib_server.sh). nvml_node GRES [slurm.conf lines...] writes the
# configuration (n01 with Gres=GRES), starts the server and the agent with
# the stand-in loaded, faults scripted in $T/faults, and waits until n01
# is IDLE. Extra environment for the agent (FAKE_NVML_MIG=1) comes through
# NVML_ENV.
command -v cc >/dev/null || px_skip cc "no C compiler to build the stand-in NVML"
[ "$(id -u)" -eq 0 ] || px_skip root "needs root (the agent runs jobs as their users)"
cc -shared -fPIC -o "$T/libnvidia-ml.so.1" "$PX_SRC/tests/integration/agent/fake_nvml.c"
node_is() { expect 200 root GET /v1/nodes/n01 | jq -e "$1" >/dev/null; }
nvml_node() {
  local gres=$1 line
  shift
  {
    printf '%s\n' ClusterName=test HeartbeatInterval=2 KillWait=1 GpuQuarantineFaults=0
    for line in "$@"; do printf '%s\n' "$line"; done
    echo "NodeName=n01 CPUs=64 RealMemory=512G Gres=$gres"
    echo "PartitionName=gpu Nodes=n01 Default=YES MaxTime=1:00:00 State=UP"
  } >"$T/slurm.conf"
  echo "Account=ml Fairshare=60 Users=pxalice" >"$T/accounts.conf"
  chmod 755 "$T"
  start_server
  : >"$T/faults"
  env ${NVML_ENV:-} PHALANX_NVML_LIB="$T/libnvidia-ml.so.1" FAKE_NVML_FAULTS="$T/faults" "$PHALANX" agent \
    --server "$SOCK" --node n01 --state-dir "$T/agent" --emulate-cpus 64 --emulate-mem 524288 --kill-wait 1 \
    --kill-jobs-on-exit >>"$T/agent.log" 2>&1 &
  EXTRA_PIDS+=($!)
  wait_for "agent registered" node_is '.state == "IDLE"'
}
# Stops n01's agent and waits until it is gone: with --kill-jobs-on-exit it
# ends its jobs on the way out, which must not race the removal of $T.
nvml_stop_agent() {
  local pid=${EXTRA_PIDS[-1]}
  kill "$pid" 2>/dev/null || return 0
  gone() { ! kill -0 "$pid" 2>/dev/null || [ "$(ps -o stat= -p "$pid" | cut -c1)" = Z ]; }
  wait_for "agent stopped" gone
  wait "$pid" 2>/dev/null || true
  no_jobs() { ! pgrep -f "$T/agent/jobs/" >/dev/null; }
  wait_for "the agent's jobs gone" no_jobs
}
