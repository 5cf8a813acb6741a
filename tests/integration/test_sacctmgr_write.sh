#!/usr/bin/env bash
# sacctmgr add / modify / delete online (issue 17) against a real server
# process: an account and a user association added, a job submitted to
# them, the account's share changed and seen by sacctmgr and sshare, the
# change kept across a restart (journal replay), a deletion refused while
# the account has a job, bad input refused with the field named and nothing
# changed, a user who is not an operator refused (403), QoS limits changed,
# QoS added and deleted.
source "$(dirname "$0")/lib_server.sh"
write_config
start_server
mkdir -p "$T/bin"
for c in sacctmgr sshare; do ln -s "$PHALANX" "$T/bin/$c"; done
export PATH="$T/bin:$PATH" PHALANX_SERVER=$SOCK

assoc() { sacctmgr -n -P show assoc format=account,user,share,grptres,maxjobs; }

# add an account and a user association (Slurm's confirmation output)
out=$(sacctmgr -i add account vision parent=ml fairshare=5 description=cv </dev/null)
grep -qx ' Adding Account(s)' <<<"$out" && grep -qx '  vision' <<<"$out" &&
  grep -qx '  A = vision     C = test      ' <<<"$out" || fail "add account output: $out"
out=$(sacctmgr -i add user pxalice account=vision fairshare=3 </dev/null)
grep -qx '  U = pxalice   A = vision     C = test      ' <<<"$out" || fail "add user output: $out"
assoc | grep -qx 'vision||5||' || fail "account not listed: $(assoc)"
assoc | grep -qx 'vision|pxalice|3||' || fail "user association not listed: $(assoc)"
[ "$(sacctmgr -n -P show account where name=vision format=account,descr,org)" = "vision|cv|ml" ] ||
  fail "description: $(sacctmgr -n -P show account)"
ok "add account and user"

# a job of that user in that account is accepted (held: it stays queued)
j=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"cv","account":"vision","hold":true}}' | jq .job_id)
[ "$(api GET /v1/jobs/$j | cut -d' ' -f2- | jq -r .spec.account)" = vision ] || fail "job account"
ok "submit to the new account"

# modify: sacctmgr show and sshare (the next published snapshot) follow at once
out=$(sacctmgr -i modify account where name=vision set fairshare=25 GrpTRES=gres/gpu=4 MaxJobs=3 </dev/null)
grep -qx '  C = test       A = vision of ml' <<<"$out" || fail "modify output: $out"
assoc | grep -qx 'vision||25|gres/gpu=4|3' || fail "modify not shown: $(assoc)"
shares() { api GET /v1/shares | cut -d' ' -f2- | jq -r '.shares[] | select(.account=="vision" and (.user // "")=="") | .raw_shares'; }
vision_shares_25() { [ "$(shares)" = 25 ]; }
wait_for "sshare shows 25 shares" vision_shares_25
sshare -a | grep -q '^  vision  *25 ' || fail "sshare: $(sshare -a)"
ok "modify fairshare and limits, seen by sacctmgr and sshare"

# delete refused while the account has a queued job; nothing changed
out=$(sacctmgr -i delete account vision </dev/null) && fail "delete with a job succeeded: $out"
grep -q 'Job(s) active, cancel job(s) before remove' <<<"$out" || fail "delete refusal: $out"
grep -q 'pxalice has 1 queued or running job' <<<"$out" || fail "delete refusal not precise: $out"
assoc | grep -qx 'vision|pxalice|3||' || fail "refused delete changed the tree: $(assoc)"
ok "delete refused while the account has jobs"

# bad input: a precise error naming the field, nothing changes
before=$(assoc)
out=$(sacctmgr -i add account x parent=nosuch </dev/null) && fail "unknown parent accepted"
grep -q "Parent account 'nosuch' doesn't exist" <<<"$out" || fail "unknown parent: $out"
body=$(expect 404 root POST /v1/accounts '{"op":"add","entity":"account","name":"x","parent":"nosuch"}')
grep -q '"field":"parent"' <<<"$body" || fail "API unknown parent: $body"
body=$(expect 400 root POST /v1/accounts '{"op":"modify","entity":"account","name":"vision","set":{"fairshare":"abc"}}')
grep -q 'set.fairshare' <<<"$body" || fail "API bad number: $body"
body=$(expect 400 root POST /v1/accounts '{"op":"modify","entity":"account","name":"vision","set":{"priority":3}}')
grep -q 'priority: not a setting of an account' <<<"$body" || fail "QoS field on an account: $body"
sacctmgr -i modify account vision set fairshare=abc 2>"$T/err" </dev/null && fail "fairshare=abc accepted"
grep -q "Bad value for fairshare: 'abc'" "$T/err" || fail "bad number: $(cat "$T/err")"
[ "$(assoc)" = "$before" ] || fail "refused changes changed the tree: $(assoc)"
ok "bad input refused, naming the field"

# only operators and administrators change accounts
body=$(expect 403 pxalice POST /v1/accounts '{"op":"add","entity":"account","name":"mine"}')
grep -q 'rule accounts' <<<"$body" || fail "403 rule: $body"
expect 201 pxoper POST /v1/accounts '{"op":"add","entity":"account","name":"opsacct","parent":"physics"}' >/dev/null
ok "403 for a user, operators may"

# comma lists: one association per user and account, each name said once
out=$(sacctmgr -i add user pxbob,pxeve account=opsacct,vision MaxJobs=4 </dev/null)
[ "$(grep -c '^  pxbob$' <<<"$out")" = 1 ] || fail "add users output: $out"
[ "$(assoc | grep -c '^\(opsacct\|vision\)|\(pxbob\|pxeve\)|1||4$')" = 4 ] || fail "four associations: $(assoc)"
sacctmgr -i delete user pxbob,pxeve account=opsacct,vision </dev/null >/dev/null || fail "delete users"
assoc | grep -q '^\(opsacct\|vision\)|\(pxbob\|pxeve\)|' && fail "users left: $(assoc)"
sacctmgr -i delete account vision opsacct 2>"$T/err" </dev/null && fail "two bare names accepted"
grep -q 'several names are one comma list' "$T/err" || fail "two bare names: $(cat "$T/err")"
ok "comma lists"

# as scripts call it (ColdFront's sync): -Q -i create ... name= cluster=, remove ... where user=
[ -z "$(sacctmgr -Q -i create account name=cf cluster=test parent=physics </dev/null)" ] || fail "-Q printed"
sacctmgr -Q -i create user name=pxbob cluster=test account=cf </dev/null || fail "create user"
assoc | grep -qx 'cf|pxbob|1||' || fail "created: $(assoc)"
sacctmgr -Q -i remove user where user=pxbob cluster=test account=cf </dev/null || fail "remove user"
assoc | grep -q '^cf|pxbob|' && fail "removed user left: $(assoc)"
ok "-Q, create, remove, cluster="

# FairShare=parent: the association's usage counts as its account's
sacctmgr -i modify user where name=pxalice account=vision set fairshare=parent </dev/null | grep -qx '  C = test       A = vision               U = pxalice  ' || fail "fairshare=parent output"
assoc | grep -qx 'vision|pxalice|parent||' || fail "fairshare=parent: $(assoc)"
sacctmgr -i modify user where name=pxalice account=vision set fairshare=3 </dev/null >/dev/null
assoc | grep -qx 'vision|pxalice|3||' || fail "fairshare=3 again: $(assoc)"
ok "fairshare=parent"

# QoS limits
sacctmgr -i modify qos normal set priority=7 MaxWall=2:00:00 </dev/null | grep -qx ' Modified qos...' ||
  fail "modify qos"
[ "$(sacctmgr -n -P show qos format=name,priority,maxwall)" = "normal|7|02:00:00" ] ||
  fail "qos: $(sacctmgr -n -P show qos format=name,priority,maxwall)"
ok "modify qos"

# QoS added and deleted online, in Slurm 22.05's words (from its sacctmgr)
out=$(sacctmgr -i add qos silver priority=10 MaxWall=2:00:00 MaxTRESPerUser=gres/gpu=4 </dev/null)
[ "$out" = " Adding QOS(s)
  silver
 Settings
  Description    = silver
  MaxTRESPerUser           = gres/gpu=4
  MaxWall                  = 02:00:00
  Priority                 = 10" ] || fail "add qos: $out"
rc=0; out=$(sacctmgr -i add qos silver </dev/null) || rc=$?
[ "$out rc=$rc" = " Nothing new added. rc=1" ] || fail "add an existing qos: $out"
sacctmgr -i add qos gold </dev/null >/dev/null || fail "add qos gold"
jq_=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"q","account":"vision","qos":"silver","hold":true}}' | jq .job_id)
out=$(sacctmgr -i delete qos silver </dev/null) && fail "deleted a QoS a job uses: $out"
grep -q "name: QoS silver has 1 queued or running job(s): cancel them first" <<<"$out" || fail "delete qos in use: $out"
out=$(sacctmgr -i delete qos normal </dev/null) && fail "deleted the default QoS: $out"
grep -q "name: QoS normal is the default QoS (of every association without one)" <<<"$out" || fail "delete the default qos: $out"
out=$(sacctmgr -i delete qos gold </dev/null)
[ "$out" = " Deleting QOS(s)...
  gold" ] || fail "delete qos: $out"
rc=0; out=$(sacctmgr -i delete qos gold </dev/null) || rc=$?
[ "$out rc=$rc" = " Nothing deleted rc=1" ] || fail "delete a deleted qos: $out"
body=$(expect 400 pxalice POST /v1/jobs '{"job":{"name":"g","account":"vision","qos":"gold","hold":true}}')
grep -q 'gold' <<<"$body" || fail "a job in a deleted QoS: $body"
[ "$(sacctmgr -n -P show qos format=name,priority,maxwall)" = "normal|7|02:00:00
silver|10|02:00:00" ] || fail "qos listing: $(sacctmgr -n -P show qos format=name,priority,maxwall)"
expect 200 pxalice DELETE /v1/jobs/$jq_ >/dev/null
ok "add and delete qos (refused while a job or an association uses it)"

# without -i: Slurm's question, read from stdin; "n" (or nothing) discards
out=$(echo n | sacctmgr add account tmp)
grep -q '^Would you like to commit changes? (You have 30 seconds to decide)$' <<<"$out" &&
  grep -qx ' Changes Discarded' <<<"$out" || fail "question: $out"
assoc | grep -q '^tmp|' && fail "discarded add applied"
echo y | sacctmgr add account tmp >/dev/null
assoc | grep -q '^tmp||1||$' || fail "confirmed add not applied: $(assoc)"
ok "confirmation"

# a user's default account (where jobs without --account go)
out=$(sacctmgr -i modify user where name=pxalice set defaultaccount=physics </dev/null) &&
  fail "default account without an association accepted: $out"
grep -q "aren't associated with new default account 'physics'" <<<"$out" || fail "default refusal: $out"
sacctmgr -i modify user where name=pxalice set defaultaccount=vision </dev/null >/dev/null ||
  fail "modify defaultaccount"
[ "$(sacctmgr -n -P show user where name=pxalice format=user,defacct)" = "pxalice|vision" ] ||
  fail "default account: $(sacctmgr -n -P show user where name=pxalice format=user,defacct)"
jd=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"d","hold":true}}' | jq .job_id)
[ "$(api GET /v1/jobs/$jd | cut -d' ' -f2- | jq -r .spec.account)" = vision ] || fail "job without --account"
expect 200 pxalice DELETE /v1/jobs/$jd >/dev/null
ok "modify the default account"

# a restarted server has every change (journal replay)
stop_server
start_server
assoc | grep -qx 'vision||25|gres/gpu=4|3' || fail "after restart: $(assoc)"
assoc | grep -qx 'vision|pxalice|3||' || fail "user association after restart: $(assoc)"
assoc | grep -q '^opsacct|' && assoc | grep -q '^tmp|' || fail "added accounts after restart: $(assoc)"
[ "$(sacctmgr -n -P show qos format=name,priority)" = "normal|7
silver|10" ] || fail "qos after restart: $(sacctmgr -n -P show qos format=name,priority)"
[ "$(job_state "$j")" = PENDING ] || fail "job after restart: $(job_state "$j")"
[ "$(sacctmgr -n -P show user where name=pxalice format=user,defacct)" = "pxalice|vision" ] ||
  fail "default account after restart"
ok "restart keeps the changes"

# once the job is gone the user, then the account, go; a restart agrees
expect 200 pxalice DELETE /v1/jobs/$j >/dev/null
out=$(sacctmgr -i delete user pxalice account=vision </dev/null)
grep -qx ' Deleting user associations...' <<<"$out" || fail "delete user: $out"
sacctmgr -i delete account vision </dev/null | grep -qx '  vision' || fail "delete account"
assoc | grep -q '^vision|' && fail "deleted account listed: $(assoc)"
body=$(expect 403 pxalice POST /v1/jobs '{"job":{"name":"cv","account":"vision"}}')
grep -q 'no association with account vision' <<<"$body" || fail "submit to a deleted account: $body"
stop_server
start_server
assoc | grep -q '^vision|' && fail "deleted account back after restart: $(assoc)"
assoc | grep -qx 'ml|pxalice|1||' || fail "pxalice's other association: $(assoc)"
ok "delete user and account, kept across a restart"

# the accounts file stays the bootstrap: where an edit contradicts an online
# change (tmp added online, then in the file), the file wins, with a warning
echo 'Account=tmp Fairshare=9' >>"$T/accounts.conf"
"$PHALANX" config check "$T/slurm.conf" >/dev/null || fail "config check"
stop_server
start_server
assoc | grep -qx 'tmp||9||' || fail "the file's tmp: $(assoc)"
grep -q 'the accounts change of tmp is refused now' "$T/server.log" || fail "no warning for the dropped change"
ok "the accounts file wins over a contradicted online change"
