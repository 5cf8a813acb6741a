#!/usr/bin/env bash
# Containers on one node, through `phalanx agent --run-local` (the runtime
# the daemon uses), with a busybox image built here: the task runs inside
# the image (its os-release, whiteouts applied) as the submitting user,
# with the job's SLURM_* environment, the image's working directory and
# environment rule (--container-env), bind mounts (rw and ro), in the job's
# cgroup (an over-limit job is OUT_OF_MEMORY), seeing only the job's GPU;
# a docker archive works as an OCI layout does; the unpacked image is
# cached and reused, also by two jobs unpacking it at once; a missing or
# broken image fails the job at once with the reason; a mount source the
# user cannot reach is refused; nothing is left.
source "$(dirname "$0")/agent/lib.sh"
source "$(dirname "$0")/ctr/lib.sh"
need_root
need_runtime
ensure_users
T=$(mktemp -d /tmp/pxctr.XXXXXX)
chmod 755 "$T"
trap 'kill_leftovers "$T/state"; rm -rf "$T"' EXIT
WORK=$T/u1; mkdir -p "$WORK" "$T/data" "$T/ro" && chown pxtest1 "$WORK" "$T/data" && echo host-file >"$T/ro/f"
make_test_image "$T/img"
run() { "$PHALANX" agent --run-local "$1" --state-dir "$T/state" --emulate-gpus 2 --kill-wait 1 2>>"$T/agent.log"; }
cache=$T/state/images/$U1

# 1. Inside the OCI layout image, as pxtest1, with the job's environment.
s=$'#!/bin/sh\ncat /etc/os-release\nid -u\necho JOB=$SLURM_JOB_ID PROCID=$SLURM_PROCID\npwd\n'
s+=$'echo IMAGE_VAR=$IMAGE_VAR OVERRIDE_ME=$OVERRIDE_ME PATH=$PATH\nls /opt /opt/dir\n'
s+=$'cat /data/in; echo written >/data/out; cat /ro/f; echo x >/ro/f 2>/dev/null || echo ro-refused\n'
launch_json 1 pxtest1 "$s" ".container_image = \"$T/img/oci\"" \
  ".container_mounts = \"$T/data:/data,$T/ro:/ro:ro\"" '.env = ["OVERRIDE_ME=from-host", "HOST_ONLY=1"]' >"$T/1.json"
echo in-data >"$T/data/in"
run "$T/1.json" >"$T/1.st"
[ "$(field "$T/1.st" state)" = COMPLETED ] || fail "job 1: $(cat "$T/1.st") $(cat "$WORK/slurm-1.out")"
out=$WORK/slurm-1.out
grep -q 'ID=pxtest' "$out" || fail "not inside the image: $(cat "$out")"
grep -qx "$U1" "$out" || fail "not run as pxtest1 ($U1): $(cat "$out")"
grep -q 'JOB=1 PROCID=0' "$out" || fail "SLURM_* environment: $(grep JOB= "$out")"
grep -qx '/work' "$out" || fail "working directory is not the image's /work: $(cat "$out")"
grep -q 'IMAGE_VAR=from-image OVERRIDE_ME=from-image PATH=/bin:/usr/bin' "$out" || fail "env: $(grep IMAGE_VAR "$out")"
grep -qx 'new' "$out" && ! grep -qx 'old' "$out" && ! grep -qx 'gone' "$out" || fail "whiteouts not applied: $(cat "$out")"
grep -qx 'in-data' "$out" && [ "$(cat "$T/data/out")" = written ] || fail "rw mount: $(cat "$out")"
grep -qx 'host-file' "$out" && grep -qx 'ro-refused' "$out" && [ "$(cat "$T/ro/f")" = host-file ] || fail "ro mount: $(cat "$out")"
[ "$(stat -c %U "$out")" = pxtest1 ] || fail "output owned by $(stat -c %U "$out")"
ok "task runs in the image (whiteouts applied) as the user, with SLURM_* env, the image's workdir and env, mounts"

# 2. --container-env and --container-workdir; the docker archive.
launch_json 2 pxtest1 $'#!/bin/sh\npwd\necho OVERRIDE_ME=$OVERRIDE_ME HOST_ONLY=$HOST_ONLY\ncat /etc/os-release\n' \
  ".container_image = \"$T/img/busybox.tar\"" '.container_env = "OVERRIDE_ME"' '.container_workdir = "/opt"' \
  '.env = ["OVERRIDE_ME=from-host", "HOST_ONLY=1"]' >"$T/2.json"
run "$T/2.json" >"$T/2.st"
out=$WORK/slurm-2.out
[ "$(field "$T/2.st" state)" = COMPLETED ] || fail "job 2: $(cat "$T/2.st") $(cat "$out")"
grep -qx '/opt' "$out" || fail "--container-workdir: $(cat "$out")"
grep -q 'OVERRIDE_ME=from-host HOST_ONLY=1' "$out" || fail "--container-env: $(cat "$out")"
grep -q 'ID=pxtest' "$out" || fail "docker archive: not inside the image: $(cat "$out")"
ok "docker archive; --container-env lets the host's value win; --container-workdir"

# 3. The unpacked image is reused: a file put into the cached copy is seen by the next job.
keys=$(ls "$cache" | grep -c '^sha256-')
[ "$keys" -eq 2 ] || fail "want 2 cached images (layout, archive), have: $(ls "$cache")"
for d in "$cache"/sha256-*/rootfs; do touch "$d/cached-marker"; done
launch_json 3 pxtest1 $'#!/bin/sh\ntest -e /cached-marker && echo reused\n' ".container_image = \"$T/img/oci\"" >"$T/3.json"
run "$T/3.json" >"$T/3.st"
grep -qx reused "$WORK/slurm-3.out" || fail "cache not reused: $(cat "$T/3.st") $(cat "$WORK/slurm-3.out")"
ok "a cached image is reused by the next job"

# 4. Over its memory limit inside the image: OUT_OF_MEMORY (the job's cgroup holds).
launch_json 4 pxtest1 $'#!/bin/sh\ncat /proc/self/cgroup\ndd if=/dev/zero of=/dev/null bs=256M count=1\n' \
  ".container_image = \"$T/img/oci\"" '.mem_mib = 64' >"$T/4.json"
run "$T/4.json" >"$T/4.st"
[ "$(field "$T/4.st" state)" = OUT_OF_MEMORY ] || fail "job 4: $(cat "$T/4.st") $(cat "$WORK/slurm-4.out")"
grep -q 'memory:.*/job_4$' "$WORK/slurm-4.out" || fail "not in the job's memory cgroup: $(cat "$WORK/slurm-4.out")"
ok "inside the image, the job's memory cgroup kills it: OUT_OF_MEMORY"

# 5. GPUs: only the job's device node exists in the image; CUDA_VISIBLE_DEVICES as outside.
launch_json 5 pxtest1 $'#!/bin/sh\necho CVD=$CUDA_VISIBLE_DEVICES\nls /dev | grep nvidia\ncat /dev/nvidia1 2>&1\n' \
  ".container_image = \"$T/img/oci\"" '.gpus = [1]' >"$T/5.json"
run "$T/5.json" >"$T/5.st"
out=$WORK/slurm-5.out
grep -qx 'CVD=1' "$out" || fail "CUDA_VISIBLE_DEVICES: $(cat "$out")"
[ "$(grep -c '^nvidia' "$out")" = 1 ] && grep -qx nvidia1 "$out" || fail "GPU devices in the image: $(cat "$out")"
grep -q "nvidia1'*: No such device or address" "$out" || fail "GPU 1 not openable: $(cat "$out")"
ok "only the job's GPU device is in the image, and it opens (the driver is absent here)"

# 6. Missing and broken images fail the job at once, saying why.
launch_json 6 pxtest1 $'#!/bin/sh\ntouch '"$T/ran6"$'\n' ".container_image = \"$T/nope\"" >"$T/6.json"
run "$T/6.json" >"$T/6.st"
[ "$(field "$T/6.st" state)" = FAILED ] && [ ! -e "$T/ran6" ] || fail "job 6: $(cat "$T/6.st")"
[ "$(field "$T/6.st" error)" = "ContainerImage: $T/nope: no such image" ] || fail "job 6 error: $(field "$T/6.st" error)"
echo junk >"$T/junk.tar" && chmod 644 "$T/junk.tar"
launch_json 7 pxtest1 $'#!/bin/sh\ntrue\n' ".container_image = \"$T/junk.tar\"" >"$T/7.json"
run "$T/7.json" >"$T/7.st"
[ "$(field "$T/7.st" state)" = FAILED ] || fail "job 7: $(cat "$T/7.st")"
field "$T/7.st" error | grep -q "ContainerImage: $T/junk.tar: not an OCI image layout nor a docker-archive tar" ||
  fail "job 7 error: $(field "$T/7.st" error)"
ok "a missing or broken image fails the job with a clear reason"

# 7. Two jobs unpacking the same new image at once: both run, one copy, no leftovers.
rm -rf "$cache"
for j in 8 9; do
  launch_json $j pxtest1 $'#!/bin/sh\ncat /etc/os-release\n' ".container_image = \"$T/img/oci\"" >"$T/$j.json"
  run "$T/$j.json" >"$T/$j.st" &
done
wait
for j in 8 9; do [ "$(field "$T/$j.st" state)" = COMPLETED ] || fail "job $j: $(cat "$T/$j.st")"; done
[ "$(ls "$cache" | grep -c '^sha256-')" = 1 ] && [ "$(ls -A "$cache" | grep -c '^\.pub')" = 0 ] &&
  [ "$(ls -A "$cache/work" | grep -c '^\.tmp')" = 0 ] || fail "concurrent unpacks left: $(ls -A "$cache" "$cache/work")"
# published images are root's (the user cannot swap one for a symlink); their files the user's
[ "$(stat -c %U "$cache" "$cache"/sha256-* | sort -u)" = root ] && [ "$(stat -c %U "$cache"/sha256-*/rootfs)" = pxtest1 ] ||
  fail "cache ownership: $(stat -c '%U %n' "$cache" "$cache"/sha256-* "$cache"/sha256-*/rootfs)"
ok "two jobs unpacking one image at once: both run, one cached copy"

# 8. A mount reaches only what the user reaches: a directory behind root's
#    0700 one is refused (the runtime, root, would have mounted it), a file is fine.
mkdir -p "$T/priv/sub" && echo secret >"$T/priv/sub/s" && chmod 700 "$T/priv" && chmod 755 "$T/priv/sub"
launch_json 10 pxtest1 $'#!/bin/sh\ncat /p/s\n' ".container_image = \"$T/img/oci\"" \
  ".container_mounts = \"$T/priv/sub:/p\"" >"$T/10.json"
run "$T/10.json" >"$T/10.st"
[ "$(field "$T/10.st" state)" = FAILED ] && ! grep -q secret "$WORK/slurm-10.out" 2>/dev/null ||
  fail "job 10 mounted a directory pxtest1 cannot reach: $(cat "$T/10.st")"
[ "$(field "$T/10.st" error)" = "ContainerMounts: $T/priv/sub: Permission denied" ] ||
  fail "job 10 error: $(field "$T/10.st" error)"
launch_json 11 pxtest1 $'#!/bin/sh\ncat /f\n' ".container_image = \"$T/img/oci\"" ".container_mounts = \"$T/ro/f:/f:ro\"" >"$T/11.json"
run "$T/11.json" >"$T/11.st"
grep -qx host-file "$WORK/slurm-11.out" || fail "file mount: $(cat "$T/11.st") $(cat "$WORK/slurm-11.out")"
ok "mount sources are opened as the user: a directory they cannot reach is refused, a file mounts"

# 9. Names: the agent's --container-image-dir wins over the launch's ContainerImageDir=.
launch_json 12 pxtest1 $'#!/bin/sh\ngrep ^ID= /etc/os-release\n' '.container_image = "busybox"' \
  '.container_image_dir = "/nonexistent"' >"$T/12.json"
"$PHALANX" agent --run-local "$T/12.json" --state-dir "$T/state" --container-image-dir "$T/img" 2>>"$T/agent.log" >"$T/12.st"
grep -qx 'ID=pxtest' "$WORK/slurm-12.out" || fail "job 12 (busybox in --container-image-dir): $(cat "$T/12.st")"
launch_json 13 pxtest1 $'#!/bin/sh\ntrue\n' '.container_image = "busybox"' ".container_image_dir = \"$T/img\"" >"$T/13.json"
run "$T/13.json" >"$T/13.st"
[ "$(field "$T/13.st" state)" = COMPLETED ] || fail "job 13 (busybox in ContainerImageDir=): $(cat "$T/13.st")"
ok "image names: the agent's directory, else the cluster's ContainerImageDir="

# Nothing left: the runtime's state, the configurations and staging go with the job.
left=$(find "$T/state/jobs" -name 'ctr.*' -o -name 'crun.*' | head -3)
[ -z "$left" ] || fail "left behind: $left"
sanitizer_clean "$T"/agent.log
