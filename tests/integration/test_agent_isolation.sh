#!/usr/bin/env bash
# Isolation on one node, through `phalanx agent --run-local` (the runtime the
# daemon uses): tasks run as the submitting user and cannot write into
# another user's directory; root's jobs are refused; a job over its memory
# limit dies OUT_OF_MEMORY while its neighbour completes; CPUs are pinned;
# only the allocated GPUs' device files can be opened.
source "$(dirname "$0")/agent/lib.sh"
need_root
ensure_users
T=$(mktemp -d /tmp/pxiso.XXXXXX)
chmod 755 "$T"
trap 'kill_leftovers "$T/state"; rm -rf "$T"' EXIT
WORK=$T/u1; mkdir -p "$WORK" "$T/u2" && chown pxtest1 "$WORK" && chown pxtest2 "$T/u2" && chmod 755 "$T/u2"
run() { "$PHALANX" agent --run-local "$1" --state-dir "$T/state" --emulate-gpus 2 --kill-wait 1 2>>"$T/agent.log"; }

# 1. The task is pxtest1, and its output file belongs to pxtest1.
launch_json 1 pxtest1 $'#!/bin/sh\nid -u\ntouch '"$T/u2/intruder"$' 2>&1 || echo denied\n' >"$T/1.json"
run "$T/1.json" >"$T/1.st"
[ "$(field "$T/1.st" state)" = COMPLETED ] || fail "job 1: $(cat "$T/1.st")"
out=$WORK/slurm-1.out
[ "$(head -1 "$out")" = "$U1" ] || fail "job 1 ran as $(head -1 "$out"), want uid $U1"
[ "$(stat -c %U "$out")" = pxtest1 ] || fail "output owned by $(stat -c %U "$out")"
grep -q denied "$out" && [ ! -e "$T/u2/intruder" ] || fail "pxtest1 wrote into pxtest2's directory"
ok "task runs as the submitting user; output is the user's; another user's directory is closed"

# 2. Output paths are opened with the user's rights: pxtest2's directory is refused.
launch_json 2 pxtest1 $'#!/bin/sh\ntrue\n' ".stdout_path = \"$T/u2/out-%j.txt\"" >"$T/2.json"
run "$T/2.json" >"$T/2.st"
[ "$(field "$T/2.st" state)" = FAILED ] || fail "job 2 wrote its output into pxtest2's directory"
field "$T/2.st" error | grep -q "Permission denied" || fail "job 2 error: $(field "$T/2.st" error)"
[ ! -e "$T/u2/out-2.txt" ] || fail "out-2.txt was created in pxtest2's directory"
ok "output file in another user's directory is refused"

# 3. root's job is refused without AllowRootJobs.
launch_json 3 root $'#!/bin/sh\ntouch '"$T/rootran"$'\n' >"$T/3.json"
run "$T/3.json" >"$T/3.st"
[ "$(field "$T/3.st" state)" = FAILED ] && [ ! -e "$T/rootran" ] || fail "root's job ran"
field "$T/3.st" error | grep -q root || fail "job 3 error: $(field "$T/3.st" error)"
ok "jobs of root are refused"

# 4. Memory: job 5 (64 MiB limit) waits for a flag while job 4 (64 MiB) allocates 256 MiB.
launch_json 5 pxtest1 $'#!/bin/sh\nwhile [ ! -e '"$T/flag"$' ]; do sleep 0.05; done\necho neighbour done\n' \
  '.mem_mib = 64' >"$T/5.json"
run "$T/5.json" >"$T/5.st" &
nb=$!
launch_json 4 pxtest1 $'#!/bin/sh\nexec python3 -c "b = bytearray(256 << 20); print(len(b))"\n' '.mem_mib = 64' >"$T/4.json"
run "$T/4.json" >"$T/4.st"
touch "$T/flag"
wait $nb
[ "$(field "$T/4.st" state)" = OUT_OF_MEMORY ] || fail "job 4: $(cat "$T/4.st")"
[ "$(field "$T/5.st" state)" = COMPLETED ] || fail "neighbour job 5: $(cat "$T/5.st")"
peak=$(field "$T/4.st" peak_mem_mib)
[ "$peak" -ge 32 ] && [ "$peak" -le 64 ] || fail "job 4 peak memory $peak MiB, want 32..64 (limit 64)"
ok "over-limit job is OUT_OF_MEMORY (peak $peak MiB), the neighbour COMPLETED"

# 5. CPUs pinned to the allocation; GPU device files: only the job's GPU opens.
mkdir -p "$T/dev" && mknod "$T/dev/nvidia0" c 195 0 && mknod "$T/dev/nvidia1" c 195 1 && chmod 666 "$T"/dev/*
launch_json 6 pxtest1 $'#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status\necho CVD=$CUDA_VISIBLE_DEVICES\ncat '"$T/dev/nvidia0"$' 2>&1\ncat '"$T/dev/nvidia1"$' 2>&1\n' \
  '.cpu_ids = [0]' '.gpus = [1]' >"$T/6.json"
run "$T/6.json" >"$T/6.st"
out=$WORK/slurm-6.out
grep -Eq 'Cpus_allowed_list:\s+0$' "$out" || fail "CPUs not pinned: $(grep Cpus "$out")"
grep -q 'CVD=1$' "$out" || fail "CUDA_VISIBLE_DEVICES: $(grep CVD "$out")"
# GPU 0 is not the job's: the device cgroup refuses it. GPU 1 is: the open
# reaches the (absent) driver, which answers "No such device or address".
grep -q 'nvidia0: Operation not permitted' "$out" || fail "GPU 0 not denied: $(cat "$out")"
grep -q 'nvidia1: No such device or address' "$out" || fail "GPU 1 denied: $(cat "$out")"
ok "CPUs pinned; only the allocated GPU's device can be opened"
sanitizer_clean "$T"/agent.log
