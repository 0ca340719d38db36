#!/bin/bash
# Starts a throwaway PostgreSQL server on loopback for the tests and benchmarks (Debian's postgresql package, installed
# when missing), and prints the URL to use. Stop it with: Scripts/postgres.sh stop DATADIR
# Usage: Scripts/postgres.sh start [PORT]   -> prints "DATADIR URL" (the data directory under $PGROOT, /tmp by default)
#        Scripts/postgres.sh pause DATADIR    (stops the server and keeps its data: a database outage)
#        Scripts/postgres.sh resume DATADIR PORT
#        Scripts/postgres.sh freeze DATADIR   (stops its processes with SIGSTOP: a database that takes connections
#                                              and answers nothing, as behind a network partition)
#        Scripts/postgres.sh thaw DATADIR
# PGTLS=DIR (start): the server also offers TLS with DIR/server.crt and DIR/server.key (PEM; copied into the data
# directory), beside plain connections.
# 400 connections: the test suite starts its PostgreSQL tests at once, each storage keeping up to four connections, and
# a test that finds the server full waits for a connection until its connect timeout and fails.
set -euo pipefail
action="${1:-start}"
# The server outlives this script: it must not inherit a descriptor of its caller beyond the standard three (a test
# runner waiting on a pipe, or on a descriptor that tells it the script exited, would otherwise wait for the server).
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
done
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1
fi
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$1"; else bash -c "$1"; fi; }
case "$action" in
  start)
    port="${2:-55432}"
    data="$(mktemp -d "${PGROOT:-/tmp}/iapkit-pg.XXXXXX")"
    [ "$(id -u)" = 0 ] && chown postgres "$data"
    as_postgres "$bin/initdb -D $data -A trust -U postgres >/dev/null"
    if [ -n "${PGTLS:-}" ]; then
      cp "$PGTLS/server.crt" "$PGTLS/server.key" "$data/"
      chmod 600 "$data/server.key"
      [ "$(id -u)" = 0 ] && chown postgres "$data/server.crt" "$data/server.key"
      printf "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n" >>"$data/postgresql.conf"
    fi
    # A start that fails is stopped (pg_ctl gives up waiting after 60 s; the server may still come up) and removed,
    # saying why (a port taken meanwhile: "Address already in use").
    if ! as_postgres "$bin/pg_ctl -D $data -l $data/server.log -w start -o \"-p $port -k $data -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400 ${PGEXTRA:-}\" >/dev/null" \
      || ! as_postgres "$bin/psql -h 127.0.0.1 -p $port -U postgres -qc 'CREATE DATABASE iapkit_test' >/dev/null"; then
      tail -3 "$data/server.log" >&2 || true
      as_postgres "$bin/pg_ctl -D $data -m immediate -w stop" >/dev/null 2>&1 || true
      rm -rf "$data"
      exit 1
    fi
    echo "$data postgres://postgres@127.0.0.1:$port/iapkit_test?sslmode=disable"
    ;;
  pause)
    as_postgres "$bin/pg_ctl -D ${2:?DATADIR} -m fast -w stop >/dev/null"
    ;;
  freeze | thaw)
    signal=$([ "$1" = freeze ] && echo STOP || echo CONT)
    main=$(head -1 "${2:?DATADIR}/postmaster.pid")
    kill -"$signal" "$main" $(pgrep -P "$main" || true) 2>/dev/null || true
    ;;
  resume)
    as_postgres "$bin/pg_ctl -D ${2:?DATADIR} -l $2/server.log -w start -o \"-p ${3:?PORT} -k $2 -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400 ${PGEXTRA:-}\" >/dev/null"
    ;;
  stop)
    as_postgres "$bin/pg_ctl -D ${2:?DATADIR} -m fast -w stop >/dev/null"
    rm -rf "$2"
    ;;
esac
