#!/bin/bash
# Starts a throwaway PostgreSQL server on loopback for the tests and benchmarks (Debian's postgresql package, installed
# when missing), and prints the URL to use. Stop it with: Scripts/postgres.sh stop DATADIR
# Usage: Scripts/postgres.sh start [PORT]   -> prints "DATADIR URL"
set -euo pipefail
action="${1:-start}"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1
fi
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$1"; else bash -c "$1"; fi; }
case "$action" in
  start)
    port="${2:-55432}"
    data="$(mktemp -d /tmp/iapkit-pg.XXXXXX)"
    [ "$(id -u)" = 0 ] && chown postgres "$data"
    as_postgres "$bin/initdb -D $data -A trust -U postgres >/dev/null"
    as_postgres "$bin/pg_ctl -D $data -l $data/server.log -w start -o \"-p $port -k $data -c listen_addresses=127.0.0.1 -c fsync=off ${PGEXTRA:-}\" >/dev/null"
    as_postgres "$bin/psql -h 127.0.0.1 -p $port -U postgres -qc 'CREATE DATABASE iapkit_test' >/dev/null"
    echo "$data postgres://postgres@127.0.0.1:$port/iapkit_test?sslmode=disable"
    ;;
  stop)
    as_postgres "$bin/pg_ctl -D ${2:?DATADIR} -m fast -w stop >/dev/null"
    rm -rf "$2"
    ;;
esac
