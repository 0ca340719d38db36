#!/usr/bin/env bash
# A load balancer for benchmarks: Debian's nginx on loopback in front of several `iapkit serve` instances, with the
# proxy settings of deploy/nginx/iapkit.conf (keep-alive upstream connections, HTTP/1.1, the next instance on a quick
# error, timeout or 503, POSTs included, and the instances' own answers when all are left out) and without TLS.
# Usage: Scripts/nginx-balancer.sh PORT FOLDER UPSTREAM_PORT...   -> starts nginx in the background, prints its process id
set -euo pipefail
port="${1:?PORT}"
prefix="$(mkdir -p "${2:?FOLDER}" && cd "$2" && pwd)"
shift 2
[ $# -gt 0 ] || { echo "name at least one upstream port" >&2; exit 2; }
source "$(dirname "$0")/nginx-lib.sh"
servers=""
every=""
for upstream in "$@"; do
  servers+="    server 127.0.0.1:$upstream;"$'\n'
  every+="    server 127.0.0.1:$upstream max_fails=0;"$'\n'
done
nginx_start "$prefix" "  upstream iapkit {
$servers    keepalive 32;
  }
  upstream iapkit_every {
$every    keepalive 8;
  }
  server {
    listen 127.0.0.1:$port;
    client_max_body_size 1m;
    proxy_http_version 1.1;
    proxy_set_header Connection \"\";
    proxy_set_header Host \$host;
    proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
    proxy_connect_timeout 5s;
    proxy_read_timeout 45s;
    proxy_next_upstream error timeout http_503 non_idempotent;
    proxy_next_upstream_tries 3;
    proxy_next_upstream_timeout 10s;
    error_page 502 = @every;
    location @every {
      # The first instance's own answer (503 storageUnavailable while the database is down): only a connection that
      # fails goes on to the next, so an instance that is down is not the last word.
      proxy_next_upstream error timeout non_idempotent;
      proxy_pass http://iapkit_every;
    }
    location / { proxy_pass http://iapkit; }
  }" "http://127.0.0.1:$port/health"
