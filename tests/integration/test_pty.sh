#!/usr/bin/env bash
# Interactive terminals as a person uses them (docs/interactive.md), on a
# real `phalanx dev` cluster (server and 2 agents; the agents reach the
# server over TLS, the CLI over its socket). tmux is the person's terminal:
#   1. srun --pty outside an allocation: a prompt on the job's node, inside
#      the job's cgroup, as the user; commands typed and read back from the
#      screen; the window resized (stty size inside follows); Ctrl-C on a
#      running sleep gives the prompt back; Ctrl-Z stops a job; `exit 7`
#      ends the step, srun returns 7 and the allocation is released.
#   2. salloc -N 2, then srun --pty -w (its second node) in its shell: the
#      terminal is a step of the salloc's job, on that node; its status
#      comes back.
#   3. phalanx exec into a running batch job (piped input and exit status,
#      over the local socket and over https; killing the client ends the
#      remote command), refused (403, rule own-job) to another user; bad
#      terminal steps refused naming the field, a relay credential that works
#      once; phalanx attach and sattach follow output.
source "$(dirname "$0")/lib_dev.sh"
command -v tmux >/dev/null || { echo "tmux is missing (make deps installs it)"; exit 1; }
start_dev "sbatch squeue srun salloc sattach" --nodes 2 --gpus 2 --cpus 4 --mem-mib 8192
ln -s "$PHALANX" "$tmp/bin/phalanx"
mkdir -p "$tmp/work"
cd "$tmp/work"
sock=px-pty-$$
tm() { tmux -L "$sock" "$@"; }
cleanup_tmux() { tm kill-server 2>/dev/null; cleanup; }
trap cleanup_tmux EXIT
screen() { tm capture-pane -p -t t -S -300 -J; }
shows() { screen | grep -qE -- "$1"; }
type_line() { tm send-keys -t t -l "$1" && tm send-keys -t t Enter; }
expect_screen() { # seconds regex what
  wait_for "$1" shows "$2" || { fail "$3: no /$2/ on the screen:"; screen | grep -v '^$' | tail -15; return 1; }
}
running_jobs() { squeue -h -t R -o %i | wc -l; }
# The processes this run types (another suite's same test runs beside it):
# the sleeps carry this run's number, the srun commands it in their env.
sleeping() { pgrep -f "^sleep $1\\.$RUN_NO\$" >/dev/null; } # sleeping 3171: the remote `sleep 3171.RUN_NO` runs
awake() { ! sleeping "$1"; }
srun_gone() { ! pgrep -f "srun --pty .* env PX_RUN=$RUN_NO " >/dev/null; }

# A plain shell in a 100x30 window: PS1 not exported, so the remote shell's prompt is its own.
tm new-session -d -s t -x 100 -y 30 "env -i PATH=$PATH HOME=$HOME TERM=xterm PHALANX_SERVER=$PHALANX_SERVER TZ=UTC bash --norc --noprofile"
tm set-option -t t history-limit 5000 >/dev/null
type_line "PS1='local\$ '; cd $tmp/work"
expect_screen 20 '^local\$ ' "local shell"

# 1. srun --pty outside an allocation
type_line "srun --pty -t 5 env PX_RUN=$RUN_NO PS1='remote\$ ' bash --norc --noprofile"
expect_screen 60 '^remote\$ ' "srun --pty prompt" || exit 1
job=$(squeue -h -t R -o %i | head -1)
type_line 'echo "sum=$((6*7)) job=$SLURM_JOB_ID user=$(id -un) size=$(stty size)"'
expect_screen 20 "^sum=42 job=$job user=$(id -un) size=30 100\$" "a command's output, the window size"
if [ "$(id -u)" = 0 ]; then # the agents make cgroups as root: the shell is in the job's
  type_line 'echo "cg=$(grep -c phalanx /proc/self/cgroup)"'
  expect_screen 20 '^cg=[1-9]' "the shell in the job's cgroup"
fi
tm resize-window -t t -x 120 -y 40
type_line 'echo "resized=$(stty size)"'
expect_screen 20 '^resized=40 120$' "window size after a resize"
type_line "sleep 3171.$RUN_NO"
wait_for 30 sleeping 3171 || fail "the remote sleep did not start"
tm send-keys -t t C-c
wait_for 30 awake 3171 || fail "Ctrl-C did not stop the remote sleep"
type_line 'echo "after=$((1+1))"'
expect_screen 20 '^after=2$' "the prompt after Ctrl-C"
type_line "sleep 3319.$RUN_NO"
wait_for 30 sleeping 3319 || fail "the second remote sleep did not start"
tm send-keys -t t C-z
expect_screen 20 'Stopped +sleep 3319' "Ctrl-Z stops the foreground job"
# wait reaps it: a killed job bash has not reaped yet still counts as
# stopped, and `exit` would refuse ("There are stopped jobs.")
type_line 'kill -9 %1; wait %1; echo "killed=$((2+2))"'
expect_screen 20 '^killed=4$' "the shell after Ctrl-Z"
type_line 'exit 7'
# a person waits for the local prompt: keys typed before srun ends go to the remote shell
wait_for 30 srun_gone || fail "srun --pty did not end after exit"
type_line 'echo "srun-rc=$?"'
expect_screen 30 '^srun-rc=7$' "srun's exit status is the shell's"
wait_for 30 sh -c '[ "$(squeue -h -t R -o %i | wc -l)" = 0 ]' || fail "the allocation outlived srun --pty: $(squeue)"
[ -z "$(ls -A | grep phalanx-pty)" ] || fail "srun --pty left its directory: $(ls -A)"
echo "ok   srun --pty: prompt, output, size, resize, Ctrl-C, Ctrl-Z, exit status, allocation released"

# 2. salloc, then srun --pty inside it
type_line "salloc -N 2 -t 5"
expect_screen 60 'Granted job allocation' "salloc"
type_line "PS1='alloc\$ '"
expect_screen 20 '^alloc\$ ' "salloc's shell"
type_line "srun --pty -w dev2 env PX_RUN=$RUN_NO PS1='inner\$ ' bash --norc --noprofile"
expect_screen 60 '^inner\$ ' "srun --pty in salloc"
type_line 'echo "step=$SLURM_STEP_ID job=$SLURM_JOB_ID node=$SLURMD_NODENAME"'
alloc=$(squeue -h -t R -o %i | head -1)
expect_screen 20 "^step=0 job=$alloc node=dev2\$" "the terminal is step 0 of the salloc's job, on the node -w named"
type_line 'exit 3'
wait_for 30 srun_gone || fail "srun --pty in salloc did not end after exit"
type_line 'echo "inner-rc=$?"'
expect_screen 30 '^inner-rc=3$' "srun --pty's status in salloc"
type_line 'exit'
wait_for 30 sh -c '[ "$(squeue -h -t R -o %i | wc -l)" = 0 ]' || fail "salloc's allocation outlived it"
echo "ok   salloc then srun --pty -w: a step of the allocation on the named node, its exit status"

# 3. exec, attach, refusals
out=$(sbatch -o "$tmp/work/batch.out" -t 5 --wrap 'i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.2; done')
bj=${out#Submitted batch job }
wait_for 60 sh -c "squeue -h -t R -j $bj -o %i | grep -qx $bj" || fail "batch job $bj did not start"
got=$(echo "piped input" | phalanx exec "$bj" -- sh -c 'cat; echo "in $SLURM_JOB_ID"')
[ "$got" = "piped input
in $bj" ] || fail "exec with piped input: '$got'"
phalanx exec "$bj" -- sh -c 'exit 5' </dev/null
rc=$?
[ $rc = 5 ] || fail "exec's exit status: $rc, want 5"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  mkdir -p "$tmp/other" && chmod 755 "$tmp" && chmod 777 "$tmp/other"
  err=$(cd "$tmp/other" && setpriv --reuid=65534 --regid=65534 --clear-groups "$PHALANX" exec "$bj" -- true 2>&1 </dev/null)
  rc=$?
  [ $rc != 0 ] && grep -q "belongs to root: only its user and operators run steps in it (rule own-job)" <<<"$err" ||
    fail "exec by another user: rc $rc: $err"
fi
# the user leaves first (the client killed, as by a closed terminal): the
# remote command gets SIGHUP and the step ends
mkfifo "$tmp/in" && exec 9<>"$tmp/in" # input that stays open
# (the client must be connected first: a session whose user never came ends
# only after the relay's 60 s wait)
phalanx exec "$bj" -- sh -c 'echo connected; exec sleep 3173.'"$RUN_NO" <"$tmp/in" >"$tmp/exec.out" &
client=$!
wait_for 30 grep -q connected "$tmp/exec.out" || fail "exec's output did not reach its client"
wait_for 30 sleeping 3173 || fail "exec's sleep did not start"
kill -TERM $client
wait $client
wait_for 30 awake 3173 || fail "the remote command outlived its client"
exec 9>&-
# over https (a remote user's way in): the CLI's side of the relay is TLS too
tls_port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\) (TLS).*/\1/p' "$tmp/state/server.log" | head -1)
token=$(phalanx token)
got=$(echo "over tls" | PHALANX_SERVER="https://127.0.0.1:$tls_port" PHALANX_CA_FILE="$tmp/state/tls/ca.pem" \
  PHALANX_TOKEN="$token" phalanx exec "$bj" -- sh -c 'cat; exit 6')
rc=$?
[ "$got $rc" = "over tls 6" ] || fail "exec over https: '$got' rc $rc (port '$tls_port')"
got=$(timeout 5 phalanx attach "$bj" | head -3)
grep -q '^tick 1$' <<<"$got" || fail "attach: '$got'"
bad=$(sattach "$bj" 2>&1); [ $? != 0 ] && grep -q 'usage: sattach JOBID.STEPID' <<<"$bad" || fail "sattach without a step: $bad"
code=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$PHALANX_SERVER" -H 'Connection: Upgrade' \
  -H 'Upgrade: phalanx-pty' -H 'X-Phalanx-Secret: nope' "http://x/v1/terminals/00112233445566778899aabbccddeeff")
[ "$code" = 404 ] || fail "an unknown terminal session: HTTP $code, want 404"
# the API: a terminal step's bad input names the field; a credential works once
post_step() { curl -s --unix-socket "$PHALANX_SERVER" -H 'Content-Type: application/json' -d "$1" "http://x/v1/jobs/$bj/steps"; }
mkdir -p "$tmp/work/.t"
msg=$(post_step '{"argv":["true"],"out_dir":"'"$tmp"'/work/.t","pty":true,"nodes":2}' | jq -r .error.message)
[ "$msg" = "step.nodes: a terminal runs on one node, not 2" ] || fail "pty on 2 nodes: $msg"
msg=$(post_step '{"argv":["true"],"out_dir":"'"$tmp"'/work/.t","pty":true,"node":"nope"}' | jq -r .error.message)
[ "$msg" = "step.node: nope is not one of job $bj's nodes" ] || fail "pty on a node not the job's: $msg"
msg=$(post_step '{"argv":["true"],"out_dir":"'"$tmp"'/work/.t","node":"dev1"}' | jq -r .error.message)
[ "$msg" = 'step.node: only a terminal step ("pty":true) or a local one names its node' ] || fail "node without pty: $msg"
ans=$(post_step '{"argv":["sleep","30"],"out_dir":"'"$tmp"'/work/.t","pty":true,"pty_secret":"mine"}')
tpath=$(jq -r .terminal.path <<<"$ans") secret=$(jq -r .terminal.secret <<<"$ans")
[ ${#secret} = 64 ] && [ "$secret" != mine ] || fail "the terminal's credential: $ans"
upgrade() { curl -s -o "$tmp/up.out" -w '%{http_code}' --max-time 2 --unix-socket "$PHALANX_SERVER" \
  -H 'Connection: Upgrade' -H 'Upgrade: phalanx-pty' -H "X-Phalanx-Secret: $1" "http://x$tpath"; }
wrong=${secret%?}0; [ "$wrong" != "$secret" ] || wrong=${secret%?}1 # one secret in 16 ends in 0
[ "$(upgrade "$wrong")" = 403 ] && grep -q "not the session's credential" "$tmp/up.out" || fail "a wrong credential: $(cat "$tmp/up.out")"
[ "$(upgrade "$secret")" = 101 ] || fail "the credential did not open the stream: $(cat "$tmp/up.out")"
code=$(upgrade "$secret") # used: refused (403), or the session it opened has ended since (404)
[ "$code" = 403 ] && grep -q "already used" "$tmp/up.out" || [ "$code" = 404 ] || fail "a used credential: $code $(cat "$tmp/up.out")"
mkdir -p "$tmp/work/.a"
sid=$(post_step '{"argv":["sh","-c","for i in 1 2 3; do echo s$i; sleep 0.3; done; echo e >&2"],"out_dir":"'"$tmp"'/work/.a"}' | jq -r .step_id)
got=$(timeout 30 sattach "$bj.$sid" 2>&1)
[ "$got" = "s1
s2
s3
e" ] || fail "sattach $bj.$sid: '$got'"
tsid=$(jq -r .step_id <<<"$ans") # the terminal step opened above
got=$(sattach "$bj.$tsid" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "step $bj.$tsid is a terminal: its output goes to the terminal that opened it" <<<"$got" ||
  fail "sattach to a terminal step: rc $rc: $got"
echo "ok   exec (input, status, over https, the user leaving ends it, 403 to another user), attach, sattach of a step and of a terminal, sattach usage, unknown session refused, bad terminal steps named, one-time credentials"
exit $((fails > 0))
