#!/usr/bin/env bash
# A load balancer for benchmarks: Debian's nginx on loopback in front of several `iapkit serve` instances, with the
# proxy settings of deploy/nginx/iapkit.conf (keep-alive upstream connections, HTTP/1.1, the next instance on an error
# or a timeout, POSTs included) and without TLS.
# Usage: Scripts/nginx-balancer.sh PORT FOLDER UPSTREAM_PORT...   -> starts nginx in the background, prints its process id
set -euo pipefail
port="${1:?PORT}"
prefix="$(mkdir -p "${2:?FOLDER}" && cd "$2" && pwd)"
shift 2
[ $# -gt 0 ] || { echo "name at least one upstream port" >&2; exit 2; }
[ -x /usr/sbin/nginx ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null 2>&1
mkdir -p "$prefix/temp"
servers=""
for upstream in "$@"; do servers+="    server 127.0.0.1:$upstream;"$'\n'; done
cat >"$prefix/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $prefix/nginx.pid;
error_log $prefix/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $prefix/temp;
  proxy_temp_path $prefix/temp;
  fastcgi_temp_path $prefix/temp;
  uwsgi_temp_path $prefix/temp;
  scgi_temp_path $prefix/temp;
  upstream iapkit {
$servers    keepalive 32;
  }
  server {
    listen 127.0.0.1:$port;
    client_max_body_size 1m;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host \$host;
    proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
    proxy_connect_timeout 5s;
    proxy_read_timeout 30s;
    proxy_next_upstream error timeout non_idempotent;
    proxy_next_upstream_tries 3;
    location / { proxy_pass http://iapkit; }
  }
}
CONF
/usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/error.log" >/dev/null 2>&1 &
echo $!
for _ in $(seq 1 100); do
  curl -fs -o /dev/null "http://127.0.0.1:$port/health" && exit 0
  sleep 0.05
done
echo "nginx did not start on $port" >&2
exit 1
