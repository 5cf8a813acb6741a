#!/usr/bin/env bash
# --mail-type/--mail-user with a real agent (emulated GPUs) and a real
# server whose MailProg= is a script recording its arguments and
# environment: a job asking BEGIN,END mails at its start and its end with
# Slurm's subjects, to --mail-user; a job asking FAIL that exits 3 mails
# "Failed ... ExitCode 3" to its user at MailDomain=; a job asking END that
# fails also gets its "Ended" mail; one asking nothing gets none; a bad word
# is refused naming the field, and nothing is submitted.
source "$(dirname "$0")/lib_server.sh"
[ "$(id -u)" -eq 0 ] || px_skip root "needs root (the agent runs jobs as their users)"
cat >"$T/mail.sh" <<SH
#!/bin/sh
# one line per mail: the arguments, then the job's variables
printf '%s|%s|%s|%s|%s %s %s\n' "\$1" "\$2" "\$3" "\$SLURM_JOB_ID" "\$SLURM_JOB_STATE" "\$SLURM_JOB_USER" "\$SLURM_JOB_MAIL_TYPE" >>"$T/mails"
SH
chmod 755 "$T" "$T/mail.sh"
cat >"$T/slurm.conf" <<CONF
ClusterName=test
HeartbeatInterval=1
KillWait=1
MailProg=$T/mail.sh
MailDomain=example.org
NodeName=n01 CPUs=8 RealMemory=16G Gres=gpu:h100:4
PartitionName=gpu Nodes=n01 Default=YES MaxTime=1:00:00 State=UP
CONF
echo "Account=ml Fairshare=60 Users=pxalice" >"$T/accounts.conf"
start_server
"$PHALANX" agent --server "$SOCK" --node n01 --state-dir "$T/agent" --emulate-gpus 4:h100 --emulate-cpus 8 \
  --emulate-mem 16384 --kill-wait 1 --heartbeat 1 --kill-jobs-on-exit >>"$T/agent.log" 2>&1 &
EXTRA_PIDS+=($!)
node_is() { expect 200 root GET /v1/nodes/n01 | jq -e "$1" >/dev/null; }
wait_for "agent registered" node_is '.state == "IDLE"'

submit() { # name mail_type mail_user exit_status
  local user=${3:+\"mail_user\":\"$3\",}
  expect 201 pxalice POST /v1/jobs "{\"job\":{\"name\":\"$1\",\"mail_type\":\"$2\",$user\"workdir\":\"$T\",
    \"script\":\"#!/bin/sh\\nexit $4\"}}" | jq -r .job_id
}
a=$(submit mb BEGIN,END bob@lab.test 0)
b=$(submit mf FAIL "" 3)
c=$(submit me end "" 1)
n=$(submit mn NONE "" 0)
ended() { case "$(job_state "$1")" in PENDING | RUNNING | COMPLETING | "") return 1 ;; esac; }
for j in $a $b $c $n; do wait_for "job $j ended" ended "$j"; done
mails() { [ "$(wc -l <"$T/mails" 2>/dev/null || echo 0)" -ge 4 ]; }
wait_for "four mails" mails
line() { grep "Job_id=$1 " "$T/mails" | grep "$2"; }
line "$a" Began | grep -Eq "^-s\|Slurm Job_id=$a Name=mb Began, Queued time 00:00:0[0-9]\|bob@lab.test\|$a\|RUNNING pxalice BEGIN,END$" ||
  fail "begin mail: $(cat "$T/mails")"
line "$a" Ended | grep -Eq "^-s\|Slurm Job_id=$a Name=mb Ended, Run time 00:00:0[0-9], COMPLETED, ExitCode 0\|bob@lab.test\|$a\|COMPLETED pxalice" ||
  fail "end mail: $(cat "$T/mails")"
ok "BEGIN,END: Began and Ended mails to --mail-user with Slurm's subjects and variables"
line "$b" Failed | grep -Eq "^-s\|Slurm Job_id=$b Name=mf Failed, Run time 00:00:0[0-9], FAILED, ExitCode 3\|pxalice@example.org\|" ||
  fail "fail mail: $(cat "$T/mails")"
line "$c" Ended | grep -Eq "Name=me Ended, Run time 00:00:0[0-9], FAILED, ExitCode 1\|pxalice@example.org\|" ||
  fail "END of a failed job: $(cat "$T/mails")"
[ "$(grep -c "Job_id=$b \|Job_id=$c " "$T/mails")" = 2 ] || fail "FAIL/END jobs mailed more than once: $(cat "$T/mails")"
! grep -q "Job_id=$n " "$T/mails" || fail "--mail-type=NONE mailed: $(cat "$T/mails")"
ok "FAIL mails Failed to user@MailDomain; END of a failed job mails Ended; NONE mails nothing"

before=$(expect 200 root GET /v1/jobs | jq '.jobs | length')
expect 400 pxalice POST /v1/jobs '{"job":{"name":"bad","mail_type":"BEGIN,SOMETIMES","script":"#!/bin/sh\ntrue"}}' |
  jq -e '.error.message | contains("mail_type: \"SOMETIMES\"")' >/dev/null || fail "bad mail_type not named"
[ "$(expect 200 root GET /v1/jobs | jq '.jobs | length')" = "$before" ] || fail "a refused job was added"
ok "a bad --mail-type word is refused naming it"
