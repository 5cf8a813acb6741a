#!/usr/bin/env bash
# Start of a job inside a container image on a real local cluster
# (`phalanx dev`, one agent process per node, crun):
#   container_first_start_ms       submit -> the job's process running inside
#                                  its image, the image already in the node's
#                                  cache (median of 5; the job touches a file
#                                  in a mounted directory, polled every 2 ms)
#   container_first_start_bare_ms  the baseline, in the same run and the same
#                                  way: the same job without an image
#   container_runtime_ms           what the image adds per start: their difference
#   container_unpack_ms            the first job of an image (unpacking it into
#                                  the cache included), for scale
# The image is the tests' busybox image (tests/integration/ctr/make_image.sh).
# Prints `name value unit` lines; skips (exit 0, a line on stderr) where no
# container can run (not root, no crun, no mount namespace).
set -euo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
if [ "$(id -u)" -ne 0 ] || ! command -v crun >/dev/null || ! unshare -m true 2>/dev/null; then
  echo "bench_container: skipped (needs root, crun and a mount namespace)" >&2
  exit 0
fi
tmp=$(mktemp -d /tmp/pxbench.XXXXXX)
chmod 755 "$tmp"
dev=
cleanup() {
  [ -n "$dev" ] && { kill -TERM "$dev" 2>/dev/null; wait "$dev" 2>/dev/null || true; }
  rm -rf "$tmp"
}
trap cleanup EXIT
bash "$PX_SRC/tests/integration/ctr/make_image.sh" "$tmp/img"
mkdir -p "$tmp/w"
"$PHALANX" dev --nodes 1 --gpus 8 --quiet --state-dir "$tmp/c" --ready-file "$tmp/ready" &
dev=$!
for _ in $(seq 1 1800); do [ -s "$tmp/ready" ] && break; kill -0 "$dev"; sleep 0.1; done
[ -s "$tmp/ready" ] || { echo "bench_container: cluster did not start" >&2; exit 1; }
sock=$tmp/c/server.sock
api() { curl -sf --unix-socket "$sock" -H 'Content-Type: application/json' "$@"; }

# start_ms NAME IMAGE: submit a job that touches NAME in the shared directory
# (/w inside the image: it can only appear through the container's mount,
# so its appearance also shows that the job ran in the image), and the ms
# until it appears. IMAGE "": the same job on the host.
start_ms() {
  local name=$1 img=$2 dir=$tmp/w spec t0 t1
  [ -n "$img" ] && dir=/w
  spec=$(jq -n --arg wd "$tmp" --arg script "#!/bin/sh"$'\n'"touch $dir/$name" \
    '{job:{name:"ctr", script:$script, gpus_per_node:1, workdir:$wd, submit_dir:$wd,
           stdout_path:"/dev/null", time_limit_s:60}}')
  [ -n "$img" ] && spec=$(jq --arg img "$img" --arg m "$tmp/w:/w" \
    '.job += {container_image:$img, container_mounts:$m}' <<<"$spec")
  t0=$(date +%s%N)
  api -X POST --data-binary "$spec" http://localhost/v1/jobs >/dev/null
  for _ in $(seq 1 10000); do [ -e "$tmp/w/$name" ] && break; sleep 0.002; done
  t1=$(date +%s%N)
  [ -e "$tmp/w/$name" ] || { echo "bench_container: job $name never started" >&2; exit 1; }
  echo $(( (t1 - t0) / 1000000 ))
}
median() { printf '%s\n' "$@" | sort -n | sed -n 3p; }

unpack=$(start_ms first "$tmp/img/oci")
ctr=() bare=()
for i in 1 2 3 4 5; do
  ctr+=("$(start_ms "c$i" "$tmp/img/oci")")
  bare+=("$(start_ms "b$i" "")")
done
c=$(median "${ctr[@]}") b=$(median "${bare[@]}")
echo "container_first_start_ms $c ms"
echo "container_first_start_bare_ms $b ms"
echo "container_runtime_ms $(( c - b )) ms"
echo "container_unpack_ms $unpack ms"
