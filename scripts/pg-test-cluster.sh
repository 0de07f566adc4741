#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the `postgres` engine's tests: initdb in a temporary
# directory, a free port on 127.0.0.1, run as a non-root user (the `postgres` user when the
# script runs as root). Used by .ci/run and by developers:
#
#   eval "$(scripts/pg-test-cluster.sh start)"   # prints export CKQL_TEST_PG_URL=… and CKQL_TEST_PG_DIR=…
#   npx vitest run test/engine/postgres
#   scripts/pg-test-cluster.sh stop "$CKQL_TEST_PG_DIR"
#
# Finds initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin; `install` adds Debian's package.
set -euo pipefail

find_bin() {
  local name=$1
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  local candidate
  for candidate in /usr/lib/postgresql/*/bin/"$name"; do
    [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  return 1
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    local user=postgres
    id "$user" >/dev/null 2>&1 || user=nobody
    runuser -u "$user" -- "$@"
  else
    "$@"
  fi
}

case "${1:-}" in
  install)
    if ! find_bin initdb >/dev/null || ! find_bin pg_ctl >/dev/null; then
      echo "installing Debian's postgresql" >&2
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    fi
    ;;
  start)
    initdb=$(find_bin initdb) || { echo "no initdb: run $0 install (or apt-get install postgresql)" >&2; exit 1; }
    pg_ctl=$(find_bin pg_ctl)
    dir=$(mktemp -d /tmp/ckql-pg.XXXXXX)
    chmod 755 "$dir"
    if [ "$(id -u)" -eq 0 ]; then
      owner=postgres; id "$owner" >/dev/null 2>&1 || owner=nobody
      chown "$owner" "$dir"
    fi
    port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    as_owner "$initdb" -D "$dir/data" -U ckql --auth=trust --locale=C.UTF-8 --encoding=UTF8 >"$dir/initdb.log" 2>&1 \
      || as_owner "$initdb" -D "$dir/data" -U ckql --auth=trust --locale=C --encoding=UTF8 >"$dir/initdb.log" 2>&1
    # One role is checked by password (the tests of a refused password); every other connects by trust.
    { echo 'host all ckql_password 127.0.0.1/32 scram-sha-256'; cat "$dir/data/pg_hba.conf"; } >"$dir/pg_hba.conf" \
      && as_owner cp "$dir/pg_hba.conf" "$dir/data/pg_hba.conf"
    as_owner "$pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >&2
    echo "export CKQL_TEST_PG_URL=postgres://ckql@127.0.0.1:$port/postgres"
    echo "export CKQL_TEST_PG_DIR=$dir"
    ;;
  stop)
    dir=${2:-${CKQL_TEST_PG_DIR:-}}
    [ -n "$dir" ] && [ -d "$dir/data" ] || { echo "usage: $0 stop DIR (the CKQL_TEST_PG_DIR that start printed)" >&2; exit 1; }
    as_owner "$(find_bin pg_ctl)" -D "$dir/data" -m fast -w stop >&2 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 install | start | stop DIR" >&2
    exit 2
    ;;
esac
