# Shared by the tests that run the CLI against a real `phalanx dev` cluster
# (test_cli_dev.sh, test_cli_steps.sh). Source it; it sets $tmp (removed at
# exit), fail (counts into $fails), wait_for SECONDS CONDITION..., and
#   start_dev "COMMANDS" DEV-ARGS...  links Slurm's COMMANDS to $PHALANX in
#                                     $tmp/bin (on PATH), starts the cluster
#                                     from the plain build (see below) and
#                                     exports PHALANX_SERVER.
#   save_env                          a job command that writes the job's
#                                     environment to $tmp/env.<job id> whole.
# The cluster runs from build/phalanx when there is one (the sanitizer
# build's agents are too slow to register in time); the CLI under test is
# $PHALANX. PX_DEV_PHALANX overrides.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib_skip.sh"
: "${PHALANX:?}" "${PX_SRC:?}"
tmp=$(mktemp -d)
dev_pid=
cleanup() {
  # dev leads its own process group (setsid): stop the group, so that no
  # server or agent outlives the test even if dev itself died
  [ -n "$dev_pid" ] && kill -- -"$dev_pid" 2>/dev/null && wait "$dev_pid" 2>/dev/null
  if [ -n "${PX_KEEP_TMP:-}" ]; then echo "kept $tmp (PX_KEEP_TMP)"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
wait_for() { # seconds, condition...
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.2
  done
}

# A job's command that saves its environment to $tmp/env.<job id> whole:
# written aside and renamed, since env writes past 4 KiB in several writes
# and a test polling for the file could read it cut short under load.
save_env() { echo "env > $tmp/env.\$SLURM_JOB_ID.part && mv $tmp/env.\$SLURM_JOB_ID.part $tmp/env.\$SLURM_JOB_ID"; }

start_dev() {
  local c cmds=$1
  shift
  mkdir -p "$tmp/bin"
  for c in $cmds; do ln -s "$PHALANX" "$tmp/bin/$c"; done
  export PATH="$tmp/bin:$PATH" TZ=UTC
  unset SLURM_JOB_ID SBATCH_ACCOUNT SBATCH_PARTITION SQUEUE_FORMAT SQUEUE_FORMAT2 SINFO_FORMAT
  dev_bin=${PX_DEV_PHALANX:-$PX_SRC/build/phalanx}
  [ -x "$dev_bin" ] || dev_bin=$PHALANX
  setsid "$dev_bin" dev "$@" --state-dir "$tmp/state" --ready-file "$tmp/ready" --quiet >"$tmp/dev.log" 2>&1 &
  dev_pid=$!
  local deadline=$((SECONDS + 120))
  until [ -s "$tmp/ready" ]; do # a dev that exited (its server could not start) fails at once
    if ! kill -0 "$dev_pid" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
      echo "phalanx dev ($dev_bin) did not start"
      tail -n 20 "$tmp/dev.log" "$tmp/state/server.log" 2>/dev/null
      exit 1
    fi
    sleep 0.1
  done
  PHALANX_SERVER=$(sed -n 's/^PHALANX_SERVER=//p' "$tmp/ready")
  export PHALANX_SERVER
}
