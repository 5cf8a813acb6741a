#!/usr/bin/env bash
# pg_ctl.sh start DIR | stop DIR - a throw-away PostgreSQL server for tests.
# start: initdb into DIR/data as an unprivileged user (PostgreSQL refuses to
# run as root), listen only on a Unix socket in DIR, print the libpq
# connection string on stdout. Exit 77 (skip) when PostgreSQL is not installed.
# restart: stop (fast) and start again on the same data, as a database
# restart in production. stop: immediate shutdown, then remove DIR.
set -euo pipefail
cmd=$1 dir=$2
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "pg_ctl.sh: PostgreSQL server binaries not installed (Debian package postgresql)" >&2
  exit 77
fi
as_user=(runuser -u nobody --)
[ "$(id -u)" -ne 0 ] && as_user=()
case $cmd in
  start)
    mkdir -p "$dir"
    chmod a+x "$(dirname "$dir")" # the server runs as nobody: it must reach DIR
    [ "$(id -u)" -eq 0 ] && chown nobody "$dir"
    "${as_user[@]}" "$bin/initdb" -D "$dir/data" -A trust -U pxtest --no-sync >"$dir/initdb.log" 2>&1
    "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-k $dir -c listen_addresses='' -c max_connections=20 -c shared_buffers=16MB" start >/dev/null
    echo "host=$dir dbname=postgres user=pxtest"
    ;;
  restart)
    "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -m fast \
      -o "-k $dir -c listen_addresses='' -c max_connections=20 -c shared_buffers=16MB" restart >/dev/null
    ;;
  stop)
    "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
esac
