#!/usr/bin/env bash
# The web dashboard in a real browser: headless Chromium (Debian's) driven
# by puppeteer-core (web/package.json) through web/test/ui_test.mjs, against
# a `phalanx dev` cluster running a 2-node gang of account vision. Sign-in
# through `phalanx ui`'s link and with a pasted token, the gang's GPUs in
# vision's colour, a drained node's reason and a submitted job shown live,
# the fair-share tree, usage charts, and another user kept from the gang's
# output (checked at the API too). Screenshots of every page, at 1280x800 and
# phone size, land in $ARTIFACTS (default: artifacts/ui under the test's
# build directory). Skipped (77) where node, Chromium or web/node_modules is
# missing.
source "$(dirname "$0")/lib_dev.sh"
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if ! command -v node >/dev/null || [ -z "$chromium" ] || [ ! -d "$PX_SRC/web/node_modules/puppeteer-core" ]; then
  px_skip browser "needs node, chromium and web/node_modules (make deps)"
fi
artifacts=${ARTIFACTS:-$PWD/artifacts/ui}
mkdir -p "$tmp/work" "$artifacts"
# plain loopback: headless Chromium would need the dev cluster's throwaway
# CA in its own certificate store (the https link: test_server_tls)
start_dev "" --nodes 4 --no-tls
api() { curl -s --unix-socket "$PHALANX_SERVER" "http://localhost$1"; }
nodes_idle() { [ "$(api /v1/nodes | jq '[.nodes[] | select(.state == "IDLE")] | length')" = 4 ]; }
wait_for 30 nodes_idle || { echo "nodes not idle"; api /v1/nodes; exit 1; }

secret="ui-test-secret-$RANDOM$RANDOM"
out=$("$PHALANX" submit -J gang -A vision -N 2 --gres=gpu:8 -t 10 -D "$tmp/work" --wrap "echo $secret; sleep 300")
gang=${out##* }
job_state() { api "/v1/jobs/$1" | jq -r .state; }
wait_for 30 sh -c "grep -q $secret '$tmp/work/slurm-$gang.out' 2>/dev/null" || { echo "gang $gang did not run: $(job_state "$gang")"; exit 1; }
[ "$(job_state "$gang")" = RUNNING ] || fail "gang $gang is $(job_state "$gang")"

link=$("$PHALANX" ui) || fail "phalanx ui failed"
[[ $link == http://127.0.0.1:*/ui/#token=* ]] || fail "phalanx ui printed '$link'"
alice=$("$PHALANX" token --state-dir "$tmp/state/server" --user alice --uid 4242)
base=${link%%/ui/*}

# The rule the page relies on, at the API: only the owner reads the output.
as() { curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $1" "$base$2"; }
[ "$(as "$alice" "/v1/jobs/$gang/output")" = 403 ] || fail "alice read root's output: $(cat "$tmp/body")"
root_token=${link##*#token=}
[ "$(as "$root_token" "/v1/jobs/$gang/output?lines=5")" = 200 ] && grep -q "$secret" "$tmp/body" ||
  fail "root cannot read the gang's output: $(cat "$tmp/body")"
# An --output pattern the server expands as the agent does (%x %4j).
out=$("$PHALANX" submit -J patterned -A ops -t 5 -D "$tmp/work" -o 'out-%x-%4j.txt' --wrap 'echo first; echo second')
pj=${out##* }
pfile=$(printf '%s/work/out-patterned-%04d.txt' "$tmp" "$pj")
wait_for 30 sh -c "grep -q second '$pfile' 2>/dev/null" || fail "job $pj wrote no $pfile"
[ "$(as "$root_token" "/v1/jobs/$pj/output?lines=1")" = 200 ] && [ "$(jq -r .lines "$tmp/body")" = second ] &&
  [ "$(jq -r .path "$tmp/body")" = "$pfile" ] || fail "patterned output: $(cat "$tmp/body")"
[ "$(as "$root_token" "/v1/jobs/$pj/output?lines=0")" = 400 ] || fail "lines=0 accepted"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/ui/nothing.js")" = 404 ] || fail "/ui/nothing.js is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' -H 'Accept-Encoding: gzip' "$base/ui/app.js")" = "200 text/javascript; charset=utf-8" ] ||
  fail "/ui/app.js not served"
echo "ok   phalanx ui link, output only for its owner and --output patterns (API), static files"

UI_LINK=$link ALICE_TOKEN=$alice GANG_ID=$gang SECRET=$secret ARTIFACTS=$artifacts CHROMIUM=$chromium \
  node "$PX_SRC/web/test/ui_test.mjs" || fails=$((fails + 1))
echo "screenshots: $artifacts"
[ "$fails" -eq 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
