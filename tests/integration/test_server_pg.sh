#!/usr/bin/env bash
# The server on the PostgreSQL backend: starts a real PostgreSQL (Debian's
# binaries, as an unprivileged user, on a Unix socket in a temp dir) and runs
# the API round-trip, durability and checkpoint tests against it. Skips (exit 77,
# lib_skip.sh) only when the PostgreSQL server binaries are missing.
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
source "$dir/lib_skip.sh"
pg=$(mktemp -d /tmp/px-pg-XXXXXX)
conn=$(bash "$dir/pg_ctl.sh" start "$pg/db")
rc=$?
if [ $rc -eq 77 ]; then
  rm -rf "$pg"
  px_skip postgresql "PostgreSQL server binaries not installed (Debian package postgresql)"
fi
[ $rc -eq 0 ] || { echo "FAIL: cannot start PostgreSQL"; exit 1; }
trap 'bash "$dir/pg_ctl.sh" stop "$pg/db"; rm -rf "$pg"' EXIT
export STORE_URL="$conn"
status=0
bash "$dir/test_server_api.sh" || status=1
drop="DROP TABLE journal; DROP TABLE snapshot; DROP TABLE acct; DROP TABLE archive;"
psql -Atq "$conn" -c "$drop" || status=1
bash "$dir/test_server_durability.sh" || status=1
psql -Atq "$conn" -c "$drop" || status=1
bash "$dir/test_server_checkpoint.sh" || status=1
exit $status
