#!/usr/bin/env bash
# Containers end to end on a `phalanx dev` cluster whose configuration names
# an image directory (ContainerImageDir=, written by dev's
# --container-image-dir), through Slurm's names:
# sbatch --container-image=NAME (a docker archive found as NAME.tar) with
# --container-mounts runs the script inside the image, its output where
# sbatch puts it; #SBATCH --container-image=NAME:TAG (an OCI layout's tagged
# manifest); srun --container-image outside an allocation streams its
# output; srun --container-image in a batch script (pyxis' usual way) runs
# its step in the image on every node, and says why when the image is
# missing; salloc --container-image puts the sruns of its shell in the
# image; a missing image ends the job FAILED at once with the reason in
# squeue, scontrol and sacct; bad options are refused at submission naming
# the field.
source "$(dirname "$0")/lib_dev.sh"
source "$(dirname "$0")/ctr/lib.sh"
[ "$(id -u)" = 0 ] || px_skip root "the OCI runtime needs root"
need_runtime
make_test_image "$tmp/images" >/dev/null
mv "$tmp/images/oci" "$tmp/images/bb" # a layout named bb, its manifest tagged v1
start_dev "sbatch squeue sacct scontrol srun salloc" --nodes 2 --container-image-dir "$tmp/images"
mkdir -p "$tmp/work" && cd "$tmp/work"
done_ok() { sacct -X -n -P -o State -j "$1" | grep -qx "$2"; }

# 1. sbatch with a name (busybox.tar) and a mount.
id=$(sbatch --parsable --container-image=busybox --container-mounts="$tmp/work:/w" \
  --wrap 'cat /etc/os-release; echo JOB=$SLURM_JOB_ID NODES=$SLURM_JOB_NODELIST; pwd; echo hi >/w/from-ctr')
wait_for 60 done_ok "$id" COMPLETED || fail "sbatch job $id: $(sacct -X -n -P -o State -j "$id")"
out=$(cat "slurm-$id.out" 2>/dev/null)
[[ $out == *"ID=pxtest"* && $out == *"JOB=$id NODES=dev"* && $out == *$'\n/work'* ]] || fail "sbatch job $id output: $out"
[ "$(cat from-ctr 2>/dev/null)" = hi ] || fail "the mount did not reach the host"
echo "ok   sbatch --container-image=busybox --container-mounts: the script ran in the image (job $id)"

# 2. #SBATCH lines, NAME:TAG of an OCI layout, --container-workdir.
printf '#!/bin/sh\n#SBATCH --container-image=bb:v1\n#SBATCH --container-workdir=/opt\npwd\nls /opt/dir\n' >ctr.sh
id=$(sbatch --parsable ctr.sh)
wait_for 60 done_ok "$id" COMPLETED || fail "#SBATCH job $id: $(sacct -X -n -P -o State -j "$id")"
[ "$(cat "slurm-$id.out" 2>/dev/null)" = $'/opt\nnew' ] || fail "#SBATCH job $id output: $(cat "slurm-$id.out")"
echo "ok   #SBATCH --container-image=bb:v1 --container-workdir=/opt (job $id)"

# 3. srun outside an allocation streams the output of its command run in the image.
out=$(srun --container-image=bb:v1 -N 1 sh -c 'grep ^ID= /etc/os-release; echo rank=$SLURM_PROCID' 2>&1)
[ "$out" = $'ID=pxtest\nrank=0' ] || fail "srun --container-image: $out"
echo "ok   srun --container-image outside an allocation"

# 4. A missing image: FAILED at once, the reason where people look.
id=$(sbatch --parsable --container-image=/nonexistent --wrap 'true')
wait_for 60 done_ok "$id" FAILED || fail "job $id with a missing image: $(sacct -X -n -P -o State -j "$id")"
want="ContainerImage: /nonexistent: no such image"
[[ $(squeue -h -t all -j "$id" -o '%T %r') == "FAILED $want" ]] || fail "squeue: $(squeue -h -t all -j "$id" -o '%T %r')"
scontrol show job "$id" | grep -q "JobState=FAILED Reason=$want" || fail "scontrol: $(scontrol show job "$id" | grep JobState)"
[ "$(sacct -X -n -P -o State,Reason -j "$id")" = "FAILED|$want" ] || fail "sacct: $(sacct -X -n -P -o State,Reason -j "$id")"
id=$(sbatch --parsable --container-image=nosuchname --wrap 'true')
wait_for 60 done_ok "$id" FAILED || fail "job $id with an unknown name"
scontrol show job "$id" | grep -q "Reason=ContainerImage: nosuchname: no such image in $tmp/images" ||
  fail "scontrol: $(scontrol show job "$id" | grep JobState)"
echo "ok   a missing image fails the job at once, the reason in squeue, scontrol and sacct"

# 5. Bad options are refused at submission, naming the field.
out=$(sbatch --container-image=bb:v1 --container-mounts=rel:/x --wrap true 2>&1)
[[ $out == *"container_mounts: entry 1: source is not an absolute path"* ]] || fail "relative mount: $out"
out=$(sbatch --container-workdir=/w --wrap true 2>&1)
[[ $out == *"container_workdir: needs container_image"* ]] || fail "workdir without image: $out"
out=$(srun --container-image=bb:v1 --container-env=1BAD true 2>&1)
[[ $out == *'container_env: "1BAD" is not a variable name'* ]] || fail "srun bad env name: $out"
echo "ok   bad container options are refused naming the field"

# 6. Steps: srun --container-image inside a two-node batch job (the host's
#    script), one node and both; a missing image says why in srun's stderr.
cat >steps.sh <<'SH'
#!/bin/sh
srun -N 1 --container-image=bb:v1 sh -c 'grep ^ID= /etc/os-release; echo step=$SLURM_STEP_ID'
srun --container-image=busybox sh -c 'echo node=$SLURMD_NODENAME $(grep ^ID= /etc/os-release)' | sort
srun -N 1 --container-image=/nope true
echo rc=$?
SH
id=$(sbatch --parsable -N 2 steps.sh)
wait_for 60 done_ok "$id" COMPLETED || fail "steps job $id: $(sacct -X -n -P -o State -j "$id")"
want=$'ID=pxtest\nstep=0\nnode=dev1 ID=pxtest\nnode=dev2 ID=pxtest\nphalanx: error: ContainerImage: /nope: no such image'
want+=$'\nsrun: error: dev1: task 0: Exited with exit code 1\nrc=1'
[ "$(cat "slurm-$id.out")" = "$want" ] || fail "steps job $id output: $(cat "slurm-$id.out")"
echo "ok   srun --container-image in a batch script: its steps run in the image, a missing one says why"

# 7. salloc --container-image: the sruns of its shell run in the image.
out=$(salloc -N 1 --container-image=bb:v1 srun sh -c 'grep ^ID= /etc/os-release' 2>&1)
[[ $out == *$'\nID=pxtest\n'* ]] || fail "salloc --container-image: $out"
echo "ok   salloc --container-image: srun in its shell runs in the image"
[ "$fails" = 0 ]
