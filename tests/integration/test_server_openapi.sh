#!/usr/bin/env bash
# The OpenAPI document against the real server: /v1/openapi.json is
# docs/api/openapi.yaml; every route the server answers is documented and
# every documented route exists (not 404/405); the answers of the main
# endpoints use only documented properties (additionalProperties: false),
# carry the required ones, no null (the document declares none nullable: an
# undrained node's drain_cause is left out), and every status seen is a
# documented one.
source "$(dirname "$0")/lib_server.sh"
write_config
start_server
doc=$PX_SRC/docs/api/openapi.yaml
served=$(expect 200 pxalice GET /v1/openapi.json)
[ "$(jq -S . <<<"$served")" = "$(jq -S . "$doc")" ] || fail "served document differs from $doc (run scripts/gen-openapi.sh)"
ok "served document is docs/api/openapi.yaml"

# every documented (method, path) is routed: substitute ids and names
for mp in $(jq -r '.paths | to_entries[] | .key as $p | .value | keys[] | select(. != "parameters") | "\(.)|\($p)"' "$doc"); do
  method=${mp%%|*} path=${mp#*|}
  path=${path//\{id\}/999999}
  path=${path//\{name\}/n04}
  [ "$path" = /v1/watch ] && path="/v1/watch?timeout=0"
  out=$(api_as pxalice "$(tr a-z A-Z <<<"$method")" "$path" '{}')
  code=${out%% *}
  [ "$code" != 405 ] || fail "$method $path documented but not routed ($code)"
  if [ "$code" = 404 ]; then # a 404 must be about the object, not the route
    jq -e '.error.code=="NOT_FOUND" and (.error.message|test("no such endpoint")|not)' <<<"${out#* }" >/dev/null ||
      fail "$method $path: route missing: ${out#* }"
  fi
  documented=$(jq -r --arg p "${mp#*|}" --arg m "$method" '.paths[$p][$m].responses | keys | join(" ")' "$doc")
  grep -qw "$code" <<<"$documented" || fail "$method ${mp#*|}: status $code not documented ($documented)"
done
ok "every documented route is served, with documented statuses"

# answers use only documented properties, and the required ones
check() { # check SCHEMA JSON
  local props req
  props=$(jq -c --arg s "$1" '.components.schemas[$s].properties | keys' "$doc")
  req=$(jq -c --arg s "$1" '.components.schemas[$s].required // []' "$doc")
  jq -e --argjson p "$props" --argjson r "$req" '(keys - $p | length == 0) and ($r - keys | length == 0)' <<<"$2" >/dev/null ||
    fail "$1: undocumented or missing properties in $(jq -c 'keys' <<<"$2") (documented: $props)"
  # the document has no nullable property: a value not there is left out, never null
  jq -e '[.. | select(. == null)] | length == 0' <<<"$2" >/dev/null || fail "$1: a null in $2"
}
register_node n01
# a drained node (drain_cause given) beside undrained ones (drain_cause left out)
register_node n02
expect 200 pxoper POST /v1/nodes/n02/drain '{"reason":"doc"}' >/dev/null
[ "$(expect 200 pxalice GET /v1/nodes | jq -c '[.nodes[] | select(.name == "n01" or .name == "n02") | has("drain_cause")]')" = '[false,true]' ] ||
  fail "drain_cause not given for exactly the drained node: $(expect 200 pxalice GET /v1/nodes)"
j=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"doc","gpus_per_node":1,"script":"#!/bin/sh\n","env":["A=1"],"comment":"c"}}' | jq .job_id)
expect 201 pxalice POST /v1/jobs '{"job":{"name":"big","gpus_per_node":8,"nodes_min":4}}' >/dev/null
wait_for "job running" job_is "$j" RUNNING
full=$(expect 200 pxalice GET "/v1/jobs/$j?spec=full")
check JobInfo "$full"
check JobSpec "$(jq .spec <<<"$full")"
while IFS= read -r job; do check JobInfo "$job"; check JobSpec "$(jq .spec <<<"$job")"; done < <(expect 200 pxalice GET /v1/jobs | jq -c '.jobs[]')
while IFS= read -r n; do check NodeInfo "$n"; done < <(expect 200 pxalice GET /v1/nodes | jq -c '.nodes[]')
while IFS= read -r p; do check PartitionInfo "$p"; done < <(expect 200 pxalice GET /v1/partitions | jq -c '.partitions[]')
while IFS= read -r s; do check ShareInfo "$s"; done < <(expect 200 pxalice GET /v1/shares | jq -c '.shares[]')
rep="{\"node\":\"n01\",\"job_id\":$j,\"state\":\"COMPLETED\",\"exit_code\":0,\"term_signal\":0,\"requeue_requested\":false,\"peak_mem_mib\":0,\"cpu_time_ms\":0,\"start_time\":0,\"end_time\":0}"
expect 200 root POST /v1/agent/report "$rep" >/dev/null
wait_for "job ended" job_is "$j" COMPLETED
while IFS= read -r a; do check JobInfo "$a"; done < <(expect 200 pxalice GET /v1/accounting | jq -c '.jobs[]')
while IFS= read -r u; do check UsageRow "$u"; done < <(expect 200 pxalice GET "/v1/usage?by=user" | jq -c '.usage[]')
check Error "$(expect 400 pxalice POST /v1/jobs '{"job":{"gpus":-1}}')"
check Error "$(expect 404 pxalice GET /v1/jobs/424242)"
ok "answers match the documented schemas"
