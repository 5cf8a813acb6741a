# dump.sh - sourced after lib_server.sh: dump prints, as sorted JSON, the
# state a restart must reproduce from the journal-v0 store (make.sh and
# test_server_journal_v0.sh). A node's state is left out (DOWN until its
# agent registers again), and so is fair share (running jobs' usage accrues
# with the clock); jobs, nodes' allocations and drains, partitions,
# reservations, accounting rows and usage are compared.
dump() {
  local jobs parts nodes resv acct usage array
  jobs=$(api GET "/v1/jobs?state=all" | cut -d' ' -f2- | jq -c '[.jobs[] | {job_id, state, reason, nodelist, restarts, exit_code, cancelled_by, array_job_id, array_task_id, array_pending, name: .spec.name, user: .spec.user, account: .spec.account, nice: .spec.nice, time_limit_s: .spec.time_limit_s, submit_time, start_time, end_time}]')
  nodes=$(api GET /v1/nodes | cut -d' ' -f2- | jq -c '[.nodes[] | {name, gpus_alloc, reason: (if .reason == "Not registered" then null else .reason end)}]')
  parts=$(api GET /v1/partitions | cut -d' ' -f2- | jq -c '[.partitions[] | {name, up}]')
  resv=$(api GET /v1/reservations | cut -d' ' -f2- | jq -c '[.reservations[] | {name, nodes, account, start_s, end_s}]')
  acct=$(api GET "/v1/accounting?limit=1000" | cut -d' ' -f2- | jq -c '[.jobs[] | {job_id, state, ngpus, nodelist, exit_code}] | sort_by(.job_id)')
  array=$(api GET /v1/jobs/5 | cut -d' ' -f2- | jq -c '{job_id, state, array_pending}') # every task started: not listed
  usage=$(api GET "/v1/usage?since=3650d&by=account" | cut -d' ' -f2- | jq -c '[.usage[] | {key, jobs, gpu_s: (.gpu_hours * 3600 | round)}]')
  jq -n --argjson jobs "$jobs" --argjson nodes "$nodes" --argjson parts "$parts" --argjson resv "$resv" \
    --argjson acct "$acct" --argjson usage "$usage" \
    --argjson array "$array" \
    '{jobs: $jobs, array: $array, nodes: $nodes, partitions: $parts, reservations: $resv, accounting: $acct, usage: $usage}' | jq -S .
}
